#!/bin/bash
# Build a kernel tree's coredump kselftests (tools/testing/selftests/coredump)
# statically, for the test guest:
#
#   scripts/build-selftests.sh            the series' own, from the patched
#                                         6.12 tree, into build/guest/selftests/
#   scripts/build-selftests.sh stock-7.3  the 7.3 tree's own (stackdump_test,
#                                         coredump_socket_test,
#                                         coredump_socket_protocol_test),
#                                         against its own uapi headers, into
#                                         build/guest/selftests-7.3/
#   scripts/build-selftests.sh patched-7.3  the same tree with the series
#                                         rebased onto 7.3 (kernel-patch/7.3):
#                                         its own and the series' tests,
#                                         into build/guest/selftests-patched-7.3/
#
# Needs that kernel (make kernel-patched, make kernel-7.3,
# make kernel-patched-7.3); with a series
# that adds no selftests it builds none.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
flavor=${1:-patched}
case $flavor in
patched) suffix= ; target="kernel-patched" ;;
stock-7.3) suffix=-7.3 ; target="kernel-7.3" ;;
patched-7.3) suffix=-patched-7.3 ; target="kernel-patched-7.3" ;;
*) echo "usage: $0 [patched|stock-7.3|patched-7.3]" >&2; exit 2 ;;
esac
out=$top/build/guest/selftests$suffix
kernel=$(readlink "$top/build/kernels/$flavor-vm" || true)
[[ -n $kernel ]] || { echo "build-selftests: no $flavor kernel; run 'make $target'" >&2; exit 2; }

tree=$top/build/src/$flavor-$kernel
if [[ ! -d $tree ]]; then
	# the kernel came from the cache without its tree: make a clean one
	tree=$top/build/selftests$suffix/src-$kernel
	[[ -d $tree ]] || rm -rf "$top/build/selftests$suffix"
	"$top/scripts/build-kernel.sh" --source "$tree" "$flavor"
fi
rm -rf "$out"
if [[ ! -d $tree/tools/testing/selftests/coredump ]]; then
	echo "build-selftests: the series adds no coredump selftests"
	exit 0
fi
if [[ $flavor != patched ]]; then
	# the tests include the tree's uapi headers (linux/coredump.h, the
	# pidfd and socket options), which the build system (Debian 12's) lacks:
	# the tree's own, installed into its usr/include, where lib.mk looks
	make -s -C "$tree" ARCH=x86_64 headers
	# its helpers use offsetof() without <stddef.h>, which newer glibc
	# headers include on their own and Debian 12's (2.36) do not
	extra=(USERCFLAGS="-include stddef.h")
else
	extra=()
fi
mkdir -p "$out"
make -s -C "$tree/tools/testing/selftests/coredump" LDFLAGS=-static OUTPUT="$out" "${extra[@]}"
cp "$tree/tools/testing/selftests/coredump/settings" "$out/" 2>/dev/null || true
# what a test runs beside itself (TEST_FILES: stackdump_test's core_pattern helper)
files=$(printf 'include Makefile\nprint-test-files: ; @echo $(TEST_FILES)\n' |
	make -s -C "$tree/tools/testing/selftests/coredump" -f - print-test-files OUTPUT="$out")
for f in $files; do
	cp -p "$tree/tools/testing/selftests/coredump/$f" "$out/"
done
echo "build-selftests: $(cd "$out" && ls | tr '\n' ' ')"
