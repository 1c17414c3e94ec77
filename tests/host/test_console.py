"""The console checks of the harness: every report header the kernel prints
fails a boot and no line of a good boot or of a job's output does; a
tainted kernel fails it, and so does a guest that gave back no taint."""

import pytest

from harness.console import GuestError, GuestKernelSplat, check_taint, find_splat


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
