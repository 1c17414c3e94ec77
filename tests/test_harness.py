"""The harness itself, in the guest: results come back through their own
channel, and a panicking kernel, a tainted one and a hanging guest each fail
clearly and specifically; every wait has a bound, and so has the run. The
host-side checks of the console, the pipeline and the kernel config are in
tests/host/."""

import time

import pytest

from harness import qemu
from harness.console import GuestKernelSplat, GuestPanic, GuestTimeout


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
