"""The readers of kernel.core_dump_stats that the VM tests rely on, on the
host: the Python parser and invariants in harness/parsers.py and the guest
library's kstat and dumps_idle. Each must be able to say no: a counter missing, a
line that is not "name value", the old positional line, sums that do not
add up."""

import subprocess
from pathlib import Path

import pytest

from harness import parsers

LIB = Path(__file__).resolve().parents[1] / "guest" / "lib.sh"

# a snapshot that adds up: of 20 started, 15 admitted, 2 waiting, 3 skipped;
# of the 15, 8 completed, 3 failed, 1 over core_pipe_limit, 2 active, 1 over time
SNAPSHOT = """\
started 20
admitted 15
completed 8
failed 3
skipped_full 1
skipped_timeout 1
skipped_killed 1
skipped_pipe_limit 1
active 2
waiting 2
overtime 1
leases_ended 4
uncharged 1
failed_open 1
failed_setup 0
failed_limit 0
failed_killed 1
failed_write 1
failed_io 0
bytes 123456789
"""


def test_stats_by_name():
    s = parsers.stats_dict(SNAPSHOT)
    assert s["started"] == 20 and s["uncharged"] == 1 and s["bytes"] == 123456789
    assert set(parsers.STATS_NAMES) == set(s)
    assert parsers.stats_broken(s) == []
    parsers.check_invariants(s)
    # another order, a later kernel's names, no newline at the end: the same
    later = "future_gauge 7\n" + "\n".join(reversed(SNAPSHOT.splitlines())) + "\nnext 1"
    t = parsers.stats_dict(later)
    assert {n: t[n] for n in parsers.STATS_NAMES} == s
    # no file, no counters
    assert parsers.stats_dict("") == {}


@pytest.mark.parametrize("text", [
    SNAPSHOT.replace("failed_io 0\n", ""),          # a counter missing
    SNAPSHOT.replace("started 20", "started x"),
    SNAPSHOT.replace("started 20", "started -1"),
    SNAPSHOT.replace("started 20", "started 20 21"),
    SNAPSHOT + "waiting 2\n",                       # a counter twice
    "0 0 3 3 3 0 0 0 0 0 0 4096 0 0\n",             # the first series' line
])
def test_stats_refused(text):
    with pytest.raises(ValueError):
        parsers.stats_dict(text)


@pytest.mark.parametrize("name,sum_", [
    ("waiting", "started"), ("skipped_timeout", "started"),
    ("skipped_pipe_limit", "admitted"), ("overtime", "admitted"),
    ("failed_open", "failed"), ("failed_io", "failed"),
])
def test_stats_that_do_not_add_up(name, sum_):
    s = parsers.stats_dict(SNAPSHOT)
    s[name] += 1
    broken = parsers.stats_broken(s)
    assert len(broken) == 1 and broken[0].startswith(sum_ + " "), broken
    with pytest.raises(AssertionError):
        parsers.check_invariants(s)


def guest_sh(tmp_path, stats, script):
    """Run script after the guest library, with core_dump_stats holding stats."""
    f = tmp_path / "core_dump_stats"
    f.write_text(stats)
    r = subprocess.run(["sh", "-c", f'. "{LIB}"; KSTATS="{f}"; {script}'],
                       capture_output=True, text=True, timeout=30)
    return r.returncode, r.stdout


def test_kstat_reads_one_counter(tmp_path):
    assert guest_sh(tmp_path, SNAPSHOT, "kstat failed; kstat failed_io; kstat bytes") == \
        (0, "3\n0\n123456789\n")
    assert guest_sh(tmp_path, SNAPSHOT, "kstat no_such_counter") == (1, "")
    assert guest_sh(tmp_path, SNAPSHOT, "kstat_is completed 8 && kstat_ge admitted 15 && "
                    "! kstat_ge admitted 16 && ! kstat_ge nothing 0") == (0, "")


@pytest.mark.parametrize("stats,idle", [
    (SNAPSHOT, False),
    (SNAPSHOT.replace("active 2", "active 0"), False),
    (SNAPSHOT.replace("active 2", "active 0").replace("waiting 2", "waiting 0"), True),
    # without the counters it cannot tell: not idle
    (SNAPSHOT.replace("active 2", "active 0").replace("waiting 2\n", ""), False),
    ("0 0 3 3 3 0 0 0 0 0 0 4096 0 0\n", False),
])
def test_dumps_idle(tmp_path, stats, idle):
    assert guest_sh(tmp_path, stats, "dumps_idle")[0] == (0 if idle else 1)
