#!/bin/bash
# Install what the build and the tests need from Debian's archive.
# Idempotent: when everything is present it only asks dpkg and returns.
#
#   scripts/deps.sh          the build and the tests
#   scripts/deps.sh demo     and what the demo and benchmark plot with
set -euo pipefail

PACKAGES=(
	gcc make flex bison bc perl libelf-dev libssl-dev cpio xz-utils
	busybox-static qemu-system-x86 e2fsprogs python3 python3-pytest
	linux-source-6.12 libsystemd-dev libzstd-dev libjansson-dev pkg-config
	clang libclang-rt-14-dev debootstrap ccache
	# make deb: dpkg-buildpackage (and the build-essential it checks for),
	# debhelper for debian/rules, lintian; the rest of debian/control's
	# Build-Depends is above
	build-essential dpkg-dev debhelper fakeroot lintian
	# the Apache storm's cores read as a user would: gdb's backtrace
	gdb
)
for group in "$@"; do
	case "$group" in
	demo) PACKAGES+=(python3-matplotlib) ;;
	*) echo "deps: unknown group $group" >&2; exit 2 ;;
	esac
done

missing=()
for p in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null || true)
	[[ "$status" == ii* ]] || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

echo "deps: installing ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
	echo "deps: missing Debian packages: ${missing[*]}" >&2
	echo "deps: run as root, or: sudo apt-get install ${missing[*]}" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq || { echo "deps: apt-get update failed" >&2; exit 1; }
if ! apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
	echo "deps: apt-get install ${missing[*]} failed" >&2
	exit 1
fi
