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


MAN = TOP / "docs" / "man"


def sections(page):
    return re.findall(r"^\.SH (.+)$", (MAN / page).read_text(), re.M)


def test_man_pages_have_their_sections():
    """Every page has what a reader looks for, in the sections man-pages(7)
    names: each program's its exit status and environment too."""
    for page in ("coredamd.8", "coredamctl.1", "coredam-pipe.8", "coredam.conf.5"):
        have = sections(page)
        want = ["NAME", "SYNOPSIS", "DESCRIPTION", "FILES", "EXAMPLES", "SEE ALSO"]
        if page != "coredam.conf.5":
            want += ["EXIT STATUS", "ENVIRONMENT"]
        assert not set(want) - set(have), (page, sorted(set(want) - set(have)))
        assert have[:2] == ["NAME", "SYNOPSIS"] and have[-1] == "SEE ALSO", (page, have)


def test_every_environment_variable_read_is_documented():
    """A variable the programs read (getenv, or through sd-daemon's
    sd_notify, sd_watchdog_enabled, sd_listen_fds) is in the ENVIRONMENT
    section of a man page."""
    read = set()
    for f in [f for d in ("coredamd", "coredamctl", "coredam-pipe", "lib") for f in (SRC / d).glob("*.c")]:
        text = f.read_text()
        read |= set(re.findall(r'getenv\("([A-Z_]+)"\)', text))
        if "sd_notify" in text:
            read.add("NOTIFY_SOCKET")
        if "sd_watchdog_enabled" in text:
            read |= {"WATCHDOG_USEC", "WATCHDOG_PID"}
        if "sd_listen_fds" in text:
            read |= {"LISTEN_FDS", "LISTEN_PID"}
    assert {"JOURNAL_STREAM", "NOTIFY_SOCKET", "LISTEN_FDS"} <= read, read
    documented = ""
    for page in MAN.iterdir():
        m = re.search(r"^\.SH ENVIRONMENT\n(.*?)^\.SH ", page.read_text(), re.M | re.S)
        documented += m.group(1) if m else ""
    missing = {v for v in read if not re.search(r"\b%s\b" % v, documented)}
    assert not missing, sorted(missing)


def test_the_shipped_configuration_names_every_key_at_its_default():
    """configs/coredam.conf, the file an operator edits, shows every key
    of lib/config.c's table, in its section, commented out at the value
    the table gives as its default."""
    keys = re.findall(r'K\("(\w+)", "(\w+)", T_\w+, \w+, ([^)]+)\),', (SRC / "lib/config.c").read_text())
    assert len(keys) > 40, keys
    shown, section = {}, None
    for line in (TOP / "configs/coredam.conf").read_text().splitlines():
        m = re.fullmatch(r"\[(\w+)\]", line)
        if m:
            section = m.group(1)
        m = re.fullmatch(r"#(\w+)=(.*)", line)
        if m:
            shown[(section, m.group(1))] = m.group(2)
    for section, name, default in keys:
        default = default.strip()
        assert (section, name) in shown, f"[{section}] {name}= is not in configs/coredam.conf"
        if default.startswith('"'):
            assert shown[(section, name)] == default.strip('"'), (section, name, shown[(section, name)], default)
