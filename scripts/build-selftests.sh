#!/bin/bash
# Build the series' kselftests (tools/testing/selftests/coredump) statically
# into build/guest/selftests/, for the test guest. Needs the patched kernel
# (make kernel-patched); with a series that adds no selftests it builds none.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=$top/build/guest/selftests
kernel=$(readlink "$top/build/kernels/patched-vm" || true)
[[ -n $kernel ]] || { echo "build-selftests: no patched kernel; run 'make kernel-patched'" >&2; exit 2; }

tree=$top/build/src/patched-$kernel
if [[ ! -d $tree ]]; then
	# the kernel came from the cache without its tree: make a clean one
	tree=$top/build/selftests/src-$kernel
	[[ -d $tree ]] || rm -rf "$top/build/selftests"
	"$top/scripts/build-kernel.sh" --source "$tree" patched
fi
rm -rf "$out"
if [[ ! -d $tree/tools/testing/selftests/coredump ]]; then
	echo "build-selftests: the series adds no coredump selftests"
	exit 0
fi
mkdir -p "$out"
make -s -C "$tree/tools/testing/selftests/coredump" LDFLAGS=-static OUTPUT="$out"
cp "$tree/tools/testing/selftests/coredump/settings" "$out/" 2>/dev/null || true
echo "build-selftests: $(cd "$out" && ls | tr '\n' ' ')"
