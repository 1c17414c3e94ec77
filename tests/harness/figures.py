"""The benchmark's figures: one run's numbers by name, their medians over
the repetitions, the no-dumps floor, the tables of each scenario, series v1
beside v2, and the issue's goals met or missed."""

import statistics

from .parsers import counters
from .report import markdown, ratio
from .scenarios import SCENARIOS, SHAPES, main_probe
from .setups import FLOOR
from .stats import pct, window_stats
from .storms import DISK_BPS


def skipped_counted(r):
    """Dumps the setup's own counters say it skipped, or None without counters
    (series v1's positional line is read too: counters())."""
    src = counters(r.stats) or r.pipe_stats
    if not src:
        return None
    return sum(v for k, v in src.items() if k.startswith("skipped_"))


def figures(r):
    """One run's numbers, by name."""
    f = {"kept": r.kept, "crashes": r.crashes, "drain_s": r.drain_s,
         "vs_disk": r.drain_s / r.disk_s(DISK_BPS),
         "exit_p50_ms": pct(r.crash_exit_ms, 50),
         "exit_p99_ms": pct(r.crash_exit_ms, 99),
         "mem_peak_mb": r.mem_peak / 2**20, "unreaped_max": r.unreaped_max, "lifts": r.lifts}
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
            f[f"floor_{mode}_p99"] = window_stats(floor, mode, p["storm_s"])["p99"]


def vs_floor(fig, sc, setup):
    if setup == FLOOR:
        return "floor"
    r = floor_ratio(fig, sc, setup)
    return "-" if r is None else f"{r:.1f}x"


def storm_table(fig, sc, setups, with_read):
    """The table of a storm scenario, one row per setup that ran it: the
    write probe, the read probe's p99 too if with_read, the cores, the
    crashers' exit and memory; None when no setup ran it."""
    rows = []
    for s in setups:
        f = fig.get((sc, s))
        if not f:
            continue
        row = [s, f"{f['write_idle_p99']:.1f} / {f['write_storm_p99']:.1f} ms",
               ratio(f["write_storm_p99"], f["write_idle_p99"]),
               vs_floor(fig, sc, s),
               f"{f['write_storm_max']:.0f} ms",
               ratio(f["write_storm_max"], f["write_idle_max"])]
        if with_read:
            row += [f"{f['read_idle_p99']:.1f} / {f['read_storm_p99']:.1f} ms",
                    ratio(f["read_storm_p99"], f["read_idle_p99"])]
        row += [f"{f['kept']:.0f}/{f['crashes']:.0f}",
                f"{f['drain_s']:.1f} s ({f['vs_disk']:.2f}x)",
                f"{f['exit_p50_ms'] / 1000:.1f} / {f['exit_p99_ms'] / 1000:.1f} s",
                f"{f['mem_peak_mb']:.0f} MB"]
        rows.append(row)
    if not rows:
        return None
    head = ["setup", "write p99 idle/storm", "vs idle", "vs no-dumps", "write max", "vs idle"]
    if with_read:
        head += ["read p99 idle/storm", "vs idle"]
    head += ["cores ok", "last core (vs disk)", "crash to exit p50/p99", "crashers' memory peak"]
    return markdown(head, rows)


def tables(fig, setups):
    """Markdown tables, one per scenario, from the median figures."""
    out = {}
    burst = storm_table(fig, "burst", setups, with_read=True)
    if burst:
        out["burst"] = burst
    rows = []
    for s in setups:
        f = fig.get(("idle", s))
        if f:
            rows.append((s, f"{f['kept']:.0f}/{f['crashes']:.0f}", f"{f['drain_s']:.1f} s",
                         f"{f['vs_disk']:.2f}x",
                         f"{f['exit_p50_ms'] / 1000:.1f} / {f['exit_p99_ms'] / 1000:.1f} s"))
    if rows:
        out["idle"] = markdown(("setup", "cores ok", "last core", "vs disk",
                                "crash to exit p50/p99"), rows)
    rows = []
    for s in setups:
        f = fig.get(("sustained", s))
        if f:
            lost = f["crashes"] - f["kept"]
            counted = f.get("skipped_counted")
            rows.append((s, f"{f['write_idle_p99']:.1f} / {f['write_storm_p99']:.1f} ms",
                         ratio(f["write_storm_p99"], f["write_idle_p99"]),
                         vs_floor(fig, "sustained", s),
                         f"{f['write_storm_max']:.0f} ms",
                         f"{f['kept']:.0f}/{f['crashes']:.0f}", f"{lost:.0f}",
                         "-" if counted is None else f"{counted:.0f}",
                         f"{f['mem_peak_mb']:.0f} MB", f"{f['unreaped_max']:.0f}",
                         f"{f['drain_s']:.1f} s",
                         f"{f['exit_p50_ms'] / 1000:.1f} / {f['exit_p99_ms'] / 1000:.1f} s"))
    if rows:
        out["sustained"] = markdown(
            ("setup", "write p99 idle/storm", "vs idle", "vs no-dumps", "write max",
             "cores ok", "not kept", "skips counted", "crashers' memory peak", "crashed, unreaped",
             "last core", "crash to exit p50/p99"), rows)
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
        out["foreground"] = markdown(
            ("setup", "writer throughput idle/storm", "fsync p50 idle/storm",
             "fsync p99 idle/storm", "p99 vs no-dumps", "fsync max storm", "cores ok",
             "last core"), rows)
    # the storms of other shapes: the burst's columns but the read probe's
    for sc in SHAPES:
        table = storm_table(fig, sc, setups, with_read=False)
        if table:
            out[sc] = table
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
                v2_v1 = f"{mb / ma:.2f}" if ma else "-"
                rows.append((sc, budget, name, spread(va), spread(vb), v2_v1, verdict))
    if not rows:
        return None, worse
    return markdown(("scenario", "budget", "figure", "v1 median [range]",
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
