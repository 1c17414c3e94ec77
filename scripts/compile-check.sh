#!/bin/bash
# Build the patched kernel with a feature switched off, and compile every
# C file the series touches that this configuration builds again with W=1
# and -Werror, so that the series builds whatever the configuration.
#
#   scripts/compile-check.sh [OPTION[:ALSO...]...]     (default: the four below)
#
# Each OPTION (e.g. CONFIG_CGROUPS) is turned off, with the options after
# it that would select it again (CONFIG_SYSCTL:CONFIG_PROC_SYSCTL), on top
# of the patched VM kernel's config. The configurations are built one after
# the other in one copy of the patched kernel's tree, each a full build and
# link, through ccache like every kernel build (scripts/cache.sh): an object
# whose preprocessed source is the same in this configuration as in the
# patched build or an earlier run comes from the cache (the tree is built in
# place, so its paths are those of the patched build). Kbuild alone would
# rebuild most of the kernel for each: the options appear in headers that
# nearly every file includes (CONFIG_COREDUMP alone: 885 of 1020 objects).
# Exit status: 0 all clean, 1 a file failed or warned, 2 usage or missing
# kernel, 3 the option could not be turned off.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/cache.sh"
options=("$@")
[[ ${#options[@]} -gt 0 ]] ||
	options=(CONFIG_COREDUMP CONFIG_BLK_CGROUP CONFIG_SYSCTL:CONFIG_PROC_SYSCTL CONFIG_CGROUPS)

src=$(readlink -f "$top/build/kernels/patched-vm" || true)
[[ -n $src && -f $src/bzImage ]] || { echo "compile-check: no patched kernel; run 'make kernel-patched'" >&2; exit 2; }
hold_lock "$top/build/compile-check.lock" compile-check
built_tree=$top/build/src/patched-$(basename "$src")
tree=$top/build/compile-check/tree-$(basename "$src")
if [[ ! -f $tree/.complete ]]; then
	rm -rf "$top"/build/compile-check
	mkdir -p "$top/build/compile-check"
	if [[ -f $built_tree/vmlinux ]]; then
		echo "compile-check: copying the patched kernel's built tree"
		cp -a "$built_tree" "$tree.tmp"
	else
		# the kernel came from the cache without its tree: a clean one,
		# built from scratch (through ccache)
		"$top/scripts/build-kernel.sh" --source "$tree.tmp" patched
		rm -f "$tree.tmp/.complete"
	fi
	mv "$tree.tmp" "$tree"
	touch "$tree/.complete"
fi

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
cd "$tree"
for spec in "${options[@]}"; do
	IFS=: read -r -a offs <<< "$spec"
	opt=${offs[0]}
	log=$top/build/compile-check/$opt.log
	cp "$src/.config" .config
	for o in "${offs[@]}"; do
		scripts/config --file .config --disable "${o#CONFIG_}"
	done
	ccache_env "$top/build/compile-check/$opt.ccache"
	cc=${CCACHE_WRAP:-gcc}
	make -s ARCH=x86_64 CC="$cc" olddefconfig >/dev/null
	if grep -q "^$opt=" .config; then
		echo "compile-check: $opt could not be turned off (selected by another option: name it as $opt:CONFIG_OTHER)" >&2
		exit 3
	fi
	start=$(date +%s)
	clean=1
	# the whole kernel must build and link; then every touched file that
	# this configuration builds is compiled again with W=1 and -Werror
	if ! make ARCH=x86_64 -j"${KBUILD_JOBS:-$(nproc)}" CC="$cc" \
		vmlinux > "$log" 2>&1; then
		grep -E 'error|undefined reference' "$log" | tail -n 20 >&2
		echo "compile-check: $opt=n: the kernel does not build (log: $log)" >&2
		rc=1
		continue
	fi
	# what this configuration links (thin archives list their members); an
	# object left from an earlier configuration of the tree is not in it
	linked=$(ar t vmlinux.a; [[ ! -f lib/lib.a ]] || ar t lib/lib.a)
	built=()
	for f in "${files[@]}"; do
		o=${f%.c}.o
		grep -qxF "$o" <<< "$linked" || continue
		built+=("$o")
		rm -f "$o"
		if ! make ARCH=x86_64 W=1 KCFLAGS=-Werror CC="$cc" "$o" \
			>> "$log" 2>&1; then
			grep -E 'error|warning' "$log" | tail -n 20 >&2
			echo "compile-check: $opt=n: $f does not build with W=1 (log: $log)" >&2
			rc=1 clean=0
		fi
	done
	summary=$(ccache_summary "$top/build/compile-check/$opt.ccache")
	[[ $clean == 1 ]] && echo "compile-check: $opt=n: kernel links in $(( $(date +%s) - start ))s${summary:+ ($summary)}; ${built[*]:-no touched file built} clean with W=1"
done
exit $rc
