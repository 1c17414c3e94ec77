#!/usr/bin/env python3
"""The storm benchmark: coredam against today's alternatives, side by side
in one run, on the same virtual disk (ext4, QEMU write throttle 40 MB/s).

Setups:  stock, no-dumps (the same crashes with no core written: the
         floor every probe is also compared with), skip, userspace-cgroup,
         coredam-fixed, coredam-adaptive; v1-fixed and v1-adaptive (series
         v1's kernel, `make kernel-v1`) only when named
Scenarios: burst, idle drain, sustained, foreground load, and storms of
         other shapes: mixed, threads, nested, staggered (see SCENARIOS);
         staggered-filling only when named; apache, the Apache crash storm
         with its own setups (tests/bench_apache.py: no-dumps,
         systemd-coredump, coredam-pipe, coredam-socket,
         coredam-socket-streamed, coredam-fixed, coredam-adaptive; one
         run of each, APACHE_* shape it)

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
figure is the median over the repetitions; the plots show the first. The
Apache storm's section and plot (apache.png) follow the others' (its
results in build/bench-apache/).
"""

import dataclasses
import datetime
import importlib.util
import json
import os
import shutil
import statistics
import subprocess
import sys
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_apache  # noqa: E402
from harness import crashtime, report, stats  # noqa: E402
from harness.figures import add_floor, figures, goals, medians, tables, versions  # noqa: E402
from harness.kernels import kernel_id, kernel_override  # noqa: E402
from harness.paths import BUILD  # noqa: E402
from harness.scenarios import MIXED_MB, OPTIONAL_SCENARIOS, SCENARIOS, scenario  # noqa: E402
from harness.setups import FLOOR, OPTIONAL_SETUPS, SETUPS  # noqa: E402
from harness.storms import DISK_BPS, run  # noqa: E402


def pick(names, env, optional=()):
    want = os.environ.get(env)
    if not want:
        return [n for n in names if n not in optional]
    chosen = [n for n in names if n in want.split(",")]
    unknown = set(want.split(",")) - set(names)
    if unknown:
        sys.exit(f"{env}: unknown {', '.join(sorted(unknown))}; known: {', '.join(names)}")
    return chosen


def run_storms(chosen, scenarios, reps):
    """Every scenario of `scenarios` with every chosen setup, reps times:
    the figures of each run by (scenario, setup), the results of the first
    repetition by scenario (for the plots), and each run's wall time."""
    # the floor runs last in each scenario, its probes measuring for as
    # long as the longest storm window of the others (add_floor)
    chosen = sorted(chosen, key=lambda s: s.name == FLOOR)
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
                # each repetition's guest logs kept: a bad one can be read afterwards
                r = run(se, sc, hold_s=hold, rep=rep + 1 if reps > 1 else None)
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
    return runs, first, wall


def measure_defaults(reps):
    """The knobs-at-default crash-to-exit medians per kernel, or None with
    BENCH_DEFAULTS=0."""
    if os.environ.get("BENCH_DEFAULTS", "1") == "0":
        return None
    print("knobs at default: crash-to-exit on stock and patched ...", flush=True)
    return crashtime.measure(rounds=reps, crashes=40)


def write_plots(first, scenarios, out):
    """One latency plot per scenario with a probe, of its first repetition."""
    # make bench installs it; a run of hours is not to be lost for a plot
    plots = importlib.util.find_spec("matplotlib") is not None
    if not plots:
        print("no plots: python3-matplotlib is missing (scripts/deps.sh demo)", flush=True)
    for sc in scenarios:
        rs = first.get(sc, [])
        mode = next(iter(rs[0].probes), None) if rs else None
        if mode and plots:
            report.plot(rs, out / f"{sc}.png",
                        textwrap.fill(f"{sc}: {scenario(sc).describe}", 100), mode=mode)



def compose_report(started, reps, kernel_ids, setups, scenarios, runs, wall, med, out):
    """The report's markdown, from the runs' figures."""
    fig = {k: medians(v) for k, v in runs.items()}
    defaults_ratio = med["patched"] / med["stock"] if med else None
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
                f"{stats.physical_limit_s(16, 64, DISK_BPS):.1f} s.",
        "sustained": "'not kept': crashes without a complete core; 'skips counted': "
                     "what the setup's own counters (kernel core_dump_stats, or "
                     "coredam-pipe's) say they skipped; '-': no counters. 'crashed, "
                     "unreaped': the most crashed processes not yet reaped at once (held "
                     "waiting, writing, or being turned away): what a queue's cap bounds; "
                     "the memory peak also counts crashers still filling their memory, "
                     "more of them at once when the guest is slow. " + floor,
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
        "staggered-filling": shape + " Each crasher fills its memory inside the storm "
                             "window; the arrivals stretch past 400 ms apart when the "
                             "guest is busy.",
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
               report.markdown(("scenario", "setup", "lifts", "agent CPU"), agent)]
    md += ["", "## Goals", ""] + goal_lines
    if defaults_ratio is not None:
        md += ["", f"Knobs at default: `bench_defaults`, {reps} x 40 crashes of 1 MB per "
               f"kernel, median crash-to-exit stock {med['stock']:.2f} ms, patched "
               f"{med['patched']:.2f} ms."]
    md += ["", "## Run times", "",
           "One repetition of each scenario, per setup (boot to results, median):", ""]
    md += [report.markdown(("scenario", "setup", "time"),
                           [(k[0], k[1], f"{statistics.median(v):.0f} s")
                            for k, v in wall.items()])]
    text = "\n".join(md) + "\n"
    return text


# the Apache storm (tests/bench_apache.py): a scenario of its own, with
# setups of its own, one run of each
APACHE = "apache"


def pick_setups():
    """(the storm setups, the Apache storm's) BENCH_SETUPS names, each
    family's by default (no-dumps is in both); exits on a name neither
    knows."""
    storm = [s.name for s in SETUPS]
    apache = [s.name for s in bench_apache.SETUPS]
    want = os.environ.get("BENCH_SETUPS")
    if not want:
        return [n for n in storm if n not in OPTIONAL_SETUPS], bench_apache.SETUPS
    unknown = set(want.split(",")) - set(storm) - set(apache)
    if unknown:
        sys.exit(f"BENCH_SETUPS: unknown {', '.join(sorted(unknown))}; known: "
                 f"{', '.join(dict.fromkeys(storm + apache))}")
    return ([n for n in storm if n in want.split(",")],
            [s for s in bench_apache.SETUPS if s.name in want.split(",")])


def pick_scenarios():
    """(the storm scenarios BENCH_SCENARIOS names, whether it names the
    Apache storm), each default one without it."""
    names = pick([s.name for s in SCENARIOS] + [APACHE], "BENCH_SCENARIOS", OPTIONAL_SCENARIOS)
    return [n for n in names if n != APACHE], APACHE in names


def main():
    reps = int(os.environ.get("BENCH_REPEAT", 3))
    setups, apache_setups = pick_setups()
    scenarios, apache = pick_scenarios()
    apache = apache and apache_setups
    # the Apache storm's shape checked before hours of the others
    storm = bench_apache.storm_from_env() if apache else None
    out = BUILD / "bench"
    out.mkdir(parents=True, exist_ok=True)
    text = ""
    if scenarios and setups:
        chosen = [dataclasses.replace(s, kernel=kernel_override(s.kernel) or s.kernel)
                  for s in SETUPS if s.name in setups]
        # named before the runs: a kernel from outside the build may change meanwhile
        kernel_ids = "; ".join(f"{k} {kernel_id(k)}" for k in dict.fromkeys(
            s.kernel for s in SETUPS if s.name in setups))
        started = datetime.datetime.now(datetime.timezone.utc)
        runs, first, wall = run_storms(chosen, scenarios, reps)
        med = measure_defaults(reps)
        write_plots(first, scenarios, out)
        # first: a run of hours is not to be lost to the report's code
        (out / "results.json").write_text(json.dumps(
            {f"{k[0]}/{k[1]}": v for k, v in runs.items()}, indent=1))
        text = compose_report(started, reps, kernel_ids, setups, scenarios, runs, wall, med, out)
    failed = False
    if apache:
        atext, failed = bench_apache.bench(apache_setups, storm,
                                           bench_apache.command("make bench", ("BENCH_SCENARIOS",)))
        # its report and plot beside the others, its headings a level down
        # when it follows them
        png = BUILD / "bench-apache" / "latency.png"
        if png.exists():
            shutil.copy(png, out / "apache.png")
            atext = atext.replace("](latency.png)", "](apache.png)")
        if text:
            atext = "\n".join("#" + line if line.startswith("#") else line
                               for line in atext.splitlines()) + "\n"
        text = (text + "\n" if text else "") + atext
    if not text:
        sys.exit("nothing to run: BENCH_SETUPS names no setup of the chosen scenarios")
    (out / "report.md").write_text(text)
    print()
    print(text)
    print(f"report: {out / 'report.md'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
