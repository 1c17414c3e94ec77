#!/bin/bash
# Build the Debian package from debian/ and check it with lintian (make deb).
#
#   scripts/build-deb.sh [OUTDIR]          (default build/deb)
#
# dpkg-buildpackage -us -uc -b runs on a copy of the tree as it is,
# uncommitted changes included, in OUTDIR/coredam: the tree itself gets
# no debian/coredam, no objects and no clean that could reach its build/.
# The .deb, its -dbgsym, the .buildinfo and the .changes land in OUTDIR;
# lintian checks them all through the .changes, and an error or a warning
# fails the build (an override would go in debian/coredam.lintian-overrides
# with its reason; none is needed). Its report goes to OUTDIR/lintian.txt
# only when it passed (the Makefile's mark that the package is built);
# otherwise to OUTDIR/lintian-failed.txt. The build's log is
# OUTDIR/build.log.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build/deb}
mkdir -p "$out"
out=$(cd "$out" && pwd)
src=$out/coredam
rm -rf "$src" "$out"/coredam_* "$out"/coredam-dbgsym_* "$out"/lintian*.txt "$out/build.log"
mkdir -p "$src"
tar -C "$top" --exclude=./build --exclude=./.git --exclude=__pycache__ --exclude=.pytest_cache \
	-cf - . | tar -C "$src" -xf -

echo "deb: dpkg-buildpackage in $src"
if ! (cd "$src" && dpkg-buildpackage -us -uc -b -Jauto) > "$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	echo "deb: dpkg-buildpackage failed; the whole log is $out/build.log" >&2
	exit 1
fi
changes=$(ls "$out"/coredam_*.changes)
if ! lintian --fail-on error,warning "$changes" > "$out/lintian-failed.txt" 2>&1; then
	cat "$out/lintian-failed.txt" >&2
	echo "deb: lintian found errors or warnings (above, and in $out/lintian-failed.txt)" >&2
	exit 1
fi
mv "$out/lintian-failed.txt" "$out/lintian.txt"
rm -rf "$src"
for f in "$out"/coredam_*.deb; do
	echo "deb: ${f#"$top"/} ($(du -k "$f" | cut -f1) KiB), lintian: no error, no warning"
done
