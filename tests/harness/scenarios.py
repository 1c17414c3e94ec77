"""What crashes in a storm, and how: the Scenario and the benchmark's
scenarios (data; storms.run() runs one)."""

from dataclasses import dataclass


@dataclass
class Scenario:
    """What crashes, how, and who measures. period_ms 0: all at once.

    fill_first (with period_ms): every crasher fills its memory before the
    first crash and one is let go every period_ms, so that no crasher's
    filling (CPU time: under TCG each 32 MB takes most of a second) falls
    in the storm; without it one is forked every period_ms and crashes as
    soon as it is filled.

    sizes: MB of each crasher in turn, cycling (mb is then only their
    mean, for tables); () gives every crasher mb. threads: threads per
    crasher. cgroups: the crashers' cgroups, below /sys/fs/cgroup, crasher
    i in the i-th (cycling); they must be made by prepare, guest shell that
    runs before the setup's own script."""
    name: str
    describe: str
    crashes: int = 16
    mb: int = 64
    period_ms: int = 0
    probes: tuple = ("write",)
    queue_cap: int = 64
    mem: str = "3G"
    sizes: tuple = ()
    threads: int = 1
    cgroups: tuple = ("crashers",)
    prepare: str = ""
    fill_first: bool = False

    def total_mb(self):
        """The storm's memory, all told: what its cores hold."""
        sizes = self.sizes or (self.mb,)
        return sum(sizes[i % len(sizes)] for i in range(self.crashes))


BURST = Scenario("burst", "16 processes of 64 MB crash at once")


# mixed: 16 core sizes from 16 to 100 MB, 1024 MB in all, as the burst
MIXED_MB = (16, 20, 28, 36, 44, 48, 52, 60, 68, 76, 84, 92, 100, 100, 100, 100)

# nested: the crashers of four services, /crashers/svc0..3, in turn; svc0
# and svc1 have a write limit of their own on the scratch disk, as a
# container would
NESTED_CGROUPS = tuple(f"crashers/svc{i}" for i in range(4))
NESTED_MBPS = 20
NESTED_PREPARE = f"""
echo "+memory +io" > /sys/fs/cgroup/crashers/cgroup.subtree_control
for c in {' '.join(NESTED_CGROUPS)}; do mkdir -p /sys/fs/cgroup/$c; done
dev=$(majmin)
echo "$dev wbps={NESTED_MBPS * 1_000_000}" > /sys/fs/cgroup/crashers/svc0/io.max
echo "$dev wbps={NESTED_MBPS * 1_000_000}" > /sys/fs/cgroup/crashers/svc1/io.max
"""

SCENARIOS = [
    Scenario("burst", "16 processes of 64 MB crash at once; a probe writes 4 KiB + "
             "fdatasync every 50 ms, a second reads 4 KiB O_DIRECT at random",
             probes=("write", "read")),
    Scenario("idle", "idle drain: the burst with no probe", probes=()),
    Scenario("sustained", "a 32 MB process crashes every 250 ms for 20 s (80 "
             "crashes), queue cap 8; the write probe runs",
             crashes=80, mb=32, period_ms=250, queue_cap=8, mem="4G"),
    Scenario("foreground", "the burst while a foreground writer streams 4 MiB "
             "writes, each followed by fdatasync", probes=("stream",)),
    Scenario("mixed", "16 processes of mixed sizes crash at once: "
             f"{', '.join(map(str, MIXED_MB))} MB ({sum(MIXED_MB)} MB in all); "
             "the write probe runs", sizes=MIXED_MB),
    Scenario("threads", "16 processes of 64 MB with 8 threads each crash at "
             "once (the dump stops 7 sleeping threads); the write probe runs",
             threads=8),
    Scenario("nested", "16 processes of 64 MB crash at once, 4 in each of "
             "/crashers/svc0..3; svc0 and svc1 have io.max "
             f"{NESTED_MBPS} MB/s write of their own; the write probe runs",
             cgroups=NESTED_CGROUPS, prepare=NESTED_PREPARE),
    Scenario("staggered", "32 processes of 32 MB, all filled first, crash one every "
             "400 ms (12.4 s from the first to the last); the write probe runs",
             crashes=32, mb=32, period_ms=400, fill_first=True),
    # the staggered storm as it was before fill_first: each crasher fills
    # its memory as it comes, inside the storm window (under TCG its CPU
    # time competes with the probe)
    Scenario("staggered-filling", "32 processes of 32 MB, forked one every 400 ms, "
             "each crashing once it has filled its memory; the write probe runs",
             crashes=32, mb=32, period_ms=400),
]
# the storms of other shapes share one table
SHAPES = ("mixed", "threads", "nested", "staggered", "staggered-filling")
# not in the default run: named in BENCH_SCENARIOS only
OPTIONAL_SCENARIOS = {"staggered-filling"}


def scenario(name):
    return next(s for s in SCENARIOS if s.name == name)


def main_probe(sc):
    """The probe a scenario is judged by: its first ("write", or the
    foreground writer's "stream")."""
    probes = scenario(sc).probes
    return probes[0] if probes else None
