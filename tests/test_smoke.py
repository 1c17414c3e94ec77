"""Smoke tests of the harness on the stock kernel: a crash gives a complete
core, through a file core_pattern and through a pipe helper; and corecheck
says no to a core that lost its data, a page or its ledger."""

import json
import os
import subprocess

from harness import elfcore
from harness.paths import BUILD

MB = 16
PAGES = MB * 1024 * 1024 // 4096

SCRIPT = """
. /lib/coredam/lib.sh
crasher -m {mb} -s {sig} &
pid=$!
wait $pid || echo "exit status $?" > $RESULTS/status
echo $pid > $RESULTS/pid
ls -l /scratch > $RESULTS/ls.txt
for f in /scratch/core.*; do
    case $f in *.part) continue;; esac
    corecheck $f >> $RESULTS/cores.json || true
    cp $f $RESULTS/core
done
cp /tmp/coredam-pattern.$pid $RESULTS/
cp /scratch/pipewriter.log $RESULTS/ 2>/dev/null || true
"""


def check_core(res, sig):
    pid = int(res.text("pid"))
    # the shell saw the crash: 128 + signal, plus the core flag in wait status
    assert res.text("status").split()[-1] == str(128 + sig)
    cores = res.json_lines("cores.json")
    assert len(cores) == 1, res.text("ls.txt")
    c = cores[0]
    assert c["valid"], c["problem"]
    assert c["file"] == f"/scratch/core.{pid}"
    assert c["pid"] == pid and c["signal"] == sig
    assert c["prstatus"] == 1 and c["siginfo"] == 1 and c["nt_file"] == 1
    # every page the crasher wrote is in the core, intact, once
    assert c["pattern_pages_expected"] == PAGES
    assert c["pattern_pages"] == PAGES and c["pattern_dupes"] == 0
    assert c["complete"]
    assert c["size"] >= MB << 20

    # and read again on the host, by a parser that is not corecheck
    data = res.path("core").read_bytes()
    assert len(data) == c["size"]
    e = elfcore.parse(data)
    assert e["notes"][elfcore.NT_PRSTATUS] == 1
    assert e["pid"] == pid and e["signal"] == sig
    assert e["load_bytes"] >= MB << 20


def corecheck(core, ledger_dir):
    """build/guest/corecheck (static) run on the host, with the ledger of
    ledger_dir."""
    p = subprocess.run([str(BUILD / "guest" / "corecheck"), str(core)],
                       env=dict(os.environ, PATTERN_LEDGER_DIR=str(ledger_dir)),
                       capture_output=True, text=True)
    c = json.loads(p.stdout)
    assert p.returncode == (0 if c["valid"] else 1), (p.returncode, p.stderr)
    return c


def check_corecheck_says_no(res, tmp_path):
    """The guest's core and ledger, then the same core broken on the host:
    only the whole core with its ledger is complete."""
    pid = int(res.text("pid"))
    ledger = f"coredam-pattern.{pid}"
    assert res.text(ledger) == f"{PAGES}\n"
    real = res.path("core").read_bytes()
    loads = [(off, size) for t, off, size in elfcore.parse(real)["segments"]
             if t == elfcore.PT_LOAD and size]
    dirs = {"ledger": tmp_path / "ledger", "none": tmp_path / "none"}
    for d in dirs.values():
        d.mkdir()
    (dirs["ledger"] / ledger).write_bytes(res.path(ledger).read_bytes())

    def check(data, ledger_dir):
        core = tmp_path / "core"
        core.write_bytes(bytes(data))
        return corecheck(core, dirs[ledger_dir])

    c = check(real, "ledger")
    assert c["valid"] and c["ledger"] and c["complete"], c
    assert c["pattern_pages"] == c["pattern_pages_expected"] == PAGES, c

    # a core of zeros: every segment in place, none of the data
    zeroed = bytearray(real)
    for off, size in loads:
        zeroed[off:off + size] = bytes(size)
    c = check(zeroed, "ledger")
    assert c["valid"] and not c["complete"], c
    assert c["pattern_pages"] == 0 and c["pattern_pages_expected"] == PAGES, c

    # the whole core, but nothing recorded what it should hold
    c = check(real, "none")
    assert c["valid"] and not c["ledger"] and not c["complete"], c
    assert c["pattern_pages_expected"] == -1, c

    # cut short half way through the crasher's memory (the largest segment):
    # the pages before the cut count, and the core is neither valid nor complete
    heap = max(loads, key=lambda load: load[1])
    c = check(real[:heap[0] + PAGES // 2 * 4096], "ledger")
    assert not c["valid"] and not c["complete"], c
    assert c["pattern_pages"] == PAGES // 2 and c["pattern_pages_expected"] == PAGES, c

    # one byte of one pattern page changed
    torn = bytearray(real)
    page = next(off + i for off, size in loads
                for i in range(0, size, 4096) if real[off + i:off + i + 8] == b"CDAMPAT1")
    torn[page + 1000] ^= 0xff
    c = check(torn, "ledger")
    assert c["valid"] and not c["complete"], c
    assert c["pattern_pages"] == PAGES - 1 and c["pattern_pages_expected"] == PAGES, c


def test_file_core(boot, tmp_path):
    res = boot(SCRIPT.format(mb=MB, sig=11),
               sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    assert res.rc == 0, res.output
    check_core(res, 11)
    check_corecheck_says_no(res, tmp_path)


def test_pipe_core(boot):
    # core_pipe_limit makes the kernel wait for the helper before the
    # crasher is reaped, so the core is on disk when `wait` returns
    res = boot(SCRIPT.format(mb=MB, sig=6),
               sysctls={"kernel.core_pattern": "|/bin/pipewriter /scratch/core.%p",
                        "kernel.core_pipe_limit": 4})
    assert res.rc == 0, res.output
    check_core(res, 6)
    # the helper wrote exactly the bytes that are on disk
    path, nbytes = res.text("pipewriter.log").split()
    assert int(nbytes) == res.path("core").stat().st_size
