"""VM tests of coredam-pipe, the core_pattern helper for stock kernels: a
burst keeps every core, writes at most the budget at once, in arrival
order, from inside the dump cgroup, with the agent killed and restarted in
the middle; without the agent the configuration's budget holds and a dump
that cannot get a slot in time is dropped and logged; hostile program
names and a hostile destination cannot make it write anywhere else."""

import json
import re

from harness.parsers import meta_records, name_values
from harness.promtool import check_metrics
from harness.stats import check_one_users_storm, most_at_once
from harness.setups import ALL_CORES, PIPE, TEST_CONF

MB = 8
PAGES = MB * 1024 * 1024 // 4096
HELPER = "/usr/sbin/coredam-pipe"
PATTERN = f"|{HELPER} /scratch/cores %P %u %g %s %t %c %d %e"

LIB = r"""
. /lib/coredam/lib.sh
. /lib/coredam/agent.sh
. /lib/coredam/pipe_helper.sh
pipe_setup
"""


def meta(res):
    return meta_records(res.text("meta.json"))


def stats(res):
    return name_values(res.text("stats.txt"))


# Each helper reads the clock once it runs after its admission; two woken
# by the same slot release run in either order, at nice 19 behind the
# writers (a few ms apart). A later ticket taking a slot an earlier one
# waited for shows as a whole dump's time (0.4 s and more here).
FIFO_SLACK_USEC = 50_000


def assert_fifo(ms):
    by_ticket = sorted(ms, key=lambda m: m["ticket"])
    admitted = [m["admitted_usec"] for m in by_ticket]
    for j in range(1, len(admitted)):
        assert admitted[j] >= max(admitted[:j]) - FIFO_SLACK_USEC, \
            [(m["ticket"], m["pid"], m["admitted_usec"]) for m in by_ticket]


def assert_cores_valid(res, ms, n):
    cores = res.json_lines("cores.json")
    assert len(cores) == n, res.text("ls.txt")
    by_pid = {m["pid"]: m for m in ms}
    for c in cores:
        assert c["valid"] and c["complete"], c
        assert c["pattern_pages"] == PAGES and c["pattern_dupes"] == 0, c
        m = by_pid[c["pid"]]
        assert m["size"] == c["size"], (m, c)
        assert m["signal"] == c["signal"]


# the VM tests' agent at 20 MB/s, switching core_pattern to the helper
BURST_CONF = TEST_CONF.replace("WriteBandwidth=10M", "WriteBandwidth=20M") + PIPE.lstrip("\n")

BURST = LIB + r"""
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.before
start_agent
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.agent
cat /proc/sys/kernel/core_pipe_limit > $RESULTS/pipe_limit.agent
cat /run/coredam/pipe/budget > $RESULTS/budget.txt
grep -E '^(CapEff|CapBnd):' /proc/$(cat /tmp/agent.pid)/status > $RESULTS/agent.caps
# 16 crashers, crashing one after the other: the arrival order is known
mkdir -p /tmp/b
pids=""
i=0
while [ $i -lt 16 ]; do
    crasher -m {mb} -w /tmp/b/go.$i -r /tmp/b/ready.$i &
    pids="$pids $!"
    i=$((i + 1))
done
waitfor 300 "16 crashers ready" count_ready /tmp/b 16
n=0
for p in $pids; do
    echo $p >> $RESULTS/order.txt
    touch /tmp/b/go.$n
    n=$((n + 1))
    sleep 0.3
    if [ $n -eq 8 ]; then
        # the agent dies in the middle of the burst and comes back
        kill_agent
        start_agent
    fi
done
# the crashed processes and the helpers in the dump cgroup, every thread:
# pid, nice, policy (the fields after "comm) "), name
sched_of_dumps() {
    for s in /proc/[0-9]*/status; do
        p=${s%/status}
        grep -q '^CoreDumping:[[:space:]]*1' $s 2>/dev/null ||
            grep -qx '0::/coredump.slice' $p/cgroup 2>/dev/null || continue
        c=$(cat $p/comm 2>/dev/null)
        for t in $p/task/*; do
            sed 's/.*) //' $t/stat 2>/dev/null | awk -v p=${p#/proc/} -v c="$c" '{ print p, $17, $39, c }'
        done
    done
}
background() {
    sched_of_dumps > /tmp/sched.now
    grep -q . /tmp/sched.now && ! awk '$2 != 19 || $3 != 3' /tmp/sched.now | grep -q .
}
waitfor 10 "the dumps made background work" background || true
cp /tmp/sched.now $RESULTS/dumps.sched
for p in $pids; do wait $p || true; done
wait_cores 16
collect
for f in /scratch/cores/core.*; do
    case $f in *.json) continue;; esac
    corecheck $f >> $RESULTS/cores.json || true
done
coredamctl status --json > $RESULTS/status.json
coredamctl status > $RESULTS/status.txt
stop_agent
cat /proc/sys/kernel/core_pattern > $RESULTS/pattern.after
[ -e /run/coredam/pipe/budget ] && echo present > $RESULTS/budget.after || true
"""


def test_burst_budget_order_cgroup_agent_restart(boot):
    res = boot(BURST.replace("{mb}", str(MB)), kernel="stock", files={"coredam.conf": BURST_CONF},
               timeout=900)
    assert res.rc == 0, res.output
    # the agent installed the helper and restored the original on shutdown
    assert res.text("pattern.agent").strip() == \
        "|/usr/sbin/coredam-pipe /scratch/cores %P %u %g %s %t %c %d %e"
    assert res.text("pipe_limit.agent").strip() == "0"
    # the agent made the crashed processes and the helpers background work
    # (DumpNice=19: SCHED_BATCH, 3, at nice 19), helpers among them
    sched = [line.split() for line in res.text("dumps.sched").splitlines()]
    assert sched and all(w[1:3] == ["19", "3"] for w in sched), sched
    assert any(w[3:] == ["coredam-pipe"] for w in sched), sched
    assert res.text("pattern.after") == res.text("pattern.before")
    assert not res.path("budget.after").exists()
    assert "concurrency 2" in res.text("budget.txt")
    # on a kernel without the series' knobs the agent gave up CAP_SYS_ADMIN
    # (bit 21), and kept the rest it was started with (CAP_DAC_OVERRIDE, 1)
    caps = {k: int(v, 16) for k, v in (line.split() for line in res.text("agent.caps").splitlines())}
    assert not caps["CapEff:"] & (1 << 21) and not caps["CapBnd:"] & (1 << 21), caps
    assert caps["CapEff:"] & (1 << 1), caps

    ms = meta(res)
    assert len(ms) == 16, res.text("ls.txt")
    assert_cores_valid(res, ms, 16)
    # every helper wrote from inside the dump cgroup
    assert {m["cgroup"] for m in ms} == {"/coredump.slice"}
    # never more than the budget writing at once
    assert most_at_once(ms) <= 2, ms
    # slots in ticket order, tickets in crash order
    assert_fifo(ms)
    order = [int(p) for p in res.text("order.txt").split()]
    assert [m["pid"] for m in sorted(ms, key=lambda m: m["ticket"])] == order
    # names never come from the process beyond the sanitized comm
    for m in ms:
        assert re.fullmatch(r"core\.crasher\.%d\.\d+" % m["pid"], m["core"]), m
        assert m["compression"] == "none" and m["disk_size"] == m["size"]

    st = stats(res)
    assert st["started"] == 16 and st["admitted"] == 16 and st["completed"] == 16, st
    assert st["failed"] == 0 and st["uncharged"] == 0 and st["skipped_timeout"] == 0, st
    status = json.loads(res.text("status.json"))
    assert status["counters"]["source"] == "coredam-pipe"
    assert status["counters"]["completed"] == 16 and status["counters"]["started"] == 16
    assert status["pipe_helper"]["bytes"] == sum(m["size"] for m in ms)
    assert "from coredam-pipe" in res.text("status.txt")
    # what a scraper reads: the helper's counters, in a file promtool accepts
    metrics = res.text("metrics.prom")
    check_metrics(metrics)
    assert "\ncoredam_dumps_completed_total 16\n" in metrics, metrics
    assert f"\ncoredam_pipe_read_bytes_total {status['pipe_helper']['bytes']}\n" in metrics, metrics


FALLBACK_CONF = """\
[Cgroup]
Path=/coredump.slice
[Limits]
Concurrency=1
WaitTimeout=0
[Pipe]
Directory=/scratch/cores
Compress=yes
CompressLevel=1
""" + ALL_CORES.lstrip("\n")

# the retention phase's [Space] MaxUse=: a few of the fallback's cores
RET_MAX_USE_MB = 30
RET_MAX_USE = f"{RET_MAX_USE_MB}M"

FALLBACK = LIB + r"""
# no agent: the cgroup exists (a service manager made it), the budget is the configuration's
mkdir -p /sys/fs/cgroup/coredump.slice
echo "%s" > /proc/sys/kernel/core_pattern
storm 4 {mb}
wait_cores 4
collect
for f in /scratch/cores/core.*.zst; do
    coredam-pipe --decompress < $f > /tmp/core
    corecheck /tmp/core | sed "s|/tmp/core|$f|" >> $RESULTS/cores.json || true
done
# the kept cores as coredamctl shows them; one written out, decompressed
coredamctl list --json > $RESULTS/list.json 2> $RESULTS/list.err || true
coredamctl list > $RESULTS/list.txt 2>&1 || true
first=$(ls /scratch/cores/core.*.zst | head -1)
pid=$(basename $first | cut -d. -f3)
echo $pid > $RESULTS/info.pid
coredamctl info $pid > $RESULTS/info.txt 2>&1 || true
coredamctl dump -o /tmp/dumped $pid && coredam-pipe --decompress < $first | cmp - /tmp/dumped \
    && echo same > $RESULTS/dump.cmp
# now a timeout: one slot, 300 ms to get it, three big dumps at once
rm -rf /scratch/cores/*
printf '[Limits]\nConcurrency=1\nWaitTimeout=300ms\n[Repeats]\nKeep=infinity\n' > /etc/coredam/coredam.conf
rm -f /run/coredam/pipe/stats
storm 3 48
wait_cores 1
collect2() {
    ls -la /scratch/cores > $RESULTS/ls2.txt
    cp /run/coredam/pipe/stats $RESULTS/stats2.txt
}
collect2
# repeats, as shipped ([Repeats] Keep=2): five identical crashes at once, then one by another signal
waitfor 120 "the timeout storm's helpers" no_helper
rm -rf /scratch/cores/* /run/coredam/pipe/stats
printf '[Limits]\nConcurrency=1\nWaitTimeout=0\n' > /etc/coredam/coredam.conf
storm 5 {mb}
crasher -m {mb} -s 6 || true
wait_cores 3
ls -la /scratch/cores > $RESULTS/ls3.txt
cp /run/coredam/pipe/stats $RESULTS/stats3.txt
cp /run/coredam/pipe/repeats $RESULTS/repeats3.txt
for m in /scratch/cores/*.json; do cat "$m" >> "$RESULTS/meta3.json"; done
for f in /scratch/cores/core.*; do
    case $f in *.json) ;; *) corecheck $f >> $RESULTS/cores3.json || true ;; esac
done
coredamctl status > $RESULTS/status3.txt 2>&1 || true
coredamctl status --json > $RESULTS/status3.json 2>&1 || true
command -v crasher > $RESULTS/crasher.path
# retention: [Space] MaxUse= room for a few cores, six crashes one after the other;
# after each, every file's allocated blocks (what retention counts)
rm -rf /scratch/cores/* /run/coredam/pipe/stats
# (Directory= for coredamctl: the helper has it from core_pattern)
printf '[Limits]\nConcurrency=1\nWaitTimeout=0\n[Repeats]\nKeep=infinity\n[Space]\nMaxUse=%s\n[Pipe]\nDirectory=/scratch/cores\n' \
    > /etc/coredam/coredam.conf
i=0
while [ $i -lt 6 ]; do
    crasher -m {mb} & echo $! >> $RESULTS/ret.order; wait $! || true
    waitfor 120 "helper $i" no_helper
    stat -c '%%n %%b %%B' /scratch/cores/* > $RESULTS/ret.du.$i
    i=$((i + 1))
    sleep 1
done
ls -la /scratch/cores > $RESULTS/ret.ls
for m in /scratch/cores/*.json; do cat "$m" >> "$RESULTS/ret.meta"; done
for f in /scratch/cores/core.*; do
    case $f in *.json) ;; *) corecheck $f >> $RESULTS/ret.cores || true ;; esac
done
cp /run/coredam/pipe/stats $RESULTS/ret.stats
coredamctl status > $RESULTS/ret.status 2>&1 || true
coredamctl vacuum --dry-run > $RESULTS/ret.vacuum 2>&1; echo $? >> $RESULTS/ret.vacuum
""" % (PATTERN, RET_MAX_USE)


def test_fallback_without_agent_compress_and_timeout(boot):
    res = boot(FALLBACK.replace("{mb}", str(MB)), kernel="stock", files={"coredam.conf": FALLBACK_CONF},
               timeout=900)
    assert res.rc == 0, res.output
    ms = meta(res)
    assert len(ms) == 4, res.text("ls.txt")
    assert_cores_valid(res, ms, 4)
    assert most_at_once(ms) <= 1, ms
    assert_fifo(ms)
    for m in ms:
        assert m["compression"] == "zstd" and m["core"].endswith(".zst")
        assert 0 < m["disk_size"] < m["size"], m
        assert m["cgroup"] == "/coredump.slice"
    st = stats(res)
    assert st["completed"] == 4 and st["bytes"] == sum(m["size"] for m in ms), st
    assert st["bytes_disk"] == sum(m["disk_size"] for m in ms), st
    # coredamctl list, info and dump: what the metadata says, the core as it was sent
    listed = json.loads(res.text("list.json"))
    assert sorted(c["pid"] for c in listed) == sorted(m["pid"] for m in ms), listed
    assert all(c["state"] == "complete" and c["compression"] == "zstd" and c["signal"] == 11 for c in listed)
    assert [c["time"] for c in listed] == sorted(c["time"] for c in listed)
    assert res.text("list.txt").count("complete,zstd") == 4, res.text("list.txt")
    info = res.text("info.txt")
    assert f"       PID: {res.text('info.pid').strip()}\n" in info, info
    assert re.search(r"   Crashed: /\S*crasher SIGSEGV at /\S+\+0x[0-9a-f]+\n", info), info
    assert res.text("dump.cmp").strip() == "same"

    # the timeout: whatever did not get the slot in 300 ms was dropped, said why, and left no file
    st2 = {k: int(v) for k, v in (line.split() for line in res.text("stats2.txt").splitlines())}
    assert st2["started"] == 3, st2
    assert st2["completed"] + st2["skipped_timeout"] == 3, st2
    assert st2["skipped_timeout"] >= 1, st2
    dmesg = res.text("dmesg.txt")
    assert dmesg.count("dropped: no write slot within 300 ms") == st2["skipped_timeout"], dmesg[-3000:]
    assert "coredamd not running" in dmesg
    cores2 = [l for l in res.text("ls2.txt").splitlines() if " core." in l and not l.endswith(".json")]
    assert len(cores2) == st2["completed"], res.text("ls2.txt")
    assert ".tmp" not in res.text("ls2.txt")

    # repeats: of five identical crashes the first two were stored, three skipped before
    # they queued; the crash by another signal is another signature, stored
    st3 = name_values(res.text("stats3.txt"))
    assert st3["started"] == 6 and st3["completed"] == 3 and st3["skipped_repeat"] == 3, st3
    assert st3["admitted"] == 3 and st3["skipped_timeout"] == 0, st3
    ms3 = meta_records(res.text("meta3.json"))
    assert sorted(m["signal"] for m in ms3) == [6, 11, 11], ms3
    cores3 = res.json_lines("cores3.json")
    assert len(cores3) == 3, res.text("ls3.txt")
    assert all(c["valid"] and c["complete"] and c["pattern_pages"] == PAGES for c in cores3), cores3
    crasher = res.text("crasher.path").strip()
    status3 = json.loads(res.text("status3.json"))
    assert status3["pipe_helper"]["skipped_repeat"] == 3, status3["pipe_helper"]
    reps = {r["crash"].split(" at ")[0]: r for r in status3["repeats"]}
    assert set(reps) == {f"{crasher} SIGSEGV", f"{crasher} SIGABRT"}, status3["repeats"]
    segv = reps[f"{crasher} SIGSEGV"]
    assert segv["kept"] == 2 and segv["skipped"] == 3, segv
    # the place is a file and an offset in it (where raise() is), not an address
    assert re.search(r" at /\S+\+0x[0-9a-f]+$", segv["crash"]), segv
    assert reps[f"{crasher} SIGABRT"]["kept"] == 1 and reps[f"{crasher} SIGABRT"]["skipped"] == 0
    assert f"2 kept, 3 skipped as repeats of {crasher} SIGSEGV at " in res.text("status3.txt"), \
        res.text("status3.txt")
    # the 1st and 2nd skip of a signature are logged, the 3rd is not
    assert dmesg.count(f"skipped: a repeat of {crasher} SIGSEGV") == 2, dmesg[-3000:]
    check_retention(res, dmesg)


def check_retention(res, dmesg):
    """[Space] MaxUse=: after six cores stored one after the other, the
    oldest are gone with their metadata, the newest that fit are there and
    whole, and removed_retention, the log and status say how many went."""
    order = [int(p) for p in res.text("ret.order").split()]
    assert len(order) == 6, order

    def use(i):
        """Allocated bytes by core name after crash i: the core's and its metadata's."""
        u = {}
        for line in res.text(f"ret.du.{i}").splitlines():
            path, blocks, unit = line.rsplit(" ", 2)
            name = path.rsplit("/", 1)[1]
            core = name[:-len(".json")] if name.endswith(".json") else name
            u[core] = u.get(core, 0) + int(blocks) * int(unit)
        return u

    # each crash's own core (by pid), its disk use as stored
    size = {}
    for i, pid in enumerate(order):
        mine = [c for c in use(i) if f".{pid}." in c]
        assert len(mine) == 1, (pid, use(i))
        size[pid] = use(i)[mine[0]]
        # after every store the kept cores fit MaxUse= (one core alone may not)
        assert sum(use(i).values()) <= RET_MAX_USE_MB << 20 or len(use(i)) == 1, (i, use(i))
    # what is left: the newest k, oldest first gone; k the most that fit, newest counted first
    kept = sorted(m["pid"] for m in
                  (json.loads(line) for line in res.text("ret.meta").splitlines() if line.strip()))
    k, total = 0, 0
    for pid in reversed(order):
        if k and total + size[pid] > RET_MAX_USE_MB << 20:
            break
        total += size[pid]
        k += 1
    assert 2 <= k <= 4, (k, size)
    assert kept == sorted(order[-k:]), (kept, order, size, res.text("ret.ls"))
    cores = res.json_lines("ret.cores")
    assert sorted(c["pid"] for c in cores) == kept, res.text("ret.ls")
    assert all(c["valid"] and c["complete"] and c["pattern_pages"] == PAGES for c in cores), cores
    # no metadata left without its core, no core without its metadata
    names = [line.split()[-1] for line in res.text("ret.ls").splitlines() if " core." in line]
    assert len(names) == 2 * k, names
    st = name_values(res.text("ret.stats"))
    assert st["completed"] == 6 and st["removed_retention"] == 6 - k, st
    # one line a vacuum that removed something, the cores it removed adding up to the counter
    logged = [int(m.group(1)) for m in re.finditer(r"event=retention removed=(\d+) ", dmesg)]
    assert logged and sum(logged) == 6 - k, (logged, dmesg[-3000:])
    assert f"kept cores removed by retention ([Space] MaxUse=, KeepFree=): {6 - k}\n" in \
        res.text("ret.status"), res.text("ret.status")
    # within MaxUse= now: a vacuum by hand has nothing to do, and exits 0
    vac = res.text("ret.vacuum")
    assert vac.startswith("Would remove 0 cores") and vac.rstrip().endswith("\n0"), vac


HOSTILE_CONF = """\
[Cgroup]
Path=/coredump.slice
[Limits]
Concurrency=2
""" + ALL_CORES.lstrip("\n")

HOSTILE = LIB + r"""
mkdir -p /sys/fs/cgroup/coredump.slice
echo "%s" > /proc/sys/kernel/core_pattern
# an ordinary user, for su (before the marker: only the helper's files count)
echo 'u1000:x:1000:1000::/:/bin/sh' >> /etc/passwd
touch /tmp/marker
sleep 1
mkdir -p /tmp/h
nl='
'
long=$(printf 'L%%.0s' $(seq 1 200))
for name in "..${nl}x y" '...' '-rf *' ".hidden" "$long"; do
    cp /bin/crasher "/tmp/h/$name" 2>/dev/null || { echo "cannot name a file $name"; continue; }
    "/tmp/h/$name" -m 1 || true
    rm -f "/tmp/h/$name"
done
wait_cores 5
# a destination that is a symlink to elsewhere, then one anyone may write to
mkdir -p /scratch/outside && chmod 755 /scratch/outside
ln -s /scratch/outside /scratch/dest
echo "%s" > /proc/sys/kernel/core_pattern
crasher -m 1 || true
mkdir -p /scratch/open && chmod 777 /scratch/open
echo "%s" > /proc/sys/kernel/core_pattern
crasher -m 1 || true
echo "%s" > /proc/sys/kernel/core_pattern
# an unprivileged crash by nobody, a system account: the core is root's, 0640;
# the initramfs root may come up 0700, which would keep nobody out of /bin
chmod 755 /
su -s /bin/sh -c 'crasher -m 1' nobody || true
# RLIMIT_CORE 0, which an unprivileged process cannot raise: not stored
( ulimit -c 0; su -s /bin/sh -c 'crasher -m 1' nobody ) || true
# an ordinary user's crash: root's core that this user may read; then a root
# process that set only its real uid to that user (it still dumps): root's,
# and the user may not read it
crasher -u 1000 -m 1 & echo $! > $RESULTS/user.pid; wait $! || true
crasher -R 1000 -m 1 & echo $! > $RESULTS/ruid.pid; wait $! || true
i=0; while pidof coredam-pipe >/dev/null && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
for who in user ruid; do
    c=$(ls /scratch/cores/core.*.$(cat $RESULTS/$who.pid).* | grep -v '[.]json$')
    stat -c '%%u %%g %%a' "$c" > $RESULTS/$who.stat
    if su -s /bin/sh -c "cat '$c' > /dev/null" u1000; then echo yes; else echo no; fi > $RESULTS/$who.read
done
j=$(grep -l '"uid": 65534,' /scratch/cores/*.json | head -n 1)
if su -s /bin/sh -c "cat '${j%%.json}' > /dev/null" nobody; then echo yes; else echo no; fi > $RESULTS/nobody.read
collect
ls -la /scratch/outside /scratch/open > $RESULTS/others.txt
# every regular file written since the marker, outside the pseudo filesystems and the job's own dirs
find / -xdev -newer /tmp/marker -type f 2>/dev/null | grep -v -e '^/results' -e '^/tmp/h' > $RESULTS/new_root.txt || true
find /scratch -newer /tmp/marker -type f > $RESULTS/new_scratch.txt
find /run -newer /tmp/marker -type f > $RESULTS/new_run.txt
""" % (PATTERN, PATTERN.replace("/scratch/cores", "/scratch/dest"),
       PATTERN.replace("/scratch/cores", "/scratch/open"), PATTERN)


def test_hostile_names_and_destinations(boot):
    res = boot(HOSTILE, kernel="stock", files={"coredam.conf": HOSTILE_CONF}, timeout=600)
    assert res.rc == 0, res.output
    ms = meta(res)
    # ('/' cannot be part of a file name, so a comm cannot hold it: the kernel
    # would print it as '!' anyway) every crasher dumped under its hostile name
    assert len(ms) == 8, res.text("ls.txt")
    # cores are root's, never the crashed user's: nobody (a system account)
    # may not read its own; an ordinary user may, by an ACL, unless the
    # process only set its real uid to that user's (a root daemon: its
    # memory stays root's)
    nobody = [m for m in ms if m["uid"] == 65534]
    assert len(nobody) == 1 and nobody[0]["comm"] == "crasher", ms
    assert re.search(r"-rw-r-----\s+1 root\s+root\s+\d+ .*%s\n" % re.escape(nobody[0]["core"]),
                     res.text("ls.txt")), res.text("ls.txt")
    assert res.text("nobody.read").strip() == "no"
    assert res.text("user.stat").split() == ["0", "0", "640"], res.text("ls.txt")
    assert res.text("user.read").strip() == "yes"
    assert res.text("ruid.stat").split() == ["0", "0", "640"], res.text("ls.txt")
    assert res.text("ruid.read").strip() == "no"
    assert sorted(m["uid"] for m in ms if m["uid"] != 0) == [1000, 1000, 65534], ms
    by_comm = {m["comm"]: m["core"] for m in ms}
    assert by_comm["..\nx y"].startswith("core._._x_y."), by_comm
    assert by_comm["..."].startswith("core._..."), by_comm
    assert by_comm["-rf *"].startswith("core.-rf__."), by_comm
    assert by_comm[".hidden"].startswith("core._hidden."), by_comm
    assert by_comm["L" * 15].startswith("core." + "L" * 15 + "."), by_comm
    for m in ms:
        assert re.fullmatch(r"core\.[A-Za-z0-9_-][A-Za-z0-9._-]{0,14}\.%d\.\d+" % m["pid"], m["core"]), m

    # nothing through the symlink, nothing into the open directory
    others = res.text("others.txt")
    assert "core." not in others, others
    dmesg = res.text("dmesg.txt")
    assert "/scratch/dest: is a symbolic link" in dmesg, dmesg[-3000:]
    assert "/scratch/open: writable by group or others" in dmesg
    assert "RLIMIT_CORE is 0 bytes" in dmesg
    st = stats(res)
    assert st["skipped_error"] == 2 and st["skipped_rlimit"] == 1 and st["completed"] == 8, st

    # the only new files: the cores and their metadata, and the helper's state
    new = [l for l in res.text("new_scratch.txt").splitlines() if l]
    assert all(l.startswith("/scratch/cores/core.") for l in new), new
    assert len(new) == 16, new
    assert all(l.startswith("/run/coredam/") for l in res.text("new_run.txt").splitlines() if l)
    stray = [l for l in res.text("new_root.txt").splitlines()
             if l and not l.startswith(("/run/coredam/", "/scratch/cores/", "/tmp/"))]
    assert not stray, stray


CAPS_CONF = """\
[Cgroup]
Path=/coredump.slice
[Limits]
Concurrency=1
[Pipe]
CoreSizeMax=32M
CoreTimeMax=10s
""" + ALL_CORES.lstrip("\n")

CAPS = LIB + r"""
mkdir -p /sys/fs/cgroup/coredump.slice
echo "%s" > /proc/sys/kernel/core_pattern
# a 64 MB core: cut at 32 MB; the helper closes the pipe and the kernel
# ends the dump (the crasher's parent sees it exit)
crasher -m 64 & echo $! > $RESULTS/big.pid; wait $! || true
wait_cores 1
# one page touched in a 64 TiB mapping: the kernel walks it page by page
# before it sends anything more (hours under emulation), so the stream
# stalls; the helper gives up at 10 s and the slot goes to the next core
# while the crashed process still walks
crasher -m 1 -S 65536 & spid=$!; echo $spid > $RESULTS/sparse.pid
waitfor 30 "the sparse dump writing" sh -c "ls -a /scratch/cores | grep -q '[.]$spid[.].*[.]tmp\$'" ||
    ls -la /scratch/cores
# the helper that holds the slot, as it reads: confined
for h in $(pidof coredam-pipe); do
    grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs|Seccomp):' /proc/$h/status
    awk '$5 == "/" { print "root", $6 }' /proc/$h/mountinfo
done > $RESULTS/confined.txt
awk '$5 == "/" { print "root", $6 }' /proc/self/mountinfo > $RESULTS/unconfined.txt
# with no agent running, the helper made itself and the crashed process
# background work (nice and policy, the fields after "comm) ")
for h in $(pidof coredam-pipe); do sed 's/.*) //' /proc/$h/stat | awk '{ print "helper", $17, $39 }'; done \
    > $RESULTS/sched.txt
sed 's/.*) //' /proc/$spid/stat | awk '{ print "crashed", $17, $39 }' >> $RESULTS/sched.txt
crasher -m 8 & echo $! > $RESULTS/next.pid; wait $! || true
wait_cores 3
if kill -0 $spid 2>/dev/null; then echo walking; else echo gone; fi > $RESULTS/sparse.state
# on a stock kernel not even SIGKILL stops that walk (the series' first
# patch makes it stop): the job ends without waiting for it
collect
check_cores
""" % PATTERN


def test_caps_end_a_big_and_a_stalled_dump(boot):
    """Any user could hold a write slot for hours: [Pipe] CoreSizeMax= cuts
    a core (here at 32 MB) and the kernel, its pipe closed, ends the dump;
    CoreTimeMax= (here 10 s) cuts a stream that stalls (a 64 TiB sparse
    mapping, which the kernel walks page by page before it sends its
    zeros), and the next core gets the slot. The helper reading it runs
    confined ([Pipe] Sandbox=yes, the default)."""
    res = boot(CAPS, kernel="stock", files={"coredam.conf": CAPS_CONF}, timeout=600)
    assert res.rc == 0, res.output
    by_pid = {m["pid"]: m for m in meta(res)}
    big, sparse, nxt = (int(res.text(f"{n}.pid")) for n in ("big", "sparse", "next"))
    assert by_pid[big]["truncated"] and by_pid[big]["size"] == 32 << 20, by_pid
    assert by_pid[big]["core"].endswith(".incomplete"), by_pid[big]
    s = by_pid[sparse]
    assert s["truncated"] and s["core"].endswith(".incomplete"), s
    assert 9000 <= s["write_ms"] < 40000, s
    assert res.text("sparse.state").strip() == "walking"
    n = by_pid[nxt]
    assert not n["truncated"] and n["waited_ms"] >= 1000, n
    # the helper reading the sparse dump ran confined: no capability, no
    # way to gain one, the seccomp filter, every mount read-only; the
    # machine's own mounts unchanged
    fields = dict(line.split(None, 1) for line in res.text("confined.txt").splitlines())
    assert fields == {"CapEff:": "0000000000000000", "CapPrm:": "0000000000000000",
                      "CapBnd:": "0000000000000000", "NoNewPrivs:": "1", "Seccomp:": "2",
                      "root": fields.get("root")}, res.text("confined.txt")
    assert fields["root"].split(",")[0] == "ro", fields
    assert res.text("unconfined.txt").split()[1].split(",")[0] == "rw", res.text("unconfined.txt")
    # DumpNice=19 from the helper itself: SCHED_BATCH (3) at nice 19, both sides of the pipe
    sched = [line.split() for line in res.text("sched.txt").splitlines()]
    assert {w[0] for w in sched} == {"helper", "crashed"}, sched
    assert all(w[1:] == ["19", "3"] for w in sched), sched
    cores = res.json_lines("cores.json")
    assert len(cores) == 1 and cores[0]["pid"] == nxt and cores[0]["valid"] and cores[0]["complete"], cores
    assert cores[0]["pattern_pages"] == 8 * 256, cores
    st = stats(res)
    assert st["completed"] == 3 and st["truncated"] == 2, st
    dmesg = res.text("dmesg.txt")
    assert "cut at [Pipe] CoreSizeMax=" in dmesg, dmesg[-3000:]
    assert "cut at [Pipe] CoreTimeMax=" in dmesg, dmesg[-3000:]


FAIR_CONF = """\
[Cgroup]
Path=/coredump.slice
[Limits]
Concurrency=1
QueueCap=3
WaitTimeout=10min
""" + ALL_CORES.lstrip("\n")

FAIR = LIB + r"""
mkdir -p /sys/fs/cgroup/coredump.slice
echo +io > /sys/fs/cgroup/cgroup.subtree_control
# 1 MB/s for the dump cgroup: each 8 MB core holds the one slot for seconds
echo "$(majmin) wbps=1000000" > /sys/fs/cgroup/coredump.slice/io.max
echo "%s" > /proc/sys/kernel/core_pattern
mkdir -p /tmp/f; chmod 1777 /tmp/f
pids=""
for i in 0 1 2 3 4 5; do
    crasher -u 1000 -m 8 -w /tmp/f/go.$i -r /tmp/f/ready.$i & pids="$pids $!"
done
waitfor 300 "6 crashers of uid 1000 ready" count_ready /tmp/f 6
for i in 0 1 2 3 4 5; do touch /tmp/f/go.$i; done
# one writes, three wait, two are turned away: the queue is full
waitfor 120 "two of uid 1000 turned away" sh -c '[ $(dmesg | grep -c "dropped: queue full") -ge 2 ]'
ls /run/coredam/pipe > $RESULTS/queue.full
# a root daemon crashes into the full queue
crasher -m 8 & echo $! > $RESULTS/root.pid
for p in $pids; do wait $p || true; done
wait
wait_cores 4
collect
check_cores
""" % PATTERN


def test_one_users_storm_does_not_hold_back_another(boot):
    """A storm of one user's crashes fills the helper's queue (one slot,
    three waiting places); a root daemon's crash then pushes out that
    user's newest waiter and gets the next slot, ahead of the storm's
    older waiters, as the kernel series shares them."""
    res = boot(FAIR, kernel="stock", files={"coredam.conf": FAIR_CONF}, timeout=600)
    assert res.rc == 0, res.output
    check_one_users_storm(meta(res), int(res.text("root.pid")), res.json_lines("cores.json"), stats(res))
    dmesg = res.text("dmesg.txt")
    assert dmesg.count("dropped: queue full") == 2, dmesg[-3000:]
    assert dmesg.count("a dump of another user took this one's") == 1, dmesg[-3000:]


SPACE_CONF = """\
[Cgroup]
Path=/coredump.slice
[Limits]
Concurrency=1
[Space]
FreeSpaceFloor=100M
""" + ALL_CORES.lstrip("\n")

SPACE = LIB + r"""
mkdir -p /sys/fs/cgroup/coredump.slice
echo "%s" > /proc/sys/kernel/core_pattern
# MiB free to unprivileged writers (f_bavail), as the helper reads it
avail() { df -k /scratch | awk 'NR == 2 { print int($4 / 1024) }'; }
fill() { dd if=/dev/zero of=/scratch/$1 bs=1M count=$2 2>/dev/null; sync; }
# room for it: whole
crasher -m 32 & echo $! > $RESULTS/whole.pid; wait $! || true
wait_cores 1
# 40 MB above the floor: a 64 MB core is cut where it crosses the floor
fill fill1 $(( $(avail) - 140 ))
avail > $RESULTS/avail.cut
crasher -m 64 & echo $! > $RESULTS/cut.pid; wait $! || true
wait_cores 2
avail > $RESULTS/avail.after
# below the floor: not stored at all
fill fill2 $(( $(avail) - 60 ))
avail > $RESULTS/avail.below
crasher -m 8 & echo $! > $RESULTS/below.pid; wait $! || true
i=0; while pidof coredam-pipe >/dev/null && [ $i -lt 300 ]; do i=$((i + 1)); sleep 0.1; done
collect
""" % PATTERN


def test_helper_keeps_the_free_space_floor(boot):
    """The helper writes as root, past the root reservation: below
    [Space] FreeSpaceFloor= it now stores nothing, and a core that would
    cross the floor is cut where it does, kept as .incomplete."""
    res = boot(SPACE, kernel="stock", files={"coredam.conf": SPACE_CONF}, disk_mb=400, timeout=600)
    assert res.rc == 0, res.output
    by_pid = {m["pid"]: m for m in meta(res)}
    whole, cut, below = (int(res.text(f"{n}.pid")) for n in ("whole", "cut", "below"))
    assert not by_pid[whole]["truncated"] and by_pid[whole]["size"] > 32 << 20, by_pid
    assert 130 <= int(res.text("avail.cut")) <= 150, res.text("avail.cut")
    c = by_pid[cut]
    assert c["truncated"] and c["core"].endswith(".incomplete"), c
    assert 16 << 20 <= c["size"] < 64 << 20, c
    # at most one check's worth (16 MiB) past the floor, plus the metadata
    assert int(res.text("avail.after")) >= 100 - 17, res.text("avail.after")
    assert int(res.text("avail.below")) < 100, res.text("avail.below")
    assert below not in by_pid, by_pid
    st = stats(res)
    assert st["skipped_space"] == 1 and st["completed"] == 2 and st["truncated"] == 1, st
    dmesg = res.text("dmesg.txt")
    assert "cut at the free-space floor" in dmesg, dmesg[-3000:]
    assert "below its floor of 100 MiB" in dmesg, dmesg[-3000:]
