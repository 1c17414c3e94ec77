#!/bin/bash
# Build the patched kernel with a feature switched off, and compile every
# C file the series touches that this configuration builds again with W=1
# and -Werror, so that the series builds whatever the configuration.
#
#   scripts/compile-check.sh [OPTION[:ALSO...]...]     (default: the four below)
#
# Each OPTION (e.g. CONFIG_CGROUPS) is turned off, with the options after
# it that would select it again (CONFIG_SYSCTL:CONFIG_PROC_SYSCTL), on top of the patched VM
# kernel's config, in its own output directory of a clean patched tree. Exit status: 0 all clean, 1 a file failed or warned,
# 2 usage or missing tree, 3 the option could not be turned off.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
options=("$@")
[[ ${#options[@]} -gt 0 ]] ||
	options=(CONFIG_CGROUPS CONFIG_BLK_CGROUP CONFIG_SYSCTL:CONFIG_PROC_SYSCTL CONFIG_COREDUMP)

src=$(readlink -f "$top/build/kernels/patched-vm" || true)
[[ -n $src && -f $src/bzImage ]] || { echo "compile-check: no patched kernel; run 'make kernel-patched'" >&2; exit 2; }
tree=$top/build/compile-check/src-$(basename "$src")
# output directories point at their source tree: a new tree, new ones
[[ -d $tree ]] || rm -rf "$top"/build/compile-check
"$top/scripts/build-kernel.sh" --source "$tree" patched

# the C files the series touches (new or changed)
mapfile -t files < <(
	while read -r p; do
		p=${p%%#*}; p=${p//[[:space:]]/}
		[[ -n $p ]] && grep -h '^+++ b/.*\.c$' "$top/kernel-patch/$p" | sed 's|^+++ b/||'
	done < "$top/kernel-patch/series" | grep -v '^tools/' | sort -u)
if [[ ${#files[@]} -eq 0 ]]; then
	echo "compile-check: the series touches no kernel C file"
	exit 0
fi

rc=0
for spec in "${options[@]}"; do
	IFS=: read -r -a offs <<< "$spec"
	opt=${offs[0]}
	out=$top/build/compile-check/$opt
	mkdir -p "$out"
	cp "$src/.config" "$out/.config"
	for o in "${offs[@]}"; do
		"$tree/scripts/config" --file "$out/.config" --disable "${o#CONFIG_}"
	done
	make -s -C "$tree" O="$out" ARCH=x86_64 olddefconfig >/dev/null
	if grep -q "^$opt=" "$out/.config"; then
		echo "compile-check: $opt could not be turned off (selected by another option: name it as $opt:CONFIG_OTHER)" >&2
		exit 3
	fi
	log=$out/build.log
	# the whole kernel must build and link; then every touched file that
	# this configuration builds is compiled again with W=1 and -Werror
	if ! make -C "$tree" O="$out" ARCH=x86_64 -j"${KBUILD_JOBS:-$(nproc)}" \
		vmlinux > "$log" 2>&1; then
		grep -E 'error|undefined reference' "$log" | tail -n 20 >&2
		echo "compile-check: $opt=n: the kernel does not build (log: $log)" >&2
		rc=1
		continue
	fi
	built=()
	for f in "${files[@]}"; do
		o=${f%.c}.o
		[[ -f $out/$o ]] || continue
		built+=("$o")
		rm -f "$out/$o"
		if ! make -C "$tree" O="$out" ARCH=x86_64 W=1 KCFLAGS=-Werror "$o" \
			>> "$log" 2>&1; then
			grep -E 'error|warning' "$log" | tail -n 20 >&2
			echo "compile-check: $opt=n: $f does not build with W=1 (log: $log)" >&2
			rc=1
		fi
	done
	[[ $rc == 0 ]] && echo "compile-check: $opt=n: kernel links; ${built[*]:-no touched file built} clean with W=1"
done
exit $rc
