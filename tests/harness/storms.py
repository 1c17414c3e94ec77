"""Running a crash storm in the guest, with latency probes, and what it did.

The guest side is a shell script built here around `stormer`, which times
every crash; the numbers are computed on the host (parsers, stats) from the
samples the guest wrote."""

from dataclasses import dataclass

from . import parsers, qemu
from .scenarios import BURST
from .stats import idle_and_storm, most_unreaped

# the scratch disk's write throttle every storm runs with, bytes a second
DISK_BPS = 40_000_000

# The job: tests/guest/storm.sh's probed_storm, with the scenario's and the
# setup's shell as its storm_prepare, storm_setup and storm_teardown
STORM_JOB = """
. /lib/coredam/lib.sh
. /lib/coredam/storm.sh
QUEUE_CAP={queue_cap}
STORM_PROBES="{probes}" STORM_INTERVAL={interval} STORM_IDLE={idle}
STORM_CRASHES={crashes} STORM_MB={mb} STORM_PERIOD={period} STORM_THREADS={threads}
STORM_CGROUPS={cgroups} STORM_HOLD_MS={hold_ms} STORM_FILL_FIRST={fill_first}
storm_prepare() {{
:
{prepare}
}}
storm_setup() {{
:
{setup}
}}
storm_teardown() {{
:
{teardown}
}}
probed_storm
"""


@dataclass
class StormResult:
    setup: str
    scenario: str
    crashes: int
    mb: int
    probes: dict          # mode -> {"idle": stats, "storm": stats, "samples": [...]}
    cores_complete: int
    cores_found: int
    crash_exit_ms: list   # per crash: from its signal to its reaping
    dumped: int           # crashes whose wait status says "core dumped"
    exit_s: float         # from the first crash until the last process is gone
    drain_s: float        # from the first crash until every core is on disk
    mem_peak: int         # memory.peak of the crashers' cgroup, bytes
    dump_mem_peak: int    # memory.peak of the dump cgroup (if there is one)
    stats: str            # core_dump_stats as read (patched kernel); stats_dict() parses
                          # it, counters() also a series v1 kernel's positional line
    pipe_stats: dict      # coredam-pipe's counters (stock kernel + helper)
    start_ms: int
    synced_ms: int
    total_mb: int = 0     # the crashers' memory, all told (their cores' payload)
    lifts: int = 0        # the agent's budget changes to no limit (LiftWhenIdle=)
    agent_cpu_s: float = None  # the agent's CPU time over its whole run, if one ran
    unreaped_max: int = 0  # the most crashed processes not yet reaped at once

    def disk_s(self, disk_bps_write=DISK_BPS):
        """The disk's own time for the storm's cores, in seconds."""
        return (self.total_mb or self.crashes * self.mb) * 2**20 / disk_bps_write

    @property
    def idle(self):
        return self.probes["write"]["idle"]

    @property
    def storm(self):
        return self.probes["write"]["storm"]

    @property
    def samples(self):
        return self.probes["write"]["samples"]

    @property
    def kept(self):
        return self.cores_complete


def _int_file(res, name):
    p = res.path(name)
    return int(p.read_text().split()[0]) if p.exists() and p.read_text().strip() else 0


def run(setup, scenario=BURST, crashes=None, mb=None, idle_s=10, interval_ms=50,
        disk_bps_write=DISK_BPS, timeout=1800, hold_s=0, rep=None):
    """Boot the setup, run the scenario's storm, return a StormResult.

    The probes' storm window runs from the first crash until every core is
    on disk, or for hold_s seconds if that is longer: a storm without
    dumps is over in a second, too short for a p99, and compared with
    another setup's storm over a window as long as that one's
    (window_stats). rep (a repetition's number) names the boot's logs
    apart from the other repetitions'."""
    crashes = crashes or scenario.crashes
    # an explicit mb makes every crasher that size
    size_list = (mb,) if mb else scenario.sizes or (scenario.mb,)
    sizes = [size_list[i % len(size_list)] for i in range(crashes)]
    mb = mb or scenario.mb
    sysctls = {"kernel.core_pattern": "/scratch/cores/core.%p"}
    sysctls.update(setup.sysctls)
    script = STORM_JOB.format(
        queue_cap=scenario.queue_cap,
        setup=setup.script, teardown=setup.teardown, interval=interval_ms,
        idle=idle_s, crashes=crashes, period=scenario.period_ms,
        hold_ms=int(hold_s * 1000), fill_first="1" if scenario.fill_first else "",
        mb=",".join(str(m) for m in size_list),
        threads=scenario.threads, prepare=scenario.prepare,
        cgroups=",".join(f"/sys/fs/cgroup/{c}" for c in scenario.cgroups),
        probes=" ".join(scenario.probes))
    res = qemu.boot(script, kernel=setup.kernel, sysctls=sysctls, timeout=timeout,
                    mem=scenario.mem, disk_bps_write=disk_bps_write,
                    name=f"storm-{setup.name}-{scenario.name}" + (f"-{rep}" if rep else ""))
    if res.rc != 0:
        raise RuntimeError(f"storm job failed (rc {res.rc}):\n{res.output}")
    return storm_result(res, setup.name, scenario, crashes, mb, sizes, hold_s)


def check_arrivals(scenario, crash_rows):
    """Raise RuntimeError unless the crashes of a scenario with a period
    arrived spread as it says: from the first signal to the last at least
    nine tenths of (crashes - 1) periods (a storm whose crashers all went
    at once would be measured as another scenario's)."""
    if not scenario.period_ms or len(crash_rows) < 2:
        return
    signals = sorted(row[1] for row in crash_rows)
    spread, want = signals[-1] - signals[0], 0.9 * (len(signals) - 1) * scenario.period_ms
    if spread < want:
        raise RuntimeError(f"{scenario.name}: {len(signals)} crashes arrived over {spread} ms, "
                           f"not the {want:.0f} ms or more of one every {scenario.period_ms} ms")


def storm_result(res, setup_name, scenario, crashes, mb, sizes, hold_s=0):
    """What the storm job's results (a job.Result) say: a StormResult."""
    times, crash_rows = parsers.storm_txt(res.text("storm.txt"))
    check_arrivals(scenario, crash_rows)
    prep, start, end = times["prep"], times["start"], times["end"]
    synced = int(res.text("synced").strip())
    stop = max(synced, start + int(hold_s * 1000))
    probes = {}
    for mode in scenario.probes:
        samples = parsers.read_probe(res.path(f"probe.{mode}.txt"))
        idle, during = idle_and_storm(samples, prep, start, stop)
        t0 = samples[0][0] if samples else prep
        probes[mode] = {"idle": idle, "storm": during, "samples": samples,
                        "idle_s": max(prep - t0 - 1000, 1) / 1000.0,
                        "storm_s": max(stop - start, 1) / 1000.0}
    cores = res.json_lines("cores.json") if res.path("cores.json").exists() else []
    stats = res.text("stats").strip() if res.path("stats").exists() else ""
    pipe_stats = parsers.name_values(res.text("pipe-stats")) \
        if res.path("pipe-stats").exists() else {}
    agent_cpu_s = parsers.agent_cpu_s(res.text("agent.stat")) \
        if res.path("agent.stat").exists() else None
    log = res.text("agent.log") if res.path("agent.log").exists() else ""
    return StormResult(
        setup=setup_name, scenario=scenario.name, crashes=crashes, mb=mb, probes=probes,
        cores_found=len(cores),
        cores_complete=sum(1 for c in cores if c["valid"] and c["complete"]),
        crash_exit_ms=[e - c for _, c, e, _ in crash_rows],
        dumped=sum(d for *_, d in crash_rows),
        exit_s=(end - start) / 1000.0, drain_s=(synced - start) / 1000.0,
        mem_peak=_int_file(res, "crashers.peak"), dump_mem_peak=_int_file(res, "dump.peak"),
        stats=stats, pipe_stats=pipe_stats, start_ms=start, synced_ms=synced,
        total_mb=sum(sizes), lifts=parsers.budget_lifts(log), agent_cpu_s=agent_cpu_s,
        unreaped_max=most_unreaped(crash_rows))
