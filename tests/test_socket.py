"""VM tests of coredamd serving the coredump socket (core_pattern
"@@/path", Linux 6.17 and later) on a stock 7.3 kernel: a burst keeps
every core whole, at most the budget streaming at once, in arrival order,
each written from inside the dump cgroup, with the counters exact and
core_pattern put back; a storm over the waiting cap and past the wait
timeout is answered with COREDUMP_REJECT, every rejection counted by its
cause and no core stored for it."""

import json
import os
import re

from harness.parsers import meta_records, name_values
from harness.promtool import check_metrics
from harness.stats import check_one_users_storm, most_at_once
from harness.setups import ALL_CORES, TEST_CONF

# the stock 7.3 kernel `make kernel` builds (make kernel-7.3); COREDAM_KERNEL_73 names another bzImage
KERNEL73 = os.environ.get("COREDAM_KERNEL_73") or "stock-7.3"

SOCKET = "/run/coredam/coredump/socket"
MB = 8
PAGES = MB * 1024 * 1024 // 4096

LIB = r"""
. /lib/coredam/lib.sh
. /lib/coredam/agent.sh
. /lib/coredam/pipe_helper.sh
. /lib/coredam/socket.sh
pipe_setup
"""

# as shipped but for [Repeats]: the tests' crashers are all one crash
SHIPPED_REPEATS_CONF = TEST_CONF + """\
[Pipe]
Directory=/scratch/cores
[Socket]
SetCorePattern=yes
Listen=%s
""" % SOCKET
SOCK_CONF = SHIPPED_REPEATS_CONF + ALL_CORES.lstrip("\n")


def boot73(boot, script, conf, timeout=900):
    res = boot(script, kernel=KERNEL73, files={"coredam.conf": conf}, timeout=timeout)
    assert res.rc == 0, res.output + "\n--- agent log ---\n" + \
        (res.text("agent.log") if res.path("agent.log").exists() else "")
    return res


def meta(res):
    return meta_records(res.text("meta.json"))


BURST_N = int(os.environ.get("SOCK_BURST_N", "12"))

BURST = LIB + r"""
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.before
cat /proc/sys/net/core/somaxconn > $RESULTS/somaxconn
start_agent
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.agent
rc=0; ctl doctor > $RESULTS/doctor.txt 2>&1 || rc=$?
echo $rc > $RESULTS/doctor.rc
stat -c '%a %U %F' /run/coredam/coredump /run/coredam/coredump/socket > $RESULTS/socket.stat
# {n} crashers, crashing one after the other: the arrival order is known
mkdir -p /tmp/b
pids=""
i=0
while [ $i -lt {n} ]; do
    crasher -m {mb} -w /tmp/b/go.$i -r /tmp/b/ready.$i &
    pids="$pids $!"
    i=$((i + 1))
done
waitfor 300 "{n} crashers ready" count_ready /tmp/b {n}
n=0
for p in $pids; do
    echo $p >> $RESULTS/order.txt
    touch /tmp/b/go.$n
    n=$((n + 1))
    sleep 0.3
done
for p in $pids; do wait $p || true; done
waitfor 300 "{n} dumps ended" sock_ended {n}
waitfor 30 "the writers gone" sock_idle
collect
sock_check_cores
ctl status --json > $RESULTS/status.json
stop_agent
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.after
[ -e /run/coredam/coredump/socket ] && echo present > $RESULTS/socket.after || true
"""


def test_socket_burst_whole_fifo_cgroup_counted(boot):
    res = boot73(boot, BURST.replace("{n}", str(BURST_N)).replace("{mb}", str(MB)), SOCK_CONF)
    # the agent served the socket and put core_pattern back at exit
    assert res.text("pattern.agent").strip() == "@@" + SOCKET
    assert res.text("pattern.after") == res.text("pattern.before")
    assert not res.path("socket.after").exists()
    assert res.text("socket.stat").splitlines() == ["700 root directory", "600 root socket"]
    # doctor names the path in force, and wants no patched kernel on it
    doctor = res.text("doctor.txt")
    assert f"[ OK ] path: the coredump socket {SOCKET}, served by coredamd" in doctor, doctor
    assert "[ OK ] kernel without the coredam patches" in doctor, doctor
    assert "[FAIL]" not in doctor and res.text("doctor.rc").strip() == "0", doctor
    backlog = int(res.text("somaxconn"))
    log = res.text("agent.log")
    assert f"backlog={backlog}" in log
    # one start and one end a dump, from the server: not also from the look through /proc
    assert log.count("event=dump-start") == BURST_N and log.count("event=dump-end") == BURST_N, log

    ms = meta(res)
    assert len(ms) == BURST_N, res.text("ls.txt")
    cores = res.json_lines("cores.json")
    assert len(cores) == BURST_N and res.text("incomplete.txt") == "", res.text("ls.txt")
    by_pid = {m["pid"]: m for m in ms}
    for c in cores:
        # whole: every page of the crasher's pattern, none twice, the size the headers say
        assert c["valid"] and c["complete"], c
        assert c["pattern_pages"] == PAGES and c["pattern_dupes"] == 0, c
        m = by_pid[c["pid"]]
        assert m["size"] == c["size"] and m["signal"] == c["signal"], (m, c)
    # every writer wrote from inside the dump cgroup
    assert {m["cgroup"] for m in ms} == {"/coredump.slice"}, ms
    # never more than the budget streaming at once
    assert most_at_once(ms) <= 2, ms
    # admitted in arrival order: tickets in crash order, admissions in ticket order
    order = [int(p) for p in res.text("order.txt").split()]
    by_ticket = sorted(ms, key=lambda m: m["ticket"])
    assert [m["pid"] for m in by_ticket] == order
    admitted = [m["admitted_usec"] for m in by_ticket]
    assert admitted == sorted(admitted), by_ticket
    for m in ms:
        assert re.fullmatch(r"core\.crasher\.%d\.\d+" % m["pid"], m["core"]), m

    st = name_values(res.text("stats.txt"))
    assert st["started"] == BURST_N and st["admitted"] == BURST_N and st["completed"] == BURST_N, st
    assert st["failed"] == 0 and st["uncharged"] == 0, st
    assert sum(st[k] for k in st if k.startswith("skipped_")) == 0, st
    status = json.loads(res.text("status.json"))
    assert status["counters"]["completed"] == BURST_N and status["counters"]["started"] == BURST_N
    # the counters are the socket server's, in the helper's file: named so
    assert status["counters"]["source"] == "socket", status["counters"]


# each core streamed at the disk's pace, its process held until the last
# of it is read: for the tests of what a dump holds while it streams
NO_READ_AHEAD = "[Socket]\nReadAhead=0\n"

# one at a time, three waiting places, a 3 s wait: the first dump (32 MB at
# 4 MB/s) streams for 8 s or more while the storm arrives, its process
# held (no read-ahead: what it pins is what the test reads)
REJECT_CONF = SOCK_CONF.replace("Concurrency=2", "Concurrency=1").replace("QueueCap=32", "QueueCap=3") \
    .replace("WriteBandwidth=10M", "WriteBandwidth=4M").replace("[Limits]\n", "[Limits]\nWaitTimeout=3s\n") \
    + NO_READ_AHEAD
STORM_N = 8

REJECT = LIB + r"""
start_agent
mkdir -p /tmp/b
crasher -m 32 -w /tmp/b/go.big -r /tmp/b/ready.big &
big=$!
i=0
pids=""
while [ $i -lt {n} ]; do
    crasher -m 1 -w /tmp/b/go -r /tmp/b/ready.$i &
    pids="$pids $!"
    i=$((i + 1))
done
waitfor 300 "crashers ready" count_ready /tmp/b $(({n} + 1))
touch /tmp/b/go.big
waitfor 60 "the big dump admitted" pstat_is admitted 1
# the storm: three wait, the rest find every waiting place taken
touch /tmp/b/go
waitfor 60 "the full rejected" pstat_is skipped_full $(({n} - 3))
# a tick of the agent (Interval=500ms) with the three held: the CPU
# policy and nice value of the streaming dump and of each one held
sleep 1
for p in $big $pids; do
    [ -e /proc/$p/stat ] || continue
    printf '%s %s\n' $p "$(sed 's/.*) //' /proc/$p/stat | cut -d' ' -f1,17,39)"
done > $RESULTS/sched.txt
ctl status --json > $RESULTS/status.held.json
for p in $pids; do wait $p || true; done
wait $big || true
waitfor 120 "the big dump stored" pstat_is completed 1
waitfor 30 "the writers gone" sock_idle
collect
sock_check_cores
ctl status --json > $RESULTS/status.json
stop_agent
"""


def test_socket_cap_and_timeout_rejected_counted(boot):
    res = boot73(boot, REJECT.replace("{n}", str(STORM_N)), REJECT_CONF)
    st = name_values(res.text("stats.txt"))
    # the big one streamed; three held then timed out with it still streaming; the rest rejected at once
    assert st["started"] == STORM_N + 1, st
    assert st["admitted"] == 1 and st["completed"] == 1 and st["failed"] == 0, st
    assert st["skipped_timeout"] == 3, st
    assert st["skipped_full"] == STORM_N - 3, st
    assert st["skipped_error"] == 0 and st["skipped_killed"] == 0, st
    log = res.text("agent.log")
    assert log.count("reason=timeout") == 3 and log.count("reason=full") == STORM_N - 3, log
    # rejected once they waited the timeout (3 s), not when the slot came back;
    # 2 s of tolerance for a loaded guest
    waited = [int(w) for w in re.findall(r"reason=timeout waited_ms=(\d+)", log)]
    assert all(3000 <= w < 5000 for w in waited), waited
    # the full were answered at once
    waited = [int(w) for w in re.findall(r"reason=full waited_ms=(\d+)", log)]
    assert all(w < 2000 for w in waited), waited
    # the streaming dump is background work (DumpNice=19: SCHED_BATCH,
    # nice 19); the held ones keep their priority: they need the CPU to
    # send their request, and to exit at once when refused
    sched = {int(p): (st, int(nice), int(policy)) for p, st, nice, policy in
             (line.split() for line in res.text("sched.txt").splitlines())}
    big = int(re.search(r"pid=(\d+) exe=\S+ waited_ms=\d+ writer=", log).group(1))
    assert sched.pop(big)[1:] == (19, 3), (big, sched)
    held = {p: v for p, v in sched.items() if v[0] != "Z"}
    assert held and all(v[1:] == (0, 0) for v in held.values()), sched
    # what one dumper pins, as WaitingMemoryMax= counts it: the big one's
    # RssAnon, its 32 MiB and a little of the C library's, read once as
    # it connected
    agent = json.loads(res.text("status.held.json"))["agent"]
    assert 32 << 20 <= agent["dumper_memory"] < 40 << 20, agent
    # no core for a rejected dump: only the big one's
    ms = meta(res)
    assert len(ms) == 1 and res.text("incomplete.txt") == "", res.text("ls.txt")
    cores = res.json_lines("cores.json")
    assert len(cores) == 1 and cores[0]["valid"] and cores[0]["complete"], cores
    status = json.loads(res.text("status.json"))
    assert status["counters"]["skipped_timeout"] == 3
    metrics = res.text("metrics.prom")
    check_metrics(metrics)
    assert '\ncoredam_dumps_skipped_total{reason="timeout"} 3\n' in metrics, metrics
    assert f'\ncoredam_dumps_skipped_total{{reason="full"}} {STORM_N - 3}\n' in metrics, metrics


KILLED = LIB + r"""
start_agent
mkdir -p /tmp/b
crasher -m 32 -w /tmp/b/go -r /tmp/b/ready.0 &
p=$!
waitfor 60 "crasher ready" count_ready /tmp/b 1
touch /tmp/b/go
waitfor 60 "the dump admitted" pstat_is admitted 1
# SIGKILL while the kernel streams its core: the kernel stops and closes the connection
sleep 2
kill -KILL $p
wait $p || true
waitfor 120 "the dump ended" sock_ended 1
waitfor 30 "the writers gone" sock_idle
collect
sock_check_cores
stop_agent
"""


def test_socket_dump_cut_short_is_failed_never_whole(boot):
    # the process killed while the kernel still sends its core: no read-ahead
    conf = SOCK_CONF.replace("WriteBandwidth=10M", "WriteBandwidth=4M") + NO_READ_AHEAD
    res = boot73(boot, KILLED, conf)
    st = name_values(res.text("stats.txt"))
    assert st["admitted"] == 1 and st["failed"] == 1 and st["completed"] == 0, st
    # kept for what it holds, under a name no one takes for a whole core
    assert res.text("incomplete.txt").split() and not res.path("cores.json").exists(), res.text("ls.txt")
    ms = meta(res)
    assert len(ms) == 1 and ms[0]["core"].endswith(".incomplete") and ms[0]["truncated"], ms
    log = res.text("agent.log")
    assert "cut short" in log
    # named so by its writer, not by the agent's later sweep for short cores
    assert "event=incomplete-marked" not in log, log


READ_AHEAD = LIB + r"""
# the agent in a cgroup of its own: where its writers' read-ahead is charged
echo +memory > /sys/fs/cgroup/cgroup.subtree_control
mkdir -p /sys/fs/cgroup/agent
start_agent
echo "$(cat /tmp/agent.pid)" > /sys/fs/cgroup/agent/cgroup.procs
# as the packaged unit has it (OOMScoreAdjust=-500)
echo -500 > /proc/$(cat /tmp/agent.pid)/oom_score_adj
mkdir -p /tmp/b
crasher -m 32 -w /tmp/b/go -r /tmp/b/ready.0 &
p=$!
waitfor 60 "crasher ready" count_ready /tmp/b 1
touch /tmp/b/go
wait $p || true
# the process is gone: how far its core's writer is on the disk (4 MB/s)
stat -c '%n %s' /scratch/cores/.core.* /scratch/cores/core.* > $RESULTS/at-exit.txt 2>/dev/null || true
# the writer, still writing: its nice value, policy and oom_score_adj
for w in $(agent_children); do
    echo "$(sed 's/.*) //' /proc/$w/stat | cut -d' ' -f17,39) $(cat /proc/$w/oom_score_adj)"
done > $RESULTS/writer.txt
waitfor 120 "the dump ended" sock_ended 1
waitfor 30 "the writers gone" sock_idle
cat /sys/fs/cgroup/agent/memory.peak > $RESULTS/agent.peak
cat /sys/fs/cgroup/coredump.slice/memory.peak > $RESULTS/dump.peak
collect
sock_check_cores
stop_agent
"""


def test_socket_read_ahead_lets_the_process_go_before_the_disk(boot):
    """[Socket] ReadAhead= (256M by default): a 32 MB core is read into
    the writer's memory as fast as the kernel sends it, so the crashed
    process is gone while its core is still being written at 4 MB/s
    (8 s); the core is whole all the same, and the read-ahead is charged
    to the agent's cgroup, not to the dump cgroup."""
    conf = SOCK_CONF.replace("WriteBandwidth=10M", "WriteBandwidth=4M")
    res = boot73(boot, READ_AHEAD, conf)
    log = res.text("agent.log")
    assert re.search(r"core of pid \d+: 3\d{7} bytes read ahead in \d+ ms, all of it: the process is "
                     r"free to go", log), log
    # when the process was gone, its writer had less than half of the
    # core on disk, in its temporary file: nothing was stored yet
    at_exit = [line.split() for line in res.text("at-exit.txt").splitlines()]
    assert all(n.split("/")[-1].startswith(".core.") for n, _ in at_exit), at_exit
    assert sum(int(size) for _, size in at_exit) < 16 << 20, at_exit
    # the writer is background work (DumpNice=19: SCHED_BATCH, nice 19),
    # and an ordinary process to the OOM killer, not the agent (-500)
    assert res.text("writer.txt").splitlines() == ["19 3 0"], res.text("writer.txt")
    cores = res.json_lines("cores.json")
    assert len(cores) == 1 and res.text("incomplete.txt") == "", res.text("ls.txt")
    assert cores[0]["valid"] and cores[0]["complete"] and cores[0]["pattern_pages"] == 32 * 256, cores
    st = name_values(res.text("stats.txt"))
    assert st["completed"] == 1 and st["failed"] == 0 and st["uncharged"] == 0, st
    assert meta(res)[0]["cgroup"] == "/coredump.slice", meta(res)
    # the 32 MiB read ahead in the agent's cgroup; the dump cgroup held
    # the core's page cache, a few write-behind windows
    assert int(res.text("agent.peak")) >= 32 << 20, res.text("agent.peak")
    assert int(res.text("dump.peak")) < 16 << 20, res.text("dump.peak")


REPEATS = LIB + r"""
start_agent
storm 5 {mb}
crasher -m {mb} -s 6 || true
waitfor 120 "three dumps ended" sock_ended 3
waitfor 30 "the writers gone" sock_idle
collect
sock_check_cores
cp /run/coredam/pipe/repeats $RESULTS/repeats.txt
ctl status --json > $RESULTS/status.json
command -v crasher > $RESULTS/crasher.path
stop_agent
"""


def test_socket_repeats_rejected_before_a_byte(boot):
    """[Repeats] Keep=2 as shipped: of five identical crashes on the socket
    two are stored and three answered COREDUMP_REJECT before the kernel
    sends a byte, their signature read from /proc while the kernel holds
    the task (the crashing thread's pc, the file it is in); a crash by
    another signal is another signature, stored."""
    res = boot73(boot, REPEATS.replace("{mb}", str(MB)), SHIPPED_REPEATS_CONF)
    st = name_values(res.text("stats.txt"))
    assert st["started"] == 6 and st["skipped_repeat"] == 3, st
    assert st["admitted"] == 3 and st["completed"] == 3 and st["failed"] == 0, st
    ms = meta(res)
    assert sorted(m["signal"] for m in ms) == [6, 11, 11], ms
    cores = res.json_lines("cores.json")
    assert len(cores) == 3 and all(c["valid"] and c["complete"] and c["pattern_pages"] == PAGES
                                   for c in cores), cores
    crasher = res.text("crasher.path").strip()
    reps = {r["crash"].split(" at ")[0]: r for r in json.loads(res.text("status.json"))["repeats"]}
    assert set(reps) == {f"{crasher} SIGSEGV", f"{crasher} SIGABRT"}, reps
    segv = reps[f"{crasher} SIGSEGV"]
    assert segv["kept"] == 2 and segv["skipped"] == 3, segv
    # where it crashed is a file and an offset in it, as the pipe helper reads it from a core
    assert re.search(r" at /\S+\+0x[0-9a-f]+$", segv["crash"]), segv
    log = res.text("agent.log")
    # the 1st and 2nd skip of a signature are logged, the 3rd is not
    assert log.count("reason=repeat") == 2, log
    # a scraper reads the same, in a file promtool accepts
    metrics = res.text("metrics.prom")
    check_metrics(metrics)
    assert '\ncoredam_pipe_skipped_total{reason="repeat"} 3\n' in metrics, metrics
    assert "\ncoredam_dumps_completed_total 3\n" in metrics, metrics


FAIR_CONF = SOCK_CONF.replace("Concurrency=2", "Concurrency=1").replace("QueueCap=32", "QueueCap=3") \
    .replace("WriteBandwidth=10M", "WriteBandwidth=1M")

FAIR = LIB + r"""
start_agent
mkdir -p /tmp/f; chmod 1777 /tmp/f
pids=""
for i in 0 1 2 3 4 5; do
    crasher -u 1000 -m {mb} -w /tmp/f/go.$i -r /tmp/f/ready.$i & pids="$pids $!"
done
waitfor 300 "6 crashers of uid 1000 ready" count_ready /tmp/f 6
for i in 0 1 2 3 4 5; do touch /tmp/f/go.$i; done
# one streams (1 MB/s: seconds), three wait, two are turned away: the queue is full
waitfor 120 "two of uid 1000 turned away" pstat_ge skipped_full 2
# a root daemon crashes into the full queue
crasher -m {mb} & root=$!
echo $root > $RESULTS/root.pid
# each of them, not a bare wait: the agent is a child of this shell too
for p in $pids $root; do wait $p || true; done
waitfor 300 "four dumps ended" sock_ended 4
waitfor 30 "the writers gone" sock_idle
collect
sock_check_cores
stop_agent
"""


def test_socket_one_users_storm_does_not_hold_back_another(boot):
    """A storm of one user's crashes fills the socket's queue (one slot,
    three waiting places); a root daemon's crash then pushes out that
    user's newest waiter and gets the next slot, ahead of the storm's
    older waiters, as the pipe helper and the kernel series share them."""
    res = boot73(boot, FAIR.replace("{mb}", str(MB)), FAIR_CONF)
    check_one_users_storm(meta(res), int(res.text("root.pid")), res.json_lines("cores.json"),
                          name_values(res.text("stats.txt")))
    assert res.text("agent.log").count("reason=full") == 3, res.text("agent.log")


# two stream at 4 MB/s (32 MB each: 16 s), four are held before the ack
RESTART_CONF = SOCK_CONF.replace("WriteBandwidth=10M", "WriteBandwidth=4M")

RESTART = LIB + r"""
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.before
start_agent
held_behind_two() { pstat_is started 6 && pstat_is admitted 2; }
mkdir -p /tmp/r
pids=""
for i in 0 1 2 3 4 5; do
    crasher -m 32 -w /tmp/r/go -r /tmp/r/ready.$i & pids="$pids $!"
done
waitfor 300 "6 crashers ready" count_ready /tmp/r 6
touch /tmp/r/go
waitfor 120 "two streaming, four held" held_behind_two
# the server dies as a crash would end it, mid-storm
kill_agent
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.dead
for p in $pids; do wait $p || true; done
waitfor 120 "the two streaming cores ended" sock_ended 2
# a crash while no one listens: no core, and the kernel says why
crasher -m 1 || true
dmesg | grep 'coredump: ' > $RESULTS/dmesg.dead || true
# the restarted server: the stale socket replaced, the original pattern kept
start_agent
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.restarted
mkdir -p /tmp/s
pids=""
for i in 0 1 2 3; do
    crasher -m {mb} -w /tmp/s/go -r /tmp/s/ready.$i & pids="$pids $!"
done
waitfor 300 "4 crashers ready" count_ready /tmp/s 4
touch /tmp/s/go
for p in $pids; do wait $p || true; done
waitfor 300 "six dumps ended" sock_ended 6
waitfor 30 "the writers gone" sock_idle
collect
sock_check_cores
stop_agent
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.after
"""


def test_socket_server_killed_and_restarted_mid_storm(boot):
    """coredamd is SIGKILLed while two dumps stream and four are held
    before the ack: the two streaming are finished by their writers and
    kept whole, the four held end without a core (their connections
    closed) and the restarted server counts them lost, nothing that is not whole looks whole; the restarted server
    takes over the socket, the storm after it is kept whole, and at the
    end core_pattern is the one from before the first start."""
    res = boot73(boot, RESTART.replace("{mb}", str(MB)), RESTART_CONF)
    assert res.text("pattern.dead").strip() == "@@" + SOCKET
    assert res.text("pattern.restarted").strip() == "@@" + SOCKET
    assert res.text("pattern.after") == res.text("pattern.before"), res.text("pattern.after")
    # while no one listened the kernel refused the connection: that core is lost, and said so
    assert re.search(r"Coredump socket connection \S+ failed", res.text("dmesg.dead")), res.text("dmesg.dead")

    cores = res.json_lines("cores.json")
    assert res.text("incomplete.txt") == "", res.text("ls.txt")
    # every file named as a whole core is whole: the first storm's two, the second storm's four
    assert all(c["valid"] and c["complete"] and c["pattern_dupes"] == 0 for c in cores), cores
    big = [c for c in cores if c["pattern_pages"] == 32 * 256]
    small = [c for c in cores if c["pattern_pages"] == PAGES]
    assert len(big) == 2 and len(small) == 4 and len(cores) == 6, cores
    ms = meta(res)
    assert sorted(m["pid"] for m in ms) == sorted(c["pid"] for c in cores), (ms, cores)
    st = name_values(res.text("stats.txt"))
    assert st["completed"] == 6 and st["failed"] == 0 and st["admitted"] == 6, st
    # the four held when the server died were never admitted, and no core of theirs is anywhere;
    # the restarted server counted them, exactly, from the gauge the dead one left
    assert st["started"] == 6 + 4, st
    assert st["skipped_killed"] == 4 and st["held"] == 0, st
    log = res.text("agent.log")
    assert log.count("core_pattern set to the coredump socket") == 2, log
    assert log.count("event=socket-lost count=4\n") == 1 and log.count("event=socket-lost") == 1, log
    # the crash while no one listened left only the kernel's line: the restarted server read it there
    assert st["lost_connect"] == 1, st
    assert log.count("event=socket-refused count=1 backlog=0 connect=1 suppressed=0\n") == 1, log
    assert log.count("event=socket-refused") == 1, log


# the listen backlog at 4: five connections wait in it, the next fail
OVERFLOW_N = 20
OVERFLOW = LIB + r"""
echo 4 > /proc/sys/net/core/somaxconn
start_agent
mkdir -p /tmp/o
pids=""
i=0
while [ $i -lt {n} ]; do
    crasher -m 1 -w /tmp/o/go -r /tmp/o/ready.$i & pids="$pids $!"
    i=$((i + 1))
done
waitfor 300 "{n} crashers ready" count_ready /tmp/o {n}
# the server stops accepting; the storm fills the backlog and overflows it
kill -STOP $(cat /tmp/agent.pid)
gone() {
    local p n=0
    for p in $pids; do
        case $(cut -d' ' -f3 /proc/$p/stat 2>/dev/null) in Z|'') n=$((n + 1));; esac
    done
    [ $n -ge "$1" ]
}
touch /tmp/o/go
waitfor 120 "{lost} crashers lost" gone {lost}
# past the kernel's rate limit (10 lines in 5 s): a loss 6 s later
# makes it say how many lines it left out
sleep 6
crasher -m 1 || true
dmesg | grep 'coredump' > $RESULTS/dmesg.txt || true
kill -CONT $(cat /tmp/agent.pid)
for p in $pids; do wait $p || true; done
waitfor 120 "the backlog's dumps ended" sock_ended 5
waitfor 30 "the writers gone" sock_idle
waitfor 30 "the losses counted" pstat_is lost_connect $(({lost} + 1))
collect
sock_check_cores
rc=0; ctl status > $RESULTS/status.txt 2>&1 || rc=$?
echo $rc > $RESULTS/status.rc
stop_agent
"""


def test_socket_backlog_overflow_counted(boot):
    """A storm overflows the socket's listen backlog (net.core.somaxconn
    at 4, the server stopped): the kernel ends each crash it cannot
    connect without a core and says so in its log, in lines it
    rate-limits; coredamd reads them and counts every one, including those
    the rate limit left out, and the five that waited in the backlog are
    stored whole once it runs again."""
    lost = OVERFLOW_N - 5
    res = boot73(boot, OVERFLOW.replace("{n}", str(OVERFLOW_N)).replace("{lost}", str(lost)), SOCK_CONF)
    dmesg = res.text("dmesg.txt")
    lines = dmesg.count(f"Coredump socket {SOCKET} receive queue full")
    suppressed = sum(int(n) for n in re.findall(r"coredump_sock_connect: (\d+) callbacks suppressed", dmesg))
    # the kernel's own account: every loss a line or a line left out
    assert lines + suppressed == lost + 1, dmesg

    st = name_values(res.text("stats.txt"))
    assert st["lost_connect"] == lost + 1, st
    assert st["started"] == 5 and st["admitted"] == 5 and st["completed"] == 5 and st["failed"] == 0, st
    cores = res.json_lines("cores.json")
    assert len(cores) == 5 and all(c["valid"] and c["complete"] and c["pattern_pages"] == 256 for c in cores), \
        cores
    log = res.text("agent.log")
    refused = [dict(kv.split("=") for kv in m.split()) for m in
               re.findall(r"event=socket-refused ((?:\w+=\d+ ?)+)", log)]
    assert sum(int(r["count"]) for r in refused) == lost + 1, log
    assert sum(int(r["backlog"]) for r in refused) == lines, log
    assert sum(int(r["suppressed"]) for r in refused) == suppressed, log
    assert res.text("status.rc").strip() == "0", res.text("status.txt")
    assert f"lost before they connected (the kernel's log: backlog full, no one listening): {lost + 1}" in \
        res.text("status.txt"), res.text("status.txt")
    metrics = res.text("metrics.prom")
    assert f'\ncoredam_pipe_skipped_total{{reason="connect"}} {lost + 1}\n' in metrics, metrics
    check_metrics(metrics)


HOSTILE = LIB + r"""
start_agent
S=/run/coredam/coredump/socket
# another user: the socket's directory is root's alone
sockpoke -u 1000 $S > $RESULTS/poke.user 2>&1 || true
# root's programs that are no dumping task: each connection closed unanswered
for m in silent garbage request half; do
    sockpoke -m $m -t 30 $S > $RESULTS/poke.$m 2>&1 || true
done
sockpoke -n 200 -m request -t 60 $S > $RESULTS/poke.flood 2>&1 || true
# and the server still serves the kernel
crasher -m {mb} || true
waitfor 120 "the dump ended" sock_ended 1
waitfor 30 "the writers gone" sock_idle
collect
sock_check_cores
rc=0; ctl status > $RESULTS/status.txt 2>&1 || rc=$?
echo $rc > $RESULTS/status.rc
stop_agent
"""


def test_socket_hostile_clients_turned_away(boot):
    """Programs that are not the kernel connect to the coredump socket:
    another user is refused by the file system (the socket's directory is
    root's, 0700); root's programs that are no dumping task, silent, with
    garbage, with a forged request, with half of one, or 200 at once, are
    each closed without an answer and counted; none is stored, the log
    does not grow a line for each, and a real crash after them is stored
    whole."""
    res = boot73(boot, HOSTILE.replace("{mb}", str(MB)), SOCK_CONF)
    assert res.text("poke.user").strip() == "connect: Permission denied", res.text("poke.user")
    for m in ("silent", "garbage", "request", "half"):
        assert res.text(f"poke.{m}").strip() == "connected 1 closed 1 open 0 answered 0", (m, res.text(f"poke.{m}"))
    assert res.text("poke.flood").strip() == "connected 200 closed 200 open 0 answered 0", res.text("poke.flood")

    st = name_values(res.text("stats.txt"))
    assert st["started"] == 4 + 200 + 1 and st["skipped_error"] == 4 + 200, st
    assert st["admitted"] == 1 and st["completed"] == 1 and st["failed"] == 0, st
    cores = res.json_lines("cores.json")
    assert len(cores) == 1 and cores[0]["valid"] and cores[0]["complete"] and cores[0]["pattern_pages"] == PAGES, \
        cores
    assert len(meta(res)) == 1
    assert res.text("status.rc").strip() == "0", res.text("status.txt")
    log = res.text("agent.log")
    # the 1st, 2nd, 4th, ... 128th of 204: eight lines
    assert log.count("event=socket-reject reason=error") == 8, log
    assert "the peer is no dumping task" in log, log


RLIMIT = LIB + r"""
start_agent
# RLIMIT_CORE 0: no core, as a file core_pattern would give; 1 MiB (2048
# of busybox's 512-byte blocks): cut there. An ordinary user's crashers, which cannot raise the hard limit
# the shell set (root's would: the crasher asks for unlimited)
( ulimit -c 0; crasher -u 1000 -m {mb} ) || true
( ulimit -c 2048; crasher -u 1000 -m {mb} ) || true
waitfor 120 "the cut dump ended" sock_ended 1
waitfor 30 "the writers gone" sock_idle
collect
sock_check_cores
stop_agent
"""


def test_socket_applies_rlimit_core(boot):
    """The kernel applies no RLIMIT_CORE to a socket dump: coredamd reads
    the crashed process's from /proc while the kernel holds it, as
    coredam-pipe does. 0 is answered COREDUMP_REJECT and counted
    skipped_rlimit; 1 MiB keeps the first MiB of an 8 MiB core, under a
    name no one takes for a whole core."""
    res = boot73(boot, RLIMIT.replace("{mb}", str(MB)), SOCK_CONF)
    st = name_values(res.text("stats.txt"))
    assert st["started"] == 2 and st["skipped_rlimit"] == 1 and st["admitted"] == 1, st
    assert st["truncated"] == 1 and st["bytes"] == 1 << 20, st
    ms = meta(res)
    assert len(ms) == 1 and ms[0]["truncated"] and ms[0]["core"].endswith(".incomplete"), ms
    assert ms[0]["rlimit"] == 1 << 20, ms
    assert not res.path("cores.json").exists(), res.text("ls.txt")
    log = res.text("agent.log")
    assert "reason=rlimit" in log and "(cut at RLIMIT_CORE)" in log, log
    # one start and one end a dump, from the server: not also from the look through /proc
    assert log.count("event=dump-start") == 1 and log.count("event=dump-end") == 1, log
