"""Crash storms on the patched kernel, with the knobs set by hand: 16
processes of 64 MB crash at once on the 40 MB/s disk while a probe in its
own cgroup measures fdatasync latency. Every core must be kept, and the
probe must stay close to its idle figures measured in the same boot.

Latency bounds are ratios to the same boot's idle baseline with an
absolute slack on top (10 ms on p99, 30 ms on the maximum), so that a slow
or busy machine does not fail them; the speed goals themselves are reported
by `make demo` and the benchmark, not asserted here."""

import os

import pytest

from harness import report, storms
from harness.parsers import stats_dict
from harness.setups import Setup

KERNEL = os.environ.get("COREDAM_KERNEL", "patched")

DUMP_CGROUP = """
mkdir -p /sys/fs/cgroup/dump
echo "$(majmin) wbps={bps}" > /sys/fs/cgroup/dump/io.max
echo /dump > /proc/sys/kernel/core_cgroup
echo {conc} > /proc/sys/kernel/core_max_concurrency
echo {window} > /proc/sys/kernel/core_writeback_window
"""


def dump_setup(name, bps, conc, window=1024):
    return Setup(name, KERNEL, name,
                       script=DUMP_CGROUP.format(bps=bps, conc=conc, window=window))


def check_latency(r):
    print(report.table([r]))
    assert r.storm["p99"] <= 2 * r.idle["p99"] + 10, (r.idle, r.storm)
    assert r.storm["max"] <= 3 * r.idle["max"] + 30, (r.idle, r.storm)


def check_cores(r, n):
    assert r.cores_found == n and r.cores_complete == n, r
    s = stats_dict(r.stats)
    assert s["started"] == s["admitted"] == s["completed"] == n, s
    assert s["failed"] == s["uncharged"] == 0, s
    assert s["bytes"] >= n * (r.mb << 20), s


# The 10 MB/s burst (about 2 minutes) is a twin of the window test below
# (10 MB/s, one dump at a time, window on) and of the 30 MB/s burst (16 x
# 64 MB through the queue, drain bounded by io.max): `make test-storm` runs it.
@pytest.mark.quiet_machine
@pytest.mark.parametrize("bps,conc", [
    pytest.param(10_000_000, 1, id="10MBps-1-at-once", marks=pytest.mark.storm_only),
    pytest.param(30_000_000, 2, id="30MBps-2-at-once")])
def test_burst_keeps_every_core_and_the_probe_near_idle(bps, conc):
    r = storms.run(dump_setup(f"storm-{bps // 1000000}M-{conc}", bps, conc),
                  crashes=16, mb=64, timeout=1200)
    check_cores(r, 16)
    check_latency(r)
    # the cores cannot go faster than io.max lets them
    assert r.drain_s >= 16 * (64 << 20) / bps * 0.9, r.drain_s


def test_small_storm_keeps_every_core():
    """8 processes of 16 MB crash at once, two dumping at a time through
    the dump cgroup: every core kept whole, the counters exact. No latency
    bound: this is the storm `make test-debug` runs on the kernel with
    lockdep, KASAN and kmemleak, where time means little."""
    r = storms.run(dump_setup("storm-small", 30_000_000, 2), crashes=8, mb=16, timeout=1500)
    check_cores(r, 8)


@pytest.mark.quiet_machine
def test_writeback_window_protects_fdatasync():
    """Four dumps of 32 MB, one at a time, throttled to 10 MB/s: with the
    window the probe stays near idle; without it (window 0) each dump ends
    into the page cache, the next one starts, dirty pages pile up behind
    io.max and fdatasync waits for them."""
    with_w = storms.run(dump_setup("window-1M", 10_000_000, 1, 1024), crashes=4, mb=32)
    without = storms.run(dump_setup("window-off", 10_000_000, 1, 0), crashes=4, mb=32)
    print(report.table([with_w, without]))
    check_cores(with_w, 4)
    check_cores(without, 4)
    # "a small multiple of idle" for the worst sample, as for the bursts
    # for p99; without the window p99 is several times worse
    assert with_w.storm["p99"] <= 2 * with_w.idle["p99"] + 10, with_w.storm
    assert with_w.storm["max"] <= 8 * with_w.idle["max"] + 30, with_w.storm
    assert without.storm["p99"] > 2 * with_w.storm["p99"], (with_w.storm, without.storm)
