#!/bin/bash
# The stages of `make test` after the unit tests and the stock and patched
# kernels, overlapped so that the machine's two cores are not idle while
# guests wait on their throttled disks:
#
#   lane 1  the VM tests on the stock and patched kernels       (output live)
#   lane 2  the debug kernel, then its VM tests, beside lane 1
#   lane 3  compile-check, at the lowest CPU priority
#   then    the tests marked quiet_machine (latency and time bounds, or
#           timing they depend on), on both kernels, alone on the machine
#
# Every lane runs to its end whatever the others do; the exit status is
# non-zero if any of them failed. Lanes 2 and 3 log to build/test-logs/,
# copied here when they end. Called by `make test`; run from the top.
set -uo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
logs=build/test-logs
rm -rf "$logs"
mkdir -p "$logs"
MAKE=${MAKE:-make}
m() { "$MAKE" --no-print-directory "$@"; }

# lane NAME CMD...: run CMD in the background, its output to the lane's log
lane() {
	local name=$1
	shift
	( "$@"; echo $? > "$logs/$name.rc" ) > "$logs/$name.log" 2>&1 &
}

lane compile-check nice -n 19 "$MAKE" --no-print-directory compile-check
lane debug sh -c "'$MAKE' --no-print-directory kernel-debug && '$MAKE' --no-print-directory lane-debug"

echo "test-pipeline: compile-check and the debug kernel's tests run beside these (logs in $logs/)"
m lane-vm
echo $? > "$logs/vm.rc"
wait

for name in debug compile-check; do
	echo
	echo "=== $name (lane log $logs/$name.log) ==="
	cat "$logs/$name.log"
done

echo
echo "=== alone on the machine: tests marked quiet_machine ==="
m lane-quiet-vm
echo $? > "$logs/quiet-vm.rc"
if [[ -f build/kernels/patched-debug/bzImage ]]; then
	m lane-quiet-debug
	echo $? > "$logs/quiet-debug.rc"
fi

rc=0
echo
echo "test-pipeline: results"
for name in vm debug compile-check quiet-vm quiet-debug; do
	r=$(cat "$logs/$name.rc" 2>/dev/null || echo "no status")
	case $r in
	0) r=passed ;;
	*) r="FAILED ($r)"; rc=1 ;;
	esac
	printf '  %-14s %s\n' "$name" "$r"
done
exit $rc
