# Jobs of the coredam-pipe tests (tests/test_pipe_helper.py):
# . /lib/coredam/pipe_helper.sh (after lib.sh and agent.sh)

# pipe_setup: the job's coredam.conf as the system's, and the directory the
# helper writes the cores to
pipe_setup() {
	mkdir -p /etc/coredam /scratch/cores
	chmod 755 /scratch/cores
	cp "$JOB/coredam.conf" /etc/coredam/coredam.conf
}

# cores_written N: do N metadata files exist, with no helper running?
cores_written() {
	[ "$(ls /scratch/cores | grep -c '\.json$')" -ge "$1" ] && ! pidof coredam-pipe >/dev/null
}

# wait_cores N: until cores_written N (at most 240 s)
wait_cores() {
	waitfor 240 "$1 cores written" cores_written "$1" ||
		{ ls -la /scratch/cores; return 1; }
}

# collect: the cores' directory, their metadata, the helper's counters and
# the agent's metrics, if it runs
collect() {
	local m
	ls -la /scratch/cores > "$RESULTS/ls.txt"
	for m in /scratch/cores/*.json; do [ -e "$m" ] && cat "$m" >> "$RESULTS/meta.json"; done
	cp /run/coredam/pipe/stats "$RESULTS/stats.txt" 2>/dev/null || true
	metrics_snapshot
}

# check_cores: corecheck every core the helper wrote, whole or cut, one JSON
# line each to $RESULTS/cores.json
check_cores() {
	local f
	for f in /scratch/cores/core.*; do
		case $f in *.json|*.incomplete) continue;; esac
		corecheck "$f" >> "$RESULTS/cores.json" || true
	done
}
