"""The harness's parsers on what real guests wrote (test_data/, as kunit's):
a storm of the storm tests (storm-burst/: 4 crashers of 32 MB, the write
probe), an adaptive agent's log, coredam-pipe's counters and the TAP output
of the 7.3 tree's coredump selftests (linux73-selftests/). The expected
values were worked out from the files by other means than the parsers
(awk, sort, counting lines), as each test's comments say."""

import re
from pathlib import Path

import pytest

from harness import parsers, stats, storms
from harness.job import Result
from harness.scenarios import Scenario

DATA = Path(__file__).resolve().parent / "test_data"
STORM = DATA / "storm-burst"


def recorded(results_dir):
    return Result(rc=0, output="", console="", results_dir=results_dir,
                  log_dir=results_dir, wall_s=0.0)


def test_probe_samples():
    # wc -l: 524 lines, every one "start_ms latency_us"
    samples = parsers.read_probe(STORM / "probe.write.txt")
    assert len(samples) == 524
    assert samples[0] == (2381, 21186) and samples[-1][0] > samples[0][0]
    assert [t for t, _ in samples] == sorted(t for t, _ in samples)


def test_stormer_times_and_crashes():
    times, crashes = parsers.storm_txt((STORM / "storm.txt").read_text())
    assert times == {"prep": 12379, "start": 12994, "end": 26468}
    # one row per "crash" line: pid, signal ms, exit ms, dumped
    assert crashes == [(64, 13009, 19746, 1), (65, 13005, 23057, 1),
                       (66, 13012, 16379, 1), (67, 12994, 26468, 1)]


def test_arrivals_of_a_staggered_storm():
    sc = Scenario("staggered", "", crashes=4, period_ms=400, fill_first=True)
    # signals 400 ms apart in any order of the rows: 1200 ms from first to last
    spread = [(1, 1000, 9000, 1), (2, 2200, 9100, 1), (3, 1400, 9200, 1), (4, 1800, 9300, 1)]
    storms.check_arrivals(sc, spread)
    # 1079 ms is under nine tenths of three periods (1080)
    short = [(1, 1000, 9000, 1), (2, 1300, 9000, 1), (3, 1700, 9000, 1), (4, 2079, 9000, 1)]
    with pytest.raises(RuntimeError, match="4 crashes arrived over 1079 ms"):
        storms.check_arrivals(sc, short)
    # a burst has no period: at once is what it asks for
    storms.check_arrivals(Scenario("burst", ""), [(i, 1000, 2000, 1) for i in range(4)])


def test_core_dump_stats_snapshot():
    s = parsers.stats_dict((STORM / "stats").read_text())
    # 20 lines in the file, each a counter
    assert len(s) == 20 and set(parsers.STATS_NAMES) == set(s)
    assert (s["started"], s["admitted"], s["completed"], s["failed"]) == (4, 4, 4, 0)
    assert s["bytes"] == 134571740
    assert parsers.stats_broken(s) == []
    assert parsers.counters((STORM / "stats").read_text()) == s


def test_percentiles_of_the_recorded_windows():
    # idle: from the probe's first second (2381 + 1000) to prep (12379);
    # storm: from start (12994) to the last core on disk (synced, 26530).
    # awk picked the lines, sort -n ordered them, and the nearest rank
    # (line round(p/100 * (n - 1)) + 1) gave:
    #   idle  n 180, p50 line 91 = 4797 us, p99 line 178 = 6879, max 33044
    #   storm n 270, p50 line 135 = 2181 us, p99 line 267 = 8077, max 19948
    samples = parsers.read_probe(STORM / "probe.write.txt")
    idle, storm = stats.idle_and_storm(samples, 12379, 12994, 26530)
    assert idle == {"n": 180, "p50": 4.797, "p99": 6.879, "max": 33.044}
    assert storm == {"n": 270, "p50": 2.181, "p99": 8.077, "max": 19.948}


def test_storm_result_from_the_recording():
    sc = Scenario("burst", "recorded", crashes=4, mb=32)
    r = storms.storm_result(recorded(STORM), "window-1M", sc, 4, 32, [32] * 4)
    # exit - signal of each crash row; end - start; synced - start
    assert r.crash_exit_ms == [6737, 10052, 3367, 13474]
    assert r.dumped == 4
    assert r.exit_s == pytest.approx(13.474) and r.drain_s == pytest.approx(13.536)
    # cores.json: 4 lines, each "valid": true and "complete": true
    assert (r.cores_found, r.kept) == (4, 4)
    assert r.mem_peak == 135151616 and r.dump_mem_peak == 0   # dump.peak is empty
    assert r.probes["write"]["storm"]["p99"] == 8.077
    assert r.probes["write"]["storm_s"] == pytest.approx(13.536)
    # the probe's idle time: prep - (first sample + 1 s)
    assert r.probes["write"]["idle_s"] == pytest.approx((12379 - 2381 - 1000) / 1000)
    assert r.disk_s(storms.DISK_BPS) == pytest.approx(128 * 2**20 / 40e6)
    assert (r.lifts, r.agent_cpu_s, r.pipe_stats) == (0, None, {})
    # signals 13005..13012, exits from 16379 on: all four crashed before any was reaped
    assert r.unreaped_max == 4


def test_budget_lifts_count_from_the_first_dump():
    # grep: two "write_bps=max" budget lines, lines 8 and 47; the first
    # "event=dump-start" is line 9, so one lift fell in the storm
    log = (DATA / "agent-adaptive.log").read_text()
    assert sum("event=budget write_bps=max" in line for line in log.splitlines()) == 2
    assert parsers.budget_lifts(log) == 1
    assert parsers.budget_lifts(log.replace("event=dump-start", "event=dump-begin")) == 0


def test_pipe_helper_counters():
    # 14 "name value" lines; the kernel's names they lack make counters() {}
    text = (DATA / "pipe-stats").read_text()
    s = parsers.name_values(text)
    assert len(s) == 14
    assert (s["started"], s["completed"], s["bytes"]) == (16, 16, 139919360)
    assert sum(v for k, v in s.items() if k.startswith("skipped_")) == 0
    assert parsers.counters(text) == {}
    with pytest.raises(ValueError, match="core_dump_stats lacks"):
        parsers.stats_dict(text)


CGROUP = DATA / "cgroup"


def test_cgroup_io_files():
    # io.max of the agent's dump cgroup, io.stat of a paced dump's: one
    # line each, for the scratch disk 254:0
    rule = parsers.io_rule((CGROUP / "io.max").read_text(), "254:0")
    assert rule == {"rbps": "max", "wbps": "10000000", "riops": "max", "wiops": "max"}
    assert parsers.io_rule((CGROUP / "io.max").read_text(), "8:0") is None
    stat = (CGROUP / "io.stat").read_text()
    assert parsers.io_rule(stat, "254:0")["wbytes"] == "8491008"
    assert parsers.io_wbytes(stat) == 8491008
    assert parsers.io_wbytes(stat + "8:0 rbytes=0 wbytes=4096 rios=0 wios=1\n") == 8495104


def test_knobs_and_memory_stat():
    knobs = parsers.key_values((CGROUP / "knobs").read_text())
    assert knobs == {"core_cgroup": "/coredump.slice", "core_max_concurrency": "2",
                     "core_max_waiting": "32", "core_wait_timeout_ms": "1800000"}
    # memory.stat: 56 lines; grep "^file " gave 8728576
    m = parsers.name_values((CGROUP / "memory.stat").read_text())
    assert len(m) == 56 and m["file"] == 8728576


def test_tap_cases_of_the_kselftest_harness():
    tap = ("TAP version 13\n1..4\n# Starting 4 tests from 1 test cases.\n"
           "#  RUN           coredump.socket ...\n#            OK  coredump.socket\n"
           "ok 1 coredump.socket\nnot ok 2 coredump.socket_enoent\n"
           "ok 3 coredump.socket_no_listener # SKIP no AF_UNIX here\n"
           "ok 4 coredump.stackdump # XFAIL known\n"
           "# Totals: pass:1 fail:1 xfail:1 xpass:0 skip:1 error:0\n")
    assert parsers.tap_cases(tap) == [
        ("coredump.socket", "pass", ""), ("coredump.socket_enoent", "fail", ""),
        ("coredump.socket_no_listener", "skip", "no AF_UNIX here"),
        ("coredump.stackdump", "xfail", "known")]


def test_tap_cases_of_the_7_3_selftests_as_a_guest_ran_them():
    # what tests/test_linux73.py's guest wrote (a passing run): every case
    # counted in the program's "# Totals" line, each passed, none twice
    for f in sorted((DATA / "linux73-selftests").glob("*.tap")):
        tap = f.read_text()
        cases = parsers.tap_cases(tap)
        total = int(re.search(r"^# Totals: pass:(\d+) fail:0 xfail:0 xpass:0 skip:0 error:0$",
                              tap, re.M).group(1))
        assert total == len(cases) == len({c[0] for c in cases}) >= 1, f
        assert all(result == "pass" for _, result, _ in cases), f
    assert len(list((DATA / "linux73-selftests").glob("*.tap"))) == 3


def test_most_dumps_at_once_from_meta_records():
    text = ('{"pid": 1, "admitted_usec": 100, "done_usec": 500}\n\n'
            '{"pid": 2, "admitted_usec": 200, "done_usec": 300}\n'
            '{"pid": 3, "admitted_usec": 300, "done_usec": 900}\n'
            '{"pid": 4, "admitted_usec": 400, "done_usec": 450}\n')
    ms = parsers.meta_records(text)
    assert [m["pid"] for m in ms] == [1, 2, 3, 4]
    # 2 ends at 300 as 3 starts: 1, 3, 4 at once over 400..450
    assert stats.most_at_once(ms) == 3
    assert stats.most_at_once(ms[:3]) == 2 and stats.most_at_once([]) == 0
    # crashed and not yet reaped: the same count over (signal, exit) of each crash row
    rows = [(1, 100, 500, 1), (2, 200, 300, 0), (3, 300, 900, 1), (4, 400, 450, 0)]
    assert stats.most_unreaped(rows) == 3 and stats.most_unreaped([]) == 0
    with pytest.raises(ValueError):
        parsers.meta_records("not json\n")


def test_one_users_storm_check_says_no_to_a_first_come_queue():
    def m(pid, uid, ticket, admitted):
        return {"pid": pid, "uid": uid, "ticket": ticket, "admitted_usec": admitted}
    cores = [{"valid": True, "complete": True}] * 4
    st = {"started": 7, "completed": 4, "skipped_full": 3}
    fair = [m(10, 1000, 1, 100), m(99, 0, 7, 200), m(11, 1000, 2, 300), m(12, 1000, 3, 400)]
    stats.check_one_users_storm(fair, 99, cores, st)
    # root's crash behind the storm, as first come, first served has it
    fifo = [m(10, 1000, 1, 100), m(11, 1000, 2, 200), m(12, 1000, 3, 300), m(99, 0, 7, 400)]
    with pytest.raises(AssertionError):
        stats.check_one_users_storm(fifo, 99, cores, st)
    # the storm out of its own order
    swapped = [m(10, 1000, 1, 100), m(99, 0, 7, 200), m(12, 1000, 3, 300), m(11, 1000, 2, 400)]
    with pytest.raises(AssertionError):
        stats.check_one_users_storm(swapped, 99, cores, st)
    with pytest.raises(AssertionError):
        stats.check_one_users_storm(fair, 99, cores[:3], st)
