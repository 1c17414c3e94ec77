"""Percentiles and medians of what the probes and the crashers measured."""

import statistics


def pct(values, p):
    """The p-th percentile of values, nearest rank; nan for none."""
    if not values:
        return float("nan")
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))]


def median(values):
    return statistics.median(values) if values else float("nan")


def latency_stats(samples_us):
    """p50, p99, max of a list of latencies in microseconds, as ms."""
    if not samples_us:
        return {"n": 0, "p50": float("nan"), "p99": float("nan"), "max": float("nan")}
    return {"n": len(samples_us), "p50": pct(samples_us, 50) / 1000.0,
            "p99": pct(samples_us, 99) / 1000.0, "max": max(samples_us) / 1000.0}


def idle_and_storm(samples, prep_ms, start_ms, stop_ms):
    """The probe's latency stats before the crashers start (but its first
    second) and from the first crash until stop_ms: (idle, storm)."""
    t0 = samples[0][0] if samples else prep_ms
    idle = [lat for t, lat in samples if t0 + 1000 <= t < prep_ms]
    during = [lat for t, lat in samples if start_ms <= t <= stop_ms]
    return latency_stats(idle), latency_stats(during)


def window_stats(r, mode, length_s):
    """The probe's latency stats over the first length_s seconds from the
    storm's first crash (within what it measured: see storms.run()'s hold_s)."""
    end = r.start_ms + length_s * 1000
    return latency_stats([lat for t, lat in r.probes[mode]["samples"]
                          if r.start_ms <= t <= end])


def physical_limit_s(crashes, mb, disk_bps_write=40_000_000):
    """The disk's own time for crashes cores of mb MiB, in seconds."""
    return crashes * (mb << 20) / disk_bps_write


def most_overlapping(spans):
    """Most of the [start, end] spans open at once; one ending as another
    starts does not overlap it."""
    ev = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    cur = top = 0
    for _, d in ev:
        cur += d
        top = max(top, cur)
    return top


def most_at_once(ms):
    """Most dumps writing at once, from [admitted_usec, done_usec] of each
    helper's or socket writer's meta record."""
    return most_overlapping([(m["admitted_usec"], m["done_usec"]) for m in ms])


def most_unreaped(crash_rows):
    """Most crashed processes not yet reaped at once, from the stormer's
    rows (i, signal_ms, exit_ms, dumped): what a queue's count bound
    limits (waiting, writing, and those being turned away), where the
    crashers' memory.peak also counts crashers still filling their memory."""
    return most_overlapping([(c, e) for _, c, e, _ in crash_rows])


def check_one_users_storm(ms, root_pid, cores, st):
    """Assert what a queue fair across users does with the storm of the
    fairness tests (one slot, three waiting places; six crashes of uid
    1000, then one of root's): root's dump pushed out uid 1000's newest
    waiter and was admitted second, uid 1000's dumps kept their order, the
    four cores stored are whole, and the counters say two were turned
    away at the door and one pushed out. ms: the cores' meta records;
    cores: corecheck's; st: the pipe helper's counters."""
    by_admission = sorted(ms, key=lambda m: m["admitted_usec"])
    assert [m["uid"] for m in by_admission] == [1000, 0, 1000, 1000], by_admission
    assert by_admission[1]["pid"] == root_pid, by_admission
    storm = [m for m in by_admission if m["uid"] == 1000]
    assert [m["ticket"] for m in storm] == sorted(m["ticket"] for m in storm), storm
    assert len(cores) == 4 and all(c["valid"] and c["complete"] for c in cores), cores
    assert st["started"] == 7 and st["completed"] == 4 and st["skipped_full"] == 3, st
