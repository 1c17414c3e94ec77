"""The benchmark's verdicts from recorded figures, without a run."""

from harness import figures


def _bench_run(p99, floor, drain, kept=16):
    return {"write_storm_p99": p99, "floor_write_p99": floor, "drain_s": drain,
            "exit_p99_ms": drain * 1000, "crashes": 16, "kept": kept}


def test_bench_v1_beside_v2_verdict():
    """The benchmark calls v2 worse than v1 only by more than the spread of
    the repetitions, and says so in its goals."""
    v1 = [_bench_run(10, 5, 100), _bench_run(11, 5, 101), _bench_run(12, 5, 99)]
    # p99 ratio 2.2 -> 3.4 (beyond the 0.4 spread); drain 100 -> 102 (within 9 s)
    v2 = [_bench_run(16, 5, 100), _bench_run(17, 5, 102), _bench_run(18, 5, 108)]
    runs = {("burst", "v1-fixed"): v1, ("burst", "coredam-fixed"): v2,
            ("burst", "v1-adaptive"): v2, ("burst", "coredam-adaptive"): v1}
    table, worse = figures.versions(runs, ["burst"])
    assert worse == ["burst, fixed: probe p99 vs no-dumps 2.20 [2.00-2.40] on v1, "
                     "3.40 [3.20-3.60] on v2"]
    rows = {tuple(c.strip() for c in line.split("|")[1:4]): line.split("|")[-2].strip()
            for line in table.splitlines()[2:]}
    assert rows[("burst", "fixed", "probe p99 vs no-dumps")] == "v2 worse"
    assert rows[("burst", "fixed", "last core (s)")] == "within noise"
    assert rows[("burst", "adaptive", "probe p99 vs no-dumps")] == "v2 better"
    # a core lost on v2 alone is worse than no spread at all
    runs[("burst", "coredam-adaptive")] = [_bench_run(10, 5, 100, kept=15)] * 3
    _, worse = figures.versions(runs, ["burst"])
    assert any("adaptive: cores not kept 0 [0-0] on v1, 1 [1-1] on v2" in w for w in worse)
    assert figures.goals({}, None, worse)[0].startswith("- MISSED: v2 next to v1")
    assert figures.goals({}, None, [])[0].startswith("- met: v2 next to v1")
