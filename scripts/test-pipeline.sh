#!/bin/bash
# The stages of `make test`, overlapped so that the machine's two cores
# are not idle while a kernel links, debootstrap waits on the archive or
# guests wait on their throttled disks:
#
#   lane 3  compile-check, from the start, at the lowest CPU priority (its
#           session's scheduling group at nice 19, not only its
#           processes): it takes what the others leave
#   first   the unit tests, the stock and patched kernels (and stock 7.3),
#           the initramfs, the Debian image and the Debian package
#           (make lane-prepare)
#                                                           (output live)
#   lane 1  the VM tests on the stock, patched and 7.3 kernels (output live)
#   lane 2  beside lane 1: Linux 7.3 with the series rebased onto it and
#           its tests (make lane-patched-7.3, status of its own), then the
#           debug kernel and its VM tests
#   then    the tests marked quiet_machine (latency and time bounds, or
#           timing they depend on), on both kernels, alone on the machine
#
# Every lane runs to its end whatever the others do, or until the run's
# deadline (COREDAM_DEADLINE, seconds since the epoch), when a lane still
# running is stopped and counted as failed; the exit status is non-zero if
# any lane failed. If the first stage fails there is nothing to test:
# compile-check is stopped and the run fails at once. Lanes 2 and 3 log to
# build/test-logs/ (or COREDAM_PIPELINE_LOGS), copied here when they end.
# Called by `make test` (after `make deps`); MAKE names the make to call.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
logs=${COREDAM_PIPELINE_LOGS:-build/test-logs}
rm -rf "$logs"
mkdir -p "$logs"
MAKE=${MAKE:-make}
deadline=${COREDAM_DEADLINE:-0}
m() { "$MAKE" --no-print-directory "$@"; }

# lane NAME CMD...: run CMD in the background in a session of its own (so
# that it can be stopped whole), its output to the lane's log, its exit
# status to NAME.rc when it ends. With LANE_NICE=N the lane runs at nice
# N: with the kernel's autogroup scheduling (sched_autogroup_enabled, on
# in Debian) every session is a scheduling group of its own, and the nice
# value of processes weighs only against their own group, so the group's
# nice (/proc/self/autogroup) is set too. Nice 19 inside the group alone
# left compile-check an equal share beside the debug kernel's build.
declare -A lane_pid
lane() {
	local name=$1
	shift
	setsid bash -c 'n=$1; shift
		if [[ $n != 0 ]]; then
			echo "$n" 2>/dev/null > /proc/self/autogroup
			renice -n "$n" -p $$ > /dev/null
		fi
		"$@"; echo $? > "$0"' "$logs/$name.rc" "${LANE_NICE:-0}" "$@" > "$logs/$name.log" 2>&1 &
	lane_pid[$name]=$!
}

# an interrupted run takes its lanes with it
stop_lanes() {
	local p
	for p in "${lane_pid[@]}"; do
		kill -TERM -- "-$p" 2>/dev/null
	done
}
trap stop_lanes EXIT
trap 'exit 130' INT TERM

# finish NAME: wait for the lane to end, or stop it at the deadline
finish() {
	local name=$1
	until [[ -f $logs/$name.rc ]]; do
		if (( deadline > 0 && $(date +%s) >= deadline )); then
			kill -KILL -- "-${lane_pid[$name]}" 2>/dev/null
			echo "stopped at the run's deadline" > "$logs/$name.rc"
			echo "test-pipeline: lane $name was still running at the run's deadline: stopped" >> "$logs/$name.log"
			break
		fi
		sleep 1
	done
}

LANE_NICE=19 lane compile-check "$MAKE" --no-print-directory compile-check
echo "test-pipeline: compile-check runs beside everything below, at the lowest priority (log in $logs/)"
if ! m lane-prepare; then
	echo "test-pipeline: the unit tests, the kernels or the guest images failed: nothing to test; compile-check stopped"
	exit 1
fi

lane debug sh -c "'$MAKE' --no-print-directory lane-patched-7.3 > '$logs/patched-7.3.log' 2>&1
	echo \$? > '$logs/patched-7.3.rc'
	'$MAKE' --no-print-directory kernel-debug && '$MAKE' --no-print-directory lane-debug"

echo "test-pipeline: 7.3 with the series, then the debug kernel, and their tests run beside these (logs in $logs/)"
m lane-vm
echo $? > "$logs/vm.rc"
finish debug
finish compile-check
wait
lane_pid=()	# ended: their ids may belong to others now

for name in patched-7.3 debug compile-check; do
	echo
	echo "=== $name (lane log $logs/$name.log) ==="
	cat "$logs/$name.log"
done

echo
echo "=== alone on the machine: tests marked quiet_machine ==="
m lane-quiet-vm
echo $? > "$logs/quiet-vm.rc"
if [[ $(cat "$logs/debug.rc") == 0 ]]; then
	m lane-quiet-debug
	echo $? > "$logs/quiet-debug.rc"
else
	echo "not run: the debug lane failed" > "$logs/quiet-debug.rc"
fi

rc=0
echo
echo "test-pipeline: results"
for name in vm patched-7.3 debug compile-check quiet-vm quiet-debug; do
	r=$(cat "$logs/$name.rc" 2>/dev/null || echo "no status")
	case $r in
	0) r=passed ;;
	*) r="FAILED ($r)"; rc=1 ;;
	esac
	printf '  %-14s %s\n' "$name" "$r"
done
exit $rc
