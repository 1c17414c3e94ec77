"""What the guest writes, parsed: the probe's samples, stormer's times,
the kernel's core_dump_stats and coredam-pipe's counters, the agent's log,
/proc/PID/stat and a kselftest program's TAP output. Each takes the text (or a path) and returns plain data;
a test of each against recorded guest output is in tests/host/."""

import json
import os
import re
from pathlib import Path


def probe_samples(text):
    """The probe's samples: (start_ms, latency_us) pairs, in order."""
    out = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2:
            out.append((int(parts[0]), int(parts[1])))
    return out


def read_probe(path):
    """probe_samples() of the file at path."""
    return probe_samples(Path(path).read_text())


def storm_txt(text):
    """stormer's output: ({"prep"|"start"|"end": ms}, [(i, signal_ms, exit_ms,
    dumped), ...] one row per crash)."""
    times, crash_rows = {}, []
    for line in text.splitlines():
        w = line.split()
        if w[0] == "crash":
            crash_rows.append(tuple(int(x) for x in w[1:]))
        else:
            times[w[0]] = int(w[1])
    return times, crash_rows


def agent_cpu_s(stat_text):
    """The CPU time, user and system, of a /proc/PID/stat line, in seconds."""
    f = stat_text.rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def budget_lifts(log):
    """How often the agent's log says it lifted the dump cgroup's write
    limit (LiftWhenIdle=) once the storm began: the agent may lift before
    the probes start, so the count starts at the first dump."""
    if "event=dump-start" not in log:
        return 0
    storm_log = log[log.find("event=dump-start"):]
    return sum(1 for line in storm_log.splitlines()
               if "event=budget" in line and "write_bps=max" in line.split())


def key_values(text):
    """{key: value} of "key=value" lines (the agent's knobs, systemctl show)."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def io_rule(text, majmin):
    """The "key=value" fields of a cgroup's io.max or io.stat line for the
    device MAJ:MIN, as strings; None when it has no line."""
    for line in text.splitlines():
        dev, *rest = line.split()
        if dev == majmin:
            return dict(x.split("=") for x in rest)
    return None


def io_wbytes(io_stat):
    """Bytes written, summed over every device line of a cgroup's io.stat."""
    return sum(int(kv.split("=")[1]) for kv in io_stat.split()
               if kv.startswith("wbytes="))


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


# a case's line of the kselftest harness's TAP output: "ok 3 coredump.x",
# "not ok 4 coredump.y", "ok 5 coredump.z # SKIP why"
_TAP_CASE = re.compile(r"^(ok|not ok) \d+ (\S+)(?: # (\S+)\s*(.*))?$", re.M)


def tap_cases(tap):
    """[(name, result, reason)] of a kselftest program's TAP output, in
    order: result "pass", "fail", or the directive in lower case ("skip",
    "xfail", ...), reason what followed the directive."""
    out = []
    for ok, name, directive, reason in _TAP_CASE.findall(tap):
        result = directive.lower() if directive else ("pass" if ok == "ok" else "fail")
        out.append((name, result, reason.strip()))
    return out


def meta_records(text):
    """The meta records the guest gathered, one JSON object a line (every
    non-empty line must be one)."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]
