#!/bin/bash
# Put Prometheus's promtool in build/tools/promtool, for the tests that
# check coredamd's metrics with `promtool check metrics` (the exposition
# format and Prometheus's naming rules), and print its path.
#
#   scripts/fetch-promtool.sh
#
# promtool comes in Debian's prometheus package, which also brings the
# Prometheus server and its service: the package is downloaded (never
# installed) from the machine's own release by cached_deb (scripts/cache.sh,
# verified against the archive's index and kept in the project's cache,
# coredam_cache_dir, promtool/), and only usr/bin/promtool is taken out.
#
# Exit status: 0 done, 1 failure.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/cache.sh"

pkg=prometheus
work=$top/build/tools
cache=$(coredam_cache_dir)/promtool
mkdir -p "$work"
hold_lock "$work/promtool.lock" fetch-promtool

# shellcheck disable=SC1091
release=$(. /etc/os-release && echo "$VERSION_CODENAME")
deb=$(cached_deb fetch-promtool "$pkg" "$release" "$work/apt" "$cache") || exit 1
ver=$(deb_version "$deb")
if [[ ! -x $work/promtool || $(cat "$work/promtool.version" 2>/dev/null) != "$ver" ]]; then
	rm -rf "$work/promtool.tmp"
	mkdir -p "$work/promtool.tmp"
	dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$work/promtool.tmp" ./usr/bin/promtool
	"$work/promtool.tmp/usr/bin/promtool" --version > /dev/null 2>&1 ||
		{ echo "fetch-promtool: promtool from $(basename "$deb") does not run" >&2; exit 1; }
	mv -f "$work/promtool.tmp/usr/bin/promtool" "$work/promtool"
	rm -rf "$work/promtool.tmp"
	echo "$ver" > "$work/promtool.version"
fi
echo "$work/promtool"
