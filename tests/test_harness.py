"""The harness itself: results come back through their own channel, and a
broken kernel config, a panicking kernel and a hanging guest each fail
clearly and specifically; every wait has a bound, and so has the run."""

import os
import subprocess
import time
from pathlib import Path

import pytest

from harness import paths, qemu
from harness.console import GuestError, GuestKernelSplat, GuestPanic, GuestTimeout, \
    check_taint, find_splat


# one console line per report header the kernel prints (timestamps as the
# console has them); every one must fail the boot
SPLATS = [
    "[   12.345678] WARNING: CPU: 1 PID: 245 at fs/coredump.c:812 do_coredump+0x1a2/0x1c40",
    "[   12.345678] WARNING: possible recursive locking detected",
    "[   12.345678] WARNING: inconsistent lock state",
    "[   12.345678] WARNING: suspicious RCU usage",
    "[   12.345678] WARNING: bad unlock balance detected!",
    "[   12.345678] WARNING: HARDIRQ-safe -> HARDIRQ-unsafe lock order detected",
    "[   12.345678] WARNING: possible irq lock inversion dependency detected",
    "[   12.345678] WARNING: lock held when returning to user space!",
    "[   12.345678] WARNING: held lock freed!",
    "[   12.345678] WARNING: Nested lock was not taken",
    "[   12.345678] WARNING: chain_key collision",
    "[   12.345678] WARNING: crasher/245 still has locks held!",
    "[   12.345678] WARNING: possible circular locking dependency detected",
    "[   12.345678] [ BUG: Invalid wait context ]",
    "[   12.345678] BUG: kernel NULL pointer dereference, address: 0000000000000000",
    "[   12.345678] BUG: KASAN: slab-use-after-free in do_coredump+0x1a2/0x1c40",
    "[   34.567890] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:",
    "[   34.567890] rcu: INFO: rcu_preempt self-detected stall on CPU",
    "[   34.567890] rcu: INFO: rcu_preempt detected expedited stalls on CPUs/tasks: "
    "{ 1-.... } 21004 jiffies s: 389 root: 0x2/.",
    "[   34.567890] INFO: rcu_tasks detected stalls on tasks:",
    "[   34.567890] rcu: INFO: Stall ended before state dump start",
    "[  123.456789] INFO: task crasher:245 blocked for more than 61 seconds.",
    "[   45.678901] watchdog: BUG: soft lockup - CPU#1 stuck for 22s! [crasher:245]",
    "[   45.678901] watchdog: Watchdog detected hard LOCKUP on cpu 1",
    "[   12.345678] list_add corruption. prev->next should be next (ffff888004c1a0b8), "
    "but was 0000000000000000. (prev=ffff888004c1a0b8).",
    "[   12.345678] list_del corruption, ffff888004c1a0b8->next is LIST_POISON1 (dead000000000100)",
    "[   12.345678] Oops: 0002 [#1] PREEMPT SMP NOPTI",
    "[   12.345678] general protection fault, probably for non-canonical address "
    "0xdffffc0000000000: 0000 [#1] PREEMPT SMP KASAN NOPTI",
    "[   12.345678] UBSAN: shift-out-of-bounds in fs/coredump.c:123:45",
    "[   12.345678] KASAN: null-ptr-deref in range [0x0000000000000000-0x0000000000000007]",
    "[  612.345678] kmemleak: 3 new suspected memory leaks (see /sys/kernel/debug/kmemleak)",
    "[   12.345678] Kernel panic - not syncing: kernel: panic_on_warn set ...",
]

# lines of a good boot, and job output, which has no timestamp
QUIET = [
    "[    0.000000] Linux version 6.12.38 (root@build) (gcc (Debian 12.2.0-14) 12.2.0) #1 SMP",
    "[    0.012345] rcu: Hierarchical RCU implementation.",
    "[    0.012345] rcu: RCU calculated value of scheduler-enlistment delay is 100 jiffies.",
    "[    0.023456] Lock dependency validator: Copyright (c) 2006 Red Hat, Inc., Ingo Molnar",
    "[    0.023456] ... MAX_LOCKDEP_SUBCLASSES:  8",
    "[    0.034567] kasan: KernelAddressSanitizer initialized (generic)",
    "[    0.045678] kmemleak: Kernel memory leak detector initialized (mem pool available: 15692)",
    "[    0.056789] NMI watchdog: Perf NMI watchdog permanently disabled",
    "[    1.234567] Run /init as init process",
    "coredam-guest: running job",
    "WARNING: something the job printed",
    "job: no BUGs here, INFO: all well",
]


@pytest.mark.parametrize("line", SPLATS)
def test_splat_is_found(line):
    console = f"[    1.234567] Run /init as init process\r\n{line}\r\n" \
              "[   12.400000] Call Trace:\r\n"
    assert find_splat(console) == line


@pytest.mark.parametrize("line", QUIET)
def test_quiet_line_is_no_splat(line):
    assert find_splat(f"{line}\r\n") is None


def test_splat_after_job_output_on_one_line():
    # the console copy of the job's output and a kernel line can share a line
    console = "progress: 3 of 8[   12.345678] WARNING: inconsistent lock state\r\n"
    assert find_splat(console) == console.strip()


def test_results_channel(boot):
    res = boot("echo hello > $RESULTS/greeting\n"
               "cat /proc/sys/kernel/core_pattern > $RESULTS/pattern\n"
               "grep -q ' /scratch ext4 ' /proc/mounts\n"
               "cat /sys/fs/cgroup/cgroup.subtree_control > $RESULTS/controllers\n"
               "exit 7\n",
               sysctls={"kernel.core_pattern": "/scratch/core-%p-%s"})
    assert res.rc == 7
    assert res.text("greeting") == "hello\n"
    assert res.text("pattern") == "/scratch/core-%p-%s\n"
    assert {"io", "memory"} <= set(res.text("controllers").split())
    assert "Linux version 6.12" in res.text("dmesg.txt")


def test_failing_command_fails_the_job(boot):
    # jobs run with `sh -e`: the first failing command ends the job
    res = boot("false\necho not reached > $RESULTS/after\n", scratch=False)
    assert res.rc == 1
    assert not res.path("after").exists()


def test_failing_job_does_not_wait_for_its_background_processes(boot):
    # a job that fails while something it started still runs (a probe, an
    # agent) ends at once with its status, not at the timeout
    res = boot("echo before\nsleep 100000 &\nfalse\n", scratch=False, timeout=90)
    assert res.rc == 1
    assert res.output == "before\n"


def test_broken_fragment_option_is_named(tmp_path):
    bad = tmp_path / "bad.config"
    bad.write_text("CONFIG_COREDAM_NO_SUCH_OPTION=y\nCONFIG_EXT4_FS=m\n")
    p = subprocess.run(["scripts/build-kernel.sh", "--config-only", "stock"],
                       cwd=paths.TOP, env={"KFRAGMENT_EXTRA": str(bad),
                                        "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
                       capture_output=True, text=True)
    assert p.returncode == 3, p.stderr
    assert "CONFIG_COREDAM_NO_SUCH_OPTION=y from bad.config did not survive" in p.stderr
    assert "CONFIG_EXT4_FS=m from bad.config did not survive olddefconfig: " \
        "CONFIG_EXT4_FS=y" in p.stderr


def test_kernel_panic_is_reported(boot):
    with pytest.raises(GuestPanic) as e:
        boot("echo 1 > /proc/sys/kernel/sysrq\necho c > /proc/sysrq-trigger\n",
             scratch=False, timeout=300)
    assert "sysrq triggered crash" in e.value.console


def test_tainted_kernel_is_reported(boot):
    # root may add taint bits; a kernel tainted at the end of the job fails
    # the boot although the console is clean
    with pytest.raises(GuestKernelSplat) as e:
        boot("echo 4096 > /proc/sys/kernel/tainted\n", scratch=False)
    assert "kernel tainted: 4096 (O: out-of-tree module)" in str(e.value)


def test_taint_check(tmp_path):
    # what the guest recorded decides: 0 passes, any bit is named, and no
    # record at all is an error of its own
    tainted = tmp_path / "tainted"
    tainted.write_text("0\n")
    check_taint(tmp_path, "", tmp_path)
    tainted.write_text("640\n")
    with pytest.raises(GuestKernelSplat) as e:
        check_taint(tmp_path, "", tmp_path)
    assert "kernel tainted: 640 (D: kernel died: oops or BUG, W: kernel warning)" in str(e.value)
    tainted.unlink()
    with pytest.raises(GuestError) as e:
        check_taint(tmp_path, "", tmp_path)
    assert type(e.value) is GuestError and "no tainted file" in str(e.value)


def test_hanging_guest_is_reported(boot):
    with pytest.raises(GuestTimeout) as e:
        boot("touch $RESULTS/started\nsleep 100000\n", scratch=False, timeout=30)
    assert "running job" in e.value.console


def test_guest_wait_is_bounded(boot):
    # lib.sh's waitfor fails the job with what it waited for
    res = boot(". /lib/coredam/lib.sh\nwaitfor 1 'a file that never comes' "
               "test -e /nonexistent\necho not reached > $RESULTS/after\n",
               scratch=False)
    assert res.rc == 1
    assert "timed out after 1s: a file that never comes" in res.output
    assert not res.path("after").exists()


def test_spent_run_budget_fails_at_once(boot, monkeypatch):
    # with less than a minute of the run's budget left, no guest starts
    monkeypatch.setenv("COREDAM_DEADLINE", str(int(time.time()) + 30))
    t0 = time.monotonic()
    with pytest.raises(GuestTimeout) as e:
        boot("true\n", scratch=False)
    assert "time budget is spent" in str(e.value)
    assert time.monotonic() - t0 < 5


def test_run_budget_cuts_a_boot_short(boot, monkeypatch):
    # a hang near the end of the run fails within what is left of it
    monkeypatch.setattr(qemu, "MIN_BOOT_S", 5)
    monkeypatch.setenv("COREDAM_DEADLINE", str(int(time.time()) + 15))
    with pytest.raises(GuestTimeout) as e:
        boot("sleep 100000\n", scratch=False, timeout=600)
    assert "what was left of the run's budget" in str(e.value)


def _fake_make(tmp_path, script):
    """A stand-in for make: a shell case on the target, each call logged."""
    make = tmp_path / "make"
    make.write_text("#!/bin/sh\n"
                    f"echo \"$*\" >> {tmp_path}/calls\n"
                    "for t; do case $t in -*) ;; *) target=$t;; esac; done\n"
                    f"case $target in\n{script}\nesac\n")
    make.chmod(0o755)
    return make


def _pipeline(tmp_path, make, deadline_s=None):
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "MAKE": str(make),
           "COREDAM_PIPELINE_LOGS": str(tmp_path / "logs")}
    if deadline_s is not None:
        env["COREDAM_DEADLINE"] = str(int(time.time()) + deadline_s)
    return subprocess.run(["scripts/test-pipeline.sh"], cwd=paths.TOP, env=env,
                          capture_output=True, text=True, timeout=120)


def test_pipeline_reports_every_lane_and_fails_on_one(tmp_path):
    # the lanes all run although the debug one fails, the quiet debug
    # tests are not run on a failed debug lane, and the run fails
    make = _fake_make(tmp_path, "lane-debug) exit 3;;\n*) exit 0;;")
    p = _pipeline(tmp_path, make)
    assert p.returncode == 1, p.stdout + p.stderr
    calls = (tmp_path / "calls").read_text()
    for target in ["compile-check", "lane-prepare", "kernel-debug", "lane-debug",
                   "lane-vm", "lane-quiet-vm"]:
        assert target in calls, calls
    assert "lane-quiet-debug" not in calls
    assert "debug          FAILED (3)" in p.stdout
    assert "vm             passed" in p.stdout
    assert "quiet-debug    FAILED (not run: the debug lane failed)" in p.stdout


def test_pipeline_starts_compile_check_first_and_stops_it_when_nothing_can_be_tested(tmp_path):
    # compile-check starts before the kernels are built, to take what their
    # links and debootstrap leave of the CPU; when the unit tests, kernels or
    # images fail, no lane starts and compile-check is stopped at once
    make = _fake_make(tmp_path, f"compile-check) sleep 1000 & echo $! > {tmp_path}/child; wait;;\n"
                      f"lane-prepare) while [ ! -s {tmp_path}/child ]; do sleep 0.1; done; exit 2;;\n"
                      "*) exit 0;;")
    t0 = time.monotonic()
    p = _pipeline(tmp_path, make)
    assert time.monotonic() - t0 < 30
    assert p.returncode == 1, p.stdout + p.stderr
    assert "nothing to test; compile-check stopped" in p.stdout
    calls = (tmp_path / "calls").read_text().split("\n")
    # (lane-prepare ended only once compile-check had started its child)
    assert sorted(c.split()[-1] for c in calls if c) == ["compile-check", "lane-prepare"], calls
    child = int((tmp_path / "child").read_text())
    time.sleep(0.5)
    assert not Path(f"/proc/{child}").exists() or \
        Path(f"/proc/{child}/stat").read_text().split()[2] == "Z"


def test_pipeline_compile_check_yields_to_the_other_lanes(tmp_path):
    # each lane is a session, and with autogroup scheduling a session is a
    # scheduling group: compile-check's processes and its group are at nice
    # 19 (nice inside the group alone weighs nothing against the others),
    # the debug lane's are not
    probe = ("ps -o ni= -p $$ > {d}/{n}.nice; "
             "cat /proc/self/autogroup > {d}/{n}.group 2>/dev/null || true; exit 0;;")
    make = _fake_make(tmp_path, "compile-check) " + probe.format(d=tmp_path, n="cc") + "\n"
                      "kernel-debug) " + probe.format(d=tmp_path, n="debug") + "\n"
                      "*) exit 0;;")
    p = _pipeline(tmp_path, make)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "cc.nice").read_text().strip() == "19"
    assert (tmp_path / "debug.nice").read_text().strip() == str(os.nice(0))
    if Path("/proc/sys/kernel/sched_autogroup_enabled").exists() and \
            Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1":
        assert (tmp_path / "cc.group").read_text().split()[-1] == "19", (tmp_path / "cc.group").read_text()
        assert (tmp_path / "debug.group").read_text().split()[-1] == "0"


def test_pipeline_stops_a_lane_at_the_deadline(tmp_path):
    # a background lane that hangs is stopped, children and all, at the
    # run's deadline and counted as failed; the run still ends
    make = _fake_make(tmp_path, f"compile-check) sleep 1000 & echo $! > {tmp_path}/child; wait;;\n"
                      "*) exit 0;;")
    t0 = time.monotonic()
    p = _pipeline(tmp_path, make, deadline_s=5)
    assert time.monotonic() - t0 < 60
    assert p.returncode == 1, p.stdout + p.stderr
    assert "compile-check  FAILED (stopped at the run's deadline)" in p.stdout
    child = int((tmp_path / "child").read_text())
    time.sleep(0.5)
    assert not Path(f"/proc/{child}").exists() or \
        Path(f"/proc/{child}/stat").read_text().split()[2] == "Z"


def _bench_run(p99, floor, drain, kept=16):
    return {"write_storm_p99": p99, "floor_write_p99": floor, "drain_s": drain,
            "exit_p99_ms": drain * 1000, "crashes": 16, "kept": kept}


def test_bench_v1_beside_v2_verdict():
    """The benchmark calls v2 worse than v1 only by more than the spread of
    the repetitions, and says so in its goals."""
    from harness import figures

    v1 = [_bench_run(10, 5, 100), _bench_run(11, 5, 101), _bench_run(12, 5, 99)]
    # p99 ratio 2.2 -> 3.4 (beyond the 0.4 spread); drain 100 -> 102 (within 9 s)
    v2 = [_bench_run(16, 5, 100), _bench_run(17, 5, 102), _bench_run(18, 5, 108)]
    runs = {("burst", "v1-fixed"): v1, ("burst", "coredam-fixed"): v2,
            ("burst", "v1-adaptive"): v2, ("burst", "coredam-adaptive"): v1}
    table, worse = figures.versions(runs, ["burst"])
    assert worse == ["burst, fixed: probe p99 vs no-dumps 2.20 [2.00-2.40] on v1, "
                     "3.40 [3.20-3.60] on v2"]
    rows = {tuple(c.strip() for c in line.split("|")[1:4]): line.split("|")[-2].strip()
            for line in table.splitlines()[2:]}
    assert rows[("burst", "fixed", "probe p99 vs no-dumps")] == "v2 worse"
    assert rows[("burst", "fixed", "last core (s)")] == "within noise"
    assert rows[("burst", "adaptive", "probe p99 vs no-dumps")] == "v2 better"
    # a core lost on v2 alone is worse than no spread at all
    runs[("burst", "coredam-adaptive")] = [_bench_run(10, 5, 100, kept=15)] * 3
    _, worse = figures.versions(runs, ["burst"])
    assert any("adaptive: cores not kept 0 [0-0] on v1, 1 [1-1] on v2" in w for w in worse)
    assert figures.goals({}, None, worse)[0].startswith("- MISSED: v2 next to v1")
    assert figures.goals({}, None, [])[0].startswith("- met: v2 next to v1")
