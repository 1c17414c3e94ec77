# Shell helpers for guest jobs: . /lib/coredam/lib.sh

# waitfor SECS WHAT CMD...: run CMD every 0.1 s until it succeeds; after
# SECS seconds say "timed out after SECS s: WHAT" and fail. Every wait of a
# job is bounded by one of these, so that a hang fails its own test within
# minutes, with the job's output, instead of running into the host's limit.
waitfor() {
	local secs=$1 what=$2 n=0
	shift 2
	until "$@"; do
		n=$((n + 1))
		if [ "$n" -ge $((secs * 10)) ]; then
			echo "timed out after ${secs}s: $what"
			return 1
		fi
		sleep 0.1
	done
}

# count_ready DIR N: are there N files ready.* in DIR?
count_ready() { [ "$(ls "$1" | grep -c '^ready\.')" -ge "$2" ]; }

# no_helper: is no pipe helper of the project running?
no_helper() { ! pidof pipewriter coredam-pipe >/dev/null; }

# agent_children: the pids of the agent's (/tmp/agent.pid) children, the
# writers of its coredump socket, one a line (none when no agent runs;
# the guest has no pgrep)
agent_children() {
	local agent s
	[ -e /tmp/agent.pid ] || return 0
	agent=$(cat /tmp/agent.pid)
	for s in /proc/[0-9]*/stat; do
		set -- $(cat "$s" 2>/dev/null) x x x x
		[ "$4" = "$agent" ] && echo "$1"
	done
	return 0
}

# no_agent_child: has the agent no child, no writer of its coredump
# socket's, left? (true when no agent runs)
no_agent_child() { [ -z "$(agent_children)" ]; }

# agent_running [ARGS]: does coredamd answer on its control socket?  Its
# loop answers only after it has written the kernel knobs; the socket file
# exists before that.  ARGS go to coredamctl (e.g. -c CONF).
agent_running() { coredamctl "$@" status --json 2>/dev/null | grep -q '"running": true'; }

# The kernel's dump counters: /proc/sys/kernel/core_dump_stats holds one
# "name value" line per counter. Read them by name: a later kernel may add
# names, and their order is not part of the interface.
KSTATS=/proc/sys/kernel/core_dump_stats

# kstats: every counter, as the kernel prints them
kstats() { cat $KSTATS; }

# kstat NAME: print the counter NAME; fail, printing nothing, if there is none
kstat() {
	awk -v name="$1" '$1 == name { print $2; found = 1; exit } END { exit !found }' $KSTATS
}

# kstat_is NAME VALUE, kstat_ge NAME VALUE: is the counter NAME VALUE, at
# least VALUE? (for waitfor)
kstat_is() { [ "$(kstat "$1")" = "$2" ]; }
kstat_ge() {
	local v
	v=$(kstat "$1") && [ "$v" -ge "$2" ]
}

# wait_kstat NAME VALUE, wait_kstat_ge NAME VALUE: until the counter NAME
# is VALUE, at least VALUE (at most 60 s); on a timeout the counters are
# printed.
wait_kstat() {
	waitfor 60 "$1 = $2" kstat_is "$1" "$2" || { cat $KSTATS; return 1; }
}
wait_kstat_ge() {
	waitfor 60 "$1 >= $2" kstat_ge "$1" "$2" || { cat $KSTATS; return 1; }
}

# wait_idle: until no dump writes or waits in the kernel's queue (at most
# 10 minutes); on a timeout the counters it stopped at are printed.
# dumps_idle reads both counters from one snapshot, so that a dump moving
# from waiting to active between two reads cannot pass for none.
dumps_idle() {
	awk '$1 == "active" || $1 == "waiting" { n++; busy += $2 }
	     END { exit !(n == 2 && busy == 0) }' $KSTATS
}
wait_idle() {
	waitfor 600 "no dump active or waiting" dumps_idle ||
		{ cat $KSTATS; return 1; }
}

# storm N MB [DIR]: start N crashers of MB MiB each, wait until all have
# filled their memory, let them crash at the same moment and wait for them.
# Their pids go to $RESULTS/storm.pids; to $RESULTS/storm.times go three
# times in ms: before the crashers start filling memory, when they crash,
# when the last has exited.
storm() {
	n=$1 mb=$2 dir=${3:-/tmp/storm.$$}
	mkdir -p "$dir"
	prep=$(now_ms)
	rm -f "$dir"/go "$dir"/ready.*
	pids=""
	i=0
	while [ "$i" -lt "$n" ]; do
		crasher -m "$mb" -w "$dir/go" -r "$dir/ready.$i" &
		pids="$pids $!"
		i=$((i + 1))
	done
	waitfor 300 "$n crashers filling $mb MiB" count_ready "$dir" "$n"
	echo "$pids" > "$RESULTS/storm.pids"
	start=$(now_ms)
	touch "$dir/go"
	for p in $pids; do
		wait "$p" || true
	done
	end=$(now_ms)
	waitfor 900 "the pipe helpers to end" no_helper
	sync
	echo "$prep $start $end $(now_ms)" > "$RESULTS/storm.times"
}

# majmin [DEV]: the MAJ:MIN of block device DEV (/dev/vdb or vdb), by
# default the scratch disk's
majmin() {
	local dev=${1:-$SCRATCH_DEV}
	cat "/sys/block/${dev#/dev/}/dev"
}

# now_ms: CLOCK_MONOTONIC in milliseconds, as probe's timestamps
now_ms() {
	read -r up _ < /proc/uptime
	echo "${up%.*}${up#*.}0"
}

# checkcores PATTERN...: run corecheck on each file, one JSON line each
checkcores() {
	for f in "$@"; do
		[ -e "$f" ] || continue
		corecheck "$f" || true
	done
}

# agent_ticks N: returns once the agent has ended N more ticks; each
# replaces its metrics file (a new file renamed over it: a new inode)
agent_ticks() {
	local n=$1 last
	while [ "$n" -gt 0 ]; do
		last=$(stat -c %i /run/coredam/metrics.prom)
		waitfor 60 "a tick of the agent" metrics_replaced "$last" || return 1
		n=$((n - 1))
	done
}
metrics_replaced() { [ "$(stat -c %i /run/coredam/metrics.prom 2>/dev/null)" != "$1" ]; }

# metrics_snapshot [NAME]: the agent's metrics file as a tick after now
# wrote it (the counters of all that ended before), to $RESULTS/NAME
# (metrics.prom); nothing when no agent writes one (the test that wants
# it then fails on its absence)
metrics_snapshot() {
	[ -e /run/coredam/metrics.prom ] || return 0
	agent_ticks 1 && cp /run/coredam/metrics.prom "$RESULTS/${1:-metrics.prom}" || true
}
