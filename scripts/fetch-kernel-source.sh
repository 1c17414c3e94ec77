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

# verified_deb: the newest cached .deb of the package whose checksum file
# matches it, or nothing
verified_deb() {
	local deb best=
	for deb in "$cache/${pkg}_"*_all.deb; do
		[[ -f $deb && -f $deb.sha256 ]] || continue
		[[ $(cut -d' ' -f1 "$deb.sha256") == "$(sha256sum "$deb" | cut -d' ' -f1)" ]] || {
			say "$(basename "$deb") does not match its checksum: ignored"
			continue
		}
		if [[ -z $best ]] || dpkg --compare-versions "$(deb_version "$deb")" gt "$(deb_version "$best")"; then
			best=$deb
		fi
	done
	echo "$best"
}
deb_version() { dpkg-deb -f "$1" Version; }

download() {
	local apt=$work/apt uri
	# the archive the machine's own release comes from
	# shellcheck disable=SC1091
	uri=$(apt_mirror "$(. /etc/os-release && echo "$VERSION_CODENAME")") || return 1
	rm -rf "$apt"
	mkdir -p "$apt/sources" "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/get"
	cat > "$apt/sources/$pkg.sources" <<-EOF
		Types: deb
		URIs: $uri
		Suites: $suite
		Components: main
		Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
	EOF
	local opts=(-o Dir::Etc::sourcelist=/dev/null -o Dir::Etc::sourceparts="$apt/sources"
		-o Dir::State::Lists="$apt/lists" -o Dir::Cache="$apt/cache"
		-o Dir::State::status=/dev/null -o APT::Sandbox::User=root)
	say "$pkg from $suite ($uri)"
	apt-get -qq --error-on=any "${opts[@]}" update >&2 || { say "apt-get update for $suite failed"; return 1; }
	local ver sha file
	ver=$(apt-cache "${opts[@]}" show --no-all-versions "$pkg" | awk '/^Version:/ { print $2; exit }')
	sha=$(apt-cache "${opts[@]}" show --no-all-versions "$pkg" | awk '/^SHA256:/ { print $2; exit }')
	[[ -n $ver && -n $sha ]] || { say "$pkg not in $suite"; return 1; }
	# apt-get download checks the file against the index's hash and
	# leaves nothing where it failed
	(cd "$apt/get" && apt-get -qq "${opts[@]}" download "$pkg=$ver" >&2) ||
		{ say "apt-get download $pkg=$ver failed"; return 1; }
	file=$(ls "$apt/get/${pkg}_"*_all.deb)
	[[ $(sha256sum "$file" | cut -d' ' -f1) == "$sha" ]] ||
		{ say "$(basename "$file") does not match the index's SHA256"; return 1; }
	echo "$sha  $(basename "$file")" > "$file.sha256"
	# the .deb before its checksum: a .deb without one is not trusted
	mv -f "$file" "$cache/"
	mv -f "$file.sha256" "$cache/"
	rm -rf "$apt"
	say "$(basename "$file") ($(( $(stat -c %s "$cache/$(basename "$file")") >> 20 )) MiB) cached in $cache"
}

deb=$(verified_deb)
if [[ -z $deb || ${KERNEL_SOURCE_REFRESH:-0} == 1 ]]; then
	download || exit 1
	deb=$(verified_deb)
	[[ -n $deb ]] || { say "no verified $pkg in $cache after the download"; exit 1; }
fi

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
