#!/bin/bash
# Build the patched kernel with features switched off, and compile every
# C file the series touches that this configuration builds again with W=1
# and -Werror, so that the series builds whatever the configuration.
#
#   scripts/compile-check.sh [OPTION[:OPTION...]...]     (default: the three below)
#
# Each argument is one configuration: tinyconfig, then
# kernel-patch/config/compile-check.config (what the series' code needs,
# none of the VM kernel's drivers, network or file systems), or with a
# "vm/" prefix the VM kernel's kernel-patch/config/vm.config, then the
# options the argument names (e.g. CONFIG_MEMCG:CONFIG_SYSCTL) turned off
# together; each must stay off after olddefconfig. The defaults are every
# configuration in which the series' code compiles differently from the
# patched VM kernel, each linked once, in this order:
#   CONFIG_MEMCG=n, CONFIG_SYSCTL=n   cgroups without the memory
#                             controller (the #else of the charge) and
#                             the core_cgroup handler without sysctl; both
#                             with cgroups on, the only case where either
#                             differs (CONFIG_PROC_SYSCTL goes with sysctl)
#   CONFIG_CGROUPS=n          the stubs without cgroups at all
#   CONFIG_COREDUMP=n         fs/coredump.c is not built; its callers'
#                             stubs are. On the VM kernel's base: all but
#                             about 60 of its objects preprocess to what
#                             the patched VM kernel compiled, so they come
#                             from the cache (on the small base about 600
#                             are compiled in a run without caches). Last,
#                             because `make test` starts this script
#                             beside the patched kernel's build.
# CONFIG_BLK_CGROUP=n builds nothing of the series that the last two do
# not: the series' only code under it is in __inode_attach_wb(), under
# CONFIG_CGROUP_WRITEBACK, off in both.
#
# The configurations are built one after the other in one clean tree
# (extracted and patched once per series), each a full build and link,
# through ccache like every kernel build (scripts/cache.sh): an object whose
# preprocessed source and flags are those of an earlier build comes from
# the cache. The small base keeps a cold run short where a configuration
# changes most objects anyway (about 900 objects, where the VM kernel
# has 1300).
# Exit status: 0 all clean, 1 a file failed or warned, 2 usage or missing
# source, 3 an option could not be turned off or the base lost one.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/cache.sh"
options=("$@")
[[ ${#options[@]} -gt 0 ]] ||
	options=(CONFIG_MEMCG:CONFIG_SYSCTL:CONFIG_PROC_SYSCTL CONFIG_CGROUPS vm/CONFIG_COREDUMP)
base=$top/kernel-patch/config/compile-check.config
vm_base=$top/kernel-patch/config/vm.config

hold_lock "$top/build/compile-check.lock" compile-check
# one clean patched tree per series; another series starts a new one
key=$(cat "$top/kernel-patch/series" "$top"/kernel-patch/*.patch | sha256sum | cut -c1-16)
tree=$top/build/compile-check/tree-$key
if [[ ! -f $tree/.complete ]]; then
	rm -rf "$top"/build/compile-check
	mkdir -p "$top/build/compile-check"
	"$top/scripts/build-kernel.sh" --source "$tree" patched || exit 2
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

# base_config CC [FRAGMENT]: tinyconfig and the base fragment (default
# the small one) in .config
base_config() {
	make -s ARCH=x86_64 CC="$1" tinyconfig >/dev/null
	KCONFIG_CONFIG=.config scripts/kconfig/merge_config.sh -m -O . .config "${2:-$base}" >/dev/null
	make -s ARCH=x86_64 CC="$1" olddefconfig >/dev/null
}

rc=0
cd "$tree"
# every option of the base survives on its own, or a configuration that
# turns one off would test less than it says
ccache_env "$top/build/compile-check/base.ccache"
base_config "${CCACHE_WRAP:-gcc}"
while read -r line; do
	[[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=y$ ]] || continue
	if ! grep -qx "$line" .config; then
		echo "compile-check: $line from $(basename "$base") did not survive olddefconfig" >&2
		exit 3
	fi
done < "$base"

for spec in "${options[@]}"; do
	from=$base
	if [[ $spec == vm/* ]]; then
		from=$vm_base
		spec=${spec#vm/}
	fi
	IFS=: read -r -a offs <<< "$spec"
	opt=${offs[0]}
	name=$(printf '%s=n, ' "${offs[@]}")
	name=${name%, }
	log=$top/build/compile-check/$opt.log
	ccache_env "$top/build/compile-check/$opt.ccache"
	cc=${CCACHE_WRAP:-gcc}
	base_config "$cc" "$from"
	for o in "${offs[@]}"; do
		scripts/config --file .config --disable "${o#CONFIG_}"
	done
	make -s ARCH=x86_64 CC="$cc" olddefconfig >/dev/null
	for o in "${offs[@]}"; do
		if grep -q "^$o=" .config; then
			echo "compile-check: $o could not be turned off (selected by another option: name that one too, as $spec:CONFIG_OTHER)" >&2
			exit 3
		fi
	done
	start=$(date +%s)
	clean=1
	# the whole kernel must build and link; then every touched file that
	# this configuration builds is compiled again with W=1 and -Werror
	if ! make ARCH=x86_64 -j"${KBUILD_JOBS:-$(nproc)}" CC="$cc" \
		vmlinux > "$log" 2>&1; then
		grep -E 'error|undefined reference' "$log" | tail -n 20 >&2
		echo "compile-check: $name: the kernel does not build (log: $log)" >&2
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
			echo "compile-check: $name: $f does not build with W=1 (log: $log)" >&2
			rc=1 clean=0
		fi
	done
	summary=$(ccache_summary "$top/build/compile-check/$opt.ccache")
	[[ $clean == 1 ]] && echo "compile-check: $name (on $(basename "$from")): kernel links in $(( $(date +%s) - start ))s${summary:+ ($summary)}; ${built[*]:-no touched file built} clean with W=1"
done
exit $rc
