"""Stock Linux 7.3 (`make kernel-7.3`, Debian's linux-source-7.3 as shipped),
the kernel of the coredump socket (core_pattern "@@/path"): it boots clean
in the harness, takes a socket as core_pattern, and passes its own tree's
coredump selftests (tools/testing/selftests/coredump of 7.3, built against
that tree's uapi headers by `make selftests-7.3`).

Every case of those selftests must pass: none needs what the busybox guest
lacks (they need core dumps, AF_UNIX, SO_PEERPIDFD, PIDFD_GET_INFO, epoll,
a detached tmpfs from fsopen/fsmount with O_TMPFILE, and a pipe helper run
by /bin/sh with mktemp and awk; the kernel and the initramfs have all of
it). A case the tree adds or drops fails here until EXPECTED says so.

Linux 7.3 with the series rebased onto it (`make kernel-patched-7.3
selftests-patched-7.3`; the programs go to the guest with the job): the
7.3 tree's selftests pass there too, and so do the series' own
(core_queue_test), which skip, never fail, on stock 7.3. These tests are
marked patched_7_3: `make test` runs them in a lane of their own, which
builds that kernel first, `make test-patched-7.3` runs only them
(COREDAM_KERNEL_7_3=patched-7.3-debug: on the debug kernel of
`scripts/build-kernel.sh patched-7.3 debug`)."""

import os
import re

import pytest

from harness import qemu
from harness.parsers import tap_cases
from harness.paths import BUILD

KERNEL = "stock-7.3"
SELFTESTS = BUILD / "guest" / "selftests-7.3"
# the patched 7.3 kernel to boot: patched-7.3, or patched-7.3-debug (the
# debug.config fragment: lockdep, KASAN, kmemleak) by COREDAM_KERNEL_7_3
PATCHED = os.environ.get("COREDAM_KERNEL_7_3", "patched-7.3")
PATCHED_SELFTESTS = BUILD / "guest" / "selftests-patched-7.3"

# every case of the 7.3.4 tree's coredump selftests, by program, in the
# order they run; each must pass
EXPECTED = {
    "stackdump_test": ["coredump.stackdump"],
    "coredump_socket_test": [
        "coredump.socket",
        "coredump.socket_detect_userspace_client",
        "coredump.socket_enoent",
        "coredump.socket_no_listener",
        "coredump.socket_coredump_signal_sigsegv",
        "coredump.socket_coredump_signal_sigabrt",
        "coredump.socket_invalid_paths",
    ],
    "coredump_socket_protocol_test": [
        "coredump.socket_request_kernel",
        "coredump.socket_request_userspace",
        "coredump.socket_request_reject",
        "coredump.socket_request_invalid_flag_combination",
        "coredump.socket_request_unknown_flag",
        "coredump.socket_request_invalid_size_small",
        "coredump.socket_request_invalid_size_large",
        "coredump.socket_coredump_signal_sigsegv",
        "coredump.socket_coredump_signal_sigabrt",
        "coredump.socket_multiple_crashing_coredumps",
        "coredump.socket_multiple_crashing_coredumps_epoll_workers",
    ],
}

# every case of the series' own selftests on 7.3 (kernel-patch/7.3), in order
SERIES_EXPECTED = {
    "core_queue_test": [
        "coredump.stats_and_bad_values",
        "coredump.cgroup_namespace_refused",
        "coredump.fifo_order",
        "coredump.kill_waiter_full_timeout",
        "coredump.slot_lease",
        "coredump.stats_consistent_in_every_snapshot",
        "coredump.pattern_read_when_admitted",
        "coredump.waiters_leave_core_pipe_limit",
        "coredump.waiting_places_shared_between_users",
        "coredump.socket_dump_not_queued",
        "coredump.file_core_charged",
        "coredump.cgroup_by_name",
        "coredump.cut_short_is_failed",
    ],
}


def test_core_pattern_takes_a_socket():
    """The socket forms of core_pattern are taken, what 7.3 refuses (a
    relative path, "..") gives EINVAL and leaves the pattern as it was, and
    the console stays clean with the kernel untainted (boot checks both)."""
    res = qemu.boot(r"""
uname -r > $RESULTS/release
K=/proc/sys/kernel/core_pattern
try() {
    if printf '%s\n' "$1" 2>/dev/null > $K; then r=taken; else r=refused; fi
    echo "$1 $r: $(cat $K)" >> $RESULTS/patterns
}
try @/run/x.sock
try @@/run/x.sock
try @@run/x.sock
try @@/run/../x.sock
""", kernel=KERNEL, scratch=False, timeout=300)
    assert res.rc == 0, res.output
    assert res.text("release").startswith("7.3."), res.text("release")
    assert res.text("patterns").splitlines() == [
        "@/run/x.sock taken: @/run/x.sock",
        "@@/run/x.sock taken: @@/run/x.sock",
        "@@run/x.sock refused: @@/run/x.sock",
        "@@/run/../x.sock refused: @@/run/x.sock",
    ], res.text("patterns") + res.output


# The stack limit the programs run with: 1 MiB, not the guest's 8 MiB. Each
# crashing child has 128 threads, each with a stack of RLIMIT_STACK (glibc's
# default), and a core streamed through a socket carries their unwritten
# pages as zeros: 1 GiB a core with 8 MiB stacks, which under TCG took
# 20-25 s a case (the harness gives a case 30 s) and 350 s for the three
# programs; with 1 MiB, 128 MiB a core. No case looks at the core's size.
STACK_KIB = 1024


def run_selftests(kernel, directory, programs, name, timeout=900, ship=None):
    """One boot of `kernel` that runs `programs` of the guest's
    /`directory` in turn, each program's TAP output in $RESULTS/NAME.tap,
    its exit status in $RESULTS/NAME.rc and its wall time in
    $RESULTS/NAME.seconds. With `ship` (a directory of the host) the
    programs come with the job, as /job/`directory`, not from the
    initramfs."""
    where = f"/job/{directory}" if ship else f"/{directory}"
    script = f"cd {where}\nulimit -s {STACK_KIB}\n" + "".join(
        f"t=$(date +%s); rc=0; ./{p} > $RESULTS/{p}.tap 2>&1 || rc=$?\n"
        f"echo $rc > $RESULTS/{p}.rc; echo $(( $(date +%s) - t )) > $RESULTS/{p}.seconds\n"
        for p in programs)
    return qemu.boot(script, kernel=kernel, scratch=False, timeout=timeout, name=name,
                     files={directory: ship} if ship else None)


def assert_all_pass(res, name, expected):
    """Every case of program `name` ran, in that order, and passed."""
    assert res.rc == 0, res.output
    tap = res.text(f"{name}.tap") + f"\n({res.text(f'{name}.seconds').strip()} s)"
    cases = tap_cases(tap)
    assert [c[0] for c in cases] == expected, tap
    bad = [c for c in cases if c[1] != "pass"]
    assert not bad, f"{bad}\n{tap}"
    assert re.search(rf"# Totals: pass:{len(expected)} fail:0 xfail:0 xpass:0 skip:0 error:0", tap), tap
    assert res.text(f"{name}.rc").strip() == "0", tap


def built_programs(directory):
    return sorted(p.name for p in directory.glob("*_test")) if directory.exists() else []


@pytest.fixture(scope="module")
def selftest_run():
    """The 7.3 tree's selftests on stock 7.3, in one boot."""
    built = built_programs(SELFTESTS)
    assert built == sorted(EXPECTED), \
        f"{SELFTESTS} holds {built}, not {sorted(EXPECTED)}: run 'make selftests-7.3 initramfs'"
    return run_selftests(KERNEL, "selftests-7.3", EXPECTED, "test_linux73.py_selftests")


@pytest.mark.parametrize("name", list(EXPECTED))
def test_selftests_of_the_7_3_tree_pass(selftest_run, name):
    assert_all_pass(selftest_run, name, EXPECTED[name])


# --- the series rebased onto 7.3 (kernel-patch/7.3) ---------------------------

@pytest.fixture(scope="module")
def patched_selftest_run():
    """The patched 7.3 tree's selftests, the tree's own and the series',
    on patched 7.3, in one boot."""
    want = sorted(list(EXPECTED) + list(SERIES_EXPECTED))
    built = built_programs(PATCHED_SELFTESTS)
    assert built == want, \
        f"{PATCHED_SELFTESTS} holds {built}, not {want}: run 'make selftests-patched-7.3'"
    return run_selftests(PATCHED, "selftests-patched-7.3",
                         list(EXPECTED) + list(SERIES_EXPECTED),
                         "test_linux73.py_patched_selftests", timeout=1500, ship=PATCHED_SELFTESTS)


@pytest.mark.patched_7_3
@pytest.mark.parametrize("name", list(EXPECTED) + list(SERIES_EXPECTED))
def test_selftests_pass_on_patched_7_3(patched_selftest_run, name):
    """7.3's own coredump selftests still pass with the series on top, and
    every case of the series' own passes: none skips, since the kernel
    has every feature they test."""
    assert_all_pass(patched_selftest_run, name, {**EXPECTED, **SERIES_EXPECTED}[name])


@pytest.mark.patched_7_3
@pytest.mark.parametrize("name", list(SERIES_EXPECTED))
def test_series_selftests_skip_on_stock_7_3(name):
    """The series' selftests skip, never fail, on a 7.3 kernel without the
    series: every case, with the exit status of a skip."""
    assert name in built_programs(PATCHED_SELFTESTS), \
        f"{PATCHED_SELFTESTS} lacks {name}: run 'make selftests-patched-7.3'"
    res = run_selftests(KERNEL, "selftests-patched-7.3", [name],
                        f"test_linux73.py_series_on_stock_{name}", timeout=300, ship=PATCHED_SELFTESTS)
    assert res.rc == 0, res.output
    tap = res.text(f"{name}.tap")
    cases = tap_cases(tap)
    assert [c[0] for c in cases] == SERIES_EXPECTED[name], tap
    assert all(c[1] == "skip" for c in cases), tap
    assert res.text(f"{name}.rc").strip() in ("0", "4"), tap
