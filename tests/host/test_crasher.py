"""The guest's crasher, run on the host: it refuses to crash when it cannot
record the pages a checker will look for."""

import os
import shutil
import subprocess

from harness.paths import TOP


def build_crasher(out):
    """The crasher as the Makefile builds it for the guest, into @out: a
    host-only run needs no build directory."""
    cc = os.environ.get("CC", "cc")
    assert shutil.which(cc), f"no C compiler ({cc})"
    guest = TOP / "tests" / "guest"
    subprocess.run([cc, "-static", "-O2", "-g", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", str(out), str(guest / "crasher.c")],
                   check=True, capture_output=True)
    return out


def test_crasher_stops_when_it_cannot_record_its_pages(tmp_path):
    # a crash whose ledger is missing could only give a core no checker
    # calls complete: the crasher says so and exits first (-s 9: if it
    # crashed all the same, it would leave no core on this machine)
    crasher = build_crasher(tmp_path / "crasher")
    p = subprocess.run([str(crasher), "-m", "1", "-s", "9"],
                       env=dict(os.environ, PATTERN_LEDGER_DIR=str(tmp_path / "missing")),
                       capture_output=True, text=True)
    assert p.returncode == 1, (p.returncode, p.stderr)
    assert f"crasher: cannot record 256 pattern pages in {tmp_path}/missing/coredam-pattern." \
        in p.stderr, p.stderr
