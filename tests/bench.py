#!/usr/bin/env python3
"""The storm benchmark: coredam against today's alternatives, side by side
in one run, on the same virtual disk (ext4, QEMU write throttle 40 MB/s).

Setups:  stock, no-dumps (the same crashes with no core written: the
         floor every probe is also compared with), skip, userspace-cgroup,
         coredam-fixed, coredam-adaptive; v1-fixed and v1-adaptive (series
         v1's kernel, `make kernel-v1`) only when named
Scenarios: burst, idle drain, sustained, foreground load, and storms of
         other shapes: mixed, threads, nested, staggered (see SCENARIOS)

    make bench      (BENCH_REPEAT=N repetitions, default 3; BENCH_SETUPS and
                     BENCH_SCENARIOS select by name, comma separated;
                     BENCH_DEFAULTS=0 leaves out the knobs-at-default run)

BENCH_KERNEL_STOCK, BENCH_KERNEL_PATCHED, BENCH_KERNEL_V1: a bzImage to boot
instead of `make kernel`'s (or `make kernel-v1`'s) for the setups of that
kernel, to measure a kernel under development without building it here;
the report names it by the start of its sha256. The knobs-at-default run
(bench_defaults) always boots `make kernel`'s kernels.

Prints the tables; writes build/bench/report.md, build/bench/results.json
and one latency plot per scenario with a probe (build/bench/*.png). Every
figure is the median over the repetitions; the plots show the first.
"""

import dataclasses
import datetime
import hashlib
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
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

FIXED_DESCRIBE = "patched kernel + coredamd, fixed 10 MB/s, 2 dumps at once"
ADAPTIVE_DESCRIBE = ("patched kernel + coredamd, adaptive 10-30 MB/s (10 while somebody else "
                     "uses the disk), 1-2 dumps at once")


def variant(name, describe, conf, section, line, why=""):
    """A setup that puts back what a default replaced, or tries a knob:
    @conf with one more line, in a [@section] of its own at the end (a
    later value wins)."""
    return storm.agent_setup(name, f"{describe}, {line}" + (f" ({why})" if why else ""),
                             f"{conf.rstrip()}\n[{section}]\n{line}\n")


SETUPS = [
    storm.Setup("stock", "stock", "stock 6.12, file core_pattern, no limits"),
    # the floor: what the storm costs without its dumps (under TCG the
    # crashers themselves take CPU), the same crashes in the same scenario
    storm.Setup("no-dumps", "stock",
                "stock 6.12 with an empty core_pattern: the same crashes, no core "
                "written (what the crashing processes cost by themselves)",
                sysctls={"kernel.core_pattern": ""}),
    storm.Setup("skip", "stock",
                "stock 6.12, pipe core_pattern to a minimal helper (no write-behind "
                "window), core_pipe_limit=2: dumps beyond two at once are dropped",
                sysctls={"kernel.core_pattern": "|/bin/pipewriter -W 0 /scratch/cores/core.%p",
                         "kernel.core_pipe_limit": "2"}),
    storm.agent_setup("userspace-cgroup",
                      "stock 6.12 + coredamd + coredam-pipe: the helper queues for a slot "
                      "and writes from the io.max-limited cgroup, fixed 10 MB/s, 2 at once",
                      FIXED + PIPE, kernel="stock"),
    # series v1 (the dumping task moves into the dump cgroup) next to the
    # current series, with the same agent configuration; today's agent
    # cannot read v1's positional core_dump_stats and goes on without it
    storm.agent_setup("v1-fixed",
                      "series v1 kernel (git 3fdf619) + coredamd, fixed 10 MB/s, 2 dumps "
                      "at once", FIXED, kernel="v1"),
    storm.agent_setup("coredam-fixed", FIXED_DESCRIBE, FIXED),
    storm.agent_setup("v1-adaptive",
                      "series v1 kernel (git 3fdf619) + coredamd, adaptive 10-30 MB/s (10 while "
                      "somebody else uses the disk), 1-2 dumps at once, no limit while nobody "
                      "else uses the disk", ADAPTIVE, kernel="v1"),
    storm.agent_setup("coredam-adaptive", ADAPTIVE_DESCRIBE + ", no limit while nobody else uses "
                      "the disk (LiftWhenIdle=yes, the default)", ADAPTIVE),
    # what LiftWhenIdle= (on by default) replaced: the ceiling is the top
    # even when nobody else uses the disk
    variant("coredam-nolift", ADAPTIVE_DESCRIBE, ADAPTIVE, "Adaptive", "LiftWhenIdle=no",
            "the ceiling the top even on an otherwise idle disk"),
    # a smaller write-behind window: the dumps' requests are a quarter of
    # the default's, so a foreground request waits behind less of one
    variant("coredam-fixed-w128", FIXED_DESCRIBE, FIXED, "Limits", "WritebackWindow=128K"),
    variant("coredam-adaptive-w128", ADAPTIVE_DESCRIBE, ADAPTIVE, "Limits", "WritebackWindow=128K"),
    # the ceiling at half the disk instead of three quarters: what the
    # dumps may take while somebody else uses it
    variant("coredam-adaptive-c20", ADAPTIVE_DESCRIBE, ADAPTIVE, "Adaptive", "Ceiling=20M",
            "at most 20 MB/s while somebody else uses the disk"),
    # what CeilingWhenBusy= (the floor by default) replaced: while
    # somebody else uses the disk the budget climbs to the ceiling
    variant("coredam-adaptive-climb", ADAPTIVE_DESCRIBE, ADAPTIVE, "Adaptive", "CeilingWhenBusy=30M",
            "the ceiling the top while somebody else uses the disk"),
    # the agent's own CPU: its look through /proc and its work on each new
    # dump, at nice 10 instead of the foreground's priority
    storm.agent_setup("coredam-adaptive-agentnice", ADAPTIVE_DESCRIBE + ", the agent itself at nice 10",
                      ADAPTIVE, after_start="renice -n 10 -p $(cat /tmp/agent.pid) > /dev/null"),
    # the fixed budget at the rate the adaptive one's ceiling allows: rate
    # or movement, which costs the probe
    variant("coredam-fixed-20m", FIXED_DESCRIBE, FIXED, "Limits", "WriteBandwidth=20M",
            "twice the rate, fixed"),
    # what DumpNice=19 (the default) replaced: the dumps at the crashed
    # process's own CPU priority
    variant("coredam-fixed-keepnice", FIXED_DESCRIBE, FIXED, "Limits", "DumpNice=keep",
            "the dumps at their own CPU priority"),
    variant("coredam-adaptive-keepnice", ADAPTIVE_DESCRIBE, ADAPTIVE, "Limits", "DumpNice=keep",
            "the dumps at their own CPU priority"),
]
# not in the default run: they need `make kernel-v1`, and add a third to its time
OPTIONAL_SETUPS = {"v1-fixed", "v1-adaptive", "coredam-nolift", "coredam-fixed-w128",
                   "coredam-adaptive-w128", "coredam-fixed-keepnice", "coredam-adaptive-keepnice",
                   "coredam-adaptive-c20", "coredam-fixed-20m"}
# the setup every probe is also compared with
FLOOR = "no-dumps"

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
dev=$(cat /sys/block/${{SCRATCH_DEV#/dev/}}/dev)
echo "$dev wbps={NESTED_MBPS * 1_000_000}" > /sys/fs/cgroup/crashers/svc0/io.max
echo "$dev wbps={NESTED_MBPS * 1_000_000}" > /sys/fs/cgroup/crashers/svc1/io.max
"""

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
    storm.Scenario("mixed", "16 processes of mixed sizes crash at once: "
                   f"{', '.join(map(str, MIXED_MB))} MB ({sum(MIXED_MB)} MB in all); "
                   "the write probe runs", sizes=MIXED_MB),
    storm.Scenario("threads", "16 processes of 64 MB with 8 threads each crash at "
                   "once (the dump stops 7 sleeping threads); the write probe runs",
                   threads=8),
    storm.Scenario("nested", "16 processes of 64 MB crash at once, 4 in each of "
                   "/crashers/svc0..3; svc0 and svc1 have io.max "
                   f"{NESTED_MBPS} MB/s write of their own; the write probe runs",
                   cgroups=NESTED_CGROUPS, prepare=NESTED_PREPARE),
    storm.Scenario("staggered", "32 processes of 32 MB crash one every 400 ms (12.4 s "
                   "from the first to the last); the write probe runs",
                   crashes=32, mb=32, period_ms=400),
]
# the storms of other shapes share one table
SHAPES = ("mixed", "threads", "nested", "staggered")


def skipped_counted(r):
    """Dumps the setup's own counters say it skipped, or None without counters
    (series v1's positional line is read too: storm.counters())."""
    src = storm.counters(r.stats) or r.pipe_stats
    if not src:
        return None
    return sum(v for k, v in src.items() if k.startswith("skipped_"))


def figures(r):
    """One run's numbers, by name."""
    f = {"kept": r.kept, "crashes": r.crashes, "drain_s": r.drain_s,
         "vs_disk": r.drain_s / r.disk_s(DISK_BPS),
         "exit_p50_ms": storm.pct(r.crash_exit_ms, 50),
         "exit_p99_ms": storm.pct(r.crash_exit_ms, 99),
         "mem_peak_mb": r.mem_peak / 2**20, "lifts": r.lifts}
    if r.agent_cpu_s is not None:
        f["agent_cpu_s"] = r.agent_cpu_s
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


def scenario(name):
    return next(s for s in SCENARIOS if s.name == name)


def main_probe(sc):
    """The probe a scenario is judged by: its first ("write", or the
    foreground writer's "stream")."""
    probes = scenario(sc).probes
    return probes[0] if probes else None


def floor_ratio(fig, sc, setup):
    """The scenario's main probe p99 over the no-dumps floor's for the same
    window (both medians of the run); None without a no-dumps run."""
    mode = main_probe(sc)
    f = fig.get((sc, setup))
    if not (mode and f and f.get(f"floor_{mode}_p99")):
        return None
    return f[f"{mode}_storm_p99"] / f[f"floor_{mode}_p99"]


def add_floor(floor, results, figs):
    """Each run's floor: the p99 of the no-dumps run of the same scenario and
    repetition over a window as long as the run's own storm window, from
    the first crash. The crashers of a storm that dumps exit over the whole
    of its window, and those of a storm without dumps in a second: a p99
    over windows of different lengths would weigh that second differently."""
    for r, f in zip(results, figs):
        for mode, p in r.probes.items():
            f[f"floor_{mode}_p99"] = storm.window_stats(floor, mode, p["storm_s"])["p99"]


def vs_floor(fig, sc, setup):
    if setup == FLOOR:
        return "floor"
    r = floor_ratio(fig, sc, setup)
    return "-" if r is None else f"{r:.1f}x"


def tables(fig, setups):
    """Markdown tables, one per scenario, from the median figures."""
    out = {}
    rows = []
    for s in setups:
        f = fig.get(("burst", s))
        if f:
            rows.append((s, f"{f['write_idle_p99']:.1f} / {f['write_storm_p99']:.1f} ms",
                         x(f["write_storm_p99"], f["write_idle_p99"]),
                         vs_floor(fig, "burst", s),
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
            ("setup", "write p99 idle/storm", "vs idle", "vs no-dumps", "write max",
             "vs idle", "read p99 idle/storm", "vs idle", "cores ok",
             "last core (vs disk)", "crash to exit p50/p99", "crashers' memory peak"), rows)
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
                         vs_floor(fig, "sustained", s),
                         f"{f['write_storm_max']:.0f} ms",
                         f"{f['kept']:.0f}/{f['crashes']:.0f}", f"{lost:.0f}",
                         "-" if counted is None else f"{counted:.0f}",
                         f"{f['mem_peak_mb']:.0f} MB", f"{f['drain_s']:.1f} s",
                         f"{f['exit_p50_ms'] / 1000:.1f} / {f['exit_p99_ms'] / 1000:.1f} s"))
    if rows:
        out["sustained"] = storm.markdown(
            ("setup", "write p99 idle/storm", "vs idle", "vs no-dumps", "write max",
             "cores ok", "not kept", "skips counted", "crashers' memory peak", "last core",
             "crash to exit p50/p99"), rows)
    rows = []
    for s in setups:
        f = fig.get(("foreground", s))
        if f:
            rows.append((s, f"{f['stream_idle_mbps']:.1f} / {f['stream_storm_mbps']:.1f} MB/s",
                         f"{f['stream_idle_p50']:.0f} / {f['stream_storm_p50']:.0f} ms",
                         f"{f['stream_idle_p99']:.0f} / {f['stream_storm_p99']:.0f} ms",
                         vs_floor(fig, "foreground", s),
                         f"{f['stream_storm_max']:.0f} ms",
                         f"{f['kept']:.0f}/{f['crashes']:.0f}", f"{f['drain_s']:.1f} s"))
    if rows:
        out["foreground"] = storm.markdown(
            ("setup", "writer throughput idle/storm", "fsync p50 idle/storm",
             "fsync p99 idle/storm", "p99 vs no-dumps", "fsync max storm", "cores ok",
             "last core"), rows)
    # the storms of other shapes: the burst's columns but the read probe's
    for sc in SHAPES:
        rows = []
        for s in setups:
            f = fig.get((sc, s))
            if f:
                rows.append((s, f"{f['write_idle_p99']:.1f} / {f['write_storm_p99']:.1f} ms",
                             x(f["write_storm_p99"], f["write_idle_p99"]),
                             vs_floor(fig, sc, s),
                             f"{f['write_storm_max']:.0f} ms",
                             x(f["write_storm_max"], f["write_idle_max"]),
                             f"{f['kept']:.0f}/{f['crashes']:.0f}",
                             f"{f['drain_s']:.1f} s ({f['vs_disk']:.2f}x)",
                             f"{f['exit_p50_ms'] / 1000:.1f} / {f['exit_p99_ms'] / 1000:.1f} s",
                             f"{f['mem_peak_mb']:.0f} MB"))
        if rows:
            out[sc] = storm.markdown(
                ("setup", "write p99 idle/storm", "vs idle", "vs no-dumps", "write max",
                 "vs idle", "cores ok", "last core (vs disk)", "crash to exit p50/p99",
                 "crashers' memory peak"), rows)
    return out


# series v1 beside v2: the same agent configuration on each kernel
VERSIONS = (("fixed", "v1-fixed", "coredam-fixed"),
            ("adaptive", "v1-adaptive", "coredam-adaptive"))


def per_run(runs, sc, setup):
    """The figures v1 and v2 are compared on, one list per figure with a
    value per repetition: lower is better for each."""
    rs = runs.get((sc, setup), [])
    mode = main_probe(sc)
    out = {}
    if mode and rs and all(r.get(f"floor_{mode}_p99") for r in rs):
        out["probe p99 vs no-dumps"] = [r[f"{mode}_storm_p99"] / r[f"floor_{mode}_p99"]
                                        for r in rs]
    if rs:
        out["last core (s)"] = [r["drain_s"] for r in rs]
        out["crash to exit p99 (s)"] = [r["exit_p99_ms"] / 1000 for r in rs]
        out["cores not kept"] = [r["crashes"] - r["kept"] for r in rs]
    return out


def spread(vals, unit=""):
    m = statistics.median(vals)
    fmt = (lambda v: f"{v:.0f}") if all(float(v).is_integer() for v in vals) else \
          (lambda v: f"{v:.2f}")
    return f"{fmt(m)}{unit} [{fmt(min(vals))}-{fmt(max(vals))}]"


def versions(runs, scenarios):
    """v2 against v1 per scenario, budget and figure: the median with the
    range of the repetitions, and the verdict. The noise is the run-to-run
    spread, the wider of the two setups' ranges (max - min over the
    repetitions): v2 is worse by more than the noise when its median
    exceeds v1's by more than that, better in the mirror case. Returns
    (table, the cases where v2 is worse beyond the noise)."""
    rows, worse = [], []
    for sc in scenarios:
        for budget, old, new in VERSIONS:
            a, b = per_run(runs, sc, old), per_run(runs, sc, new)
            for name in (k for k in a if k in b):
                va, vb = a[name], b[name]
                ma, mb = statistics.median(va), statistics.median(vb)
                noise = max(max(va) - min(va), max(vb) - min(vb))
                if mb - ma > noise:
                    verdict = "v2 worse"
                    worse.append(f"{sc}, {budget}: {name} {spread(va)} on v1, "
                                 f"{spread(vb)} on v2")
                elif ma - mb > noise:
                    verdict = "v2 better"
                else:
                    verdict = "within noise"
                ratio = f"{mb / ma:.2f}" if ma else "-"
                rows.append((sc, budget, name, spread(va), spread(vb), ratio, verdict))
    if not rows:
        return None, worse
    return storm.markdown(("scenario", "budget", "figure", "v1 median [range]",
                           "v2 median [range]", "v2 / v1", "verdict"), rows), worse


def goals(fig, defaults_ratio, versions_worse=None):
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
    for sc in (sc.name for sc in SCENARIOS if sc.probes):
        for s in ("coredam-fixed", "coredam-adaptive"):
            r = floor_ratio(fig, sc, s)
            if r is None:
                continue
            mode = main_probe(sc)
            goal(f"{sc}, {s}: probe p99 within 1.5x of no-dumps", r <= 1.5,
                 f"{fig[(sc, s)][f'{mode}_storm_p99']:.1f} ms against "
                 f"{fig[(sc, s)][f'floor_{mode}_p99']:.1f} ms, {r:.2f}x")
    f = fig.get(("idle", "coredam-adaptive"))
    if f:
        goal("idle drain, coredam-adaptive: drains within 1.15x of the disk's own time",
             f["vs_disk"] <= 1.15, f"{f['vs_disk']:.2f}x")
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
    if versions_worse is not None:
        goal("v2 next to v1: no setup worse by more than the run-to-run noise",
             not versions_worse, "; ".join(versions_worse) or "none worse")
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


def kernel_override(kernel):
    """The bzImage BENCH_KERNEL_<KERNEL> names instead of `kernel`, or None."""
    return os.environ.get(f"BENCH_KERNEL_{kernel.upper()}") or None


def kernel_id(kernel):
    """How the report names a kernel: the cache directory `make kernel`
    built it in, or, for BENCH_KERNEL_<KERNEL>, the variable and the start
    of the file's sha256 (not its path)."""
    path = kernel_override(kernel)
    if path:
        return (f"BENCH_KERNEL_{kernel.upper()}, sha256 "
                f"{hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]}")
    return vm.kernel_path(kernel).parent.resolve().name


def main():
    reps = int(os.environ.get("BENCH_REPEAT", 3))
    setups = pick([s.name for s in SETUPS], "BENCH_SETUPS", OPTIONAL_SETUPS)
    scenarios = pick([s.name for s in SCENARIOS], "BENCH_SCENARIOS")
    chosen = [dataclasses.replace(s, kernel=kernel_override(s.kernel) or s.kernel)
              for s in SETUPS if s.name in setups]
    # named before the runs: a kernel from outside the build may change meanwhile
    kernel_ids = "; ".join(f"{k} {kernel_id(k)}" for k in dict.fromkeys(
        s.kernel for s in SETUPS if s.name in setups))
    out = vm.BUILD / "bench"
    out.mkdir(parents=True, exist_ok=True)
    started = datetime.datetime.now(datetime.timezone.utc)
    # the floor runs last in each scenario, its probes measuring for as
    # long as the longest storm window of the others (add_floor)
    chosen.sort(key=lambda s: s.name == FLOOR)
    runs, first, wall = {}, {}, {}
    for rep in range(reps):
        for sc in (s for s in SCENARIOS if s.name in scenarios):
            results, figs = [], []
            for se in chosen:
                hold = 0
                if se.name == FLOOR and sc.probes:
                    hold = max((p["storm_s"] for r in results for p in r.probes.values()),
                               default=sc.total_mb() * 2**20 / DISK_BPS)
                print(f"[{rep + 1}/{reps}] {sc.name} / {se.name} ...", flush=True)
                t0 = time.monotonic()
                r = storm.run(se, sc, hold_s=hold)
                wall.setdefault((sc.name, se.name), []).append(time.monotonic() - t0)
                results.append(r)
                figs.append(figures(r))
                runs.setdefault((sc.name, se.name), []).append(figs[-1])
                if rep == 0:
                    first.setdefault(sc.name, []).append(r)
                print(f"    kept {r.kept}/{r.crashes}, last core {r.drain_s:.1f} s"
                      + "".join(f", {m} p99 {p['idle']['p99']:.1f} -> {p['storm']['p99']:.1f} ms"
                                for m, p in r.probes.items())
                      + (f", lifted {r.lifts}x" if r.lifts else "")
                      + (f", agent CPU {r.agent_cpu_s:.2f} s" if r.agent_cpu_s is not None else "")
                      + f"; {wall[(sc.name, se.name)][-1]:.0f} s", flush=True)
            if results and results[-1].setup == FLOOR:
                add_floor(results[-1], results, figs)
    fig = {k: medians(v) for k, v in runs.items()}

    defaults_ratio = None
    if os.environ.get("BENCH_DEFAULTS", "1") != "0":
        print("knobs at default: crash-to-exit on stock and patched ...", flush=True)
        med = bench_defaults.measure(rounds=reps, crashes=40)
        defaults_ratio = med["patched"] / med["stock"]

    # make bench installs it; a run of hours is not to be lost for a plot
    plots = importlib.util.find_spec("matplotlib") is not None
    if not plots:
        print("no plots: python3-matplotlib is missing (scripts/deps.sh demo)", flush=True)
    for sc in scenarios:
        rs = first.get(sc, [])
        mode = next(iter(rs[0].probes), None) if rs else None
        if mode and plots:
            storm.plot(rs, out / f"{sc}.png",
                       textwrap.fill(f"{sc}: {scenario(sc).describe}", 100), mode=mode)

    # first: a run of hours is not to be lost to the report's code
    (out / "results.json").write_text(json.dumps(
        {f"{k[0]}/{k[1]}": v for k, v in runs.items()}, indent=1))
    tabs = tables(fig, setups)
    vtab, vworse = versions(runs, scenarios)
    goal_lines = goals(fig, defaults_ratio, vworse if vtab else None)
    elapsed = (datetime.datetime.now(datetime.timezone.utc) - started).total_seconds()
    cpu = next((line.split(":", 1)[1].strip() for line in
                Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")), "?")
    rev = subprocess.run(["git", "describe", "--always", "--dirty"], capture_output=True,
                         text=True, cwd=Path(__file__).resolve().parent).stdout.strip()
    env = " ".join(f"{k}={os.environ[k]}" for k in ("BENCH_SETUPS", "BENCH_SCENARIOS",
                                                    "BENCH_DEFAULTS") if k in os.environ)
    md = [f"# coredam storm benchmark, {started:%Y-%m-%d %H:%M} UTC",
          "",
          f"Command: `{env + ' ' if env else ''}make bench` (BENCH_REPEAT={reps}); "
          f"revision {rev}; {elapsed / 60:.0f} min. Figures are medians over {reps} "
          f"repetition(s); plots show the first.",
          f"Machine: {os.cpu_count()} CPUs ({cpu}); "
          f"guests under QEMU TCG, one guest CPU, ext4 on a virtio disk throttled to 40 MB/s.",
          f"Kernels: {kernel_ids}.",
          "", "## Setups", ""]
    md += [f"- `{s.name}`: {s.describe}" for s in SETUPS if s.name in setups]
    md += ["", "## Scenarios", ""]
    md += [f"- `{s.name}`: {s.describe}" for s in SCENARIOS if s.name in scenarios]
    floor = ("'vs no-dumps': the storm p99 over the p99 the no-dumps setup (the same "
             "crashes without their cores) measured in the same scenario over a window "
             "as long, from its first crash; no-dumps runs last and its probes go on "
             "for the longest window of the others, which its own row shows.")
    shape = ("Columns as for the burst. " + floor + " 'last core' from the first "
             "crash until every core is on disk, and its ratio to the disk's own time "
             "for the storm's bytes.")
    notes = {
        "burst": "Probe latency ratios are to the idle baseline of the same boot. " + floor +
                 " 'last core': from the first crash until every core is on disk "
                 "(after sync), and its ratio to the disk's own time for the bytes. "
                 "Crashers' memory peak: memory.peak of their cgroup.",
        "idle": "The physical limit for 16 x 64 MB at 40 MB/s is "
                f"{storm.physical_limit_s(16, 64, DISK_BPS):.1f} s.",
        "sustained": "'not kept': crashes without a complete core; 'skips counted': "
                     "what the setup's own counters (kernel core_dump_stats, or "
                     "coredam-pipe's) say they skipped; '-': no counters. " + floor,
        "foreground": "The writer's throughput is 4 MiB per fdatasync'ed chunk over "
                      "the window; 'storm' is from the first crash to the last core. "
                      "'p99 vs no-dumps': the fsync p99 over the no-dumps setup's.",
        "mixed": shape + f" The disk's own time for {sum(MIXED_MB)} MB is "
                 f"{sum(MIXED_MB) * 2**20 / DISK_BPS:.1f} s.",
        "threads": shape,
        "nested": shape + " The crashers' own io.max paces their cores only where the "
                  "dump is charged to their cgroup (stock, no agent); with a dump "
                  "cgroup its limit applies instead.",
        "staggered": shape + " The crashes arrive over 12.4 s, so the cores cannot be "
                     "on disk in less than that.",
    }
    for sc in scenarios:
        if sc in tabs:
            md += ["", f"## {sc}", "", notes[sc], "", tabs[sc]]
            if (out / f"{sc}.png").exists():
                md += ["", f"![{sc}]({sc}.png)"]
    if vtab:
        md += ["", "## Series v1 beside v2", "",
               f"The same agent configuration on each kernel; per figure the median "
               f"of {reps} repetitions and their range. Lower is better for every "
               "figure. The noise is the wider of the two ranges: 'v2 worse' where "
               "v2's median exceeds v1's by more than that, 'v2 better' in the mirror "
               "case, otherwise the difference is within the run-to-run noise.", "",
               vtab]
    agent = [(k[0], k[1], ", ".join(str(f["lifts"]) for f in v),
              ", ".join(f"{f['agent_cpu_s']:.2f} s" for f in v if "agent_cpu_s" in f))
             for k, v in runs.items() if any("agent_cpu_s" in f for f in v)]
    if agent:
        md += ["", "## The agent", "",
               "Per repetition: how often the agent lifted the dump cgroup's bandwidth "
               "limit because nobody else used the disk (LiftWhenIdle=; `event=budget "
               "write_bps=max` in its log after the first dump began; with a probe "
               "running it should not), and its own CPU time, user and system, from "
               "its start to its stop.", "",
               storm.markdown(("scenario", "setup", "lifts", "agent CPU"), agent)]
    md += ["", "## Goals", ""] + goal_lines
    if defaults_ratio is not None:
        md += ["", f"Knobs at default: `bench_defaults`, {reps} x 40 crashes of 1 MB per "
               f"kernel, median crash-to-exit stock {med['stock']:.2f} ms, patched "
               f"{med['patched']:.2f} ms."]
    md += ["", "## Run times", "",
           "One repetition of each scenario, per setup (boot to results, median):", ""]
    md += [storm.markdown(("scenario", "setup", "time"),
                          [(k[0], k[1], f"{statistics.median(v):.0f} s")
                           for k, v in wall.items()])]
    report = "\n".join(md) + "\n"
    (out / "report.md").write_text(report)
    print()
    print(report)
    print(f"report: {out / 'report.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
