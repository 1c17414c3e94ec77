"""Crash-to-exit times with every knob at its default: small processes
crash one after the other (`crashtime` in the guest), each timed from its
signal to its parent's waitpid(), core written to ext4 included."""

import statistics

from . import qemu


def one(kernel, crashes):
    """The crash-to-exit times (us) of `crashes` crashes in one boot of kernel."""
    res = qemu.boot(f"crashtime -n {crashes} -m 1 > $RESULTS/times\n",
                    kernel=kernel, name=f"bench-defaults-{kernel}",
                    sysctls={"kernel.core_pattern": "/scratch/core.%p"},
                    disk_bps_write=None)
    assert res.rc == 0, res.output
    lines = res.text("times").split("\n")
    times = [int(x.split()[0]) for x in lines if x and not x.startswith("median")]
    assert not any("nocore" in x for x in lines), "a crash dumped no core"
    return times


def measure(rounds, crashes, times=None):
    """Median crash-to-exit in ms per kernel; the samples (us) go to times."""
    times = {"stock": [], "patched": []} if times is None else times
    for r in range(rounds):
        for k in ("stock", "patched"):
            t = one(k, crashes)
            print(f"round {r + 1} {k}: median {statistics.median(t) / 1000:.2f} ms",
                  flush=True)
            times.setdefault(k, []).extend(t)
    return {k: statistics.median(v) / 1000 for k, v in times.items()}
