"""Smoke tests of the harness on the stock kernel: a crash gives a complete
core, through a file core_pattern and through a pipe helper."""

import elfcore

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


def test_file_core(boot):
    res = boot(SCRIPT.format(mb=MB, sig=11),
               sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    assert res.rc == 0, res.output
    check_core(res, 11)


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
