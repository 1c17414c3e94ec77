#!/bin/bash
# Build the test guest's initramfs: busybox, the test programs, the
# project's binaries (with the shared libraries they need), and tests/guest/init.
#
#   scripts/mkinitramfs.sh OUT.cpio.gz
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: $0 OUT.cpio.gz}
guest_bin=$top/build/guest
root=$(mktemp -d "$top/build/initramfs.XXXXXX")
trap 'rm -rf "$root"' EXIT

chmod 0755 "$root"
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib/coredam,proc,sys,dev,tmp,run,root,etc,scratch,job,results}
cp /bin/busybox "$root/bin/busybox"
for applet in $(/bin/busybox --list-full); do
	[[ -e $root/$applet ]] || ln -s /bin/busybox "$root/$applet"
done
echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
echo "nobody:x:65534:65534:nobody:/:/bin/false" >> "$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$root/etc/group"

install -m 0755 "$top/tests/guest/init" "$root/init"
install -m 0755 "$top/tests/guest/runjob" "$root/lib/coredam/runjob"
# the jobs' shell libraries: . /lib/coredam/lib.sh, agent.sh, ...
install -m 0644 "$top"/tests/guest/*.sh "$root/lib/coredam/"
for p in "$guest_bin"/*; do
	[[ -f $p && -x $p ]] && install -m 0755 "$p" "$root/bin/"
done

# the project's own programs, with the libraries they link
for p in coredamd coredamctl coredam-pipe; do
	bin=$top/build/userspace/$p
	[[ -x $bin ]] || continue
	install -m 0755 "$bin" "$root/usr/sbin/$p"
	for lib in $(ldd "$bin" 2>/dev/null | grep -o '/[^ ]*' || true); do
		mkdir -p "$root$(dirname "$lib")"
		cp -L "$lib" "$root$lib"
	done
done
# kselftests: the series' own in /selftests, the 7.3 tree's in /selftests-7.3
# (those of the tree with the series rebased onto 7.3 go with the job:
# they are built in a lane of their own, after this image)
for d in selftests selftests-7.3; do
	if [[ -d $guest_bin/$d ]]; then
		mkdir -p "$root/$d"
		cp -a "$guest_bin/$d/." "$root/$d/"
	fi
done

(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
