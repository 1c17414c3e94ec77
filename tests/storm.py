"""Crash storms in the guest, with a latency probe, and what they did.

Used by the demo and the benchmark; the guest side is a shell script built
here, the numbers are computed on the host from the probe's samples."""

import json
from dataclasses import dataclass, field

import vm

# The probe runs in a cgroup of its own, as a foreground service would: the
# agent's adaptive mode watches the pressure of cgroups other than the
# dump cgroup.
STORM_SCRIPT = """
. /lib/coredam/lib.sh
mkdir -p /scratch/cores /scratch/probe /sys/fs/cgroup/probe
{setup}
sh -c 'echo $$ > /sys/fs/cgroup/probe/cgroup.procs
       exec probe -d /scratch/probe -o $RESULTS/probe.txt -i {interval} -s /tmp/stop-probe' &
probe_pid=$!
sleep {idle}
storm {crashes} {mb}
sleep 2
touch /tmp/stop-probe
wait $probe_pid
{teardown}
for f in /scratch/cores/core.*; do
    case $f in *.part|*.json|*.meta) continue;; esac
    corecheck $f >> $RESULTS/cores.json || true
done
cat /proc/sys/kernel/core_dump_stats > $RESULTS/stats 2>/dev/null || true
"""


AGENT_START = """
cat > /tmp/coredam.conf <<'CONF'
{conf}
CONF
coredamd -c /tmp/coredam.conf > $RESULTS/agent.log 2>&1 &
echo $! > /tmp/agent.pid
i=0
until [ -S /run/coredam/control.sock ]; do
    i=$((i + 1)); [ $i -lt 300 ] || {{ cat $RESULTS/agent.log; exit 1; }}
    sleep 0.1
done
"""

AGENT_STOP = """
coredamctl -c /tmp/coredam.conf status --json > $RESULTS/status.json || true
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


def agent_setup(name, describe, conf):
    return Setup(name, "patched", describe, script=AGENT_START.format(conf=conf.strip()),
                 teardown=AGENT_STOP)


@dataclass
class StormResult:
    setup: str
    crashes: int
    mb: int
    idle: dict
    storm: dict
    cores_complete: int
    cores_found: int
    exit_s: float
    drain_s: float
    stats: str
    samples: list
    start_ms: int
    synced_ms: int


def run(setup, crashes=16, mb=64, idle_s=10, interval_ms=50,
        disk_bps_write=40_000_000, timeout=1800):
    sysctls = {"kernel.core_pattern": "/scratch/cores/core.%p"}
    sysctls.update(setup.sysctls)
    script = STORM_SCRIPT.format(setup=setup.script, teardown=setup.teardown,
                                 interval=interval_ms, idle=idle_s,
                                 crashes=crashes, mb=mb)
    res = vm.boot(script, kernel=setup.kernel, sysctls=sysctls, timeout=timeout,
                  disk_bps_write=disk_bps_write, name=f"storm-{setup.name}")
    if res.rc != 0:
        raise RuntimeError(f"storm job failed (rc {res.rc}):\n{res.output}")
    prep, start, end, synced = (int(x) for x in res.text("storm.times").split())
    samples = vm.read_probe(res.path("probe.txt"))
    # idle: the probe's samples before the crashers start, but its first second
    t0 = samples[0][0] if samples else prep
    idle = vm.latency_stats([l for t, l in samples if t0 + 1000 <= t < prep])
    storm = vm.latency_stats([l for t, l in samples if start <= t <= synced])
    cores = res.json_lines("cores.json") if res.path("cores.json").exists() else []
    stats = res.text("stats").strip() if res.path("stats").exists() else ""
    return StormResult(setup=setup.name, crashes=crashes, mb=mb, idle=idle,
                       storm=storm, cores_found=len(cores),
                       cores_complete=sum(1 for c in cores if c["complete"]),
                       exit_s=(end - start) / 1000.0,
                       drain_s=(synced - start) / 1000.0, stats=stats,
                       samples=samples, start_ms=start, synced_ms=synced)


def physical_limit_s(crashes, mb, disk_bps_write=40_000_000):
    return crashes * (mb << 20) / disk_bps_write


def table(results, disk_bps_write=40_000_000):
    head = ("setup", "idle p50", "idle p99", "idle max", "storm p50",
            "storm p99", "storm max", "p99/idle", "max/idle", "cores ok",
            "last core", "vs disk")
    rows = [head]
    for r in results:
        def ratio(a, b):
            return f"{a / b:.1f}x" if b else "-"
        limit = physical_limit_s(r.crashes, r.mb, disk_bps_write)
        rows.append((r.setup, f"{r.idle['p50']:.1f} ms", f"{r.idle['p99']:.1f} ms",
                     f"{r.idle['max']:.1f} ms", f"{r.storm['p50']:.1f} ms",
                     f"{r.storm['p99']:.1f} ms", f"{r.storm['max']:.1f} ms",
                     ratio(r.storm["p99"], r.idle["p99"]),
                     ratio(r.storm["max"], r.idle["max"]),
                     f"{r.cores_complete}/{r.crashes}", f"{r.drain_s:.1f} s",
                     f"{r.drain_s / limit:.2f}x"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def plot(results, path, title):
    """Probe latency over time, one line per setup, log scale; the storm's
    start (0 s) and each setup's end (every core on disk) marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5))
    for r in results:
        xs = [(t - r.start_ms) / 1000.0 for t, _ in r.samples]
        ys = [lat / 1000.0 for _, lat in r.samples]
        line, = ax.plot(xs, ys, linewidth=0.8, label=r.setup)
        ax.axvline((r.synced_ms - r.start_ms) / 1000.0, color=line.get_color(),
                   linestyle=":", linewidth=1)
    ax.axvline(0, color="black", linestyle="--", linewidth=1, label="storm starts")
    ax.set_yscale("log")
    ax.set_xlabel("seconds since the crashes (dotted: last core on disk)")
    ax.set_ylabel("4 KiB write + fdatasync latency (ms)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def stats_dict(text):
    names = ["active", "waiting", "started", "admitted", "completed", "failed",
             "skipped_full", "skipped_timeout", "skipped_killed",
             "skipped_pipe_limit", "unmoved", "bytes"]
    return dict(zip(names, (int(x) for x in text.split()))) if text else {}


def to_json(results):
    return json.dumps([{k: v for k, v in r.__dict__.items() if k != "samples"}
                       for r in results], indent=1)
