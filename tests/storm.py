"""Crash storms in the guest, with latency probes, and what they did.

Used by the demo, the benchmark and the storm tests. The guest side is a
shell script built here around `stormer`, which times every crash; the
numbers are computed on the host from the samples the guest wrote."""

import json
import os
import statistics
from dataclasses import dataclass, field

import vm

# The probes run in a cgroup of their own, as a foreground service would:
# the agent's adaptive mode watches the pressure of cgroups other than the
# dump cgroup. The crashers run in /crashers (or in cgroups below it that
# the scenario makes), whose memory.peak is what the storm's processes held
# while they waited and dumped.
STORM_SCRIPT = """
. /lib/coredam/lib.sh
mkdir -p /scratch/cores /scratch/probe /sys/fs/cgroup/probe /sys/fs/cgroup/crashers
echo "+memory +io" > /sys/fs/cgroup/cgroup.subtree_control
{prepare}
{setup}
case " {probes} " in *" read "*)
    # the read probe's file, written before any probe measures
    dd if=/dev/zero of=/scratch/probe/probe-read.dat bs=1M count=64 2>/dev/null; sync;;
esac
probe_pids=""
for mode in {probes}; do
    sh -c 'echo $$ > /sys/fs/cgroup/probe/cgroup.procs
           exec probe -d /scratch/probe -o $RESULTS/probe.$0.txt -m $0 -i {interval} -s /tmp/stop-probe' $mode &
    probe_pids="$probe_pids $!"
done
sleep {idle}
stormer -n {crashes} -m {mb} -p {period} -t {threads} -c {cgroups} -o $RESULTS/storm.txt
cat /sys/fs/cgroup/crashers/memory.peak > $RESULTS/crashers.peak
waitfor 1500 "the pipe helpers to end" no_helper
sync
now_ms > $RESULTS/synced
sleep 2
# the probes measure until {hold_ms} ms after the first crash, if that is later
past_ms() {{ [ "$(now_ms)" -ge "$1" ]; }}
waitfor {hold_wait} "the probes' window" past_ms \
    $(( $(awk '$1 == "start" {{ print $2 }}' $RESULTS/storm.txt) + {hold_ms} ))
touch /tmp/stop-probe
for p in $probe_pids; do wait $p; done
cat /sys/fs/cgroup/coredump.slice/memory.peak > $RESULTS/dump.peak 2>/dev/null || true
{teardown}
for f in /scratch/cores/core.*; do
    case $f in *.part|*.json|*.meta) continue;; esac
    [ -e "$f" ] && corecheck $f >> $RESULTS/cores.json || true
done
cat /proc/sys/kernel/core_dump_stats > $RESULTS/stats 2>/dev/null || true
cp /run/coredam/pipe/stats $RESULTS/pipe-stats 2>/dev/null || true
"""

# @QUEUE_CAP@ in an agent's configuration is the scenario's queue cap
AGENT_START = """
cat > /tmp/coredam.conf <<'CONF'
{conf}
CONF
sed -i "s/@QUEUE_CAP@/$QUEUE_CAP/" /tmp/coredam.conf
coredamd -c /tmp/coredam.conf > $RESULTS/agent.log 2>&1 &
echo $! > /tmp/agent.pid
{after_start}
waitfor 30 "coredamd answers" agent_running -c /tmp/coredam.conf ||
    {{ cat $RESULTS/agent.log; exit 1; }}
"""

AGENT_STOP = """
coredamctl -c /tmp/coredam.conf status --json > $RESULTS/status.json || true
cat /proc/$(cat /tmp/agent.pid)/stat > $RESULTS/agent.stat || true
cp /run/coredam/pipe/stats $RESULTS/pipe-stats 2>/dev/null || true
kill -TERM $(cat /tmp/agent.pid); wait $(cat /tmp/agent.pid) || true
"""


@dataclass
class Setup:
    name: str
    kernel: str
    describe: str
    sysctls: dict = field(default_factory=dict)
    script: str = ""
    teardown: str = ""


def agent_setup(name, describe, conf, kernel="patched", after_start=""):
    """@after_start: guest shell run once the agent started (its pid in /tmp/agent.pid)."""
    return Setup(name, kernel, describe, script=AGENT_START.format(conf=conf.strip(), after_start=after_start),
                 teardown=AGENT_STOP)


@dataclass
class Scenario:
    """What crashes, how, and who measures. period_ms 0: all at once.

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

    def total_mb(self):
        """The storm's memory, all told: what its cores hold."""
        sizes = self.sizes or (self.mb,)
        return sum(sizes[i % len(sizes)] for i in range(self.crashes))


BURST = Scenario("burst", "16 processes of 64 MB crash at once")


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

    def disk_s(self, disk_bps_write=40_000_000):
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
        disk_bps_write=40_000_000, timeout=1800, hold_s=0):
    """Boot the setup, run the scenario's storm, return a StormResult.

    The probes' storm window runs from the first crash until every core is
    on disk, or for hold_s seconds if that is longer: a storm without
    dumps is over in a second, too short for a p99, and compared with
    another setup's storm over a window as long as that one's
    (window_stats)."""
    crashes = crashes or scenario.crashes
    # an explicit mb makes every crasher that size
    size_list = (mb,) if mb else scenario.sizes or (scenario.mb,)
    sizes = [size_list[i % len(size_list)] for i in range(crashes)]
    mb = mb or scenario.mb
    sysctls = {"kernel.core_pattern": "/scratch/cores/core.%p"}
    sysctls.update(setup.sysctls)
    script = f"QUEUE_CAP={scenario.queue_cap}\n" + STORM_SCRIPT.format(
        setup=setup.script, teardown=setup.teardown, interval=interval_ms,
        idle=idle_s, crashes=crashes, period=scenario.period_ms,
        hold_ms=int(hold_s * 1000), hold_wait=int(hold_s) + 60,
        mb=",".join(str(m) for m in size_list),
        threads=scenario.threads, prepare=scenario.prepare,
        cgroups=",".join(f"/sys/fs/cgroup/{c}" for c in scenario.cgroups),
        probes=" ".join(scenario.probes))
    res = vm.boot(script, kernel=setup.kernel, sysctls=sysctls, timeout=timeout,
                  mem=scenario.mem, disk_bps_write=disk_bps_write,
                  name=f"storm-{setup.name}-{scenario.name}")
    if res.rc != 0:
        raise RuntimeError(f"storm job failed (rc {res.rc}):\n{res.output}")
    times, crash_rows = {}, []
    for line in res.text("storm.txt").splitlines():
        w = line.split()
        if w[0] == "crash":
            crash_rows.append(tuple(int(x) for x in w[1:]))
        else:
            times[w[0]] = int(w[1])
    prep, start, end = times["prep"], times["start"], times["end"]
    synced = int(res.text("synced").strip())
    stop = max(synced, start + int(hold_s * 1000))
    probes = {}
    for mode in scenario.probes:
        samples = vm.read_probe(res.path(f"probe.{mode}.txt"))
        # idle: the samples before the crashers start, but the first second
        t0 = samples[0][0] if samples else prep
        idle = [l for t, l in samples if t0 + 1000 <= t < prep]
        during = [l for t, l in samples if start <= t <= stop]
        probes[mode] = {"idle": vm.latency_stats(idle), "storm": vm.latency_stats(during),
                        "samples": samples,
                        "idle_s": max(prep - t0 - 1000, 1) / 1000.0,
                        "storm_s": max(stop - start, 1) / 1000.0}
    cores = res.json_lines("cores.json") if res.path("cores.json").exists() else []
    stats = res.text("stats").strip() if res.path("stats").exists() else ""
    pipe_stats = name_values(res.text("pipe-stats")) if res.path("pipe-stats").exists() else {}
    # the agent's own CPU time, user and system (clock ticks of 1/100 s)
    agent_cpu_s = None
    if res.path("agent.stat").exists():
        f = res.text("agent.stat").rsplit(")", 1)[1].split()
        agent_cpu_s = (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    # lifts once the storm began (the agent may lift before the probes start)
    log = res.text("agent.log") if res.path("agent.log").exists() else ""
    storm_log = log[log.find("event=dump-start"):] if "event=dump-start" in log else ""
    lifts = sum(1 for line in storm_log.splitlines()
                if "event=budget" in line and "write_bps=max" in line.split())
    return StormResult(
        setup=setup.name, scenario=scenario.name, crashes=crashes, mb=mb, probes=probes,
        cores_found=len(cores),
        cores_complete=sum(1 for c in cores if c["valid"] and c["complete"]),
        crash_exit_ms=[e - c for _, c, e, _ in crash_rows],
        dumped=sum(d for *_, d in crash_rows),
        exit_s=(end - start) / 1000.0, drain_s=(synced - start) / 1000.0,
        mem_peak=_int_file(res, "crashers.peak"), dump_mem_peak=_int_file(res, "dump.peak"),
        stats=stats, pipe_stats=pipe_stats, start_ms=start, synced_ms=synced,
        total_mb=sum(sizes), lifts=lifts, agent_cpu_s=agent_cpu_s)


def window_stats(r, mode, length_s):
    """The probe's latency stats over the first length_s seconds from the
    storm's first crash (within what it measured: see run()'s hold_s)."""
    end = r.start_ms + length_s * 1000
    return vm.latency_stats([l for t, l in r.probes[mode]["samples"]
                             if r.start_ms <= t <= end])


def physical_limit_s(crashes, mb, disk_bps_write=40_000_000):
    return crashes * (mb << 20) / disk_bps_write


def ratio(a, b):
    return f"{a / b:.1f}x" if b else "-"


def pct(values, p):
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def markdown(head, rows):
    rows = [tuple(head)] + [tuple(r) for r in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def table(results, disk_bps_write=40_000_000, mode="write"):
    """The probe's latency and the cores, one row per result."""
    head = ("setup", "idle p50", "idle p99", "idle max", "storm p50",
            "storm p99", "storm max", "p99/idle", "max/idle", "cores ok",
            "last core", "vs disk")
    rows = []
    for r in results:
        limit = r.disk_s(disk_bps_write)
        i, s = r.probes[mode]["idle"], r.probes[mode]["storm"]
        rows.append((r.setup, f"{i['p50']:.1f} ms", f"{i['p99']:.1f} ms",
                     f"{i['max']:.1f} ms", f"{s['p50']:.1f} ms",
                     f"{s['p99']:.1f} ms", f"{s['max']:.1f} ms",
                     ratio(s["p99"], i["p99"]), ratio(s["max"], i["max"]),
                     f"{r.kept}/{r.crashes}", f"{r.drain_s:.1f} s",
                     f"{r.drain_s / limit:.2f}x"))
    return markdown(head, rows)


def plot(results, path, title, mode="write"):
    """Probe latency over time, one line per setup, log scale; the storm's
    start (0 s) and each setup's end (every core on disk) marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5))
    for r in results:
        samples = r.probes[mode]["samples"]
        xs = [(t - r.start_ms) / 1000.0 for t, _ in samples]
        ys = [lat / 1000.0 for _, lat in samples]
        line, = ax.plot(xs, ys, linewidth=0.8, label=r.setup)
        ax.axvline((r.synced_ms - r.start_ms) / 1000.0, color=line.get_color(),
                   linestyle=":", linewidth=1)
    ax.axvline(0, color="black", linestyle="--", linewidth=1, label="storm starts")
    ax.set_yscale("log")
    ax.set_xlabel("seconds since the first crash (dotted: last core on disk)")
    ax.set_ylabel({"write": "4 KiB write + fdatasync latency (ms)",
                   "read": "4 KiB O_DIRECT read latency (ms)",
                   "stream": "foreground 4 MiB fdatasync latency (ms)"}[mode])
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


# kernel.core_dump_stats is one "name value" line per counter, as
# /proc/vmstat. These are the names the tests know, in the kernel's order;
# a later kernel may add names, and the order is not part of the interface.
STATS_NAMES = ("started", "admitted", "completed", "failed",
               "skipped_full", "skipped_timeout", "skipped_killed", "skipped_pipe_limit",
               "active", "waiting", "overtime", "leases_ended", "uncharged",
               "failed_open", "failed_setup", "failed_limit", "failed_killed",
               "failed_write", "failed_io", "bytes")

# What the kernel promises in every snapshot: each total is the sum of its parts.
STATS_INVARIANTS = (
    ("started", ("admitted", "waiting", "skipped_full", "skipped_timeout", "skipped_killed")),
    ("admitted", ("completed", "failed", "skipped_pipe_limit", "active", "overtime")),
    ("failed", ("failed_open", "failed_setup", "failed_limit", "failed_killed",
                "failed_write", "failed_io")),
)


def name_values(text):
    """{name: int} from "name value" lines (core_dump_stats, coredam-pipe's
    stats); a ValueError quotes a line that is not one."""
    out = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        words = line.split()
        if len(words) != 2 or not words[1].isdigit():
            raise ValueError(f"not a 'name value' line: {line!r}")
        if words[0] in out:
            raise ValueError(f"{words[0]} twice: {text!r}")
        out[words[0]] = int(words[1])
    return out


def stats_dict(text):
    """core_dump_stats as {name: value}, names the tests do not know
    included; {} for no text (the file was not there). A ValueError names
    the counters the text lacks."""
    if not text.strip():
        return {}
    s = name_values(text)
    missing = [n for n in STATS_NAMES if n not in s]
    if missing:
        raise ValueError(f"core_dump_stats lacks {', '.join(missing)}: {text!r}")
    return s


# Series v1 (the benchmark's v1 kernel) printed its counters as one line
# of twelve numbers, in this order; it had none of the other names.
V1_STATS_NAMES = ("active", "waiting", "started", "admitted", "completed", "failed",
                  "skipped_full", "skipped_timeout", "skipped_killed", "skipped_pipe_limit",
                  "unmoved", "bytes")


def counters(text):
    """The kernel's counters for a report, whatever series printed them:
    stats_dict() for today's "name value" lines, the names of
    V1_STATS_NAMES for series v1's positional line, {} for no text or text
    that is neither. Unlike stats_dict(), it never raises: a benchmark goes
    on without counters, where a test must refuse them."""
    words = text.split()
    if len(words) == len(V1_STATS_NAMES) and "\n" not in text.strip() \
            and all(w.isdigit() for w in words):
        return dict(zip(V1_STATS_NAMES, map(int, words)))
    try:
        return stats_dict(text)
    except ValueError:
        return {}


def stats_broken(s):
    """The invariants that do not hold in the counters s, each as text; []
    when all hold."""
    return [f"{total} {s[total]} != {' + '.join(parts)} = {sum(s[p] for p in parts)}"
            for total, parts in STATS_INVARIANTS if s[total] != sum(s[p] for p in parts)]


def check_invariants(s):
    """Assert that the counters s add up, saying which sums do not."""
    broken = stats_broken(s)
    assert not broken, (broken, s)


def median(values):
    return statistics.median(values) if values else float("nan")


def to_json(results):
    out = []
    for r in results:
        d = {k: v for k, v in r.__dict__.items() if k != "probes"}
        d["probes"] = {m: {k: v for k, v in p.items() if k != "samples"}
                       for m, p in r.probes.items()}
        out.append(d)
    return json.dumps(out, indent=1)
