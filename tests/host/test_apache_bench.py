"""The Apache storm benchmark's readers, figures and tables
(tests/harness/apache.py) on what real guests wrote: test_data/apache-storm/
holds the results of `make bench-apache` of December 6 for two setups,
coredam-pipe and systemd-coredump (the cores themselves left out, and the
long files cut as each test says). The expected values were worked out
from the files by other means than the code (awk, grep, sort, counting
lines), as each test's comments say."""

import gzip
import struct
from pathlib import Path

import pytest

from harness import apache
from harness.job import Result

DATA = Path(__file__).resolve().parent / "test_data" / "apache-storm"


def recorded(name):
    d = DATA / name
    return Result(rc=0, output="", console="", results_dir=d, log_dir=d, wall_s=0.0)


def core(fname=b"apache2", signo=11, pid=4321, cut=0):
    """A small ELF core as the kernel writes one: the ELF header, a PT_NOTE
    with NT_PRSTATUS, NT_PRPSINFO and NT_SIGINFO, one PT_LOAD of 4 KiB;
    cut bytes taken off its end."""
    def note(ntype, desc):
        return struct.pack("<III", 5, len(desc), ntype) + b"CORE\0\0\0\0" + desc + \
            b"\0" * (-len(desc) % 4)
    prstatus = bytearray(336)
    struct.pack_into("<h", prstatus, 12, signo)
    struct.pack_into("<i", prstatus, 32, pid)
    prpsinfo = bytearray(136)
    prpsinfo[40:40 + len(fname)] = fname
    siginfo = struct.pack("<i", signo) + bytes(124)
    notes = note(1, bytes(prstatus)) + note(3, bytes(prpsinfo)) + note(0x53494749, siginfo)
    phoff, phnum = 64, 2
    note_off = phoff + 56 * phnum
    load_off = note_off + len(notes)
    head = b"\x7fELF\x02\x01\x01" + bytes(9) + struct.pack(
        "<HHIQQQIHHHHHH", 4, 62, 1, 0, phoff, 0, 0, 64, 56, phnum, 0, 0, 0)
    ph = struct.pack("<IIQQQQQQ", 4, 0, note_off, 0, 0, len(notes), 0, 0) + \
        struct.pack("<IIQQQQQQ", 1, 5, load_off, 0x400000, 0, 4096, 4096, 4096)
    data = head + ph + notes + b"\xcc" * 4096
    return data[:len(data) - cut]


def test_check_core_whole_cut_and_foreign():
    assert apache.check_core(core()) == (True, "")
    # the last byte of the PT_LOAD missing: elfcore refuses it
    assert apache.check_core(core(cut=1)) == (False, "not a whole core: ValueError")
    # cut inside the program headers: struct cannot even read them
    assert apache.check_core(core()[:100])[0] is False
    assert apache.check_core(core(fname=b"php-fpm")) == (False, "not apache2's")
    assert apache.check_core(core(signo=6)) == (False, "not a SIGSEGV")


def test_read_core_gzip_and_zstd(tmp_path):
    data = core()
    (tmp_path / "core.apache2.1.2.gz").write_bytes(gzip.compress(data))
    assert apache.read_core(tmp_path / "core.apache2.1.2.gz") == data
    import subprocess
    zst = tmp_path / "core.apache2.33.b.1.2.zst"
    subprocess.run(["zstd", "-q", "-o", str(zst), "-"], input=data, check=True)
    assert apache.read_core(zst) == data


def test_crash_rows_and_scoreboard_readers():
    rows = apache.crash_rows("100 900 40000 0\n300 -1 40001 0\n500 520 0 0\n700 800 40003 120\n")
    assert rows == [(100, 900, 40000, 0), (300, None, 40001, 0), (500, 520, 0, 0),
                    (700, 800, 40003, 120)]
    assert apache.full("KW____", 6) and apache.full("_K____......", 6)
    assert not apache.full("KW__._", 6) and not apache.full("KWS___", 6)
    assert not apache.full("KW__", 6)
