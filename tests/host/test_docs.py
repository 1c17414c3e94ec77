"""The documentation keeps up with the code, checked on the host: every
event the programs log is in docs/agent.md's table, with the MESSAGE_ID
the logger gives it."""

import pathlib
import re

TOP = pathlib.Path(__file__).resolve().parents[2]
SRC = TOP / "userspace"


def logged_events():
    events = set()
    for f in list(SRC.glob("coredamd/*.c")) + list(SRC.glob("coredamctl/*.c")) \
            + list(SRC.glob("coredam-pipe/*.c")) + list(SRC.glob("lib/*.c")):
        for m in re.finditer(r'"[^"\n]*\bevent=([a-z][a-z-]*)', f.read_text()):
            events.add(m.group(1))
    return events


def message_ids():
    text = (SRC / "lib/log.c").read_text()
    return dict(re.findall(r'\{ "([a-z-]+)", "([0-9a-f]{32})" \}', text))


def documented():
    text = (TOP / "docs/agent.md").read_text()
    return dict(re.findall(r"^\| `([a-z-]+)` \| [^|]+ \| `([0-9a-f]{32})` \|$", text, re.M))


def test_every_logged_event_is_documented_with_its_message_id():
    events, ids, docs = logged_events(), message_ids(), documented()
    assert len(events) >= 20, events
    assert events <= set(ids), f"no MESSAGE_ID in lib/log.c: {sorted(events - set(ids))}"
    assert events <= set(docs), f"not in docs/agent.md: {sorted(events - set(docs))}"
    for e in events:
        assert docs[e] == ids[e], (e, docs[e], ids[e])
    # IDs are unique, and the tables hold no event nothing logs any more
    assert len(set(ids.values())) == len(ids)
    assert set(ids) == events and set(docs) == events, (sorted(set(ids) - events), sorted(set(docs) - events))


def test_benchmark_setups_documented_as_run():
    """docs/benchmarks.md names every setup of the benchmark, and its list of
    what `make bench` runs by default is the one bench.py runs."""
    import sys
    sys.path.insert(0, str(TOP / "tests"))
    from harness.setups import OPTIONAL_SETUPS, SETUPS
    text = (TOP / "docs/benchmarks.md").read_text()
    missing = [s.name for s in SETUPS if f"`{s.name}`" not in text]
    assert not missing, f"setups not in docs/benchmarks.md: {missing}"
    m = re.search(r"Setups: ((?:`[a-z0-9.-]+`,?\s*)+);", text)
    assert m, "docs/benchmarks.md: no 'Setups: ...;' list of the default run"
    listed = re.findall(r"`([a-z0-9.-]+)`", m.group(1))
    defaults = [s.name for s in SETUPS if s.name not in OPTIONAL_SETUPS]
    assert sorted(listed) == sorted(defaults), (listed, defaults)
