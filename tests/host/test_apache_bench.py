"""The Apache storm benchmark's readers, figures and tables
(tests/harness/apache.py) on what real guests wrote: test_data/apache-storm/
holds what two guests of a `make bench-apache` run of December 6 wrote,
no-dumps and systemd-coredump, as they wrote it but for the cores (a run
stopped after them: its guest shell's wait for the dump helpers matched
nothing, which moved no figure read here). The expected values were worked out
from the files by other means than the code (awk, grep, sort, counting
lines), as each test's comments say."""

import gzip
import shutil
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
    # the run had no healthy-watch.php: "one at a time" is "-"
    assert rows["no-dumps"] == ["20 (2.00/s)", "20", "1.79/s", "6 / 78 / 124 ms",
                                "20 / 1718 / 2021 ms", "1239 / 2360", "0 / 0", "-"]
    assert rows["systemd-coredump"][:3] == ["20 (2.00/s)", "20", "0.16/s"]
    rows = {line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
            for line in cores.splitlines()[2:]}
    assert rows["no-dumps"] == ["0", "-", "-", "-", "-", "2857 MiB (of 2893)", "0.9 / 1.7 s",
                                "2.5 / 4.4 s", "4.0 s", "7.2 s"]
    assert rows["systemd-coredump"][:5] == ["20", "-", "-", "-", "-"]
    assert rows["systemd-coredump"][6:] == ["35.9 / 55.5 s", "37.7 / 57.7 s", "16.2 s", "128.1 s"]


def test_healthy_route_one_request_at_a_time(tmp_path):
    """healthy-watch.php's lines, as the recorded floor's would have been:
    its first crash request was sent at 26310 ms. A request answered before
    then is in the series but not in the longest wait; one sent before and
    answered after is; one still waiting at the end is in neither."""
    assert apache.healthy_samples("26000 20 1\n26250 5000 0\n31600 -1 0\nnoise\n") == \
        [(26000, 20, True), (26250, 5000, False), (31600, None, False)]
    shutil.copytree(DATA / "no-dumps", tmp_path / "no-dumps")
    (tmp_path / "no-dumps" / "healthy.txt").write_text(
        "26000 9000 1\n"      # ended at 35000: after the first crash request, the longest
        "25000 30 1\n"        # ended at 25030, before it: not counted
        "35250 40 0\n"        # answered, but not the route's "ok": counted not ok
        "35600 -1 0\n")       # still waiting at the end
    d = tmp_path / "no-dumps"
    f = apache.figures(Result(rc=0, output="", console="", results_dir=d, log_dir=d, wall_s=0.0))
    assert f["healthy_series"] == [(-0.31, 9000, True), (-1.31, 30, True), (8.94, 40, False),
                                   (9.29, None, False)]
    assert f["healthy_max_s"] == 9.0 and f["healthy_failed"] == 1
    load, _ = apache.tables([("no-dumps", f)])
    assert load.splitlines()[2].split("|")[-2].strip() == "9.0 s, 1"


def test_the_job_watches_the_healthy_route():
    """The benchmark's job starts the one-at-a-time client with the other
    watchers and stops it with them, and the image installs it."""
    text = apache.job(apache.SETUPS[0], apache.Storm())
    assert "\nhealthy_watch &\n" in text and "/tmp/stop-healthy" in text
    assert text.index("healthy_watch &") < text.index("crash_at ")
    root = Path(__file__).resolve().parents[2]
    assert "healthy-watch.php" in (root / "scripts" / "mkrootfs.sh").read_text()
    assert "healthy_watch()" in (root / "tests" / "guest" / "apache.sh").read_text()


def test_storm_sizes_its_guest_for_its_cores():
    """The job asks Apache for the storm's opcache, and the scratch disk
    holds every crash's core above the 1 GiB free-space floor: 4 GiB as
    ever for the small storm (20 cores of about 40 MiB), more for 20 of
    about 150 MiB (128 MiB of opcache: 1088 + 20 * 160 MiB), at most
    16 GiB."""
    small = apache.Storm()
    assert small.disk_mb() == 4096
    big = apache.Storm(opcache_mb=128, warm_mb=32)
    assert big.disk_mb() == 4288
    # the real rate, 10 a second for a minute: 16 GiB, not 96
    assert apache.Storm(per_s=10, crash_s=60, opcache_mb=128, warm_mb=32).disk_mb() == 16384
    text = apache.job(apache.SETUPS[0], big)
    assert "apache_start 6 128\n" in text and "apache_warm 32\n" in text
    assert "apache_start 6 16\n" in apache.job(apache.SETUPS[0], small)


def test_make_bench_names_setups_of_either_kind(monkeypatch):
    """`make bench` runs the Apache storm beside the others: BENCH_SETUPS
    names setups of either kind (no-dumps is in both), a name of neither
    stops it before any boot, and without it each kind runs its own."""
    import bench

    monkeypatch.setenv("BENCH_SETUPS", "no-dumps,systemd-coredump")
    storm, ap = bench.pick_setups()
    assert storm == ["no-dumps"] and [s.name for s in ap] == ["no-dumps", "systemd-coredump"]
    monkeypatch.setenv("BENCH_SETUPS", "skip")
    assert bench.pick_setups() == (["skip"], [])
    monkeypatch.setenv("BENCH_SETUPS", "no-dumps,nosuch")
    with pytest.raises(SystemExit, match="unknown nosuch"):
        bench.pick_setups()
    monkeypatch.delenv("BENCH_SETUPS")
    storm, ap = bench.pick_setups()
    assert "stock" in storm and "v1-fixed" not in storm
    assert [s.name for s in ap] == [s.name for s in apache.SETUPS]
    # the scenario is among make bench's, by default and alone
    monkeypatch.delenv("BENCH_SCENARIOS", raising=False)
    scenarios, ap = bench.pick_scenarios()
    assert ap and "burst" in scenarios and "staggered-filling" not in scenarios
    monkeypatch.setenv("BENCH_SCENARIOS", "apache")
    assert bench.pick_scenarios() == ([], True)
    monkeypatch.setenv("BENCH_SCENARIOS", "burst")
    assert bench.pick_scenarios() == (["burst"], False)
