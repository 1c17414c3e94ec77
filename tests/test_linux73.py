"""Stock Linux 7.3 (`make kernel-7.3`, Debian's linux-source-7.3 as shipped),
the kernel of the coredump socket (core_pattern "@@/path"): it boots clean
in the harness, takes a socket as core_pattern, and passes its own tree's
coredump selftests (tools/testing/selftests/coredump of 7.3, built against
that tree's uapi headers by `make selftests-7.3`).

Every case of those selftests must pass: none needs what the busybox guest
lacks (they need core dumps, AF_UNIX, SO_PEERPIDFD, PIDFD_GET_INFO, epoll,
a detached tmpfs from fsopen/fsmount with O_TMPFILE, and a pipe helper run
by /bin/sh with mktemp and awk; the kernel and the initramfs have all of
it). A case the tree adds or drops fails here until EXPECTED says so."""

import re

import pytest

from harness import qemu
from harness.parsers import tap_cases
from harness.paths import BUILD

KERNEL = "stock-7.3"
SELFTESTS = BUILD / "guest" / "selftests-7.3"

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


@pytest.fixture(scope="module")
def selftest_run():
    """One boot that runs every program of the 7.3 selftests in turn, each
    program's TAP output in $RESULTS/NAME.tap, its exit status in
    $RESULTS/NAME.rc and its wall time in $RESULTS/NAME.seconds."""
    built = sorted(p.name for p in SELFTESTS.glob("*_test")) if SELFTESTS.exists() else []
    assert built == sorted(EXPECTED), \
        f"{SELFTESTS} holds {built}, not {sorted(EXPECTED)}: run 'make selftests-7.3 initramfs'"
    script = f"cd /selftests-7.3\nulimit -s {STACK_KIB}\n" + "".join(
        f"t=$(date +%s); rc=0; ./{name} > $RESULTS/{name}.tap 2>&1 || rc=$?\n"
        f"echo $rc > $RESULTS/{name}.rc; echo $(( $(date +%s) - t )) > $RESULTS/{name}.seconds\n"
        for name in EXPECTED)
    return qemu.boot(script, kernel=KERNEL, scratch=False, timeout=900,
                     name="test_linux73.py_selftests")


@pytest.mark.parametrize("name", list(EXPECTED))
def test_selftests_of_the_7_3_tree_pass(selftest_run, name):
    res = selftest_run
    assert res.rc == 0, res.output
    tap = res.text(f"{name}.tap") + f"\n({res.text(f'{name}.seconds').strip()} s)"
    cases = tap_cases(tap)
    assert [c[0] for c in cases] == EXPECTED[name], tap
    bad = [c for c in cases if c[1] != "pass"]
    assert not bad, f"{bad}\n{tap}"
    assert re.search(rf"# Totals: pass:{len(EXPECTED[name])} fail:0 xfail:0 xpass:0 skip:0 error:0", tap), tap
    assert res.text(f"{name}.rc").strip() == "0", tap
