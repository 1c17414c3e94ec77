#!/bin/bash
# Build the Debian 12 guest that boots with systemd as PID 1, for the
# systemd integration tests: a minimal debootstrap root with systemd,
# systemd-coredump and cgroup-tools, the project installed into it with
# `make install DESTDIR=...`, the test programs, and a unit that runs the
# job the host hands in (tests/guest/runjob) and reboots. For the Apache
# storm (tests/test_apache.py), Debian's apache2 with mod_php 8.2 and its
# opcache, and wrk: installed, configured from tests/guest/apache/, and
# disabled, so that a boot that does not start Apache costs what it did.
#
#   scripts/mkrootfs.sh OUT.img [SUITE]
#
# SUITE sid builds the Debian unstable guest instead, for the tests of
# living next to systemd 262's coredump socket server (tests/test_sid.py):
# systemd and systemd-coredump only, no Apache. Nothing of sid is ever
# installed on this machine: debootstrap writes into the cache directory.
#
# The debootstrap tree is cached outside the clone, in
# $COREDAM_CACHE/rootfs/base-HASH (HASH of this script's package list and
# suite; scripts/cache.sh says where the cache is), so only the first run
# on a machine downloads, and a new package list makes a new tree; the
# project layer is installed afresh on a copy every time, and OUT.img is an
# ext4 image made from it with mkfs.ext4 -d (no loop mounts).
# The archive is the one this machine's apt uses for the suite;
# DEBIAN_MIRROR overrides it.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
. "$top/scripts/cache.sh"
out=${1:?usage: $0 OUT.img [SUITE]}
suite=${2:-bookworm}
case $suite in
bookworm|sid) ;;
*) echo "usage: $0 OUT.img [bookworm|sid]" >&2; exit 2 ;;
esac
packages=systemd,systemd-sysv,systemd-coredump
apache=
if [[ $suite == bookworm ]]; then
	apache=1
	packages+=,cgroup-tools,procps,e2fsprogs
	# a prefork Apache with mod_php (Debian's libapache2-mod-php8.2 switches
	# apache2 to the prefork MPM as it installs) and a load generator
	packages+=,apache2,libapache2-mod-php8.2,php8.2-opcache,wrk
else
	packages+=,procps,e2fsprogs
fi
# units that only slow a test boot down or wait for hardware the guest lacks
mask=(apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service
      fstrim.timer getty@tty1.service serial-getty@ttyS0.service systemd-timesyncd.service
      systemd-networkd.service systemd-networkd-wait-online.service)
if [[ -n $apache ]]; then
	mask+=(phpsessionclean.timer apache-htcacheclean.service)
fi

hash=$(printf '%s\n' "$suite" "$packages" | sha256sum | cut -c1-12)
base=$(coredam_cache_dir)/rootfs/base-$hash
mkdir -p "$top/build/rootfs"
if [[ ! -f $base/.complete ]]; then
	# the archive this machine's apt uses for its own release carries sid too
	mirror=$(apt_mirror "$(. /etc/os-release && echo "$VERSION_CODENAME")")
	echo "mkrootfs: debootstrap $suite ($packages) into $base"
	rm -rf "$base" "$base.tmp"
	mkdir -p "$(dirname "$base")"
	if ! debootstrap --variant=minbase --include="$packages" "$suite" "$base.tmp" "$mirror" \
		> "$top/build/rootfs/debootstrap.log" 2>&1; then
		echo "mkrootfs: debootstrap failed; see build/rootfs/debootstrap.log:" >&2
		tail -20 "$top/build/rootfs/debootstrap.log" >&2
		exit 1
	fi
	rm -rf "$base.tmp"/var/cache/apt/archives/*.deb "$base.tmp"/var/lib/apt/lists/*
	mv "$base.tmp" "$base"
	touch "$base/.complete"
fi

root=$(mktemp -d "$top/build/rootfs/root.XXXXXX")
trap 'rm -rf "$root" "$root.stage"' EXIT
cp -a "$base/." "$root/"
rm -f "$root/.complete"

# the project, as a package would install and enable it; what make install
# put there is listed in /lib/coredam/make-install.files (and its
# directories, deepest first, in make-install.dirs), so that
# tests/test_deb.py can take it away again before it installs the .deb
stage=$root.stage
rm -rf "$stage"
make --no-print-directory -C "$top" install DESTDIR="$stage" PREFIX=/usr > /dev/null
install -d "$root/lib/coredam"
(cd "$stage" && find . ! -type d | sort) > "$root/lib/coredam/make-install.files"
(cd "$stage" && find . -mindepth 1 -type d | sort -r) > "$root/lib/coredam/make-install.dirs"
cp -a "$stage/." "$root/"
rm -rf "$stage"
chroot "$root" systemctl enable --quiet coredump.slice coredam-sysctl.service coredamd.service
# systemd 262's coredump socket server, on as systemd's own preset has it
# (Debian's package enables nothing, and keeps the pipe helper's pattern)
if [[ $suite == sid ]]; then
	chroot "$root" systemctl preset --quiet systemd-coredumpd.service
fi

# the test programs and the job runner
install -d "$root/lib/coredam" "$root/usr/local/bin" "$root/job" "$root/results" "$root/scratch"
install -m 0644 "$top"/tests/guest/*.sh "$root/lib/coredam/"
install -m 0755 "$top/tests/guest/runjob" "$root/lib/coredam/runjob"
for p in "$top"/build/guest/*; do
	[[ -f $p && -x $p ]] && install -m 0755 "$p" "$root/usr/local/bin/"
done
cat > "$root/etc/systemd/system/coredam-job.service" <<'UNIT'
[Unit]
Description=Run the coredam test job and hand back its results
After=multi-user.target

[Service]
Type=oneshot
Environment=REBOOT=systemd
ExecStart=/lib/coredam/runjob
StandardOutput=journal+console

[Install]
WantedBy=multi-user.target
UNIT
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -sf ../coredam-job.service "$root/etc/systemd/system/multi-user.target.wants/coredam-job.service"
# Apache for the storm test: started by the job that wants it
if [[ -n $apache ]]; then
	chroot "$root" systemctl disable --quiet apache2.service
	install -m 0644 "$top/tests/guest/apache/coredam-test.conf" "$root/etc/apache2/conf-available/"
	chroot "$root" a2enconf -q coredam-test > /dev/null
	install -d "$root/etc/systemd/system/apache2.service.d"
	install -m 0644 "$top/tests/guest/apache/limits.conf" "$root/etc/systemd/system/apache2.service.d/"
	rm -f "$root/var/www/html/index.html"
	install -m 0644 "$top"/tests/guest/apache/www/* "$root/var/www/html/"
	install -m 0644 "$top/tests/guest/apache/wrk-report.lua" "$top/tests/guest/apache/crash-client.php" \
		"$top/tests/guest/apache/healthy-watch.php" \
		"$root/lib/coredam/"
fi
for u in "${mask[@]}"; do
	ln -sf /dev/null "$root/etc/systemd/system/$u"
done
echo coredam-guest > "$root/etc/hostname"
echo "/dev/vda / ext4 rw,noatime 0 1" > "$root/etc/fstab"
# the journal on tmpfs only: nothing to flush at the forced reboot
mkdir -p "$root/etc/systemd/journald.conf.d"
printf '[Journal]\nStorage=volatile\n' > "$root/etc/systemd/journald.conf.d/coredam-test.conf"

size_mb=$(( $(du -sm "$root" | cut -f1) + 256 ))
rm -f "$out.tmp"
mkfs.ext4 -q -F -L coredam-root -E lazy_itable_init=0,lazy_journal_init=0 \
	-d "$root" "$out.tmp" "${size_mb}M"
mv "$out.tmp" "$out"
