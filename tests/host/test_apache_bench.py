"""The Apache storm benchmark's readers, figures and tables
(tests/harness/apache.py) on what real guests wrote: test_data/apache-storm/
holds what two guests of a `make bench-apache` run of December 6 wrote,
no-dumps and systemd-coredump, as they wrote it but for the cores (a run
stopped after them: its guest shell's wait for the dump helpers matched
nothing, which moved no figure read here). The expected values were worked out
from the files by other means than the code (awk, grep, sort, counting
lines), as each test's comments say."""

import gzip
from pathlib import Path

import corefile
import pytest

from harness import apache
from harness.job import Result

DATA = Path(__file__).resolve().parent / "test_data" / "apache-storm"


def recorded(name):
    d = DATA / name
    return Result(rc=0, output="", console="", results_dir=d, log_dir=d, wall_s=0.0)


def core(fname=b"apache2", signo=11, pid=4321, cut=0):
    """A small core of a process killed by @signo: NT_PRSTATUS,
    NT_PRPSINFO, NT_SIGINFO and one PT_LOAD of 4 KiB; cut bytes taken
    off its end."""
    data = corefile.core(corefile.crash_notes(fname, signo, pid), [(0x400000, b"\xcc" * 4096)])
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


def test_figures_of_the_recorded_floor():
    f = apache.figures(recorded("no-dumps"))
    # wc -l crash.txt: 20 rows; sent from 26310 to 35814: 19 / 9.504 s
    assert f["sent"] == 20 and f["send_rate"] == pytest.approx(19 / 9.504)
    assert (f["answered"], f["unended"]) == (0, 0)
    # grep -c 'exit signal Segmentation fault (11)' error.log; no other signal
    assert (f["crashes"], f["other_deaths"]) == (20, 0)
    # crash.php's 20 lines (grep -o, sort -n of the ms): 26432 to 37063
    assert f["crash_rate"] == pytest.approx(19 / 10.631)
    # join on the port of crash.php's lines and crash.txt's rows, end -
    # start, sort -n: the 11th of 20 is 907 ms, the last 1748
    assert (f["gone_p50_s"], f["gone_max_s"]) == pytest.approx((0.907, 1.748))
    # 11 new pids in pids.txt, 9 more only in crash.php's lines, the
    # earlier time of each; paired in order with the crashes by their end
    # (paste): the 11th of the 20 differences 2486 ms, the last 4358
    assert f["replaced"] == 20
    assert (f["replaced_p50_s"], f["replaced_max_s"]) == pytest.approx((2.486, 4.358))
    # the last worker gone at 37724 (awk over crash.txt); the first
    # scoreboard line from then with no "." or "S" among 6 slots is 41040
    assert f["last_gone_s"] == pytest.approx(37.724 - 37.063)
    assert f["full_after_s"] == pytest.approx(41.040 - 37.063)
    # the scoreboard's answers after the first crash request (26.310 s):
    # the widest gap, 29.210 to 36.400 (awk over scoreboard.txt)
    assert f["unanswered_max_s"] == pytest.approx(36.400 - 29.210)
    # meminfo.txt from the first request (26310) to 37724: lowest 2925892
    # kB; the last sample before 26310: 2962900 kB
    assert f["mem_min_mb"] == pytest.approx(2925892 / 1024)
    assert f["mem_before_mb"] == pytest.approx(2962900 / 1024)
    # baseline.json and storm.json as wrk's script wrote them
    assert (f["base_requests"], f["base_p99_ms"], f["base_errors"]) == (1239, 77.637, 0)
    assert (f["storm_requests"], f["storm_p50_ms"], f["storm_p99_ms"], f["storm_max_ms"],
            f["storm_errors"]) == (2360, 19.987, 1717.792, 2020.66, 0)
    # empty core_pattern, no counters, no core
    assert (f["kept_counted"], f["skipped"], f["uncharged"]) == (0, {}, None)
    assert (f["core_files"], f["host_checked"]) == (0, 0)


def test_figures_of_the_recorded_systemd_coredump_run():
    f = apache.figures(recorded("systemd-coredump"))
    assert f["sent"] == 20 and f["crashes"] == 20
    # the crashes took 121.709 s to start: the workers were held by their dumps
    assert f["crash_rate"] == pytest.approx(19 / 121.709)
    # sort -n of end - start: the 11th 35921 ms, the last 55497
    assert (f["gone_p50_s"], f["gone_max_s"]) == pytest.approx((35.921, 55.497))
    assert (f["replaced_p50_s"], f["replaced_max_s"]) == pytest.approx((37.699, 57.684))
    # last crash 159687, last gone 171531, full scoreboard at 175930
    assert f["full_after_s"] == pytest.approx(175.930 - 159.687)
    # ten unanswered samples ("-") between the answers at 32.760 s (the
    # last before the first crash request, 37.677 s) and 160.840 s
    assert f["unanswered_max_s"] == pytest.approx(160.840 - 32.760)
    assert f["mem_min_mb"] == pytest.approx(2769728 / 1024)
    # coredumpctl.txt: 20 apache2 lines, each "present"; dmesg.txt has no
    # "over core_pipe_limit": nothing skipped, lost or uncounted
    assert (f["kept_counted"], f["skipped"], f["uncharged"]) == (20, {}, None)
    # cores.txt: 20 .zst files, 50306951 bytes in all (awk sum of column 2)
    assert f["core_files"] == 20 and f["incomplete"] == 0
    assert f["core_mb"] == pytest.approx(50306951 / 2**20)


def test_systemd_coredump_losses_by_cause():
    # the same run, as if the kernel had turned 3 dumps away over
    # core_pipe_limit and systemd-coredump had listed one without its core
    # and missed one: 20 crashes = 16 present + 1 listed without + 3 over
    # + 0 lost when 17 are listed
    res = recorded("systemd-coredump")
    text = res.text("coredumpctl.txt").splitlines()
    kept, causes, uncharged = apache.skipped(_Edited(res, {
        "coredumpctl.txt": "\n".join(text[:16] + [text[16].replace(" present ", " missing ")]),
        "dmesg.txt": "Pid 1(apache2) over core_pipe_limit\nSkipping core dump\n" * 3}), 20)
    assert (kept, causes, uncharged) == (16, {"pipe_limit": 3, "not stored": 1}, None)
    kept, causes, _ = apache.skipped(_Edited(res, {
        "coredumpctl.txt": "\n".join(text[:15]), "dmesg.txt": ""}), 20)
    assert (kept, causes) == (15, {"lost": 5})


class _Edited:
    """A recorded result with some files' text replaced."""

    def __init__(self, res, texts):
        self.res, self.texts = res, texts

    def path(self, name):
        return self.res.path(name)

    def text(self, name):
        return self.texts[name] if name in self.texts else self.res.text(name)


def test_tables_of_the_recorded_runs():
    figs = [(s, apache.figures(recorded(s))) for s in ("no-dumps", "systemd-coredump")]
    load, cores = apache.tables(figs)
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in load.splitlines()[2:]}
    assert rows["no-dumps"] == ["20 (2.00/s)", "20", "1.79/s", "6 / 78 / 124 ms",
                                "20 / 1718 / 2021 ms", "1239 / 2360", "0 / 0"]
    assert rows["systemd-coredump"][:3] == ["20 (2.00/s)", "20", "0.16/s"]
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in cores.splitlines()[2:]}
    assert rows["no-dumps"] == ["0", "-", "-", "-", "-", "2857 MiB (of 2893)", "0.9 / 1.7 s",
                                "2.5 / 4.4 s", "4.0 s", "7.2 s"]
    assert rows["systemd-coredump"][:5] == ["20", "-", "-", "-", "-"]
    assert rows["systemd-coredump"][6:] == ["35.9 / 55.5 s", "37.7 / 57.7 s", "16.2 s", "128.1 s"]


def test_storm_sizes_its_guest_for_its_cores():
    """The job asks Apache for the storm's opcache, and the scratch disk
    holds every crash's core above the 1 GiB free-space floor: 4 GiB as
    ever for the small storm (20 cores of about 40 MiB), more for 20 of
    about 150 MiB (128 MiB of opcache: 1088 + 20 * 160 MiB)."""
    small = apache.Storm()
    assert small.disk_mb() == 4096
    big = apache.Storm(opcache_mb=128, warm_mb=32)
    assert big.disk_mb() == 4288
    text = apache.job(apache.SETUPS[0], big)
    assert "apache_start 6 128\n" in text and "apache_warm 32\n" in text
    assert "apache_start 6 16\n" in apache.job(apache.SETUPS[0], small)
