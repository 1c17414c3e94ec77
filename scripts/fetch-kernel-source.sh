#!/bin/bash
# Fetch a kernel source package from a newer Debian release than the one
# installed, without installing anything from that release:
#
#   scripts/fetch-kernel-source.sh VERSION
#
# prints the path of the source tarball, build/kernel-source/DEBVERSION/
# linux-source-VERSION.tar.xz, and writes the package's Debian version to
# build/kernel-source/VERSION.version (the build's cache key). VERSION is
# one of those in SUITES below (7.3: linux-source-7.3 from trixie-backports).
#
# The package is fetched by `apt-get download` through a private apt
# configuration in build/kernel-source/apt/: one source list with the
# archive this machine's apt already uses (apt_mirror in cache.sh; no host
# is named here), the suite below and main, no dpkg status, lists and
# package cache of its own. apt checks the index's signature against the
# system's debian-archive-keyring, and the .deb's SHA256 against the
# index. The .deb is kept in the project's cache (coredam_cache_dir,
# kernel-source/) beside a .sha256 file holding the index's SHA256, so a
# fresh clone does not download it again: a cached .deb is used only when
# its checksum file exists and matches (a download is moved there only
# once verified, so a cut-short one is never taken for whole). A cached
# .deb is used without asking the archive for a newer one;
# KERNEL_SOURCE_REFRESH=1 asks. DEBIAN_MIRROR overrides the archive.
#
# Exit status: 0 done, 1 failure, 2 usage.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/cache.sh"

declare -A SUITES=([7.3]=trixie-backports)
version=${1:-}
suite=${SUITES[$version]:-}
[[ -n $suite ]] || { echo "usage: $0 VERSION (one of: ${!SUITES[*]})" >&2; exit 2; }
pkg=linux-source-$version

work=$top/build/kernel-source
cache=$(coredam_cache_dir)/kernel-source
mkdir -p "$work" "$cache"
hold_lock "$work/$version.lock" fetch-kernel-source

say() { echo "fetch-kernel-source: $*" >&2; }

deb=$(cached_deb fetch-kernel-source "$pkg" "$suite" "$work/apt" "$cache" \
	"${KERNEL_SOURCE_REFRESH:-0}") || exit 1
ver=$(deb_version "$deb")
dir=$work/$ver
tar=$dir/$pkg.tar.xz
if [[ ! -f $dir/.complete ]]; then
	rm -rf "$dir" "$dir.tmp"
	mkdir -p "$dir.tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$dir.tmp" "./usr/src/$pkg.tar.xz"
	mv "$dir.tmp/usr/src/$pkg.tar.xz" "$dir.tmp/"
	rm -rf "$dir.tmp/usr"
	touch "$dir.tmp/.complete"
	mv "$dir.tmp" "$dir"
	# older versions' tarballs
	for old in "$work"/*/"$pkg.tar.xz"; do
		[[ $old == "$tar" ]] || rm -rf "$(dirname "$old")"
	done
fi
echo "$ver" > "$work/$version.version"
echo "$tar"
