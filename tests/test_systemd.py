"""coredam under a real systemd: the Debian 12 guest (scripts/mkrootfs.sh)
booted on the patched kernel with systemd as PID 1, the project installed
with `make install` and its units enabled as a package would.

- coredamd.service reaches ready and reports the slice's cgroup and io.max;
  the boot-time sysctl.d values hold before and after it.
- a storm with a file core_pattern: every core complete, written from
  coredump.slice; the agent follows the core_pattern change to the disk.
- systemd-coredump with the drop-in: more crashes at once (20) than its
  old limit of 16, every one in `coredumpctl list`, its workers in coredump.slice, and
  the probe's fdatasync latency with and without the agent's setup.
- cgconfigparser builds the same cgroup from configs/cgconfig.conf put in
  /etc/cgconfig.d, beside a site's own /etc/cgconfig.conf.
- restarting the service mid-storm loses nothing; a broken reload keeps the
  old configuration.
- the slice's limits go through systemd (runtime unit properties): a
  daemon-reload keeps the agent's, stopping it puts the slice's own back.
"""

import json
import os
import re

import pytest

from harness.kernels import ROOTFS
from harness.parsers import io_rule, key_values as kv, name_values, read_probe, stats_dict, storm_txt
from harness.qemu import boot as qemu_boot
from harness.stats import idle_and_storm

KERNEL = os.environ.get("COREDAM_KERNEL", "patched")
# where the kernel moves dumping tasks under systemd: a leaf of the slice
LEAF = "/coredump.slice/coredump-kernel.slice"

LIB = r"""
. /lib/coredam/lib.sh
. /lib/coredam/systemd.sh
"""


def boot(script, timeout=1200, **kw):
    res = qemu_boot(LIB + script, kernel=kw.pop("kernel", KERNEL), rootfs=ROOTFS,
                    timeout=timeout, mem=kw.pop("mem", "3G"), **kw)
    log = res.text("agent.log") if res.path("agent.log").exists() else ""
    assert res.rc == 0, res.output + "\n--- agent log ---\n" + log
    return res


def io_written(text, majmin):
    rule = io_rule(text, majmin)
    return int(rule["wbytes"]) if rule else 0


def test_service_ready_status_and_boot_sysctls():
    res = boot(r"""
systemctl show -p ActiveState -p SubState -p Type -p StatusText -p ControlGroup coredamd \
    -p WatchdogUSec -p OOMScoreAdjust > $RESULTS/show.txt
cat /proc/$(systemctl show -p MainPID --value coredamd)/oom_score_adj > $RESULTS/oom_score_adj
# systemd-coredump's workers, in the slice, with time for a paced core
systemctl show -p Slice -p RuntimeMaxUSec systemd-coredump@probe.service > $RESULTS/worker.txt
# the agent pings the watchdog as its loop turns
systemctl show -p WatchdogTimestampMonotonic --value coredamd > $RESULTS/watchdog.1
sleep 3
systemctl show -p WatchdogTimestampMonotonic --value coredamd > $RESULTS/watchdog.2
for k in core_cgroup core_max_concurrency core_max_waiting core_wait_timeout_ms \
         core_writeback_window core_pipe_limit; do
    echo "$k=$(cat /proc/sys/kernel/$k)"
done > $RESULTS/knobs.boot
root=$(findmnt -no SOURCE /); echo $(majmin $root) > $RESULTS/root.majmin
conf <<'EOF'
[Limits]
WriteBandwidth=12M
[Space]
FreeSpaceFloor=20M
EOF
systemctl reload coredamd
waitfor 60 "io.max at 12 MB/s" grep -q wbps=12000000 /sys/fs/cgroup/coredump.slice/io.max
coredamctl status --json > $RESULTS/status.json
coredamctl status > $RESULTS/status.txt
cat /sys/fs/cgroup/coredump.slice/io.max > $RESULTS/io.max
systemd-analyze security coredamd.service --no-pager > $RESULTS/security.txt 2>&1 || true
# what a compromised agent could write, tried from inside its mount
# namespace and, as the control, from the machine's: each file gets its
# own value back (read first: GNU cat refuses a sysfs file as both ends)
pid=$(systemctl show -p MainPID --value coredamd)
wb='v=$(cat "$0") && printf "%s\n" "$v" > "$0"'
for where in agent machine; do
    if [ $where = agent ]; then set -- nsenter -t $pid -m; else set --; fi
    for t in core_uses_pid:/proc/sys/kernel/core_uses_pid dirty_ratio:/proc/sys/vm/dirty_ratio \
             read_ahead_kb:/sys/block/${SCRATCH_DEV#/dev/}/queue/read_ahead_kb \
             core_max_waiting:/proc/sys/kernel/core_max_waiting core_pattern:/proc/sys/kernel/core_pattern \
             memory.high:/sys/fs/cgroup/coredump.slice/memory.high; do
        if "$@" sh -c "$wb" "${t#*:}" 2>/dev/null; then r=ok; else r=refused; fi
        echo "$where ${t%%:*} $r"
    done
    # a device: opened from inside the agent's cgroup too, whose device
    # policy lets it read /dev/kmsg and no disk
    if [ $where = agent ]; then
        cg=$(sed -n 's/^0:://p' /proc/$pid/cgroup)
        set -- sh -c 'echo $$ > "/sys/fs/cgroup$0/cgroup.procs" && exec "$@"' "$cg" nsenter -t $pid -m
    fi
    if "$@" dd if=$SCRATCH_DEV of=/dev/null bs=4k count=1 2>/dev/null; then r=ok; else r=refused; fi
    echo "$where device $r"
    if "$@" dd if=/dev/kmsg of=/dev/null bs=8k count=1 2>/dev/null; then r=ok; else r=refused; fi
    echo "$where kmsg $r"
done > $RESULTS/confined.txt
grep -E '^CapEff:' /proc/$pid/status >> $RESULTS/confined.txt
journalctl -b -u coredamd -o json --no-pager > $RESULTS/journal.json
ls /run/coredam > $RESULTS/run.running
systemctl stop coredamd
ls /run/coredam > $RESULTS/run.stopped
for k in core_cgroup core_max_concurrency core_max_waiting core_wait_timeout_ms \
         core_writeback_window; do
    echo "$k=$(cat /proc/sys/kernel/$k)"
done > $RESULTS/knobs.stopped
agent_log
""")
    show = kv(res.text("show.txt"))
    assert show["ActiveState"] == "active" and show["SubState"] == "running", show
    assert show["Type"] == "notify"
    assert show["StatusText"], "coredamd sent no STATUS="
    # the unit protects the agent: a watchdog it pings, and the OOM killer's last pick
    assert show["WatchdogUSec"] == "1min" and show["OOMScoreAdjust"] == "-500", show
    assert res.text("oom_score_adj").strip() == "-500"
    worker = kv(res.text("worker.txt"))
    assert worker == {"Slice": "coredump.slice", "RuntimeMaxUSec": "30min"}, worker
    w1, w2 = int(res.text("watchdog.1")), int(res.text("watchdog.2"))
    assert w2 > w1 > 0, (w1, w2)
    # before the agent changed anything, the packaged sysctl.d values hold
    boot_knobs = kv(res.text("knobs.boot"))
    assert boot_knobs["core_cgroup"] == LEAF, boot_knobs

    status = json.loads(res.text("status.json"))
    assert status["agent"]["running"] and status["kernel"]["supported"]
    assert status["cgroup"] == "/coredump.slice"
    root = res.text("root.majmin").strip()
    assert io_rule(res.text("io.max"), root)["wbps"] == "12000000", res.text("io.max")
    assert root in res.text("status.txt") or "12" in res.text("status.txt")
    # its metrics go with it: a scraper sees it gone, not its last values
    assert "metrics.prom" in res.text("run.running").split(), res.text("run.running")
    assert "metrics.prom" not in res.text("run.stopped").split(), res.text("run.stopped")
    # a stopped agent leaves the boot-time values: dumps stay queued and moved
    stopped = kv(res.text("knobs.stopped"))
    assert stopped == {"core_cgroup": LEAF, "core_max_concurrency": "2",
                       "core_max_waiting": "64", "core_wait_timeout_ms": "1800000",
                       "core_writeback_window": "1024"}, stopped
    # the sandbox: /proc/sys and /sys read-only to the agent but for the
    # knobs it owns and the cgroup tree (core_pattern is the unit's
    # ExecStartPre='s), no devices; all of it writable from the machine,
    # so the checks can fail
    lines = res.text("confined.txt").splitlines()
    tried = {tuple(line.split()[:2]): line.split()[2] for line in lines if not line.startswith("Cap")}
    assert tried == {
        ("agent", "core_uses_pid"): "refused", ("agent", "dirty_ratio"): "refused",
        ("agent", "read_ahead_kb"): "refused", ("agent", "device"): "refused",
        ("agent", "core_max_waiting"): "ok", ("agent", "core_pattern"): "refused",
        ("agent", "memory.high"): "ok", ("agent", "kmsg"): "ok",
        ("machine", "core_uses_pid"): "ok", ("machine", "dirty_ratio"): "ok",
        ("machine", "read_ahead_kb"): "ok", ("machine", "device"): "ok",
        ("machine", "core_max_waiting"): "ok", ("machine", "core_pattern"): "ok",
        ("machine", "memory.high"): "ok", ("machine", "kmsg"): "ok"}, lines
    # the agent's records are structured: COREDAM_EVENT= and the other
    # key=value words as fields of their own
    recs = [json.loads(line) for line in res.text("journal.json").splitlines() if line.startswith("{")]
    ready = [r for r in recs if r.get("COREDAM_EVENT") == "ready"]
    assert ready, [r.get("MESSAGE") for r in recs][-20:]
    assert ready[0]["COREDAM_MODE"] == "fixed" and ready[0]["COREDAM_KERNEL"] == "patched", ready[0]
    assert ready[0]["PRIORITY"] == "6" and ready[0]["MESSAGE"].startswith("ready event=ready"), ready[0]
    # CAP_SYS_ADMIN kept: the series' knobs need it
    cap_eff = int(next(line for line in lines if line.startswith("CapEff:")).split()[1], 16)
    assert cap_eff & (1 << 21), lines
    # CAP_SYS_NICE (23): dumps of every user's processes made background work
    assert cap_eff & (1 << 23), lines
    score = [line for line in res.text("security.txt").splitlines() if "Overall exposure" in line]
    print("systemd-analyze security coredamd.service:", score)
    assert score, res.text("security.txt")


def test_stock_kernel_pipe_helper_switched_by_the_unit():
    """On a kernel without the series, [Pipe] SetCorePattern=yes: the unit's
    ExecStartPre= points core_pattern at coredam-pipe, a crash is stored by
    it, the daemon (no CAP_SYS_ADMIN there) cannot write core_pattern from
    its sandbox, and ExecStopPost= puts the old value back."""
    res = boot(COREDUMPCTL_CHECKS + r"""
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.before
pipe_helper_on
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.active
cat /proc/sys/kernel/core_pipe_limit > $RESULTS/pipe_limit.active
pid=$(systemctl show -p MainPID --value coredamd)
grep -E '^(CapEff|CapPrm):' /proc/$pid/status > $RESULTS/agent.caps
if nsenter -t $pid -m sh -c 'v=$(cat "$0") && printf "%s\n" "$v" > "$0"' /proc/sys/kernel/core_pattern 2>/dev/null
then echo ok; else echo refused; fi > $RESULTS/agent.pattern_write
systemd-run --quiet --slice=crashers.slice --unit=one /usr/local/bin/crasher -m 8
waitfor 60 "the crasher's core" sh -c 'ls /var/lib/coredam/cores | grep -q "^core[.]crasher[.].*[.]json$"'
ls -la /var/lib/coredam/cores > $RESULTS/cores.ls
coredumpctl_checks
systemctl stop coredamd
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.after
agent_log
""", kernel="stock")
    before = res.text("pattern.before")
    assert res.text("pattern.active").strip() == \
        "|/usr/libexec/coredam/coredam-pipe /var/lib/coredam/cores %P %u %g %s %t %c %d %e", \
        res.text("pattern.active")
    assert res.text("pipe_limit.active").strip() == "0"
    assert res.text("agent.pattern_write").strip() == "refused"
    caps = {k: int(v, 16) for k, v in (line.split() for line in res.text("agent.caps").splitlines())}
    # out of the permitted set, so never effective again (the unit leaves
    # it no CAP_SETPCAP to empty its bounding set too, and no exec would)
    assert not caps["CapEff:"] & (1 << 21) and not caps["CapPrm:"] & (1 << 21), caps
    assert caps["CapEff:"] & (1 << 19), caps  # CAP_SYS_PTRACE, which it keeps
    assert re.search(r"core\.crasher\.\d+\.\d+\n", res.text("cores.ls")), res.text("cores.ls")
    assert res.text("pattern.after") == before, (before, res.text("pattern.after"))
    assert "event=core-pattern-restored" in res.text("agent.log"), res.text("agent.log")[-3000:]
    check_coredumpctl(res)


# coredumpctl on the helper's cores (docs/pipe-helper.md, "coredumpctl"):
# the first crash stored as it came, a second compressed ([Pipe]
# Compress=yes, read by the helper at each crash), a third skipped as a
# repeat of the same crash ([Repeats] Keep=2); what coredumpctl lists,
# shows, dumps and hands a debugger, and the records themselves
COREDUMPCTL_CHECKS = r"""
coredumpctl_checks() {
	local cores=/var/lib/coredam/cores one two pid1 pid2 pid3
	one=$(ls $cores | grep -E '^core[.]crasher[.][0-9]+[.][0-9]+$' | head -1)
	printf '[Pipe]\nCompress=yes\n' > /etc/coredam/coredam.conf.d/60-compress.conf
	systemd-run --quiet --slice=crashers.slice --unit=two /usr/local/bin/crasher -m 8
	waitfor 60 "the compressed core" sh -c "ls $cores | grep -q '^core[.]crasher[.].*[.]zst[.]json$'" || true
	two=$(ls $cores | grep -E '^core[.]crasher[.][0-9]+[.][0-9]+[.]zst$' | head -1)
	systemd-run --quiet --slice=crashers.slice --unit=three /usr/local/bin/crasher -m 8
	waitfor 60 "the repeat's record" sh -c 'journalctl -q --no-pager COREDAM_STATE=skipped-repeat | grep -q .' || true
	pid1=$(systemctl show -p ExecMainPID --value one)
	pid2=$(systemctl show -p ExecMainPID --value two)
	pid3=$(systemctl show -p ExecMainPID --value three)
	echo "$pid1 $pid2 $pid3" > $RESULTS/pids
	echo "$one $two" > $RESULTS/names
	coredumpctl list --no-legend --no-pager > $RESULTS/cd.list 2>&1 || true
	for p in $pid1 $pid2 $pid3; do coredumpctl info --no-pager $p > $RESULTS/cd.info.$p 2>&1 || true; done
	# dump decompresses by the file's suffix
	coredumpctl dump -q $pid2 -o /tmp/dump.2 > /dev/null 2> $RESULTS/cd.dump2.err || true
	/usr/libexec/coredam/coredam-pipe --decompress < "$cores/$two" > /tmp/plain.2 || true
	if [ -s /tmp/plain.2 ] && cmp /tmp/dump.2 /tmp/plain.2; then echo identical; else echo differ; fi > $RESULTS/cd.dump2
	# ... and refuses a core without a compression suffix
	rc=0; coredumpctl dump -q $pid1 -o /tmp/dump.1 > /dev/null 2> $RESULTS/cd.dump1.err || rc=$?
	echo $rc > $RESULTS/cd.dump1.rc
	# debug hands the debugger the stored file itself: "debugger EXE -c CORE"
	coredumpctl debug -q --debugger=sh \
		--debugger-arguments="-c 'echo \"\$1\"; cmp \"\$3\" $cores/$one && echo identical' sh" $pid1 \
		> $RESULTS/cd.debug1 2>&1 || true
	journalctl -q --no-pager -o json MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1 > $RESULTS/cd.json || true
}
"""


def check_coredumpctl(res):
    pid1, pid2, pid3 = res.text("pids").split()
    one, two = res.text("names").split()
    assert one == f"core.crasher.{pid1}.{one.split('.')[3]}", (one, pid1)
    rows = {line.split()[4]: line for line in res.text("cd.list").splitlines() if len(line.split()) > 5}
    assert set(rows) >= {pid1, pid2, pid3}, res.text("cd.list")
    # listed with the executable from the core's notes, the signal, and the core there
    for pid in (pid1, pid2):
        assert re.search(r" SIGSEGV present +/usr/local/bin/crasher ", rows[pid]), rows[pid]
    # the skipped repeat: the crash, with no core
    assert re.search(r" SIGSEGV none +/usr/local/bin/crasher", rows[pid3]), rows[pid3]
    info = res.text(f"cd.info.{pid1}")
    assert re.search(r"^\s*PID: " + pid1 + r" \(crasher\)$", info, re.M), info
    assert re.search(r"^\s*Executable: /usr/local/bin/crasher$", info, re.M), info
    assert re.search(r"^\s*Signal: 11 \(SEGV\)$", info, re.M), info
    assert re.search(r"^\s*Storage: /var/lib/coredam/cores/" + re.escape(one) + r" \(present\)$", info, re.M), info
    assert f"Process {pid1} (crasher) of user 0 dumped core." in info, info
    info3 = res.text(f"cd.info.{pid3}")
    assert re.search(r"^\s*Storage: none$", info3, re.M), info3
    assert "not stored: a repeat of /usr/local/bin/crasher SIGSEGV" in info3, info3
    # dump: the compressed core, decompressed, byte for byte
    assert res.text("cd.dump2").strip() == "identical", res.text("cd.dump2.err")
    # systemd's coredumpctl (252 to this day) decompresses every file it
    # dumps by its suffix: an uncompressed core is refused (documented)
    assert res.text("cd.dump1.rc").strip() != "0", res.text("cd.dump1.err")
    assert "Protocol not supported" in res.text("cd.dump1.err"), res.text("cd.dump1.err")
    # debug: the executable and the stored file itself
    debug = res.text("cd.debug1")
    assert debug.splitlines()[:1] == ["/usr/local/bin/crasher"] and "identical" in debug, debug
    recs = [json.loads(line) for line in res.text("cd.json").splitlines() if line.startswith("{")]
    states = sorted(r.get("COREDAM_STATE") for r in recs)
    assert states == ["complete", "complete", "skipped-repeat"], recs
    for r in recs:
        assert r["SYSLOG_IDENTIFIER"] == "coredam-pipe" and r["_UID"] == "0", r
        assert r["COREDUMP_UID"] == "0" and r["COREDUMP_SIGNAL_NAME"] == "SIGSEGV", r
        assert re.fullmatch(r"[0-9a-f]{16}", r["COREDAM_SIGNATURE"]), r
    # one crash, one signature: the repeat table's counts in each record
    assert len({r["COREDAM_SIGNATURE"] for r in recs}) == 1, recs
    skipped = next(r for r in recs if r["COREDAM_STATE"] == "skipped-repeat")
    assert skipped["COREDAM_REPEAT_KEPT"] == "2" and skipped["COREDAM_REPEAT_SKIPPED"] == "1", skipped
    assert "COREDUMP_FILENAME" not in skipped, skipped


def show_entries(text, prop):
    """The entries of an a(st) property in `systemctl show` output: [(path, limit)]."""
    return [tuple(v.split()) for k, _, v in (line.partition("=") for line in text.splitlines())
            if k == prop and v]


def test_slice_limits_set_through_systemd():
    """Under systemd the agent sets coredump.slice's limits as the slice's
    runtime properties: systemd writes them, a daemon-reload keeps them
    (no io-max-restored), and stopping the agent puts the slice's own back,
    also after a killed agent was restarted. An adaptive storm counts the
    calls."""
    res = boot(r"""
root=$(findmnt -no SOURCE /); echo $(majmin $root) > $RESULTS/root.majmin
printf '[Limits]\nWriteBandwidth=7M\n[Cgroup]\nMemoryHigh=300M\n' | conf
systemctl reload coredamd
waitfor 60 "io.max at 7 MB/s" grep -q wbps=7000000 /sys/fs/cgroup/coredump.slice/io.max
slice_state running
ls /run/systemd/system.control/coredump.slice.d/ > $RESULTS/dropins.txt
cat /run/systemd/system.control/coredump.slice.d/50-IOWriteBandwidthMax.conf > $RESULTS/dropin.wbps
coredamctl status > $RESULTS/status.txt
ls /run/coredam > $RESULTS/run.running
# systemd writes the slice's cgroup again: the agent's values, not the unit file's
systemctl daemon-reload
agent_ticks 3
slice_state reloaded
journalctl -b -u coredamd -o cat --no-pager > $RESULTS/journal.reloaded

# what a call costs PID 1: 20 changes of the fixed bandwidth, 20 calls
pid1_cpu() { awk '{ print $14 + $15 }' /proc/1/stat; }
coredamctl status --json > $RESULTS/sets.before.json
pid1_cpu > $RESULTS/sets.cpu
for i in $(seq 10); do coredamctl set bandwidth 8M >/dev/null; coredamctl set bandwidth 7M >/dev/null; done
pid1_cpu >> $RESULTS/sets.cpu
coredamctl status --json > $RESULTS/sets.after.json

# killed: the restarted agent takes the slice's own limits from the file
# the first one left, not the 7M it finds in force
pid=$(systemctl show -p MainPID --value coredamd)
systemctl kill -s KILL coredamd
waitfor 60 "coredamd restarted" another_agent $pid

# adaptive: the budget moves with a storm on the root disk and a probe
# beside it (the root file system has some 200 MB free: 6 cores of 16 MB
# stay above a floor of 20 MB)
printf '[Agent]\nMode=adaptive\n[Adaptive]\nFloor=2M\nCeiling=20M\nLiftWhenIdle=no\n[Cgroup]\nMemoryHigh=300M\n[Space]\nFreeSpaceFloor=20M\n' | conf
systemctl reload coredamd
mkdir -p /var/cores /var/probe
echo /var/cores/core.%p > /proc/sys/kernel/core_pattern
agent_ticks 3
coredamctl status --json > $RESULTS/adaptive.before.json
date +%s.%N > $RESULTS/adaptive.time
systemd-run --quiet --unit=probe --slice=probe.slice \
    /usr/local/bin/probe -d /var/probe -o $RESULTS/probe.txt -i 50 -s /tmp/stop-probe
crash 6 16
stop_probe
date +%s.%N >> $RESULTS/adaptive.time
coredamctl status --json > $RESULTS/adaptive.after.json
rm -rf /var/cores /var/probe

systemctl stop coredamd
slice_state stopped
systemctl daemon-reload
slice_state stopped.reloaded
ls /run/coredam > $RESULTS/run.stopped
agent_log
""")
    root = res.text("root.majmin").strip()
    # while it runs: systemd holds the agent's values, under the unit
    # file's name for the root disk, and wrote them to the cgroup
    running = res.text("running.show")
    assert show_entries(running, "IOWriteBandwidthMax") == [("/var", "7000000")], running
    assert "MemoryHigh=314572800" in running.splitlines(), running
    assert io_rule(res.text("running.io.max"), root)["wbps"] == "7000000", res.text("running.io.max")
    assert int(res.text("running.memory.high")) == 300 << 20
    dropins = res.text("dropins.txt").split()
    assert "50-IOWriteBandwidthMax.conf" in dropins and "50-MemoryHigh.conf" in dropins, dropins
    wbps = [line for line in res.text("dropin.wbps").splitlines() if line.startswith("IOWrite")]
    assert wbps == ["IOWriteBandwidthMax=", "IOWriteBandwidthMax=/var 7000000"], res.text("dropin.wbps")
    assert "through systemd coredump.slice" in res.text("status.txt"), res.text("status.txt")
    assert "coredump.slice.saved" in res.text("run.running").split(), res.text("run.running")
    # a daemon-reload keeps them: nothing to restore, nothing restored
    assert io_rule(res.text("reloaded.io.max"), root)["wbps"] == "7000000", res.text("reloaded.io.max")
    assert int(res.text("reloaded.memory.high")) == 300 << 20
    journal = res.text("journal.reloaded")
    assert "event=slice-unit unit=coredump.slice" in journal, journal
    assert "event=io-max-restored" not in journal and "event=slice-fallback" not in journal, journal

    # one call per change of the bandwidth, and what PID 1 spends on it
    sets = [json.loads(res.text(f"sets.{x}.json"))["agent"] for x in ("before", "after")]
    assert sets[1]["unit_calls"] - sets[0]["unit_calls"] == 20, sets
    ticks = [int(x) for x in res.text("sets.cpu").split()]
    print(f"20 SetUnitProperties calls: PID 1 used {(ticks[1] - ticks[0]) * 10 / 20:.1f} ms of CPU each")

    # adaptive: a call only for a budget that changed
    before = json.loads(res.text("adaptive.before.json"))["agent"]
    after = json.loads(res.text("adaptive.after.json"))["agent"]
    t0, t1 = (float(x) for x in res.text("adaptive.time").split())
    calls = after["unit_calls"] - before["unit_calls"]
    changes = after["budget_changes"] - before["budget_changes"]
    print(f"adaptive storm: {calls} SetUnitProperties calls, {changes} budget changes in {t1 - t0:.0f} s "
          f"({calls * 60 / (t1 - t0):.1f} calls a minute)")
    assert after["limits_through"] == "systemd coredump.slice", after
    assert changes > 0, (before, after)
    # the bandwidths the budget went through in the storm (its log lines
    # are counted by budget_changes): a change of concurrency alone makes
    # no call
    rates = ["2000000"] + re.findall(r"event=budget write_bps=(\S+)", res.text("agent.log"))
    window = rates[before["budget_changes"]:after["budget_changes"] + 1]
    moves = sum(1 for a, b in zip(window, window[1:]) if a != b)
    assert calls <= moves, (calls, window)

    # stopped, after a crash and restart on the way: the slice's own
    # limits back, and they survive a daemon-reload
    for name in ("stopped", "stopped.reloaded"):
        show = res.text(f"{name}.show")
        assert show_entries(show, "IOWriteBandwidthMax") == [("/var", "10000000")], (name, show)
        assert "MemoryHigh=268435456" in show.splitlines(), (name, show)
        assert io_rule(res.text(f"{name}.io.max"), root)["wbps"] == "10000000", res.text(f"{name}.io.max")
        assert int(res.text(f"{name}.memory.high")) == 256 << 20, name
    assert "coredump.slice.saved" not in res.text("run.stopped").split(), res.text("run.stopped")
    assert "event=slice-restored" in res.text("agent.log"), res.text("agent.log")


def test_file_pattern_storm_follows_core_pattern():
    res = boot(r"""
limits 20M 2
# the agent follows the new core_pattern to the scratch disk
cores_on_scratch
cat /sys/fs/cgroup/coredump.slice/io.max > $RESULTS/io.max
cat /proc/sys/kernel/core_cgroup > $RESULTS/core_cgroup
crash 8 16
sync
for f in /scratch/cores/core.*; do corecheck $f >> $RESULTS/cores.json || true; done
cat /sys/fs/cgroup/coredump.slice/io.stat > $RESULTS/io.stat
cat /proc/sys/kernel/core_dump_stats > $RESULTS/stats
coredamctl status --json > $RESULTS/status.json
agent_log
""")
    m = res.text("scratch.majmin").strip()
    assert io_rule(res.text("io.max"), m)["wbps"] == "20000000", res.text("io.max")
    assert res.text("core_cgroup").strip() == LEAF
    cores = res.json_lines("cores.json")
    assert len(cores) == 8 and all(c["valid"] and c["complete"] for c in cores), cores
    s = stats_dict(res.text("stats"))
    assert s["started"] == s["admitted"] == s["completed"] == 8, s
    assert s["failed"] == 0 and s["uncharged"] == 0, s
    # every byte of the cores was written from coredump.slice
    assert io_written(res.text("io.stat"), m) >= 8 * (16 << 20), res.text("io.stat")


COREDUMP_STORM = r"""
# systemd-coredump's own store limit is 10% of the file system: room for all
mkdir -p /etc/systemd/coredump.conf.d
printf '[Coredump]\nMaxUse=3G\n' > /etc/systemd/coredump.conf.d/50-test.conf
mkdir -p /scratch/coredump
mount --bind /scratch/coredump /var/lib/systemd/coredump
m=$(majmin $SCRATCH_DEV); echo $m > $RESULTS/scratch.majmin
{setup}
cat /proc/sys/kernel/core_pipe_limit > $RESULTS/pipe_limit
start_probe
sleep 8
(while [ ! -e /tmp/stop-watch ]; do
    ls /sys/fs/cgroup/coredump.slice/ | grep systemd-coredump@ >> $RESULTS/workers.txt || true
    sleep 0.5
 done) &
crash {n} {mb}
# until every core is listed and no worker runs, or no worker has run for
# 20 s (a core that is not listed by then is lost), at most 10 minutes
deadline=$(( $(now_ms) + 600000 ))
idle=0
while [ "$(coredumpctl list --no-legend -q 2>/dev/null | grep -c stormer)" -lt {n} ] \
      || systemctl list-units --no-legend 'systemd-coredump@*' | grep -q running; do
    [ $(now_ms) -lt $deadline ] || {{ echo "cores missing after 10 minutes"; break; }}
    if systemctl list-units --no-legend 'systemd-coredump@*' | grep -q running; then
        idle=0
    else
        idle=$((idle + 1)); [ $idle -lt 10 ] || break
    fi
    sleep 2
done
sync
now_ms > $RESULTS/synced
sleep 2
touch /tmp/stop-watch
stop_probe
coredumpctl list --no-legend -q --no-pager > $RESULTS/list.txt || true
# two of the cores listed, decompressed and checked page by page
for pid in $(grep stormer $RESULTS/list.txt | head -2 | awk '{{print $5}}'); do
    coredumpctl dump $pid -o /scratch/check.core >/dev/null 2>&1 && corecheck /scratch/check.core >> $RESULTS/cores.json
    rm -f /scratch/check.core
done
# what systemd-coredump recorded about the crashed process's unit
pid=$(grep stormer $RESULTS/list.txt | head -1 | awk '{{print $5}}')
[ -z "$pid" ] || coredumpctl info --no-pager $pid > $RESULTS/info.txt 2>&1 || true
cat /sys/fs/cgroup/coredump.slice/io.stat > $RESULTS/io.stat
cat /proc/sys/kernel/core_dump_stats > $RESULTS/stats
agent_log
"""

# the drop-in alone: workers in coredump.slice with the slice's io.max
# pointed at the disk the cores go to, systemd's core_pipe_limit lifted,
# and none of the kernel's coredam knobs (no queue, no move, no window)
DROPIN_ONLY = r"""
systemctl stop coredamd
systemctl set-property --runtime coredump.slice "IOWriteBandwidthMax=/var/lib/systemd/coredump 10M"
cp /usr/share/doc/coredam/examples/61-coredam-systemd-coredump.conf /etc/sysctl.d/
/usr/lib/systemd/systemd-sysctl
printf '' > /proc/sys/kernel/core_cgroup
echo 0 > /proc/sys/kernel/core_max_concurrency
echo 0 > /proc/sys/kernel/core_max_waiting
echo 0 > /proc/sys/kernel/core_writeback_window
"""

# the recommended setup: the drop-in, the sysctl, and coredamd (fixed budget)
WITH_AGENT = r"""
cp /usr/share/doc/coredam/examples/61-coredam-systemd-coredump.conf /etc/sysctl.d/
/usr/lib/systemd/systemd-sysctl
limits 10M 2
waitfor 60 "io.max names $m" grep -q "^$m " /sys/fs/cgroup/coredump.slice/io.max
"""


def coredump_storm(setup, name, n=20, mb=16):
    res = boot(COREDUMP_STORM.format(setup=setup, n=n, mb=mb), timeout=1800,
               name=f"systemd-coredump-{name}")
    times, _ = storm_txt(res.text("storm.txt"))
    prep, start = times["prep"], times["start"]
    synced = int(res.text("synced"))
    idle, storm = idle_and_storm(read_probe(res.path("probe.txt")), prep, start, synced)
    print(f"\nsystemd-coredump, {name}: {n} x {mb} MB, idle p99 {idle['p99']:.1f} ms "
          f"max {idle['max']:.1f} ms; storm p99 {storm['p99']:.1f} ms max {storm['max']:.1f} ms; "
          f"last core {(synced - start) / 1000:.1f} s")
    return res, idle, storm


def check_coredumps(res, n, at_least=None):
    listed = [line for line in res.text("list.txt").splitlines() if "stormer" in line]
    if at_least is None:
        assert len(listed) == n, res.text("list.txt")
    else:
        assert at_least <= len(listed) <= n, res.text("list.txt")
    print(f"systemd-coredump kept {len(listed)} of {n}")
    assert all("present" in line for line in listed), listed
    cores = res.json_lines("cores.json")
    assert len(cores) == 2 and all(c["valid"] and c["complete"] for c in cores), cores
    # systemd-coredump names the crashed process's own unit, read from
    # /proc/PID/cgroup while it dumps: the kernel never moves it
    info = res.text("info.txt")
    assert re.search(r"^\s*Unit: storm\.service$", info, re.M), info
    assert re.search(r"^\s*Slice: crashers\.slice$", info, re.M), info
    assert "coredump.slice" not in info, info
    # the per-crash workers ran in coredump.slice and wrote under its io.max
    assert "systemd-coredump@" in res.text("workers.txt")
    m = res.text("scratch.majmin").strip()
    assert io_written(res.text("io.stat"), m) > 0, res.text("io.stat")


def test_systemd_coredump_dropin_alone():
    """What the drop-in does by itself, without the kernel's queue, move
    and window (numbers in docs/deployment.md): the workers run in the
    slice and at least the old limit of 16 is kept. Not all 20: with 20
    helpers at once, systemd-coredump.socket's MaxConnections=16 turns the
    rest away (measured: 16 of 20), which is why the recommended setup
    keeps the kernel's queue."""
    res, idle, storm = coredump_storm(DROPIN_ONLY, "dropin-only")
    assert res.text("pipe_limit").strip() == "0"
    check_coredumps(res, 20, at_least=16)


@pytest.mark.quiet_machine
def test_systemd_coredump_recommended_setup():
    """The recommended setup keeps every core, all 20 where the drop-in
    alone loses some. The probe's figures are printed (and quoted in
    docs/deployment.md), not bounded: systemd-coredump compresses these
    cores to 33 KB, so the disk stays nearly idle and the probe measures
    the guest's one emulated CPU shared with zstd, whose p99 over the storm
    was 35 ms in one run and 64 ms in another against idle p99s of 32 and
    23 ms; the probe bounds that say what the throttle does are
    test_storm.py's, whose cores reach the disk whole. It runs with the
    quiet tests so that the figures it prints compare with idle."""
    res, idle, storm = coredump_storm(WITH_AGENT, "recommended")
    check_coredumps(res, 20)
    s = stats_dict(res.text("stats"))
    assert s["started"] == s["admitted"] == s["completed"] == 20 and s["failed"] == 0, s


def test_cgconfigparser_builds_the_cgroup():
    """deployment.md's libcgroup steps: coredam's cgroup as a drop-in in
    /etc/cgconfig.d beside a site's own /etc/cgconfig.conf, which stays as
    it was and is applied too."""
    res = boot(r"""
systemctl stop coredamd
cat > /etc/cgconfig.conf <<'CONF'
group site-batch {
	memory {
		memory.high = "134217728";
	}
}
CONF
sha256sum /etc/cgconfig.conf > $RESULTS/site.before
m=$(majmin $SCRATCH_DEV); echo $m > $RESULTS/scratch.majmin
mkdir -p /etc/cgconfig.d
cp /usr/share/doc/coredam/examples/cgconfig.conf /etc/cgconfig.d/coredam.conf
sed -i "s/\"8:0 /\"$m /" /etc/cgconfig.d/coredam.conf
cgconfigparser -l /etc/cgconfig.conf -L /etc/cgconfig.d > $RESULTS/cgconfigparser.log 2>&1
echo $? > $RESULTS/cgconfigparser.rc
sha256sum /etc/cgconfig.conf > $RESULTS/site.after
cat /sys/fs/cgroup/coredump.slice/io.max > $RESULTS/io.max
cat /sys/fs/cgroup/coredump.slice/memory.high > $RESULTS/memory.high
cat /sys/fs/cgroup/site-batch/memory.high > $RESULTS/site.memory.high
""", cmdline="systemd.mask=coredump.slice systemd.mask=coredam-sysctl.service "
             "systemd.mask=coredamd.service")
    assert res.text("cgconfigparser.rc").strip() == "0", res.text("cgconfigparser.log")
    m = res.text("scratch.majmin").strip()
    assert io_rule(res.text("io.max"), m)["wbps"] == "10000000", res.text("io.max")
    assert int(res.text("memory.high")) == 256 << 20
    # the site's own file is read as before and left as it was
    assert int(res.text("site.memory.high")) == 128 << 20
    assert res.text("site.before") == res.text("site.after")


def test_restart_mid_storm_and_broken_reload():
    res = boot(r"""
limits 10M 1
cores_on_scratch
crash 10 16 &
storm=$!
sleep 4
systemctl restart coredamd
sleep 3
systemctl stop coredamd
sleep 2
systemctl start coredamd
wait $storm
sync
for f in /scratch/cores/core.*; do corecheck $f >> $RESULTS/cores.json || true; done
cat /proc/sys/kernel/core_dump_stats > $RESULTS/stats
# a broken drop-in: reload keeps the running configuration
cat /sys/fs/cgroup/coredump.slice/io.max > $RESULTS/io.max.before
printf '[Limits]\nWriteBandwidth=fast\n' > /etc/coredam/coredam.conf.d/90-broken.conf
# ExecReload= is coredamctl reload: systemctl reload fails, and says why
if systemctl reload coredamd 2> $RESULTS/reload.err; then echo accepted; else echo refused; fi \
    > $RESULTS/reload.txt
rc=0; coredamctl reload > $RESULTS/ctl-reload.out 2>&1 || rc=$?
echo $rc > $RESULTS/ctl-reload.rc
rc=0; coredamctl status > $RESULTS/status.broken 2>&1 || rc=$?
echo $rc > $RESULTS/status.broken.rc
systemctl is-active coredamd > $RESULTS/active.txt
cat /sys/fs/cgroup/coredump.slice/io.max > $RESULTS/io.max.after
agent_log
""")
    cores = res.json_lines("cores.json")
    assert len(cores) == 10 and all(c["valid"] and c["complete"] for c in cores), cores
    s = stats_dict(res.text("stats"))
    assert s["started"] == s["admitted"] == s["completed"] == 10, s
    assert s["failed"] == 0 and s["uncharged"] == 0, s
    assert res.text("active.txt").strip() == "active"
    assert res.text("reload.txt").strip() == "refused", res.text("reload.err")
    assert res.text("ctl-reload.rc").strip() == "1", res.text("ctl-reload.out")
    assert "90-broken.conf:2" in res.text("ctl-reload.out"), res.text("ctl-reload.out")
    # the CLI leaves the bad line out, still finds the agent, and names the line
    broken = res.text("status.broken")
    assert res.text("status.broken.rc").strip() == "0", broken
    assert "90-broken.conf:2" in broken and "not running" not in broken, broken
    assert res.text("io.max.after") == res.text("io.max.before")
    log = res.text("agent.log")
    assert "event=reload-failed" in log and "90-broken.conf" in log, log


def socket_unit_job(keep):
    """The start of a job of the socket under the packaged units: the old
    core_pattern to $RESULTS/pattern.before, then coredamd's drop-in with
    [Socket] SetCorePattern=yes and [Repeats] Keep=KEEP."""
    return r"""
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.before
conf <<'END'
[Socket]
SetCorePattern=yes
[Repeats]
Keep=%s
[Space]
FreeSpaceFloor=20M
END
""" % keep


def test_socket_served_under_the_unit_seen_by_coredumpctl():
    """Linux 7.3, [Socket] SetCorePattern=yes under the packaged units: the
    daemon only listens, coredam-socket.service names the socket in
    core_pattern once it is ready and puts the old value back at stop. Three
    identical crashes of an unprivileged user (as Apache's workers crash as
    www-data) with [Repeats] Keep=2: coredumpctl lists two cores present
    and the third as a crash with none, from the records the socket's
    writers and the server sent; the unit's CAP_KILL-less coredamd reads
    who they are and where they crashed all the same. First, [Pipe]
    Directory= outside the unit's ReadWritePaths= is refused at start
    (status 3, not restarted), core_pattern untouched."""
    res = boot(socket_unit_job(keep=2) + r"""
printf '[Pipe]\nDirectory=/scratch/cores\n' > /etc/coredam/coredam.conf.d/60-readonly.conf
if systemctl restart coredamd 2>/dev/null; then echo started; else echo refused; fi > $RESULTS/ro.start
sleep 3
systemctl show -p ExecMainStatus -p NRestarts coredamd > $RESULTS/ro.status
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.ro
journalctl -b -u coredamd --no-pager -o cat > $RESULTS/ro.log
rm /etc/coredam/coredam.conf.d/60-readonly.conf
systemctl reset-failed coredamd
systemctl restart coredamd
# pulled in by coredamd.service (Wants=), started once coredamd is ready
waitfor 60 "coredam-socket.service active" systemctl -q is-active coredam-socket
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.active
stored() {
	ls /var/lib/coredam/cores 2>/dev/null |
		grep -q "^core[.]crasher[.]$(systemctl show -p ExecMainPID --value $1)[.].*json$"
}
records() {
	[ "$(journalctl -q --no-pager -o cat MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1 | wc -l)" -ge $1 ]
}
nobody="--uid=65534 --gid=65534"
systemd-run --quiet $nobody --slice=crashers.slice --unit=one /usr/local/bin/crasher -m 8
waitfor 120 "the first core" stored one || true
systemd-run --quiet $nobody --slice=crashers.slice --unit=two /usr/local/bin/crasher -m 8
waitfor 120 "the second core" stored two || true
systemd-run --quiet $nobody --slice=crashers.slice --unit=three /usr/local/bin/crasher -m 8
waitfor 120 "three records" records 3 || true
pids=""
for u in one two three; do pids="$pids $(systemctl show -p ExecMainPID --value $u)"; done
echo $pids > $RESULTS/pids
coredumpctl list --no-legend --no-pager > $RESULTS/cd.list 2>&1 || true
journalctl -q --no-pager -o json MESSAGE_ID=fc2e22bc6ee647b6b90729ab34a250b1 > $RESULTS/cd.json || true
ls -la /var/lib/coredam/cores > $RESULTS/cores.ls
systemctl stop coredamd.socket coredamd
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.after
agent_log
journalctl -b -u coredam-socket --no-pager -o cat > $RESULTS/socket-unit.log || true
""", kernel="stock-7.3")
    assert res.text("ro.start").strip() == "refused", res.text("ro.log")[-3000:]
    assert "ExecMainStatus=3\n" in res.text("ro.status") and "NRestarts=0\n" in res.text("ro.status"), \
        res.text("ro.status")
    assert res.text("pattern.ro") == res.text("pattern.before"), res.text("pattern.ro")
    assert "[Pipe] Directory=/scratch/cores is read-only to coredamd" in res.text("ro.log"), res.text("ro.log")[-3000:]
    assert res.text("pattern.active").strip() == "@@/run/coredam/coredump/socket", res.text("agent.log")[-3000:]
    assert res.text("pattern.after") == res.text("pattern.before"), res.text("pattern.after")
    # written by coredam-socket.service, in the initial mount namespace, restored by it before the daemon stopped
    unit_log = res.text("socket-unit.log")
    assert 'core_pattern set to the coredump socket event=socket core_pattern="@@/run/coredam/coredump/socket"' \
        in unit_log, unit_log
    assert "core_pattern restored event=core-pattern-restored" in unit_log, unit_log
    pid1, pid2, pid3 = res.text("pids").split()
    rows = {line.split()[4]: line for line in res.text("cd.list").splitlines() if len(line.split()) > 5}
    for pid in (pid1, pid2):
        assert re.search(r" SIGSEGV present +/usr/local/bin/crasher ", rows.get(pid, "")), res.text("cd.list")
    assert re.search(r" SIGSEGV none +/usr/local/bin/crasher", rows.get(pid3, "")), res.text("cd.list")
    recs = [json.loads(line) for line in res.text("cd.json").splitlines() if line.startswith("{")]
    assert sorted(r.get("COREDAM_STATE") for r in recs) == ["complete", "complete", "skipped-repeat"], recs
    for r in recs:
        assert r["SYSLOG_IDENTIFIER"] == "coredamd" and r["COREDUMP_SIGNAL_NAME"] == "SIGSEGV", r
    skipped = next(r for r in recs if r["COREDAM_STATE"] == "skipped-repeat")
    assert skipped["COREDUMP_PID"] == pid3 and "COREDUMP_FILENAME" not in skipped, skipped
    assert skipped["COREDAM_REPEAT_KEPT"] == "2" and skipped["COREDAM_REPEAT_SKIPPED"] == "1", skipped
    assert all(r["COREDUMP_UID"] == "65534" for r in recs), recs
    assert "cannot be read" not in res.text("agent.log"), res.text("agent.log")[-3000:]


def test_socket_held_by_systemd_while_coredamd_restarts():
    """Linux 7.3, [Socket] SetCorePattern=yes under the packaged units:
    coredamd is killed and systemd restarts it 15 s later. The coredump
    socket is coredamd.socket's, so it stays listening, core_pattern keeps
    naming it, and three crashes in the gap wait in its backlog: the next
    coredamd stores all three whole, and the kernel reports no dump it
    could not hand over. Stopping coredamd.service leaves the socket and
    core_pattern; stopping coredamd.socket puts the old pattern back."""
    res = boot(socket_unit_job(keep="infinity") + r"""
mkdir -p /run/systemd/system/coredamd.service.d
printf '[Service]\nRestartSec=15s\n' > /run/systemd/system/coredamd.service.d/50-test.conf
# as Debian's kernels have it: the kernel log is CAP_SYSLOG's
sysctl -q kernel.dmesg_restrict=1
systemctl daemon-reload
systemctl restart coredamd
waitfor 60 "coredam-socket.service active" systemctl -q is-active coredam-socket
old=$(systemctl show -p MainPID --value coredamd)
echo $old > $RESULTS/pid.old
systemctl kill --kill-whom=main -s KILL coredamd
waitfor 30 "coredamd dead" sh -c "! kill -0 $old 2> /dev/null"
systemctl is-active coredam-socket coredamd.socket > $RESULTS/units.gap || true
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.gap
for u in one two three; do
	systemd-run --quiet --slice=crashers.slice --unit=$u /usr/local/bin/crasher -m 8
done
stored() {
	[ "$(ls /var/lib/coredam/cores 2> /dev/null | grep -c '^core[.]crasher[.].*[.]json$')" -ge $1 ]
}
waitfor 180 "three cores" stored 3 || true
systemctl show -p MainPID --value coredamd > $RESULTS/pid.new
# the new coredamd reads the kernel log, for the crashes its socket could lose
for f in /proc/$(cat $RESULTS/pid.new)/fd/*; do readlink $f; done | grep -c '^/dev/kmsg$' > $RESULTS/kmsg.fds || true
for u in one two three; do systemctl show -p ExecMainPID --value $u; done > $RESULTS/pids
ls /var/lib/coredam/cores > $RESULTS/cores.ls
for f in /var/lib/coredam/cores/core.crasher.*; do
	case $f in *.json) ;; *) corecheck $f >> $RESULTS/cores.json || true ;; esac
done
cp /run/coredam/pipe/stats $RESULTS/stats.txt 2> /dev/null || true
dmesg > $RESULTS/dmesg.txt
# the service alone stopped: the socket still takes dumps, for the next start
systemctl stop coredamd
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.svcstop
systemctl is-active coredamd.socket > $RESULTS/socket-unit.svcstop || true
# the socket too: the old core_pattern back
systemctl stop coredamd.socket
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.after
agent_log
""", kernel="stock-7.3")
    log = res.text("agent.log")
    socket = "@@/run/coredam/coredump/socket"
    assert res.text("pattern.before").strip() != socket
    # while no coredamd ran: the socket's units up, core_pattern still the socket
    assert res.text("units.gap").split() == ["active", "active"], res.text("units.gap")
    assert res.text("pattern.gap").strip() == socket, res.text("pattern.gap")
    assert res.text("pid.new").strip() not in ("0", res.text("pid.old").strip()), log[-3000:]
    assert log.count("the socket systemd holds (coredamd.socket)") == 2, log[-3000:]
    # the three crashes in the gap: each core stored whole by the next coredamd
    pids = res.text("pids").split()
    cores = [json.loads(line) for line in res.text("cores.json").splitlines() if line.startswith("{")]
    assert sorted(str(c["pid"]) for c in cores) == sorted(pids), (pids, res.text("cores.ls"))
    assert all(c["valid"] and c["complete"] for c in cores), cores
    st = name_values(res.text("stats.txt"))
    assert st["started"] == st["admitted"] == st["completed"] == 3, st
    assert st["held"] == 0 and st["skipped_killed"] == 0 and st["lost_connect"] == 0, st
    assert res.text("kmsg.fds").strip() == "1" and "cannot read /dev/kmsg" not in log, log[-3000:]
    assert not re.search(r"Coredump socket connection \S+ failed", res.text("dmesg.txt")), res.text("dmesg.txt")
    # coredamd.service stopped, the socket systemd holds stays and core_pattern with it;
    # coredamd.socket stopped, the old core_pattern is back
    assert res.text("pattern.svcstop").strip() == socket, res.text("pattern.svcstop")
    assert res.text("socket-unit.svcstop").strip() == "active"
    assert res.text("pattern.after") == res.text("pattern.before"), res.text("pattern.after")
