"""coredam next to systemd 262's coredump socket server, in the Debian
unstable guest (scripts/mkrootfs.sh ... sid: systemd 262 as Debian ships
it, the project installed as in the Debian 12 guest) on stock Linux 7.3.

systemd 262 serves the coredump socket itself: systemd-coredumpd.service
(enabled in the guest as systemd's preset says; Debian's package enables
nothing and keeps its pipe helper) listens on
/run/systemd/coredumpd/kernel, and
systemd-coredump-register.service (bound to it, upheld by it) writes
core_pattern "@@/run/systemd/coredumpd/kernel" at boot and whenever
systemd-coredumpd starts again, putting the value before it back when it
stops. coredamd with [Socket] SetCorePattern=yes takes over from it:
coredam-socket.service runs after the registration, so coredamd's socket
is the pattern once it is ready; when systemd-coredumpd is restarted (an
upgrade of systemd does that) and registers its own again, coredamd sees
the pattern taken and has coredam-socket.service apply its own again; and
when coredamd's socket stops, the pattern goes back to systemd's, whose
server stores the next crash. coredumpctl of systemd 262 lists coredam's
cores from the records coredam writes."""

import json
import re

from harness.kernels import ROOTFS_SID
from harness.parsers import name_values
from harness.qemu import boot as qemu_boot

KERNEL = "stock-7.3"
SYSTEMD_SOCKET = "@@/run/systemd/coredumpd/kernel"
COREDAM_SOCKET = "@@/run/coredam/coredump/socket"

LIB = r"""
. /lib/coredam/lib.sh
. /lib/coredam/systemd.sh
"""


def boot(script, timeout=900):
    res = qemu_boot(LIB + script, kernel=KERNEL, rootfs=ROOTFS_SID, timeout=timeout, mem="3G")
    log = res.text("agent.log") if res.path("agent.log").exists() else ""
    assert res.rc == 0, res.output + "\n--- agent log ---\n" + log
    return res


TAKEOVER = r"""
systemctl --version | head -1 > $RESULTS/version
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.boot
systemctl is-active systemd-coredumpd systemd-coredump-register > $RESULTS/units.boot || true
# coredamd takes the coredump socket over
conf <<'END'
[Socket]
SetCorePattern=yes
[Repeats]
Keep=infinity
[Space]
FreeSpaceFloor=20M
END
systemctl restart coredamd
waitfor 60 "coredam-socket.service active" systemctl -q is-active coredam-socket
waitfor 30 "core_pattern names coredamd's socket" grep -qx '@@/run/coredam/coredump/socket' /proc/sys/kernel/core_pattern
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.coredam
stored() {
	[ "$(ls /var/lib/coredam/cores 2> /dev/null | grep -c '^core[.]crasher[.].*[.]json$')" -ge $1 ]
}
# crash UNIT WHO: a crasher as a unit of its own, its pid to $RESULTS/pids.WHO
# once it has died (no system bus in the guest: no systemd-run --wait)
crash() {
	systemd-run --quiet --slice=crashers.slice --unit=$1 /usr/local/bin/crasher -m 4
	waitfor 120 "$1 dead" sh -c "[ \"\$(systemctl show -p ActiveState --value $1)\" = failed ]"
	systemctl show -p ExecMainPID --value $1 >> $RESULTS/pids.$2
}
crash one coredam
waitfor 120 "the first core" stored 1
# an upgrade of systemd restarts systemd-coredumpd, which registers its socket again
systemctl restart systemd-coredumpd
waitfor 30 "systemd-coredump-register active again" systemctl -q is-active systemd-coredump-register
waitfor 60 "core_pattern coredamd's again" grep -qx '@@/run/coredam/coredump/socket' /proc/sys/kernel/core_pattern
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.retaken
crash two coredam
waitfor 120 "the second core" stored 2
waitfor 60 "both dumps counted" sh -c "grep -qx 'completed 2' /run/coredam/pipe/stats"
cp /run/coredam/pipe/stats $RESULTS/stats.txt
coredumpctl list --no-pager --no-legend -q > $RESULTS/cd.list.coredam 2>&1 || true
for p in $(cat $RESULTS/pids.coredam); do
	coredumpctl info --no-pager $p > $RESULTS/cd.info.$p 2>&1 || true
done
for f in /var/lib/coredam/cores/core.crasher.*; do
	case $f in *.json) ;; *) corecheck $f >> $RESULTS/cores.json || true ;; esac
done
# coredamd's socket stopped: systemd's server has the pattern, and the next crash, again
systemctl stop coredamd.socket coredamd
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.stopped
crash three systemd
waitfor 120 "systemd-coredump stored the third" sh -c \
	"coredumpctl info --no-pager $(cat $RESULTS/pids.systemd) 2>/dev/null | grep -q 'Storage:.*(present)'"
coredumpctl info --no-pager $(cat $RESULTS/pids.systemd) > $RESULTS/cd.info.systemd 2>&1 || true
agent_log
"""


def test_coredamd_takes_the_socket_over_from_systemd_262():
    res = boot(TAKEOVER)
    log = res.text("agent.log")
    assert res.text("version").startswith("systemd 262"), res.text("version")
    # systemd 262 as it comes: its own server registered at boot
    assert res.text("pattern.boot").strip() == SYSTEMD_SOCKET, res.text("pattern.boot")
    assert res.text("units.boot").split() == ["active", "active"], res.text("units.boot")
    # coredamd took it over, and took it back after systemd-coredumpd's restart
    assert res.text("pattern.coredam").strip() == COREDAM_SOCKET
    assert res.text("pattern.retaken").strip() == COREDAM_SOCKET
    # (its registration's stop first puts back the pipe helper's pattern from before it, then
    # its start writes its socket: coredamd answers the change it sees, once or twice)
    assert "event=socket-pattern-taken" in log, log[-3000:]
    assert "putting its own back failed" not in log, log[-3000:]
    # both crashes stored whole by coredamd, and listed by systemd 262's coredumpctl
    pids = res.text("pids.coredam").split()
    cores = [json.loads(line) for line in res.text("cores.json").splitlines() if line.startswith("{")]
    assert sorted(str(c["pid"]) for c in cores) == sorted(pids), (pids, cores)
    assert all(c["valid"] and c["complete"] for c in cores), cores
    st = name_values(res.text("stats.txt"))
    assert st["started"] == st["completed"] == 2 and st["lost_connect"] == 0, st
    for p in pids:
        info = res.text(f"cd.info.{p}")
        assert re.search(r"Storage: /var/lib/coredam/cores/core\.crasher\.%s\.\S+ \(present\)" % p, info), info
    # stopped, the pattern is systemd's again and its server stores the next crash
    assert res.text("pattern.stopped").strip() == SYSTEMD_SOCKET, res.text("pattern.stopped")
    info = res.text("cd.info.systemd")
    assert re.search(r"Storage: /var/lib/systemd/coredump/core\.crasher\.\S+ \(present\)", info), info
