#!/usr/bin/env python3
"""The storm benchmark: coredam against today's alternatives, side by side
in one run, on the same virtual disk (ext4, QEMU write throttle 40 MB/s).

Setups:  stock, skip, userspace-cgroup, coredam-fixed, coredam-adaptive;
         no-dumps (only when named: the same crashes with no core written)
Scenarios: burst, idle drain, sustained, foreground load (see SCENARIOS)

    make bench      (BENCH_REPEAT=N repetitions, default 3; BENCH_SETUPS and
                     BENCH_SCENARIOS select by name, comma separated)

Prints the tables; writes build/bench/report.md, build/bench/results.json
and one latency plot per scenario with a probe (build/bench/*.png). Every
figure is the median over the repetitions; the plots show the first.
"""

import datetime
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_defaults  # noqa: E402
import storm  # noqa: E402
import vm  # noqa: E402

DISK_BPS = 40_000_000

# The fixed budget, the same for the stock kernel's helper and the kernel
# path: 10 MB/s, two dumps at once.
FIXED = """
[Agent]
Mode=fixed
Interval=500ms
[Cgroup]
Path=/coredump.slice
[Limits]
WriteBandwidth=10M
Concurrency=2
QueueCap=@QUEUE_CAP@
[Space]
FreeSpaceFloor=200M
"""

PIPE = """
[Pipe]
SetCorePattern=yes
Program=/usr/sbin/coredam-pipe
Directory=/scratch/cores
"""

ADAPTIVE = """
[Agent]
Mode=adaptive
Interval=500ms
[Cgroup]
Path=/coredump.slice
[Limits]
QueueCap=@QUEUE_CAP@
[Adaptive]
Floor=10M
Ceiling=30M
ConcurrencyFloor=1
ConcurrencyCeiling=2
[Space]
FreeSpaceFloor=200M
"""

SETUPS = [
    storm.Setup("stock", "stock", "stock 6.12, file core_pattern, no limits"),
    storm.Setup("skip", "stock",
                "stock 6.12, pipe core_pattern to a minimal helper (no write-behind "
                "window), core_pipe_limit=2: dumps beyond two at once are dropped",
                sysctls={"kernel.core_pattern": "|/bin/pipewriter -W 0 /scratch/cores/core.%p",
                         "kernel.core_pipe_limit": "2"}),
    storm.agent_setup("userspace-cgroup",
                      "stock 6.12 + coredamd + coredam-pipe: the helper queues for a slot "
                      "and writes from the io.max-limited cgroup, fixed 10 MB/s, 2 at once",
                      FIXED + PIPE, kernel="stock"),
    storm.agent_setup("coredam-fixed",
                      "patched kernel + coredamd, fixed 10 MB/s, 2 dumps at once", FIXED),
    storm.agent_setup("coredam-adaptive",
                      "patched kernel + coredamd, adaptive 10-30 MB/s, 1-2 dumps at once",
                      ADAPTIVE),
    # not in the default run: the storm's own cost, to tell it from the dumps'
    storm.Setup("no-dumps", "stock",
                "stock 6.12 with an empty core_pattern: the same crashes, no core "
                "written (what the crashing processes cost by themselves)",
                sysctls={"kernel.core_pattern": ""}),
]
OPTIONAL_SETUPS = {"no-dumps"}

SCENARIOS = [
    storm.Scenario("burst", "16 processes of 64 MB crash at once; a probe writes 4 KiB + "
                   "fdatasync every 50 ms, a second reads 4 KiB O_DIRECT at random",
                   probes=("write", "read")),
    storm.Scenario("idle", "idle drain: the burst with no probe", probes=()),
    storm.Scenario("sustained", "a 32 MB process crashes every 250 ms for 20 s (80 "
                   "crashes), queue cap 8; the write probe runs",
                   crashes=80, mb=32, period_ms=250, queue_cap=8, mem="4G"),
    storm.Scenario("foreground", "the burst while a foreground writer streams 4 MiB "
                   "writes, each followed by fdatasync", probes=("stream",)),
]


def skipped_counted(r):
    """Dumps the setup's own counters say it skipped, or None without counters."""
    src = storm.stats_dict(r.stats) or r.pipe_stats
    if not src:
        return None
    return sum(v for k, v in src.items() if k.startswith("skipped_"))


def figures(r):
    """One run's numbers, by name."""
    f = {"kept": r.kept, "crashes": r.crashes, "drain_s": r.drain_s,
         "vs_disk": r.drain_s / storm.physical_limit_s(r.crashes, r.mb, DISK_BPS),
         "exit_p50_ms": storm.pct(r.crash_exit_ms, 50),
         "exit_p99_ms": storm.pct(r.crash_exit_ms, 99),
         "mem_peak_mb": r.mem_peak / 2**20}
    skipped = skipped_counted(r)
    if skipped is not None:
        f["skipped_counted"] = skipped
    for mode, p in r.probes.items():
        for phase in ("idle", "storm"):
            for k in ("p50", "p99", "max"):
                f[f"{mode}_{phase}_{k}"] = p[phase][k]
        if mode == "stream":
            f["stream_idle_mbps"] = p["idle"]["n"] * 4 * 2**20 / p["idle_s"] / 1e6
            f["stream_storm_mbps"] = p["storm"]["n"] * 4 * 2**20 / p["storm_s"] / 1e6
    return f


def medians(runs):
    keys = [k for k in runs[0] if all(k in r for r in runs)]
    return {k: statistics.median(r[k] for r in runs) for k in keys}


def x(a, b):
    return f"{a / b:.1f}x" if b else "-"


def tables(fig, setups):
    """Markdown tables, one per scenario, from the median figures."""
    out = {}
    rows = []
    for s in setups:
        f = fig.get(("burst", s))
        if f:
            rows.append((s, f"{f['write_idle_p99']:.1f} / {f['write_storm_p99']:.1f} ms",
                         x(f["write_storm_p99"], f["write_idle_p99"]),
                         f"{f['write_storm_max']:.0f} ms",
                         x(f["write_storm_max"], f["write_idle_max"]),
                         f"{f['read_idle_p99']:.1f} / {f['read_storm_p99']:.1f} ms",
                         x(f["read_storm_p99"], f["read_idle_p99"]),
                         f"{f['kept']:.0f}/{f['crashes']:.0f}",
                         f"{f['drain_s']:.1f} s ({f['vs_disk']:.2f}x)",
                         f"{f['exit_p50_ms'] / 1000:.1f} / {f['exit_p99_ms'] / 1000:.1f} s",
                         f"{f['mem_peak_mb']:.0f} MB"))
    if rows:
        out["burst"] = storm.markdown(
            ("setup", "write p99 idle/storm", "ratio", "write max", "ratio",
             "read p99 idle/storm", "ratio", "cores ok", "last core (vs disk)",
             "crash to exit p50/p99", "crashers' memory peak"), rows)
    rows = []
    for s in setups:
        f = fig.get(("idle", s))
        if f:
            rows.append((s, f"{f['kept']:.0f}/{f['crashes']:.0f}", f"{f['drain_s']:.1f} s",
                         f"{f['vs_disk']:.2f}x",
                         f"{f['exit_p50_ms'] / 1000:.1f} / {f['exit_p99_ms'] / 1000:.1f} s"))
    if rows:
        out["idle"] = storm.markdown(("setup", "cores ok", "last core", "vs disk",
                                      "crash to exit p50/p99"), rows)
    rows = []
    for s in setups:
        f = fig.get(("sustained", s))
        if f:
            lost = f["crashes"] - f["kept"]
            counted = f.get("skipped_counted")
            rows.append((s, f"{f['write_idle_p99']:.1f} / {f['write_storm_p99']:.1f} ms",
                         x(f["write_storm_p99"], f["write_idle_p99"]),
                         f"{f['write_storm_max']:.0f} ms",
                         f"{f['kept']:.0f}/{f['crashes']:.0f}", f"{lost:.0f}",
                         "-" if counted is None else f"{counted:.0f}",
                         f"{f['mem_peak_mb']:.0f} MB", f"{f['drain_s']:.1f} s",
                         f"{f['exit_p50_ms'] / 1000:.1f} / {f['exit_p99_ms'] / 1000:.1f} s"))
    if rows:
        out["sustained"] = storm.markdown(
            ("setup", "write p99 idle/storm", "ratio", "write max", "cores ok",
             "not kept", "skips counted", "crashers' memory peak", "last core",
             "crash to exit p50/p99"), rows)
    rows = []
    for s in setups:
        f = fig.get(("foreground", s))
        if f:
            rows.append((s, f"{f['stream_idle_mbps']:.1f} / {f['stream_storm_mbps']:.1f} MB/s",
                         f"{f['stream_idle_p50']:.0f} / {f['stream_storm_p50']:.0f} ms",
                         f"{f['stream_idle_p99']:.0f} / {f['stream_storm_p99']:.0f} ms",
                         f"{f['stream_storm_max']:.0f} ms",
                         f"{f['kept']:.0f}/{f['crashes']:.0f}", f"{f['drain_s']:.1f} s"))
    if rows:
        out["foreground"] = storm.markdown(
            ("setup", "writer throughput idle/storm", "fsync p50 idle/storm",
             "fsync p99 idle/storm", "fsync max storm", "cores ok", "last core"), rows)
    return out


def goals(fig, defaults_ratio):
    """The issue's goals, each with the measured figure and met or missed."""
    lines = []

    def goal(text, ok, measured):
        lines.append(f"- {'met' if ok else 'MISSED'}: {text}: {measured}")

    for s in ("coredam-fixed", "coredam-adaptive"):
        f = fig.get(("burst", s))
        if f:
            p99 = f["write_storm_p99"] / f["write_idle_p99"]
            mx = f["write_storm_max"] / f["write_idle_max"]
            goal(f"burst, {s}: probe p99 <= 2x idle, max <= 3x idle, 16/16 cores",
                 p99 <= 2 and mx <= 3 and f["kept"] == f["crashes"],
                 f"p99 {p99:.1f}x, max {mx:.1f}x, {f['kept']:.0f}/{f['crashes']:.0f}")
    f = fig.get(("idle", "coredam-adaptive"))
    if f:
        goal("idle drain, coredam-adaptive: last core within 1.5x of the physical limit",
             f["vs_disk"] <= 1.5, f"{f['vs_disk']:.2f}x")
        fixed = fig.get(("idle", "coredam-fixed"))
        if fixed:
            goal("idle drain: adaptive at least twice as fast as the fixed floor",
                 fixed["drain_s"] >= 2 * f["drain_s"],
                 f"{fixed['drain_s'] / f['drain_s']:.2f}x faster")
    for s in ("coredam-fixed", "coredam-adaptive"):
        f = fig.get(("sustained", s))
        if f:
            p99 = f["write_storm_p99"] / f["write_idle_p99"]
            lost = f["crashes"] - f["kept"]
            goal(f"sustained, {s}: probe p99 <= 2x idle; skipped = crashes - kept",
                 p99 <= 2 and f.get("skipped_counted") == lost,
                 f"p99 {p99:.1f}x; {lost:.0f} not kept, {f.get('skipped_counted', 0):.0f} "
                 f"counted skipped; crashers' memory peak {f['mem_peak_mb']:.0f} MB")
    if defaults_ratio is not None:
        goal("knobs at default: crash-to-exit median patched / stock <= 1.02",
             defaults_ratio <= 1.02, f"{defaults_ratio:.3f}")
    return lines


def pick(names, env, optional=()):
    want = os.environ.get(env)
    if not want:
        return [n for n in names if n not in optional]
    chosen = [n for n in names if n in want.split(",")]
    unknown = set(want.split(",")) - set(names)
    if unknown:
        sys.exit(f"{env}: unknown {', '.join(sorted(unknown))}; known: {', '.join(names)}")
    return chosen


def main():
    reps = int(os.environ.get("BENCH_REPEAT", 3))
    setups = pick([s.name for s in SETUPS], "BENCH_SETUPS", OPTIONAL_SETUPS)
    scenarios = pick([s.name for s in SCENARIOS], "BENCH_SCENARIOS")
    out = vm.BUILD / "bench"
    out.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    runs, first = {}, {}
    for rep in range(reps):
        for sc in (s for s in SCENARIOS if s.name in scenarios):
            for se in (s for s in SETUPS if s.name in setups):
                print(f"[{rep + 1}/{reps}] {sc.name} / {se.name} ...", flush=True)
                r = storm.run(se, sc)
                runs.setdefault((sc.name, se.name), []).append(figures(r))
                if rep == 0:
                    first.setdefault(sc.name, []).append(r)
                print(f"    kept {r.kept}/{r.crashes}, last core {r.drain_s:.1f} s"
                      + "".join(f", {m} p99 {p['idle']['p99']:.1f} -> {p['storm']['p99']:.1f} ms"
                                for m, p in r.probes.items()), flush=True)
    fig = {k: medians(v) for k, v in runs.items()}

    defaults_ratio = None
    if os.environ.get("BENCH_DEFAULTS", "1") != "0":
        print("knobs at default: crash-to-exit on stock and patched ...", flush=True)
        med = bench_defaults.measure(rounds=reps, crashes=40)
        defaults_ratio = med["patched"] / med["stock"]

    for sc in scenarios:
        rs = first.get(sc, [])
        mode = next(iter(rs[0].probes), None) if rs else None
        if mode:
            scen = next(s for s in SCENARIOS if s.name == sc)
            storm.plot(rs, out / f"{sc}.png", f"{sc}: {scen.describe}", mode=mode)

    tabs = tables(fig, setups)
    goal_lines = goals(fig, defaults_ratio)
    elapsed = (datetime.datetime.now(datetime.timezone.utc) - started).total_seconds()
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), "?")
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                         text=True, cwd=Path(__file__).resolve().parent).stdout.strip()
    md = [f"# coredam storm benchmark, {started:%Y-%m-%d %H:%M} UTC",
          "",
          f"Command: `make bench` (BENCH_REPEAT={reps}); revision {rev}; "
          f"{elapsed / 60:.0f} min. Figures are medians over {reps} repetition(s); "
          f"plots show the first.",
          f"Machine: {os.cpu_count()} CPUs ({cpu}); "
          f"guests under QEMU TCG, 2 vCPUs, ext4 on a virtio disk throttled to 40 MB/s.",
          "", "## Setups", ""]
    md += [f"- `{s.name}`: {s.describe}" for s in SETUPS if s.name in setups]
    md += ["", "## Scenarios", ""]
    md += [f"- `{s.name}`: {s.describe}" for s in SCENARIOS if s.name in scenarios]
    notes = {
        "burst": "Probe latency ratios are to the idle baseline of the same boot. "
                 "'last core': from the first crash until every core is on disk "
                 "(after sync), and its ratio to the disk's own time for the bytes. "
                 "Crashers' memory peak: memory.peak of their cgroup.",
        "idle": "The physical limit for 16 x 64 MB at 40 MB/s is "
                f"{storm.physical_limit_s(16, 64, DISK_BPS):.1f} s.",
        "sustained": "'not kept': crashes without a complete core; 'skips counted': "
                     "what the setup's own counters (kernel core_dump_stats, or "
                     "coredam-pipe's) say they skipped; '-': no counters.",
        "foreground": "The writer's throughput is 4 MiB per fdatasync'ed chunk over "
                      "the window; 'storm' is from the first crash to the last core.",
    }
    for sc in scenarios:
        if sc in tabs:
            md += ["", f"## {sc}", "", notes[sc], "", tabs[sc]]
            if (out / f"{sc}.png").exists():
                md += ["", f"![{sc}]({sc}.png)"]
    md += ["", "## Goals", ""] + goal_lines
    if defaults_ratio is not None:
        md += ["", f"Knobs at default: `bench_defaults`, {reps} x 40 crashes of 1 MB per "
               f"kernel, median crash-to-exit stock {med['stock']:.2f} ms, patched "
               f"{med['patched']:.2f} ms."]
    report = "\n".join(md) + "\n"
    (out / "report.md").write_text(report)
    (out / "results.json").write_text(json.dumps(
        {f"{k[0]}/{k[1]}": v for k, v in runs.items()}, indent=1))
    print()
    print(report)
    print(f"report: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
