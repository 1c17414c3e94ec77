# A crash storm with latency probes, for the benchmark, the demo and the
# storm tests: . /lib/coredam/storm.sh (after lib.sh); tests/harness/storms.py
# writes the job that calls probed_storm.
#
# The job defines three functions: storm_prepare (the scenario's cgroups),
# storm_setup (the setup's: an agent, say) and storm_teardown; and sets
#   STORM_PROBES     the probes' modes (write, read, stream), space separated
#   STORM_INTERVAL   ms between a probe's samples
#   STORM_IDLE       s the probes measure before the crashers start
#   STORM_CRASHES, STORM_MB, STORM_PERIOD, STORM_THREADS, STORM_CGROUPS
#                    stormer's -n, -m, -p, -t, -c
#   STORM_FILL_FIRST 1: stormer's -f (every crasher filled before the first
#                    crash, then one released every STORM_PERIOD ms)
#   STORM_HOLD_MS    the probes measure until this long after the first
#                    crash, if that is later than the last core on disk
#
# The probes run in a cgroup of their own, as a foreground service would:
# the agent's adaptive mode watches the pressure of cgroups other than the
# dump cgroup. The crashers run in /crashers (or in cgroups below it that
# the scenario makes), whose memory.peak is what the storm's processes held
# while they waited and dumped.

# past_ms MS: is CLOCK_MONOTONIC past MS? (for waitfor)
past_ms() { [ "$(now_ms)" -ge "$1" ]; }

# start_probes: one probe per mode in STORM_PROBES; their pids to $probe_pids
start_probes() {
	local mode
	case " $STORM_PROBES " in *" read "*)
		# the read probe's file, written before any probe measures
		dd if=/dev/zero of=/scratch/probe/probe-read.dat bs=1M count=64 2>/dev/null; sync;;
	esac
	probe_pids=""
	for mode in $STORM_PROBES; do
		sh -c 'echo $$ > /sys/fs/cgroup/probe/cgroup.procs
		       exec probe -d /scratch/probe -o $RESULTS/probe.$0.txt -m $0 -i $1 -s /tmp/stop-probe' \
			"$mode" "$STORM_INTERVAL" &
		probe_pids="$probe_pids $!"
	done
}

# stop_probes: once the window of STORM_HOLD_MS from the first crash is over
stop_probes() {
	local start p
	start=$(awk '$1 == "start" { print $2 }' "$RESULTS/storm.txt")
	waitfor $((STORM_HOLD_MS / 1000 + 60)) "the probes' window" \
		past_ms $((start + STORM_HOLD_MS))
	touch /tmp/stop-probe
	for p in $probe_pids; do wait "$p"; done
}

# check_storm_cores: corecheck every core, one JSON line each
check_storm_cores() {
	local f
	for f in /scratch/cores/core.*; do
		case $f in *.part|*.json|*.meta) continue;; esac
		[ -e "$f" ] && corecheck "$f" >> "$RESULTS/cores.json" || true
	done
}

probed_storm() {
	mkdir -p /scratch/cores /scratch/probe /sys/fs/cgroup/probe /sys/fs/cgroup/crashers
	echo "+memory +io" > /sys/fs/cgroup/cgroup.subtree_control
	storm_prepare
	storm_setup
	start_probes
	sleep "$STORM_IDLE"
	stormer -n "$STORM_CRASHES" -m "$STORM_MB" -p "$STORM_PERIOD" -t "$STORM_THREADS" \
		-c "$STORM_CGROUPS" ${STORM_FILL_FIRST:+-f} -o "$RESULTS/storm.txt"
	cat /sys/fs/cgroup/crashers/memory.peak > "$RESULTS/crashers.peak"
	waitfor 1500 "the pipe helpers to end" no_helper
	waitfor 1500 "the coredump socket's writers to end" no_agent_child
	sync
	now_ms > "$RESULTS/synced"
	sleep 2
	stop_probes
	cat /sys/fs/cgroup/coredump.slice/memory.peak > "$RESULTS/dump.peak" 2>/dev/null || true
	storm_teardown
	check_storm_cores
	cat /proc/sys/kernel/core_dump_stats > "$RESULTS/stats" 2>/dev/null || true
	cp /run/coredam/pipe/stats "$RESULTS/pipe-stats" 2>/dev/null || true
}
