"""scripts/test-pipeline.sh, with a stand-in for make: every lane reports,
one failing lane fails the run, compile-check starts first and yields, and
a lane is stopped at the run's deadline."""

import os
import subprocess
import time
from pathlib import Path

from harness.paths import TOP


def _fake_make(tmp_path, script):
    """A stand-in for make: a shell case on the target, each call logged."""
    make = tmp_path / "make"
    make.write_text("#!/bin/sh\n"
                    f"echo \"$*\" >> {tmp_path}/calls\n"
                    "for t; do case $t in -*) ;; *) target=$t;; esac; done\n"
                    f"case $target in\n{script}\nesac\n")
    make.chmod(0o755)
    return make


def _pipeline(tmp_path, make, deadline_s=None):
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "MAKE": str(make),
           "COREDAM_PIPELINE_LOGS": str(tmp_path / "logs")}
    if deadline_s is not None:
        env["COREDAM_DEADLINE"] = str(int(time.time()) + deadline_s)
    return subprocess.run(["scripts/test-pipeline.sh"], cwd=TOP, env=env,
                          capture_output=True, text=True, timeout=120)


def test_pipeline_reports_every_lane_and_fails_on_one(tmp_path):
    # the lanes all run although the debug one fails, the quiet debug
    # tests are not run on a failed debug lane, and the run fails
    make = _fake_make(tmp_path, "lane-debug) exit 3;;\n*) exit 0;;")
    p = _pipeline(tmp_path, make)
    assert p.returncode == 1, p.stdout + p.stderr
    calls = (tmp_path / "calls").read_text()
    for target in ["compile-check", "lane-prepare", "kernel-debug", "lane-debug",
                   "lane-vm", "lane-quiet-vm"]:
        assert target in calls, calls
    assert "lane-quiet-debug" not in calls
    assert "debug          FAILED (3)" in p.stdout
    assert "vm             passed" in p.stdout
    assert "quiet-debug    FAILED (not run: the debug lane failed)" in p.stdout


def test_pipeline_starts_compile_check_first_and_stops_it_when_nothing_can_be_tested(tmp_path):
    # compile-check starts before the kernels are built, to take what their
    # links and debootstrap leave of the CPU; when the unit tests, kernels or
    # images fail, no lane starts and compile-check is stopped at once
    make = _fake_make(tmp_path, f"compile-check) sleep 1000 & echo $! > {tmp_path}/child; wait;;\n"
                      f"lane-prepare) while [ ! -s {tmp_path}/child ]; do sleep 0.1; done; exit 2;;\n"
                      "*) exit 0;;")
    t0 = time.monotonic()
    p = _pipeline(tmp_path, make)
    assert time.monotonic() - t0 < 30
    assert p.returncode == 1, p.stdout + p.stderr
    assert "nothing to test; compile-check stopped" in p.stdout
    calls = (tmp_path / "calls").read_text().split("\n")
    # (lane-prepare ended only once compile-check had started its child)
    assert sorted(c.split()[-1] for c in calls if c) == ["compile-check", "lane-prepare"], calls
    child = int((tmp_path / "child").read_text())
    time.sleep(0.5)
    assert not Path(f"/proc/{child}").exists() or \
        Path(f"/proc/{child}/stat").read_text().split()[2] == "Z"


def test_pipeline_compile_check_yields_to_the_other_lanes(tmp_path):
    # each lane is a session, and with autogroup scheduling a session is a
    # scheduling group: compile-check's processes and its group are at nice
    # 19 (nice inside the group alone weighs nothing against the others),
    # the debug lane's are not
    probe = ("ps -o ni= -p $$ > {d}/{n}.nice; "
             "cat /proc/self/autogroup > {d}/{n}.group 2>/dev/null || true; exit 0;;")
    make = _fake_make(tmp_path, "compile-check) " + probe.format(d=tmp_path, n="cc") + "\n"
                      "kernel-debug) " + probe.format(d=tmp_path, n="debug") + "\n"
                      "*) exit 0;;")
    p = _pipeline(tmp_path, make)
    assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / "cc.nice").read_text().strip() == "19"
    assert (tmp_path / "debug.nice").read_text().strip() == str(os.nice(0))
    if Path("/proc/sys/kernel/sched_autogroup_enabled").exists() and \
            Path("/proc/sys/kernel/sched_autogroup_enabled").read_text().strip() == "1":
        assert (tmp_path / "cc.group").read_text().split()[-1] == "19", (tmp_path / "cc.group").read_text()
        assert (tmp_path / "debug.group").read_text().split()[-1] == "0"


def test_pipeline_stops_a_lane_at_the_deadline(tmp_path):
    # a background lane that hangs is stopped, children and all, at the
    # run's deadline and counted as failed; the run still ends
    make = _fake_make(tmp_path, f"compile-check) sleep 1000 & echo $! > {tmp_path}/child; wait;;\n"
                      "*) exit 0;;")
    t0 = time.monotonic()
    p = _pipeline(tmp_path, make, deadline_s=5)
    assert time.monotonic() - t0 < 60
    assert p.returncode == 1, p.stdout + p.stderr
    assert "compile-check  FAILED (stopped at the run's deadline)" in p.stdout
    child = int((tmp_path / "child").read_text())
    time.sleep(0.5)
    assert not Path(f"/proc/{child}").exists() or \
        Path(f"/proc/{child}/stat").read_text().split()[2] == "Z"
