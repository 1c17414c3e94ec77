"""VM tests of the coredam kernel series (kernel-patch/) on the patched kernel
(COREDAM_KERNEL=patched-7.3: the series rebased onto 7.3, kernel-patch/7.3/).

Each test boots the patched kernel once and asserts what a user would check:
the cores exist and are valid, the dumps went where kernel.core_cgroup says,
the admission queue admits in order and skips exactly what it should, and
/proc/sys/kernel/core_dump_stats adds up.

Slow dumps are made with a pipe helper that sleeps before it reads: the
dumper blocks on the full pipe, so it holds its slot for as long as the
helper sleeps. Cores are small (8 MiB): TCG is slow. Each job starts with
conftest.py's SERIES_JOB (the `run` fixture): tests/guest/lib.sh and
kernel_series.sh.
"""

import pytest

from conftest import KERNEL
from harness.parsers import STATS_NAMES as STATS, check_invariants, io_wbytes, name_values, \
    stats_dict

MB = 8
# the series rebased onto 7.3 (COREDAM_KERNEL=patched-7.3, or its debug
# kernel patched-7.3-debug) charges only file dumps: a pipe helper starts
# where the kernel starts any, and a cgroup with controllers for its
# children may be core_cgroup
ON_73 = "7.3" in KERNEL.split("-")


def stats(text):
    """core_dump_stats as a dict; every name the tests know must be there."""
    s = stats_dict(text)
    assert s, "no core_dump_stats"
    return s


def valid_cores(res, n):
    cores = res.json_lines("cores.json")
    assert len(cores) == n, res.output
    for c in cores:
        assert c["valid"] and c["complete"], c
        assert c["pattern_pages"] == c["pattern_pages_expected"] == MB * 256, c
    return cores


def test_defaults_and_stats(run):
    res = run(f"""
for f in core_max_concurrency core_max_waiting core_wait_timeout_ms \
         core_writeback_window core_cgroup core_slot_lease_ms; do
    echo "$f=$(cat $K/$f 2>/dev/null || echo MISSING)" >> $RESULTS/knobs
done
kstats > $RESULTS/before
crasher -m {MB} -s 11 || true
kstats > $RESULTS/after
checkcores /scratch/core.* > $RESULTS/cores.json
""", sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    knobs = dict(l.split("=", 1) for l in res.text("knobs").splitlines())
    assert knobs == {"core_max_concurrency": "0", "core_max_waiting": "0",
                     "core_wait_timeout_ms": "0",
                     "core_writeback_window": "1024",
                     "core_slot_lease_ms": "120000",
                     "core_cgroup": ""}
    assert stats(res.text("before")) == dict.fromkeys(STATS, 0)
    s = stats(res.text("after"))
    c = valid_cores(res, 1)[0]
    assert s["started"] == s["admitted"] == s["completed"] == 1, s
    # holes in the core are skipped, not written
    assert MB << 20 <= s["bytes"] <= c["size"], (s, c)
    check_invariants(s)


@pytest.mark.quiet_machine
def test_queue_concurrency_fifo(run):
    """concurrency 2, 8 crashes in a known arrival order: never more than 2
    dump at once, admission order is arrival order, all cores valid."""
    res = run(f"""
mkhelper 4
echo 2 > $K/core_max_concurrency
trap 'touch /tmp/stop' EXIT
( while [ ! -e /tmp/stop ]; do {{ kstats; echo; }} >> $RESULTS/samples; sleep 0.05; done ) &
sampler=$!
pids=""
for i in 1 2 3 4 5 6 7 8; do
    crasher -m {MB} -s 11 &
    pids="$pids $!"
    echo $! >> $RESULTS/arrival
    # arrival order: each one is in the queue before the next crashes
    if [ $i -le 2 ]; then wait_kstat active $i; else wait_kstat waiting $((i - 2)); fi
done
for p in $pids; do wait $p || true; done
wait_kstat active 0
touch /tmp/stop
wait $sampler
kstats > $RESULTS/after
cp /scratch/admitted $RESULTS/admitted
checkcores /scratch/core.* > $RESULTS/cores.json
""")
    samples = [stats(t) for t in res.text("samples").split("\n\n") if t.strip()]
    # every snapshot adds up, not only the one at rest
    for s in samples:
        check_invariants(s)
    assert max(s["active"] for s in samples) == 2
    assert max(s["waiting"] for s in samples) == 6
    # two slots free together (the helpers sleep equally long, 4 s, which
    # is longer than the 8 arrivals take), so the two
    # dumps admitted together may log in either order: compare by pairs
    adm, arr = res.text("admitted").split(), res.text("arrival").split()
    assert len(adm) == len(arr) == 8
    for i in range(0, 8, 2):
        assert sorted(adm[i:i + 2]) == sorted(arr[i:i + 2]), (adm, arr)
    valid_cores(res, 8)
    s = stats(res.text("after"))
    assert s["started"] == s["admitted"] == s["completed"] == 8, s
    check_invariants(s)


@pytest.mark.quiet_machine
def test_queue_cap_and_timeout(run):
    """concurrency 1, at most 2 waiting, 6 s timeout: of 4 crashes one is
    written, one skipped because the queue is full, two time out. The first
    dump holds its slot for 15 s, longer than the timeout; the fourth
    crasher has no memory to fill, so it reaches the full queue well within
    the timeout even on a debug kernel under TCG."""
    res = run(f"""
mkhelper 15
echo 1 > $K/core_max_concurrency
echo 2 > $K/core_max_waiting
echo 6000 > $K/core_wait_timeout_ms
crasher -m {MB} -s 11 & a=$!
wait_kstat active 1
crasher -m {MB} -s 11 & b=$!
crasher -m {MB} -s 11 & c=$!
wait_kstat waiting 2
crasher -m 0 -s 11 & d=$!
wait_kstat skipped_full 1
kstats > $RESULTS/full
wait $b $c $d || true
kstats > $RESULTS/timedout
wait $a || true
wait_kstat active 0
kstats > $RESULTS/after
echo $a > $RESULTS/first
checkcores /scratch/core.* > $RESULTS/cores.json
""")
    full = stats(res.text("full"))
    assert full["active"] == 1 and full["waiting"] == 2, full
    assert full["skipped_full"] == 1, full
    t = stats(res.text("timedout"))
    assert t["skipped_timeout"] == 2 and t["waiting"] == 0, t
    s = stats(res.text("after"))
    assert s["started"] == 4 and s["admitted"] == 1 and s["completed"] == 1, s
    assert s["skipped_full"] == 1 and s["skipped_timeout"] == 2, s
    check_invariants(s)
    cores = valid_cores(res, 1)
    assert cores[0]["pid"] == int(res.text("first"))


@pytest.mark.quiet_machine
def test_sigkill_waiter(run):
    """SIGKILL ends the wait: the waiter exits at once, takes no slot,
    leaves no core."""
    res = run(f"""
mkhelper 4
echo 1 > $K/core_max_concurrency
crasher -m {MB} -s 11 & a=$!
wait_kstat active 1
crasher -m {MB} -s 11 & b=$!
wait_kstat waiting 1
t0=$(now_ms)
kill -9 $b
wait $b || true
echo $(( $(now_ms) - t0 )) > $RESULTS/kill_ms
kstats > $RESULTS/killed
wait $a || true
wait_kstat active 0
kstats > $RESULTS/after
ls /scratch > $RESULTS/ls
echo $b > $RESULTS/victim
checkcores /scratch/core.* > $RESULTS/cores.json
""")
    k = stats(res.text("killed"))
    assert k["skipped_killed"] == 1 and k["waiting"] == 0 and k["active"] == 1, k
    # the victim was reaped while the first dump still held the slot (4 s)
    assert int(res.text("kill_ms")) < 3000
    victim = res.text("victim").strip()
    assert f"core.{victim}" not in res.text("ls").split()
    s = stats(res.text("after"))
    assert s["completed"] == 1 and s["skipped_killed"] == 1, s
    check_invariants(s)
    valid_cores(res, 1)


def test_stopping_a_crashed_service_passes_no_slot_to_the_dead(run):
    """A service whose workers crashed is stopped (cgroup.kill) while one
    worker's dump holds the one slot and six more wait behind it. The kill
    reaches all seven in one write, so the slot the holder frees can come
    to a waiter that is already dying: that one must pass it on, and not
    start a helper. Three rounds, each ended by a crash from outside the
    service that must get the slot at once and write its core whole."""
    res = run(f"""
# a helper that logs its start, and reads only once /tmp/open exists
cat > /bin/gatehelper <<'EOF'
#!/bin/sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
echo "$1" >> /scratch/admitted
[ -e /tmp/open ] || exec sleep 600
cat > /scratch/core.$1
EOF
chmod +x /bin/gatehelper
echo "|/bin/gatehelper %p" > $K/core_pattern
echo 64 > $K/core_pipe_limit
echo 1 > $K/core_max_concurrency
C=/sys/fs/cgroup
mkdir $C/svc
for round in 1 2 3; do
    rm -f /tmp/open
    sh -c "echo \\$\\$ > $C/svc/cgroup.procs; exec crasher -m 1 -s 11" & a=$!
    echo $a >> $RESULTS/holders
    waitfor 60 "the holder dumps" kstat_is active 1
    pids=""
    for i in 1 2 3 4 5 6; do
        sh -c "echo \\$\\$ > $C/svc/cgroup.procs; exec crasher -m 1 -s 11" &
        pids="$pids $!"
    done
    waitfor 60 "six wait" kstat_is waiting 6
    echo 1 > $C/svc/cgroup.kill
    for p in $a $pids; do wait $p || true; done
    waitfor 10 "svc is empty" grep -q "populated 0" $C/svc/cgroup.events
    wait_kstat waiting 0
    wait_kstat active 0
    kstats > $RESULTS/killed.$round
    # the holder's helper still sleeps; the slot is free
    touch /tmp/open
    crasher -m {MB} -s 11 & b=$!
    echo $b >> $RESULTS/outsiders
    waitfor 60 "the outsider dumps" grep -qx $b /scratch/admitted
    wait $b || true
    wait_kstat active 0
done
kstats > $RESULTS/after
cp /scratch/admitted $RESULTS/admitted
for b in $(cat $RESULTS/outsiders); do echo /scratch/core.$b; done > /tmp/outcores
checkcores $(cat /tmp/outcores) > $RESULTS/cores.json
""", timeout=400)
    admitted = res.text("admitted").split()
    holders, outsiders = res.text("holders").split(), res.text("outsiders").split()
    # a helper was started for each holder and each outsider, and for no
    # waiter: no dying process was given the slot
    assert sorted(admitted) == sorted(holders + outsiders), (admitted, holders)
    for r in (1, 2, 3):
        k = stats(res.text(f"killed.{r}"))
        assert k["admitted"] == 2 * r - 1, k
        assert k["skipped_killed"] == 6 * r, k
        assert k["failed_killed"] == r and k["active"] == 0, k
        check_invariants(k)
    s = stats(res.text("after"))
    assert s["admitted"] == 6 and s["completed"] == 3, s
    assert s["failed_killed"] == 3 and s["skipped_killed"] == 18, s
    check_invariants(s)
    valid_cores(res, 3)


@pytest.mark.quiet_machine
def test_raise_and_lower_mid_storm(run):
    """raising the limit admits the next waiters, in order, while the
    first still writes; lowering it aborts nothing."""
    res = run(f"""
mkhelper 3
echo 1 > $K/core_max_concurrency
pids=""
for i in 1 2 3 4 5; do
    crasher -m {MB} -s 11 &
    pids="$pids $!"
    echo $! >> $RESULTS/arrival
    if [ $i -eq 1 ]; then wait_kstat active 1; else wait_kstat waiting $((i - 1)); fi
done
echo 3 > $K/core_max_concurrency
# the raise grants the two slots; each woken waiter counts itself
# admitted when it runs, which on one CPU may come after this shell's
# next read
wait_kstat active 3
kstats > $RESULTS/raised
echo 1 > $K/core_max_concurrency
kstats > $RESULTS/lowered
for p in $pids; do wait $p || true; done
wait_kstat active 0
kstats > $RESULTS/after
cp /scratch/admitted $RESULTS/admitted
checkcores /scratch/core.* > $RESULTS/cores.json
""")
    r = stats(res.text("raised"))
    assert r["active"] == 3 and r["waiting"] == 2 and r["completed"] == 0, r
    lo = stats(res.text("lowered"))
    assert lo["active"] == 3 and lo["waiting"] == 2, lo
    # the raise admits two at once: their helpers may log in either order
    adm, arr = res.text("admitted").split(), res.text("arrival").split()
    assert adm[0] == arr[0] and adm[3:] == arr[3:], (adm, arr)
    assert sorted(adm[1:3]) == sorted(arr[1:3]), (adm, arr)
    s = stats(res.text("after"))
    assert s["completed"] == 5 and s["failed"] == 0, s
    check_invariants(s)
    valid_cores(res, 5)


def test_one_users_storm_does_not_hold_back_another_user(run):
    """One slot; three crashes of uid 1000 (one writing, two waiting), then
    one of uid 2000: the other user's crash is admitted next, not after
    the storm, and uid 1000's own dumps keep their order."""
    res = run(f"""
mkhelper 2
echo 1 > $K/core_max_concurrency
crasher -m {MB} -s 11 -u 1000 & a1=$!
waitfor 60 "the first dump starts" kstat_is active 1
crasher -m {MB} -s 11 -u 1000 & a2=$!
waitfor 60 "one waits" kstat_is waiting 1
crasher -m {MB} -s 11 -u 1000 & a3=$!
waitfor 60 "two wait" kstat_is waiting 2
crasher -m {MB} -s 11 -u 2000 & b=$!
waitfor 60 "three wait" kstat_is waiting 3
for p in $a1 $a2 $a3 $b; do wait $p || true; done
wait_kstat active 0
echo "$a1 $b $a2 $a3" > $RESULTS/expected
cp /scratch/admitted $RESULTS/admitted
kstats > $RESULTS/after
checkcores /scratch/core.* > $RESULTS/cores.json
""", timeout=300)
    assert res.text("admitted").split() == res.text("expected").split(), \
        (res.text("admitted"), res.text("expected"))
    s = stats(res.text("after"))
    assert s["completed"] == 4, s
    check_invariants(s)
    valid_cores(res, 4)


def test_stuck_helper_gives_its_slot_back(run):
    """One slot, a 2 s lease, and a pipe helper that never reads the first
    core (a stuck destination): the second crash is admitted when the
    first dump's lease ends and its core is written whole while the first
    still hangs, counted as overtime. Killing the stuck helper ends the
    first dump as failed; the counters add up at every step."""
    res = run(f"""
cat > /bin/stuckhelper <<'EOF'
#!/bin/sh
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
if mkdir /scratch/stuck 2>/dev/null; then
    echo $$ > /scratch/stuck/pid
    exec sleep 600
fi
cat > /scratch/core.$1
EOF
chmod +x /bin/stuckhelper
echo "|/bin/stuckhelper %p" > $K/core_pattern
echo 64 > $K/core_pipe_limit
echo 1 > $K/core_max_concurrency
echo 2000 > $K/core_slot_lease_ms
crasher -m {MB} -s 11 & a=$!
waitfor 60 "the first dump holds the slot" kstat_is active 1
t0=$(now_ms)
crasher -m {MB} -s 11 & b=$!
wait $b || true
echo $(( $(now_ms) - t0 )) > $RESULTS/second_ms
kstats > $RESULTS/second
kill -0 $a && echo alive > $RESULTS/first_state
checkcores /scratch/core.$b > $RESULTS/cores.json
kill $(cat /scratch/stuck/pid)
wait $a || true
wait_kstat overtime 0
kstats > $RESULTS/after
""", timeout=300)
    # the second dump waited for the lease, not for the stuck one
    assert 1500 <= int(res.text("second_ms")) < 60000, res.text("second_ms")
    assert res.text("first_state").strip() == "alive"
    s2 = stats(res.text("second"))
    assert s2["admitted"] == 2 and s2["completed"] == 1, s2
    assert s2["overtime"] == 1 and s2["leases_ended"] >= 1, s2
    check_invariants(s2)
    valid_cores(res, 1)
    s = stats(res.text("after"))
    assert s["completed"] == 1 and s["failed"] == 1 and s["overtime"] == 0, s
    check_invariants(s)


def test_core_pipe_limit_skips_and_counts(run):
    """core_pipe_limit keeps its meaning beside the queue: with a limit of
    1 and a helper that holds the first dump, a second pipe dump is
    skipped at once, counted as skipped_pipe_limit, and leaves no core."""
    res = run(f"""
mkhelper 3
echo 1 > $K/core_pipe_limit
crasher -m {MB} -s 11 & a=$!
waitfor 60 "the first dump starts" kstat_is active 1
crasher -m {MB} -s 11 & b=$!
wait $b || true
echo $b > $RESULTS/b
kstats > $RESULTS/skipped
wait $a || true
wait_kstat active 0
kstats > $RESULTS/after
ls /scratch > $RESULTS/ls.txt
checkcores /scratch/core.* > $RESULTS/cores.json
""")
    k = stats(res.text("skipped"))
    # the limit is checked once a dump is admitted (so that dumps waiting
    # for a slot do not use it up): both were admitted, one was skipped
    assert k["started"] == 2 and k["skipped_pipe_limit"] == 1 and k["admitted"] == 2, k
    check_invariants(k)
    b = res.text("b").strip()
    assert f"core.{b}" not in res.text("ls.txt").split(), res.text("ls.txt")
    s = stats(res.text("after"))
    assert s["completed"] == 1 and s["skipped_pipe_limit"] == 1, s
    check_invariants(s)
    valid_cores(res, 1)


def test_bad_input(run):
    """every invalid value is refused with the right errno and changes
    nothing; root in a child user namespace cannot redirect dumps (the
    child cgroup namespace case is in the kselftest: busybox's unshare
    has no -C). A cgroup with controllers for its children is refused
    (EBUSY), on 7.3 taken."""
    res = _bad_input_run(run)
    errs = res.text("errs").splitlines()
    expect = ["No such file", "Not a directory", "Invalid argument",
              "Invalid argument", "Invalid argument", "Invalid argument"]
    for line, want in zip(errs[:6], expect):
        assert want.lower() in line.lower(), (line, want)
    if ON_73:
        assert errs[6] == "cgroup ok", errs[6]
    else:
        assert "busy" in errs[6].lower(), errs[6]
    for line in errs[7:]:
        assert not line.endswith(" ok"), line
    assert "Operation not permitted" in errs[-1], errs[-1]
    values = dict(l.split("=", 1) for l in res.text("values").splitlines())
    assert values == {"core_cgroup": "/busy" if ON_73 else "/dump", "core_max_concurrency": "0",
                      "core_max_waiting": "0", "core_wait_timeout_ms": "0"}


def _bad_input_run(run):
    return run(r"""
C=/sys/fs/cgroup
mkdir $C/dump $C/busy $C/busy/child
echo +memory > $C/busy/cgroup.subtree_control
echo /dump > $K/core_cgroup
long=/$(printf 'a%.0s' $(seq 1 1100))
# a name (no leading /) is one path component: "a/b" and ".." are not
for v in /nonexistent /dump/cgroup.procs / a/b .. "$long" /busy; do
    echo "cgroup $(try_write $K/core_cgroup "$v")" >> $RESULTS/errs
done
for f in core_max_concurrency core_max_waiting core_wait_timeout_ms; do
    for v in -1 4294967296 99999999999 abc; do
        echo "$f $(try_write $K/$f $v)" >> $RESULTS/errs
    done
done
echo "conc_big $(try_write $K/core_max_concurrency 4194305)" >> $RESULTS/errs
echo "timeout_big $(try_write $K/core_wait_timeout_ms 86400001)" >> $RESULTS/errs
echo "stats $(try_write $K/core_dump_stats 1)" >> $RESULTS/errs
cat > /tmp/cgns.sh <<'EOF'
if (echo -n /busy/child > /proc/sys/kernel/core_cgroup) 2>/tmp/err2; then echo ok; else cat /tmp/err2; fi
EOF
echo "userns $(unshare -U -r sh /tmp/cgns.sh)" >> $RESULTS/errs
for f in core_cgroup core_max_concurrency core_max_waiting core_wait_timeout_ms; do
    echo "$f=$(cat $K/$f)" >> $RESULTS/values
done
""", timeout=120)


def test_pipe_helper_in_the_cgroup_dumper_in_its_own(run):
    """pipe mode: the helper starts in the dump cgroup and its io.stat
    accounts the core's bytes; the dumper stays in its own cgroup. On 7.3
    the helper starts in the root cgroup, as with no core_cgroup, and
    nothing is charged to the dump cgroup."""
    res = run(f"""
C=/sys/fs/cgroup
mkdir $C/dump $C/crash
echo /dump > $K/core_cgroup
mkhelper 1
sh -c "echo \\$\\$ > $C/crash/cgroup.procs; exec crasher -m {MB} -s 11" & a=$!
wait $a || true
wait_kstat active 0
sync
cp /scratch/helper-cgroup.$a /scratch/dumper-cgroup.$a $RESULTS/
echo $a > $RESULTS/pid
cat $C/dump/io.stat > $RESULTS/io.stat
kstats > $RESULTS/after
checkcores /scratch/core.* > $RESULTS/cores.json
""")
    pid = res.text("pid").strip()
    assert res.text(f"helper-cgroup.{pid}").strip() == ("0::/" if ON_73 else "0::/dump")
    assert res.text(f"dumper-cgroup.{pid}").strip() == "0::/crash"
    c = valid_cores(res, 1)[0]
    wbytes = io_wbytes(res.text("io.stat"))
    if ON_73:
        assert wbytes < c["size"] * 0.05, res.text("io.stat")
    else:
        assert wbytes >= c["size"] * 0.95, res.text("io.stat")
    s = stats(res.text("after"))
    assert s["completed"] == 1 and s["uncharged"] == 0, s


def test_file_dump_charged_and_paced_dumper_in_its_own_cgroup(run):
    """file mode, io.max 4 MB/s on the dump cgroup: while it dumps, the
    crashed process is in its own cgroup (its /proc/PID/cgroup, its
    cgroup's cgroup.procs and populated) and never in the dump cgroup;
    the core's page cache is charged to the dump cgroup, whose io.stat
    accounts the core, and io.max paces the dump (8 MiB take seconds, not
    a page-cache instant)."""
    res = run(f"""
C=/sys/fs/cgroup
mkdir $C/crash
dump_cgroup 4000000
sh -c "echo \\$\\$ > $C/crash/cgroup.procs; exec crasher -m {MB} -s 11" & a=$!
t0=$(now_ms)
waitfor 60 "the dump starts" kstat_is active 1
cat /proc/$a/cgroup > $RESULTS/proc.cgroup
cat $C/crash/cgroup.procs > $RESULTS/crash.procs
cat $C/crash/cgroup.events > $RESULTS/crash.events
in_dump=no
# while the dump lasts, each look notes whether a process showed in the dump cgroup
dump_over() {{
    kstat_is active 0 && return 0
    [ -s $C/dump/cgroup.procs ] && in_dump=yes
    return 1
}}
waitfor 300 "the paced dump to end" dump_over || exit 1
wait $a || true
echo $(( $(now_ms) - t0 )) > $RESULTS/dump_ms
echo $in_dump > $RESULTS/in_dump
cat $C/dump/memory.stat > $RESULTS/memory.stat
sync
cat $C/dump/io.stat > $RESULTS/io.stat
kstats > $RESULTS/after
checkcores /scratch/core.* > $RESULTS/cores.json
""", sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    assert res.text("proc.cgroup").strip() == "0::/crash", res.text("proc.cgroup")
    assert res.text("crash.procs").split() != [], res.text("crash.procs")
    assert "populated 1" in res.text("crash.events"), res.text("crash.events")
    assert res.text("in_dump").strip() == "no"
    c = valid_cores(res, 1)[0]
    # the core's page cache stays charged to the dump cgroup
    assert name_values(res.text("memory.stat"))["file"] >= MB << 20, res.text("memory.stat")
    assert io_wbytes(res.text("io.stat")) >= c["size"] * 0.95, res.text("io.stat")
    # 8 MiB at 4 MB/s: ~2.1 s; generous bounds for a slow host
    assert int(res.text("dump_ms")) >= 1500, res.text("dump_ms")
    s = stats(res.text("after"))
    assert s["completed"] == 1 and s["uncharged"] == 0, s


def test_supervision_sees_a_dumping_process(run):
    """While a crashed process dumps at 64 KB/s (its core would take two
    minutes) its own cgroup keeps supervising it: pids.max counts it and
    stops a fork, and cgroup.kill ends it at once; so does SIGKILL of a
    second dumper. Both dumps are failed, no core is whole, and the
    counters add up."""
    res = run(f"""
C=/sys/fs/cgroup
mkdir $C/lim
dump_cgroup 65536
echo 4 > $C/lim/pids.max
sh -c "echo \\$\\$ > $C/lim/cgroup.procs; exec sleep 600" & sl=$!
sh -c "echo \\$\\$ > $C/lim/cgroup.procs; exec crasher -m {MB} -s 11" & a=$!
waitfor 60 "the dump starts" kstat_is active 1
sleep 1
cat $C/lim/pids.current > $RESULTS/pids.during
cat /proc/$a/cgroup > $RESULTS/proc.cgroup
# a shell in the cgroup (3 of 4) forks twice: the second fork must fail
sh -c "echo \\$\\$ > $C/lim/cgroup.procs; sleep 600 & sleep 600 & echo forked" \
    > $RESULTS/forks 2>&1 || true
cat $C/lim/pids.events > $RESULTS/pids.events
t0=$(now_ms)
echo 1 > $C/lim/cgroup.kill
wait $a || true
echo $(( $(now_ms) - t0 )) > $RESULTS/kill_ms
waitfor 10 "lim is empty" grep -q "populated 0" $C/lim/cgroup.events
kstats > $RESULTS/killed
crasher -m {MB} -s 11 & b=$!
waitfor 60 "the second dump starts" kstat_is active 1
sleep 1
t0=$(now_ms)
kill -9 $b
wait $b || true
echo $(( $(now_ms) - t0 )) > $RESULTS/sigkill_ms
wait_kstat active 0
kstats > $RESULTS/after
checkcores /scratch/core.* > $RESULTS/cores.json
""", sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    assert res.text("proc.cgroup").strip() == "0::/lim"
    # the sleeper and the dumper
    assert res.text("pids.during").strip() == "2", res.text("pids.during")
    events = dict(line.split() for line in res.text("pids.events").splitlines())
    assert int(events["max"]) >= 1, (res.text("pids.events"), res.text("forks"))
    # v1 took 7.8 s for SIGKILL at this pace, and cgroup.kill did not end
    # the dump at all; stock dies at once. A second is far from both.
    assert int(res.text("kill_ms")) < 1000, res.text("kill_ms")
    assert int(res.text("sigkill_ms")) < 1000, res.text("sigkill_ms")
    k = stats(res.text("killed"))
    assert k["admitted"] == 1 and k["failed"] == 1 and k["completed"] == 0, k
    s = stats(res.text("after"))
    assert s["admitted"] == 2 and s["failed"] == 2 and s["completed"] == 0, s
    check_invariants(s)
    cores = res.json_lines("cores.json")
    assert not any(c["complete"] for c in cores), cores


def test_cgroup_removed(run):
    """the dump cgroup removed while configured: dumps go on uncharged and
    are counted; setting a new cgroup drops the old reference."""
    res = run(f"""
C=/sys/fs/cgroup
mkdir $C/dump $C/dump2
echo /dump > $K/core_cgroup
rmdir $C/dump
crasher -m {MB} -s 11 || true
kstats > $RESULTS/removed
cat $K/core_cgroup > $RESULTS/value
echo /dump2 > $K/core_cgroup
crasher -m {MB} -s 11 || true
kstats > $RESULTS/after
echo > $K/core_cgroup
rmdir $C/dump2
checkcores /scratch/core.* > $RESULTS/cores.json
""", sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    r = stats(res.text("removed"))
    assert r["completed"] == 1 and r["uncharged"] == 1, r
    s = stats(res.text("after"))
    assert s["completed"] == 2 and s["uncharged"] == 1, s
    valid_cores(res, 2)


def test_dump_cgroup_at_pids_max_0_takes_the_core(run):
    """pids.max limits forks, not charges: a dump cgroup at pids.max 0
    still takes the core, whole."""
    res = run(f"""
C=/sys/fs/cgroup
mkdir $C/dump
echo 0 > $C/dump/pids.max
echo /dump > $K/core_cgroup
crasher -m {MB} -s 11 || true
kstats > $RESULTS/after
sync
cat $C/dump/io.stat > $RESULTS/io.stat
checkcores /scratch/core.* > $RESULTS/cores.json
""", sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    s = stats(res.text("after"))
    assert s["completed"] == 1 and s["uncharged"] == 0, s
    valid_cores(res, 1)
    wbytes = io_wbytes(res.text("io.stat"))
    assert wbytes >= MB << 20


def test_frozen_dump_cgroup_does_not_hold_a_file_dump(run):
    """The dumper never enters the dump cgroup: a file dump charged to a
    frozen dump cgroup is written whole while the cgroup stays frozen."""
    res = run(f"""
C=/sys/fs/cgroup
mkdir $C/dump
echo 1 > $C/dump/cgroup.freeze
echo /dump > $K/core_cgroup
crasher -m {MB} -s 11 & pid=$!
waitfor 60 "the dump ends" kstat_is completed 1
wait $pid || true
cat $C/dump/cgroup.events > $RESULTS/events
kstats > $RESULTS/after
checkcores /scratch/core.* > $RESULTS/cores.json
""", sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    assert "frozen 1" in res.text("events"), res.text("events")
    s = stats(res.text("after"))
    assert s["completed"] == 1 and s["failed"] == 0 and s["uncharged"] == 0, s
    check_invariants(s)
    valid_cores(res, 1)


def test_freeze_a_dumping_and_a_waiting_process(run):
    """cgroup.freeze of a crasher's cgroup completes while it dumps (paced
    to 1 MB/s) and while another waits in the queue; the frozen dump
    makes no progress, and after the thaw both cores are written whole."""
    res = run(f"""
C=/sys/fs/cgroup
mkdir $C/fa $C/fb
dump_cgroup 1000000
echo 1 > $K/core_max_concurrency
sh -c "echo \\$\\$ > $C/fa/cgroup.procs; exec crasher -m {MB} -s 11" & a=$!
waitfor 60 "the first dump starts" kstat_is active 1
sh -c "echo \\$\\$ > $C/fb/cgroup.procs; exec crasher -m {MB} -s 11" & b=$!
waitfor 60 "the second waits" kstat_is waiting 1
sleep 1
t0=$(now_ms)
echo 1 > $C/fb/cgroup.freeze
waitfor 10 "the waiter's cgroup is frozen" grep -q "frozen 1" $C/fb/cgroup.events
echo $(( $(now_ms) - t0 )) > $RESULTS/freeze_waiter_ms
t0=$(now_ms)
echo 1 > $C/fa/cgroup.freeze
waitfor 10 "the dumper's cgroup is frozen" grep -q "frozen 1" $C/fa/cgroup.events
echo $(( $(now_ms) - t0 )) > $RESULTS/freeze_dumper_ms
sleep 1
kstat bytes > $RESULTS/bytes.frozen1
sleep 2
kstat bytes > $RESULTS/bytes.frozen2
kstats > $RESULTS/frozen
echo 0 > $C/fa/cgroup.freeze
echo 0 > $C/fb/cgroup.freeze
wait $a || true
wait $b || true
wait_kstat active 0
kstats > $RESULTS/after
checkcores /scratch/core.* > $RESULTS/cores.json
""", sysctls={"kernel.core_pattern": "/scratch/core.%p"}, timeout=400)
    # the freezer's own pace: it completes in well under a second here
    assert int(res.text("freeze_waiter_ms")) < 2000, res.text("freeze_waiter_ms")
    assert int(res.text("freeze_dumper_ms")) < 2000, res.text("freeze_dumper_ms")
    assert res.text("bytes.frozen1") == res.text("bytes.frozen2"), \
        (res.text("bytes.frozen1"), res.text("bytes.frozen2"))
    f = stats(res.text("frozen"))
    assert f["active"] == 1 and f["waiting"] == 1, f
    s = stats(res.text("after"))
    assert s["completed"] == 2 and s["failed"] == 0, s
    check_invariants(s)
    valid_cores(res, 2)


def test_nested_cgroup_inherits_the_parents_io_max(run):
    """core_cgroup names a child of a cgroup limited to 4 MB/s: the dump is
    paced by the parent's io.max and accounted in the child; the parent,
    which has controllers enabled for its children, is refused (EBUSY), on
    7.3 taken (no dump ever moves a task into it)."""
    res = run(f"""
C=/sys/fs/cgroup
mkdir $C/dump
echo "+io +memory" > $C/dump/cgroup.subtree_control
mkdir $C/dump/inner
dev=$(majmin)
echo "$dev wbps=4000000" > $C/dump/io.max
try_write $K/core_cgroup /dump > $RESULTS/parent
echo /dump/inner > $K/core_cgroup
t0=$(now_ms)
crasher -m {MB} -s 11 || true
echo $(( $(now_ms) - t0 )) > $RESULTS/ms
kstats > $RESULTS/after
sync
cat $C/dump/inner/io.stat > $RESULTS/io.stat
checkcores /scratch/core.* > $RESULTS/cores.json
""", sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    if ON_73:
        assert res.text("parent").strip() == "ok", res.text("parent")
    else:
        assert "busy" in res.text("parent").lower(), res.text("parent")
    s = stats(res.text("after"))
    assert s["completed"] == 1 and s["uncharged"] == 0, s
    valid_cores(res, 1)
    wbytes = io_wbytes(res.text("io.stat"))
    assert wbytes >= MB << 20
    # 8 MiB at 4 MB/s is 2.1 s; allow the window's last part to land late
    assert int(res.text("ms")) >= 1500, res.text("ms")


def test_tenant_dump_cgroup_keeps_the_tenants_io_max(run):
    """kernel.core_cgroup as a name: a crasher in a tenant's subtree, whose
    io.max (1 MB/s) is stricter than the system dump cgroup's (30 MB/s),
    has its core charged to the tenant's own dump cgroup of that name, so
    the tenant's limit still paces it; a crasher outside the subtree goes
    to the system's dump cgroup, at its pace."""
    res = run(f"""
C=/sys/fs/cgroup
dev=$(majmin)
mkdir $C/coredump $C/tenant $C/other
echo "$dev wbps=30000000" > $C/coredump/io.max
echo "+io +memory" > $C/tenant/cgroup.subtree_control
mkdir $C/tenant/app $C/tenant/coredump
echo "$dev wbps=1000000" > $C/tenant/io.max
echo coredump > $K/core_cgroup
cat $K/core_cgroup > $RESULTS/value
t0=$(now_ms)
sh -c "echo \\$\\$ > $C/tenant/app/cgroup.procs; exec crasher -m {MB} -s 11" || true
echo $(( $(now_ms) - t0 )) > $RESULTS/tenant_ms
t0=$(now_ms)
sh -c "echo \\$\\$ > $C/other/cgroup.procs; exec crasher -m {MB} -s 11" || true
echo $(( $(now_ms) - t0 )) > $RESULTS/other_ms
sync
cat $C/tenant/coredump/io.stat > $RESULTS/tenant.io.stat
cat $C/coredump/io.stat > $RESULTS/system.io.stat
kstats > $RESULTS/after
checkcores /scratch/core.* > $RESULTS/cores.json
""", sysctls={"kernel.core_pattern": "/scratch/core.%p"})
    assert res.text("value").strip() == "coredump"
    s = stats(res.text("after"))
    assert s["completed"] == 2 and s["uncharged"] == 0, s
    check_invariants(s)
    valid_cores(res, 2)
    # each core in its own dump cgroup's io.stat, and only there
    tenant, system = io_wbytes(res.text("tenant.io.stat")), io_wbytes(res.text("system.io.stat"))
    assert MB << 20 <= tenant < 2 * (MB << 20), (tenant, system)
    assert MB << 20 <= system < 2 * (MB << 20), (tenant, system)
    # 8 MiB at the tenant's 1 MB/s is 8.4 s; at 30 MB/s it is 0.3 s
    tenant_ms, other_ms = int(res.text("tenant_ms")), int(res.text("other_ms"))
    assert tenant_ms >= 6000, (tenant_ms, other_ms)
    assert other_ms < tenant_ms / 2, (tenant_ms, other_ms)


def check_overtaken_then_killed(res):
    """What overtake_then_kill left: the stuck dump still dumping when the
    next one was admitted at the end of its 1 s lease and written whole,
    then killed within a second, counted as failed (killed)."""
    assert "CoreDumping:\t1" in res.text("first_state"), res.text("first_state")
    # admitted when the first dump's lease ended, not when it ended: at
    # least 1 s after the first dump was admitted, which the test saw up
    # to a poll (100 ms) and a read of the counters later; not from the
    # second crash, which may come when much of the lease has gone
    assert 750 <= int(res.text("since_first_ms")), res.text("since_first_ms")
    assert int(res.text("second_ms")) < 60000, res.text("second_ms")
    s2 = stats(res.text("second"))
    assert s2["admitted"] == 2 and s2["completed"] == 1, s2
    assert s2["overtime"] == 1 and s2["leases_ended"] == 1 and s2["active"] == 0, s2
    check_invariants(s2)
    assert int(res.text("kill_ms")) < 1000, res.text("kill_ms")
    s = stats(res.text("after"))
    assert s["completed"] == 1 and s["failed"] == s["failed_killed"] == 1, s
    check_invariants(s)
    valid_cores(res, 1)


def test_stuck_file_system_gives_its_slot_back(run):
    """A core written into a FUSE file system that stops answering writes
    (after 64 KiB) never ends by itself. With one slot and a 1 s lease the
    next crash, whose core goes to the scratch disk, is admitted when the
    stuck dump's lease ends and is written whole while the stuck one hangs
    on, counted as overtime; SIGKILL then ends the stuck dump at once,
    counted as failed (killed), and the file system still answers."""
    res = run(f"""
mkdir -p /mnt/stall
fusestall -b 65536 -r /tmp/fuse.ready /mnt/stall &
fpid=$!
waitfor 10 "the FUSE mount serves" test -e /tmp/fuse.ready
echo 1 > $K/core_max_concurrency
echo 1000 > $K/core_slot_lease_ms
echo '/mnt/stall/core.%p' > $K/core_pattern
crasher -m {MB} -s 11 & a=$!
waitfor 60 "the first dump starts" kstat_is active 1
ta=$(now_ms)
stuck() {{ [ "$(stat -c %s /mnt/stall/core.$a 2>/dev/null)" = 65536 ]; }}
waitfor 60 "the first dump is stuck at 64 KiB" stuck
echo '/scratch/core.%p' > $K/core_pattern
overtake_then_kill $a {MB}
ls /mnt/stall > $RESULTS/ls.stall
kill $fpid
umount -l /mnt/stall || true
checkcores /scratch/core.$(cat $RESULTS/b) > $RESULTS/cores.json
""", timeout=300)
    check_overtaken_then_killed(res)
    # the stuck core's file is still there, and the mount still answers
    assert len(res.text("ls.stall").split()) == 1, res.text("ls.stall")


def test_huge_sparse_mapping_gives_its_slot_back_and_dies_at_once(run):
    """A crasher with a 64 TiB sparse mapping (one page of it touched)
    dumps for hours, walking holes that write nothing. With one slot and a
    1 s lease the next crash is admitted when that lease ends and is
    written whole; SIGKILL ends the walk at once (stock 6.12 walks on: a
    hole writes nothing, so it never looks at signals)."""
    res = run(f"""
echo 1 > $K/core_max_concurrency
echo 1000 > $K/core_slot_lease_ms
crasher -m 1 -S 65536 -s 11 & a=$!
waitfor 60 "the sparse dump starts" kstat_is active 1
ta=$(now_ms)
overtake_then_kill $a {MB}
checkcores /scratch/core.$(cat $RESULTS/b) > $RESULTS/cores.json
""", sysctls={"kernel.core_pattern": "/scratch/core.%p"}, timeout=300)
    check_overtaken_then_killed(res)


def test_waiting_dumps_are_not_load(run):
    """Dumps waiting for a slot wait for I/O that other dumps do: they are
    not counted in the load average. One slot, held by a dump stuck in a
    FUSE write (an interruptible wait, not load either), and 12 crashes
    waiting behind it for 25 s: the 1-minute load average stays low, where
    12 counted waiters would have added about 4 to it."""
    res = run(f"""
mkdir -p /mnt/stall
fusestall -r /tmp/fuse.ready /mnt/stall &
fpid=$!
waitfor 10 "the FUSE mount serves" test -e /tmp/fuse.ready
echo 1 > $K/core_max_concurrency
echo '/mnt/stall/core.%p' > $K/core_pattern
crasher -m 1 -s 11 & a=$!
waitfor 60 "the first dump starts" kstat_is active 1
pids=""
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do
    crasher -m 1 -s 11 & pids="$pids $!"
done
waitfor 60 "twelve wait" kstat_is waiting 12
cut -d' ' -f1 /proc/loadavg > $RESULTS/load.start
sleep 25
cut -d' ' -f1 /proc/loadavg > $RESULTS/load.end
kstats > $RESULTS/during
# the control: one busy loop for 20 s does raise the load average here
( end=$(( $(now_ms) + 20000 )); while [ $(now_ms) -lt $end ]; do :; done ) &
wait $!
cut -d' ' -f1 /proc/loadavg > $RESULTS/load.busy
# all in one command, the slot's holder last, so that every waiter has
# its SIGKILL before the slot is free: a waiter killed as the slot comes
# to it passes it on. (The holder first would let it end, and its slot go
# to a waiter not yet signalled, before the shell's next kill().)
kill -9 $pids $a
for p in $pids $a; do wait $p || true; done
wait_kstat waiting 0
wait_kstat active 0
kstats > $RESULTS/after
kill $fpid
umount -l /mnt/stall || true
""", timeout=300)
    d = stats(res.text("during"))
    assert d["active"] == 1 and d["waiting"] == 12, d
    start, end = float(res.text("load.start")), float(res.text("load.end"))
    assert end < start + 1.5 and end < 3.0, (start, end)
    # a runnable task counts (1 - e^(-20/60) = 0.28 of it after 20 s)
    assert float(res.text("load.busy")) >= end + 0.15, (end, res.text("load.busy"))
    s = stats(res.text("after"))
    assert s["skipped_killed"] == 12 and s["failed_killed"] == 1, s
    check_invariants(s)
