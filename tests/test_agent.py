"""VM tests of coredamd and coredamctl: the agent sets up the dump cgroup
and the kernel knobs from its config, keeps every core of a storm, takes
run-time changes, survives a broken reload and its own death, and says what
a stock kernel lacks."""

import json

from harness import parsers
from harness.parsers import io_rule, key_values as knobs
from harness.promtool import check_metrics
from harness.setups import TEST_CONF

MB = 8

CONF = TEST_CONF


def cores_ok(res, n):
    cores = [c for c in res.json_lines("cores.json")]
    assert len(cores) == n, res.output
    bad = [c for c in cores if not c["complete"]]
    assert not bad, bad


def test_setup_storm_and_clean_shutdown(agent_boot):
    res = agent_boot(f"""
knobs > $RESULTS/knobs.before
start_agent
majmin > $RESULTS/majmin
cat /sys/fs/cgroup/coredump.slice/io.max > $RESULTS/io.max
cat /sys/fs/cgroup/coredump.slice/memory.high > $RESULTS/memory.high
cat /sys/fs/cgroup/cgroup.subtree_control > $RESULTS/root.subtree
knobs > $RESULTS/knobs.agent
ctl status --json > $RESULTS/status.before.json
storm 8 {MB}
checkcores /scratch/cores/core.* > $RESULTS/cores.json
ctl status --json > $RESULTS/status.after.json
cat $K/core_dump_stats > $RESULTS/stats
ctl status > $RESULTS/status.txt
# exit codes as systemctl status's: 4 for a user the socket refuses, 3 once stopped
rc=0; su -s /bin/sh -c 'coredamctl --socket=/run/coredam/control.sock status' nobody \
    > $RESULTS/status.nobody 2>&1 || rc=$?
echo $rc > $RESULTS/status.nobody.rc
for cmd in 'set concurrency 3' reload; do
    rc=0; su -s /bin/sh -c "coredamctl --socket=/run/coredam/control.sock $cmd" nobody \
        >> $RESULTS/others.nobody 2>&1 || rc=$?
    echo $rc >> $RESULTS/others.nobody.rc
done
stop_agent
knobs > $RESULTS/knobs.after
rc=0; ctl status > $RESULTS/status.stopped 2>&1 || rc=$?
echo $rc > $RESULTS/status.stopped.rc
for cmd in 'set concurrency 3' reload; do
    rc=0; ctl $cmd >> $RESULTS/others.stopped 2>&1 || rc=$?
    echo $rc >> $RESULTS/others.stopped.rc
done
""")
    majmin = res.text("majmin").strip()
    rule = io_rule(res.text("io.max"), majmin)
    assert rule is not None, f"no io.max rule for the scratch disk {majmin}"
    assert rule["wbps"] == "10000000"
    assert int(res.text("memory.high")) == 128 << 20
    assert {"io", "memory"} <= set(res.text("root.subtree").split())
    k = knobs(res.text("knobs.agent"))
    assert k["core_cgroup"] == "/coredump.slice"
    assert k["core_max_concurrency"] == "2" and k["core_max_waiting"] == "32"

    before = json.loads(res.text("status.before.json"))
    assert before["kernel"]["supported"] and before["agent"]["running"]
    assert before["cgroup"] == "/coredump.slice"

    cores_ok(res, 8)
    stats = parsers.stats_dict(res.text("stats"))
    after = json.loads(res.text("status.after.json"))
    c = after["counters"]
    # what the agent reports is what the kernel counted, name by name
    assert {n: c[n] for n in parsers.STATS_NAMES} == {n: stats[n] for n in parsers.STATS_NAMES}, \
        (c, stats)
    assert c["completed"] == 8 and c["admitted"] == 8 and c["uncharged"] == 0
    assert c["bytes"] >= 8 * (MB << 20)
    assert "coredump.slice" in res.text("status.txt")
    assert res.text("status.nobody.rc").strip() == "4", res.text("status.nobody")
    assert "only root may ask it" in res.text("status.nobody"), res.text("status.nobody")
    assert res.text("status.stopped.rc").strip() == "3", res.text("status.stopped")
    assert "not running" in res.text("status.stopped"), res.text("status.stopped")
    # set and reload answer as status does: 4 refused, 3 not running
    assert res.text("others.nobody.rc").split() == ["4", "4"], res.text("others.nobody")
    assert "permission denied" in res.text("others.nobody").lower(), res.text("others.nobody")
    assert res.text("others.stopped.rc").split() == ["3", "3"], res.text("others.stopped")
    assert "not running" in res.text("others.stopped"), res.text("others.stopped")
    # one end record per dump, each with the bytes the dump had written
    ends = [dict(w.split("=", 1) for w in line.split() if "=" in w)
            for line in res.text("agent.log").splitlines() if "event=dump-end" in line]
    assert len(ends) == 8, res.text("agent.log")
    assert all(0 < int(e["bytes"]) <= (MB + 1) << 20 for e in ends), ends
    assert all(e["outcome"] in ("completed", "ended") for e in ends), ends

    # a clean shutdown puts back what was there before the agent
    assert res.text("agent.rc").strip() == "0"
    assert knobs(res.text("knobs.after")) == knobs(res.text("knobs.before"))


def test_set_changes_take_effect_mid_storm(agent_boot):
    res = agent_boot(f"""
start_agent
(storm 12 {MB} /tmp/s1) &
storm_pid=$!
sleep 2
ctl set bandwidth 25M
ctl set concurrency 3
cat /sys/fs/cgroup/coredump.slice/io.max > $RESULTS/io.max.mid
cat $K/core_max_concurrency > $RESULTS/conc.mid
kill -0 $storm_pid && echo running > $RESULTS/storm.running
wait $storm_pid
checkcores /scratch/cores/core.* > $RESULTS/cores.json
ctl set bandwidth 0x10 > $RESULTS/set.bad 2>&1 && echo accepted >> $RESULTS/set.bad || echo "rc=$?" >> $RESULTS/set.bad
# a bound of adaptive mode does nothing in fixed mode: refused, io.max kept
ctl set floor 20M > $RESULTS/set.mode 2>&1 && echo accepted >> $RESULTS/set.mode || echo "rc=$?" >> $RESULTS/set.mode
cat /sys/fs/cgroup/coredump.slice/io.max > $RESULTS/io.max.mode
stop_agent
""")
    assert res.path("storm.running").exists(), "storm finished before the change"
    rule = next(iter(io_rule(res.text("io.max.mid"), k) for k in
                     [res.text("io.max.mid").split()[0]]))
    assert rule["wbps"] == "25000000"
    assert res.text("conc.mid").strip() == "3"
    cores_ok(res, 12)
    bad = res.text("set.bad")
    assert "rc=2" in bad and "0x10" in bad
    mode = res.text("set.mode")
    assert "rc=1" in mode and "fixed mode" in mode, mode
    assert "wbps=25000000" in res.text("io.max.mode")


def test_reload_with_broken_config_keeps_the_old_one(agent_boot):
    res = agent_boot("""
start_agent
mkdir -p $JOB/coredam.conf.d
printf '[Limits]\\nWriteBandwidth=fast\\n' > $JOB/coredam.conf.d/50-broken.conf
kill -HUP $(cat /tmp/agent.pid)
sleep 2
kill -0 $(cat /tmp/agent.pid)
# coredamctl reload waits for the verdict: refused, and says where
rc=0; ctl reload > $RESULTS/reload.out 2>&1 || rc=$?
echo $rc > $RESULTS/reload.rc
cat /sys/fs/cgroup/coredump.slice/io.max > $RESULTS/io.max
ctl status --json > $RESULTS/status.json
stop_agent
""")
    log = res.text("agent.log")
    assert "50-broken.conf:2" in log, log
    assert res.text("reload.rc").strip() == "1", res.text("reload.out")
    assert "50-broken.conf:2" in res.text("reload.out"), res.text("reload.out")
    assert "wbps=10000000" in res.text("io.max")
    st = json.loads(res.text("status.json"))
    assert st["agent"]["reload_failures"] >= 1
    assert res.text("agent.rc").strip() == "0"


def test_agent_killed_and_restarted_mid_storm(agent_boot):
    res = agent_boot(f"""
knobs > $RESULTS/knobs.before
start_agent
(storm 10 {MB} /tmp/s1) &
storm_pid=$!
sleep 2
kill_agent
knobs > $RESULTS/knobs.dead
start_agent
end_agent_storm $storm_pid
""")
    # the kernel keeps the last settings while the agent is dead
    assert knobs(res.text("knobs.dead"))["core_cgroup"] == "/coredump.slice"
    cores_ok(res, 10)
    st = parsers.stats_dict(res.text("stats"))
    assert st["completed"] == 10 and st["failed"] == 0, st
    # the restarted agent adopted the saved originals and restored them
    assert knobs(res.text("knobs.after")) == knobs(res.text("knobs.before"))


def test_stock_kernel_is_explained(agent_boot):
    strict = CONF.replace("[Agent]\n", "[Agent]\nRequireKernelSupport=yes\n")
    res = agent_boot("""
rc=0; ctl doctor > $RESULTS/doctor.txt 2>&1 || rc=$?
echo $rc > $RESULTS/doctor.rc
rc=0; coredamctl -c $JOB/strict.conf doctor > $RESULTS/doctor-strict.txt 2>&1 || rc=$?
echo $rc > $RESULTS/doctor-strict.rc
rc=0; coredamd -c $JOB/strict.conf > $RESULTS/strict.log 2>&1 || rc=$?
echo $rc > $RESULTS/strict.rc
# a hybrid machine, as systemd's old default made them: a cgroup v1 hierarchy
# beside v2, the v1 tree on a tmpfs at the cgroup root
mkdir -p /tmp/cgf && mount -t tmpfs none /tmp/cgf && mkdir /tmp/cgf/unified /tmp/cgf/ct
mount -t cgroup2 none /tmp/cgf/unified
mount -t cgroup -o none,name=ct cgroup /tmp/cgf/ct
rc=0; ctl --cgroup-root=/tmp/cgf doctor > $RESULTS/doctor-hybrid.txt 2>&1 || rc=$?
echo $rc > $RESULTS/doctor-hybrid.rc
rc=0; coredamd -c $CONF --cgroup-root=/tmp/cgf --check > $RESULTS/check-hybrid.txt 2>&1 || rc=$?
echo $rc > $RESULTS/check-hybrid.rc
""", kernel="stock", files={"strict.conf": strict})
    # hybrid: a reboot is the advice, never a cgroup2 mount over the v1 tree,
    # and the self-check fails
    hybrid = res.text("doctor-hybrid.txt")
    assert res.text("doctor-hybrid.rc").strip() == "1", hybrid
    assert "hybrid cgroups" in hybrid and "systemd.unified_cgroup_hierarchy=1" in hybrid, hybrid
    assert "mount -t cgroup2" not in hybrid, hybrid
    assert res.text("check-hybrid.rc").strip() == "5", res.text("check-hybrid.txt")
    assert "hybrid cgroups" in res.text("check-hybrid.txt")
    # degraded operation is allowed by default: a warning that says why
    doctor = res.text("doctor.txt")
    assert res.text("doctor.rc").strip() == "0"
    assert "[WARN] kernel lacks the coredam patches (no /proc/sys/kernel/core_cgroup)" \
        in doctor, doctor
    # a config that requires the kernel support makes it a problem
    assert res.text("doctor-strict.rc").strip() == "1"
    assert "kernel lacks the coredam patches" in res.text("doctor-strict.txt")
    assert res.text("strict.rc").strip() == "4"
    assert "core_cgroup" in res.text("strict.log")


SPACE_CONF = CONF.replace("FreeSpaceFloor=100M", "FreeSpaceFloor=200M")


def test_space_guard_skips_below_the_floor_and_lets_go_above(agent_boot):
    """A 400 MB destination with a 200 MB floor: a first storm takes it
    below the floor; while below, a second storm is skipped (at most one
    dump gets through) and counted; every core on disk is whole; once space
    is freed the guard lets go and a third storm is kept."""
    res = agent_boot("""
dd if=/dev/zero of=/scratch/fill bs=1M count=140 2>/dev/null; sync
start_agent
storm 4 16 /tmp/s1
waitfor 10 "event=space-low" grep -q event=space-low $RESULTS/agent.log || exit 1
knobs > $RESULTS/knobs.low
cat $K/core_dump_stats > $RESULTS/stats.1
mkdir -p /scratch/cores/b && echo /scratch/cores/b/core.%p > $K/core_pattern
storm 4 16 /tmp/s2
cat $K/core_dump_stats > $RESULTS/stats.2
ctl status --json > $RESULTS/status.low.json
rm -f /scratch/fill; sync
waitfor 10 "event=space-ok" grep -q event=space-ok $RESULTS/agent.log || exit 1
mkdir -p /scratch/cores/c && echo /scratch/cores/c/core.%p > $K/core_pattern
storm 2 16 /tmp/s3
cat $K/core_dump_stats > $RESULTS/stats.3
checkcores /scratch/cores/core.* /scratch/cores/b/core.* /scratch/cores/c/core.* > $RESULTS/cores.json
ls -lR /scratch/cores > $RESULTS/ls.txt
stop_agent
""", conf=SPACE_CONF, disk_mb=400, timeout=900)
    log = res.text("agent.log")
    assert "event=space-low" in log and "event=space-ok" in log, log
    low = knobs(res.text("knobs.low"))
    assert low["core_max_concurrency"] == "1" and low["core_max_waiting"] == "1", low
    s1, s2, s3 = (parsers.stats_dict(res.text(f"stats.{n}")) for n in (1, 2, 3))

    def skipped(s):
        return s["skipped_full"] + s["skipped_timeout"] + s["skipped_killed"]

    # the second storm, below the floor: at most one dump through, the rest
    # skipped and counted
    through = s2["completed"] - s1["completed"]
    assert through <= 1 and skipped(s2) - skipped(s1) == 4 - through, (s1, s2)
    # the third, above it again: all kept
    assert s3["completed"] - s2["completed"] == 2 and skipped(s3) == skipped(s2), (s2, s3)
    # the counters add up, and no core on disk is partial
    parsers.check_invariants(s3)
    assert s3["started"] == s3["completed"] + s3["failed"] + skipped(s3), s3
    cores = res.json_lines("cores.json")
    assert all(c["valid"] and c["complete"] for c in cores), cores
    assert len(cores) == s3["completed"], (len(cores), s3, res.text("ls.txt"))
    st = json.loads(res.text("status.low.json"))
    assert st["agent"]["running"]


ADAPTIVE_CONF = CONF.replace("[Agent]\n", "[Agent]\nMode=adaptive\n") + """\
[Adaptive]
Floor=10M
Ceiling=30M
ConcurrencyFloor=1
ConcurrencyCeiling=1
"""


STORM_ADAPTIVE_CONF = ADAPTIVE_CONF.replace("ConcurrencyCeiling=1", "ConcurrencyCeiling=2")


def budget_events(log):
    """(write_bps, foreground_pressure) of every budget change in the log;
    a lifted limit (write_bps=max) is infinite."""
    out = []
    for line in log.splitlines():
        if "event=budget" in line:
            kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
            w = float("inf") if kv["write_bps"] == "max" else int(kv["write_bps"])
            out.append((w, float(kv["foreground_pressure"])))
    return out


def test_adaptive_budget_sees_past_the_dumpers_to_the_foreground(agent_boot):
    """Dumpers stay in their own cgroup (here /crashers, which
    PressureCgroups=auto watches), stalled by the dump cgroup's io.max most
    of the time. Those stalls are the dumps' own: with nothing else using
    the disk the budget does not back off for them, and lifts the limit
    (LiftWhenIdle=yes, the default). A foreground writer in another cgroup
    then brings the limit back at its first requests and makes the budget
    back off, while the dumps go on (CeilingWhenBusy= at the ceiling, so
    that the budget climbs and its stalls can be seen). With
    CeilingWhenBusy= back at its default, the floor, the writer's requests
    alone bring the dump cgroup's io.max down to the floor and keep it
    there."""
    res = agent_boot("""
mkdir -p /sys/fs/cgroup/crashers /sys/fs/cgroup/fg /scratch/fg
start_agent
stormer -n 16 -m 32 -c /sys/fs/cgroup/crashers -o $RESULTS/storm.txt > $RESULTS/stormer.out 2>&1 &
spid=$!
# the storm under way: four cores written, the rest writing or waiting
wait_kstat_ge completed 4 || kstats
cp $RESULTS/agent.log $RESULTS/agent.storm
# every thread of every dumping process: nice and policy (after "comm) ")
for s in /proc/[0-9]*/status; do
    grep -q '^CoreDumping:[[:space:]]*1' $s 2>/dev/null || continue
    for t in ${s%/status}/task/*; do sed 's/.*) //' $t/stat 2>/dev/null | awk '{print $17, $39}'; done
done > $RESULTS/dumpers.sched
kstats > $RESULTS/stats.fg-start
sh -c 'echo $$ > /sys/fs/cgroup/fg/cgroup.procs
       exec probe -d /scratch/fg -o $RESULTS/fg.txt -m write -i 2 -s /tmp/stop-fg' &
fpid=$!
n0=$(grep -c event=budget $RESULTS/agent.storm)
backed_off() { grep event=budget $RESULTS/agent.log | tail -n +$((n0 + 1)) |
    grep -q -E 'foreground_pressure=(0[.][1-9]|[1-9])'; }
waitfor 60 "a budget change for the foreground writer" backed_off
kstats > $RESULTS/stats.backed-off
cp $RESULTS/agent.log $RESULTS/agent.backed-off
touch /tmp/stop-fg; wait $fpid
# the default: a light writer (4 KiB every 50 ms) stalls too little to
# hold the budget down, so without the cap it would climb past the
# floor; with CeilingWhenBusy= at the floor its requests keep it there
ctl set ceiling-when-busy auto > $RESULTS/set.out 2>&1; echo $? > $RESULTS/set.rc
rm -f /tmp/stop-fg
sh -c 'echo $$ > /sys/fs/cgroup/fg/cgroup.procs
       exec probe -d /scratch/fg -o $RESULTS/fg-light.txt -m write -i 50 -s /tmp/stop-fg' &
fpid=$!
at_floor() { grep -q 'wbps=10000000 ' /sys/fs/cgroup/coredump.slice/io.max; }
waitfor 10 "io.max at the floor" at_floor
for i in $(seq 12); do cat /sys/fs/cgroup/coredump.slice/io.max; sleep 0.5; done > $RESULTS/io.max.busy
cp $RESULTS/agent.log $RESULTS/agent.busy
touch /tmp/stop-fg; wait $fpid
wait $spid
wait_idle
sync
checkcores /scratch/cores/core.* > $RESULTS/cores.json
stop_agent
""", conf=STORM_ADAPTIVE_CONF + "CeilingWhenBusy=30M\n", timeout=900)
    log = res.text("agent.log")
    storm_phase = budget_events(res.text("agent.storm"))
    after = budget_events(res.text("agent.backed-off"))[len(storm_phase):]
    # up to four cores written with only the dumpers using the disk: the
    # budget never stepped down, and lifted the limit (write_bps=max)
    assert storm_phase and storm_phase[-1][0] == float("inf"), log
    assert all(b2 >= b1 for (b1, _), (b2, _) in zip(storm_phase, storm_phase[1:])), storm_phase
    assert all(p < 0.1 for _, p in storm_phase), storm_phase
    # the foreground writer's first requests bring a limit back, at most
    # the 30 MB/s ceiling, and it stays limited while the writer runs
    assert after and all(b <= 30_000_000 for b, _ in after), (storm_phase, after)
    # its stalls are seen: a step down below the ceiling, while dumps
    # were still being written or waiting
    downs = [b for b, p in after if p >= 0.1]
    assert downs and min(downs) < 30_000_000, (storm_phase, after)
    # CeilingWhenBusy= at the floor: io.max stays there for 6 s while the
    # light writer runs
    assert res.text("set.rc").strip() == "0", res.text("set.out")
    busy_io = [io_rule(line, line.split()[0]) for line in res.text("io.max.busy").splitlines() if line.strip()]
    assert len(busy_io) == 12 and all(r and r.get("wbps") == "10000000" for r in busy_io), busy_io
    busy = res.text("agent.busy").splitlines()[len(res.text("agent.backed-off").splitlines()):]
    busy = [line for line in busy if "event=budget" in line]
    assert all(b <= 10_000_000 for b, _ in budget_events("\n".join(busy))), busy
    for f in ("stats.fg-start", "stats.backed-off"):
        v = parsers.stats_dict(res.text(f))
        assert v["active"] + v["waiting"] > 0, (f, v)
    assert "event=pressure-source cgroup=/crashers held=1" in log, log
    # the dumps are background work (DumpNice=19): SCHED_BATCH (3), nice 19
    sched = res.text("dumpers.sched").split("\n")
    sched = [line for line in sched if line]
    assert sched and all(line == "19 3" for line in sched), sched
    cores_ok(res, 16)


def test_set_reaches_the_adaptive_bounds(agent_boot):
    """In adaptive mode `set concurrency-floor/-ceiling` move the bounds
    and the kernel's limit follows at once; a floor above the ceiling is
    refused and changes nothing."""
    res = agent_boot("""
start_agent
cat $K/core_max_concurrency > $RESULTS/conc.start
rc=0; ctl set concurrency-floor 3 > $RESULTS/bad.txt 2>&1 || rc=$?
echo "rc=$rc" >> $RESULTS/bad.txt
cat $K/core_max_concurrency > $RESULTS/conc.bad
ctl set concurrency-ceiling 4
ctl set concurrency-floor 3
cat $K/core_max_concurrency > $RESULTS/conc.raised
# the fixed mode's bandwidth would do nothing here: refused, and not persisted
rc=0; ctl set --persist bandwidth 15M > $RESULTS/bw.txt 2>&1 || rc=$?
echo "rc=$rc" >> $RESULTS/bw.txt
ls $JOB/coredam.conf.d > $RESULTS/dropins.txt 2>&1 || true
ctl status --json > $RESULTS/status.json
stop_agent
""", conf=ADAPTIVE_CONF)
    bw = res.text("bw.txt")
    assert "rc=0" not in bw and "in adaptive mode" in bw, bw
    assert "50-coredamctl.conf" not in res.text("dropins.txt"), res.text("dropins.txt")
    assert res.text("conc.start").strip() == "1"
    bad = res.text("bad.txt")
    assert "rc=0" not in bad and "above" in bad, bad
    assert res.text("conc.bad").strip() == "1"
    assert res.text("conc.raised").strip() == "3"


MEMORY_CONF = CONF.replace("Concurrency=2", "Concurrency=1") + """\
[Limits]
WaitingMemoryMax=200M
"""


def test_waiting_memory_bounds_the_queue(agent_boot):
    """WaitingMemoryMax=200M with dumpers of 64 MiB: once the agent has seen
    one dumper, the kernel's waiting places are cut from QueueCap=32 to 3;
    a burst of 8 then has one writing, 3 waiting and 4 skipped as the queue
    being full, each counted; status and metrics say why."""
    res = agent_boot("""
start_agent
crasher -m 64 || true
wait_idle
knobs > $RESULTS/knobs.bound
cat $K/core_dump_stats > $RESULTS/stats.1
ctl status --json > $RESULTS/status.json
ctl status > $RESULTS/status.txt
cp /run/coredam/metrics.prom $RESULTS/metrics.prom
storm 8 64 /tmp/m
wait_idle
cat $K/core_dump_stats > $RESULTS/stats.2
checkcores /scratch/cores/core.* > $RESULTS/cores.json
stop_agent
""", conf=MEMORY_CONF, timeout=900)
    log = res.text("agent.log")
    assert "event=queue-memory waiting=3 " in log, log
    assert knobs(res.text("knobs.bound"))["core_max_waiting"] == "3"
    agent = json.loads(res.text("status.json"))["agent"]
    assert agent["waiting_memory"] == 200 << 20 and agent["queue_cap"] == 3, agent
    # a crasher's RssAnon: its 64 MiB and a little of the C library's
    assert 64 << 20 <= agent["dumper_memory"] < (200 << 20) // 3, agent
    assert "Waiters:      at most 200.0MiB of memory held by waiting dumpers" in res.text("status.txt"), \
        res.text("status.txt")
    metrics = res.text("metrics.prom")
    assert "\ncoredam_waiting_places 3\n" in metrics, metrics
    check_metrics(metrics)
    s1, s2 = (parsers.stats_dict(res.text(f"stats.{n}")) for n in (1, 2))
    assert s1["completed"] == 1, s1
    assert s2["completed"] - s1["completed"] == 4 and s2["skipped_full"] - s1["skipped_full"] == 4, (s1, s2)
    parsers.check_invariants(s2)
    cores_ok(res, 5)
