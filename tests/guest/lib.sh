# Shell helpers for guest jobs: . /lib/coredam/lib.sh

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
	while [ "$(ls "$dir" | grep -c '^ready\.')" -lt "$n" ]; do
		sleep 0.1
	done
	echo "$pids" > "$RESULTS/storm.pids"
	start=$(now_ms)
	touch "$dir/go"
	for p in $pids; do
		wait "$p" || true
	done
	end=$(now_ms)
	while pidof pipewriter coredam-pipe >/dev/null; do
		sleep 0.1
	done
	sync
	echo "$prep $start $end $(now_ms)" > "$RESULTS/storm.times"
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
