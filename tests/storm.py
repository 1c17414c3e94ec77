"""Crash storms in the guest, with a latency probe, and what they did.

Used by the demo and the benchmark; the guest side is a shell script built
here, the numbers are computed on the host from the probe's samples."""

from dataclasses import dataclass

import vm

STORM_SCRIPT = """
. /lib/coredam/lib.sh
mkdir -p /scratch/cores /scratch/probe
{setup}
probe -d /scratch/probe -o $RESULTS/probe.txt -i {interval} -s /tmp/stop-probe &
probe_pid=$!
sleep {idle}
storm {crashes} {mb}
sleep 2
touch /tmp/stop-probe
wait $probe_pid
sync
for f in /scratch/cores/core.*; do
    case $f in *.part) continue;; esac
    corecheck $f >> $RESULTS/cores.json || true
done
cat /proc/sys/kernel/core_dump_stats > $RESULTS/stats 2>/dev/null || true
"""


@dataclass
class StormResult:
    setup: str
    crashes: int
    mb: int
    idle: dict
    storm: dict
    cores_complete: int
    cores_found: int
    drain_s: float
    stats: str


def run(setup_name, kernel, setup_script="", sysctls=None, crashes=16, mb=64,
        idle_s=10, interval_ms=50, disk_bps_write=40_000_000, timeout=1800):
    sysctls = dict(sysctls or {})
    sysctls.setdefault("kernel.core_pattern", "/scratch/cores/core.%p")
    script = STORM_SCRIPT.format(setup=setup_script, interval=interval_ms,
                                 idle=idle_s, crashes=crashes, mb=mb)
    res = vm.boot(script, kernel=kernel, sysctls=sysctls, timeout=timeout,
                  disk_bps_write=disk_bps_write, name=f"storm-{setup_name}")
    if res.rc != 0:
        raise RuntimeError(f"storm job failed (rc {res.rc}):\n{res.output}")
    prep, start, end = (int(x) for x in res.text("storm.times").split())
    # idle: the probe's samples before the crashers start, but its first second
    samples = [(int(t), int(l)) for t, l in
               (line.split() for line in res.text("probe.txt").splitlines())]
    t0 = samples[0][0] if samples else prep
    idle = vm.latency_stats([l for t, l in samples if t0 + 1000 <= t < prep])
    storm = vm.latency_stats([l for t, l in samples if start <= t <= end])
    cores = res.json_lines("cores.json") if res.path("cores.json").exists() else []
    stats = res.text("stats").strip() if res.path("stats").exists() else ""
    return StormResult(setup=setup_name, crashes=crashes, mb=mb, idle=idle,
                       storm=storm, cores_found=len(cores),
                       cores_complete=sum(1 for c in cores if c["complete"]),
                       drain_s=(end - start) / 1000.0, stats=stats)


def table(results):
    head = ("setup", "idle p50", "idle p99", "idle max", "storm p50",
            "storm p99", "storm max", "p99/idle", "cores ok", "last core")
    rows = [head]
    for r in results:
        ratio = r.storm["p99"] / r.idle["p99"] if r.idle["p99"] else float("nan")
        rows.append((r.setup, f"{r.idle['p50']:.1f} ms", f"{r.idle['p99']:.1f} ms",
                     f"{r.idle['max']:.1f} ms", f"{r.storm['p50']:.1f} ms",
                     f"{r.storm['p99']:.1f} ms", f"{r.storm['max']:.1f} ms",
                     f"{ratio:.1f}x", f"{r.cores_complete}/{r.crashes}",
                     f"{r.drain_s:.1f} s"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = []
    for n, row in enumerate(rows):
        lines.append("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |")
        if n == 0:
            lines.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)
