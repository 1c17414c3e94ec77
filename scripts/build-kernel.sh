#!/bin/bash
# Build a test kernel from Debian's linux-source-6.12, or a stock one from
# a newer linux-source package.
#
#   scripts/build-kernel.sh [--config-only] FLAVOR [CONFIG]
#   scripts/build-kernel.sh --source DIR FLAVOR
#
# FLAVOR  stock: the source as shipped; patched: with kernel-patch/series;
#         v1: with the series as it was at git revision V1_REV (default
#         3fdf619, the last landing of series v1), to measure it next to
#         the current one; its patches are taken from git into build/series/,
#         the configuration fragments are today's;
#         stock-7.3: Linux 7.3 as Debian ships it (linux-source-7.3 from
#         trixie-backports, fetched by scripts/fetch-kernel-source.sh, never
#         installed), for the coredump socket (core_pattern @@) and the
#         7.3 tree's own coredump selftests;
#         patched-7.3: Linux 7.3 with kernel-patch/7.3/series, the series
#         rebased onto the coredump socket
# CONFIG  vm (default): tinyconfig + kernel-patch/config/vm.config;
#         NAME: vm.config, then kernel-patch/config/NAME.config on top
#
# On 7.3, kernel-patch/config/7.3/NAME.config, where there is one, goes
# on top of each fragment NAME.config: what differs on that kernel.
#
# The result is build/kernels/FLAVOR-CONFIG/bzImage, a link to a directory
# named by a hash of the source version, the series and the fragments, so
# an unchanged kernel is not rebuilt (and a patched kernel with an empty
# series is the stock one). Extra fragments (for tests of this
# script) come from KFRAGMENT_EXTRA, a space-separated list of files.
# --config-only stops after the configuration check (for the stock flavor
# it extracts only what configuration reads); --source DIR only
# extracts and patches a clean tree into DIR (for out-of-tree builds), and
# does nothing when DIR/.complete says it did so already.
#
# Exit status: 0 built (or cached), 1 failure, 2 usage,
# 3 a fragment option did not survive olddefconfig, 4 a patch did not apply.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/cache.sh"
config_only=0
source_dir=
if [[ ${1:-} == --config-only ]]; then
	config_only=1
	shift
elif [[ ${1:-} == --source ]]; then
	source_dir=${2:?usage: $0 --source DIR FLAVOR}
	shift 2
fi
flavor=${1:-}
config=${2:-vm}
case "$flavor" in
stock|patched|v1) kver=6.12 ;;
stock-7.3|patched-7.3) kver=7.3 ;;
*) echo "usage: $0 [--config-only] stock|patched|v1|stock-7.3|patched-7.3 [CONFIG]" >&2; exit 2 ;;
esac

if [[ $kver == 6.12 ]]; then
	src_tar=${KERNEL_SRC_TAR:-/usr/src/linux-source-6.12.tar.xz}
	[[ -r $src_tar ]] || { echo "build-kernel: $src_tar not found (package linux-source-6.12)" >&2; exit 1; }
	src_id=$(dpkg-query -W -f='${Version}' linux-source-6.12 2>/dev/null || stat -c '%s %Y' "$src_tar")
else
	src_tar=$("$top/scripts/fetch-kernel-source.sh" "$kver") || exit 1
	src_id="linux-source-$kver $(cat "$top/build/kernel-source/$kver.version")"
fi

# add_fragment NAME: kernel-patch/config/NAME.config, and on top what
# differs on this kernel version (config/VERSION/NAME.config), if anything
frags=()
add_fragment() {
	local d=$top/kernel-patch/config
	frags+=("$d/$1.config")
	if [[ $kver != 6.12 && -f $d/$kver/$1.config ]]; then
		frags+=("$d/$kver/$1.config")
	fi
}
add_fragment vm
[[ $config != vm ]] && add_fragment "$config"
# shellcheck disable=SC2206
[[ -n ${KFRAGMENT_EXTRA:-} ]] && frags+=(${KFRAGMENT_EXTRA})
for f in "${frags[@]}"; do
	[[ -r $f ]] || { echo "build-kernel: fragment $f not found" >&2; exit 2; }
done

# series_at REV: print a directory holding kernel-patch/ as it was at git
# revision REV, extracted once into build/series/ (never into the clone's
# kernel-patch/, and never committed)
series_at() {
	local rev dir
	rev=$(git -C "$top" rev-parse --verify --quiet "$1^{commit}") ||
		{ echo "build-kernel: git revision $1 not found in $top" >&2; return 1; }
	dir=$top/build/series/$rev
	if [[ ! -f $dir/series ]]; then
		rm -rf "$dir.tmp.$$"
		mkdir -p "$dir.tmp.$$"
		git -C "$top" archive "$rev" kernel-patch | tar -x -C "$dir.tmp.$$" --strip-components=1
		# another build may have extracted the same revision meanwhile
		mv -T "$dir.tmp.$$" "$dir" 2>/dev/null || rm -rf "$dir.tmp.$$"
	fi
	echo "$dir"
}

patches=()
series_dir=
case $flavor in
patched) series_dir=$top/kernel-patch ;;
patched-7.3) series_dir=$top/kernel-patch/7.3 ;;
v1) series_dir=$(series_at "${V1_REV:-3fdf619}") || exit 1 ;;
esac
if [[ -n $series_dir ]]; then
	while read -r line; do
		line=${line%%#*}
		line=${line//[[:space:]]/}
		[[ -n $line ]] && patches+=("$series_dir/$line")
	done < "$series_dir/series"
fi

# what the kernel is made of, for the cache key
hash=$({
	echo "$src_id"
	for f in "${frags[@]}"; do echo "fragment"; cat "$f"; done
	for p in "${patches[@]}"; do echo "patch $(basename "$p")"; cat "$p"; done
} | sha256sum | cut -c1-16)

name=$flavor-$config
out=$top/build/kernels/$config-$hash
link=$top/build/kernels/$name
src=$top/build/src/$name-$hash
if [[ $config_only == 0 ]]; then
	hold_lock "${source_dir:-$top/build/kernels/$name}.lock" build-kernel
fi
if [[ $config_only == 1 ]]; then
	src=$top/build/src/config-check-$$
	trap 'rm -rf "$src" "$src.tmp"' EXIT
elif [[ -n $source_dir ]]; then
	src=$source_dir
	# DIR/.complete: extracted and patched before; callers name DIR by hash
	[[ -f $src/.complete ]] && exit 0
elif [[ -f $out/bzImage ]]; then
	ln -sfn "$(basename "$out")" "$link"
	echo "build-kernel: $name up to date ($hash)"
	exit 0
fi

echo "build-kernel: $name ($hash): extracting $(basename "$src_tar")"
rm -rf "$src" "$src.tmp"
mkdir -p "$src.tmp"
if [[ $config_only == 1 && ${#patches[@]} -eq 0 ]]; then
	# what tinyconfig, merge_config.sh and olddefconfig read: 30 MB of
	# the 1.5 GB tree (the same .config as from the whole tree)
	tar -xJf "$src_tar" -C "$src.tmp" --strip-components=1 --wildcards \
		'*Kconfig*' '*/Makefile' '*/scripts/*' '*/arch/x86/Makefile*' '*/configs/*'
else
	tar -xJf "$src_tar" -C "$src.tmp" --strip-components=1
fi
mv "$src.tmp" "$src"
cd "$src"

for p in "${patches[@]}"; do
	if ! patch -p1 --forward --batch -s < "$p"; then
		echo "build-kernel: patch $(basename "$p") does not apply to $src_id" >&2
		exit 4
	fi
done
[[ ${#patches[@]} -gt 0 ]] && echo "build-kernel: applied ${#patches[@]} patches"
if [[ -n $source_dir ]]; then
	touch .complete
	exit 0
fi

# the compiler as the build will call it, so that the build does not
# configure again
ccache_env "$src/ccache.log"
cc=${CCACHE_WRAP:-gcc}
make -s ARCH=x86_64 CC="$cc" tinyconfig >/dev/null
KCONFIG_CONFIG=.config scripts/kconfig/merge_config.sh -m -O . .config "${frags[@]}" >/dev/null
make -s ARCH=x86_64 CC="$cc" olddefconfig >/dev/null

# Every option a fragment asks for must be in the final .config (the
# last fragment to set an option wins, as in merge_config.sh).
declare -A want from
for f in "${frags[@]}"; do
	while read -r line; do
		if [[ $line =~ ^(CONFIG_[A-Za-z0-9_]+)=(.*)$ ]]; then
			want[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
		elif [[ $line =~ ^#\ (CONFIG_[A-Za-z0-9_]+)\ is\ not\ set$ ]]; then
			want[${BASH_REMATCH[1]}]=n
		else
			continue
		fi
		from[${BASH_REMATCH[1]}]=$(basename "$f")
	done < "$f"
done
bad=0
for opt in "${!want[@]}"; do
	got=$(grep -E "^$opt=|^# $opt is not set" .config || true)
	case "$got" in
	"$opt=${want[$opt]}") continue ;;
	"# $opt is not set"|"") [[ ${want[$opt]} == n ]] && continue ;;
	esac
	[[ -z $got ]] && got="absent (unknown option or unmet dependency)"
	echo "build-kernel: $opt=${want[$opt]} from ${from[$opt]} did not survive olddefconfig: $got" >&2
	bad=1
done
[[ $bad == 0 ]] || exit 3
echo "build-kernel: configuration checked (${#want[@]} options)"
[[ $config_only == 1 ]] && exit 0

jobs=${KBUILD_JOBS:-$(nproc)}
echo "build-kernel: building $name with -j$jobs${CCACHE_WRAP:+ through ccache ($CCACHE_DIR)}"
start=$(date +%s)
if ! make -s ARCH=x86_64 -j"$jobs" CC="$cc" bzImage > build.log 2>&1; then
	tail -n 40 build.log >&2
	echo "build-kernel: $name failed to build; log: $src/build.log" >&2
	exit 1
fi
mkdir -p "$out"
cp arch/x86/boot/bzImage .config "$out/"
ln -sfn "$(basename "$out")" "$link"
echo "build-kernel: $name built in $(( $(date +%s) - start ))s$(ccache_summary "$src/ccache.log" | sed 's/^/; /')"

# keep the newest tree of this name only; kernels are small, trees are not
for old in "$top"/build/src/"$name"-*; do
	[[ $old == "$src" ]] || rm -rf "$old"
done
