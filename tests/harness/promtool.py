"""Prometheus's promtool (Debian's prometheus package, taken out by
scripts/fetch-promtool.sh, never installed), for the tests that check
coredamd's metrics file as a scraper would."""

import subprocess

from .paths import BUILD, TOP


def promtool():
    """The path of promtool, fetched on first use (make test fetches it
    before the lanes start)."""
    path = BUILD / "tools" / "promtool"
    if not path.exists():
        r = subprocess.run([str(TOP / "scripts" / "fetch-promtool.sh")], capture_output=True, text=True)
        assert r.returncode == 0, f"scripts/fetch-promtool.sh failed:\n{r.stderr}"
    return path


def check_metrics(text):
    """`promtool check metrics` on a metrics file's text: the exposition
    format parses and no name, type or help breaks Prometheus's rules
    (promtool prints one line per problem, and exits non-zero)."""
    assert text.strip(), "empty metrics file"
    r = subprocess.run([str(promtool()), "check", "metrics"], input=text, capture_output=True, text=True)
    said = (r.stdout + r.stderr).strip()
    assert r.returncode == 0 and not said, f"promtool check metrics: exit {r.returncode}\n{said}\n---\n{text}"
