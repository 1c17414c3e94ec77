// SPDX-License-Identifier: LGPL-2.1-or-later
#include "devices.h"
#include "test.h"
#include "macro.h"

/*
 * A fake /sys with: sda (8:0) + sda1 (8:1) + sda2 (8:2); dm-0 (253:0) on sda2
 * named vg-root; md0 (9:0) on sdb (8:16) and sdc (8:32); nvme0n1 (259:0)
 * with p1 (259:1); and a /proc/self/mountinfo mounting them.
 */
static void fake_tree(struct coredam_roots *r)
{
	mkfile("sys/devices/pci/block/sda/dev", "8:0\n");
	mkfile("sys/devices/pci/block/sda/sda1/dev", "8:1\n");
	mkfile("sys/devices/pci/block/sda/sda1/partition", "1\n");
	mkfile("sys/devices/pci/block/sda/sda2/dev", "8:2\n");
	mkfile("sys/devices/pci/block/sda/sda2/partition", "2\n");
	mkfile("sys/devices/virtual/block/dm-0/dev", "253:0\n");
	mkfile("sys/devices/virtual/block/dm-0/dm/name", "vg-root\n");
	mklink("sys/devices/virtual/block/dm-0/slaves/sda2", "../../../../pci/block/sda/sda2");
	mkfile("sys/devices/virtual/block/md0/dev", "9:0\n");
	mkdirs("sys/devices/virtual/block/md0/md");
	mklink("sys/devices/virtual/block/md0/slaves/sdb", "../../../../pci/block/sdb");
	mklink("sys/devices/virtual/block/md0/slaves/sdc", "../../../../pci/block/sdc");
	mkfile("sys/devices/pci/nvme/nvme0n1/dev", "259:0\n");
	mkfile("sys/devices/pci/nvme/nvme0n1/nvme0n1p1/dev", "259:1\n");
	mkfile("sys/devices/pci/nvme/nvme0n1/nvme0n1p1/partition", "1\n");
	mklink("sys/dev/block/8:0", "../../devices/pci/block/sda");
	mklink("sys/dev/block/8:1", "../../devices/pci/block/sda/sda1");
	mklink("sys/dev/block/8:2", "../../devices/pci/block/sda/sda2");
	mklink("sys/dev/block/253:0", "../../devices/virtual/block/dm-0");
	mklink("sys/dev/block/9:0", "../../devices/virtual/block/md0");
	mklink("sys/dev/block/259:0", "../../devices/pci/nvme/nvme0n1");
	mklink("sys/dev/block/259:1", "../../devices/pci/nvme/nvme0n1/nvme0n1p1");
	mklink("sys/class/block/sda", "../../devices/pci/block/sda");
	mklink("sys/class/block/sda1", "../../devices/pci/block/sda/sda1");
	mklink("sys/class/block/dm-0", "../../devices/virtual/block/dm-0");
	mklink("sys/class/block/nvme0n1p1", "../../devices/pci/nvme/nvme0n1/nvme0n1p1");
	mkfile("proc/self/mountinfo",
	       "22 1 253:0 / / rw,relatime shared:1 - ext4 /dev/mapper/vg-root rw\n"
	       "23 22 0:21 / /proc rw - proc proc rw\n"
	       "24 22 8:1 / /boot rw,relatime shared:2 - ext2 /dev/sda1 rw\n"
	       "25 22 0:30 / /run rw - tmpfs tmpfs rw\n"
	       "26 22 9:0 / /var/crash rw - xfs /dev/md0 rw\n"
	       "27 22 0:45 / /srv/nfs rw - nfs4 server:/export rw\n"
	       "28 22 0:50 / /data rw - btrfs /dev/nvme0n1p1 rw\n"
	       "29 22 259:1 / /my\\040cores rw - ext4 /dev/nvme0n1p1 rw\n"
	       "30 22 0:31 / /var/crash/tmp rw - tmpfs tmpfs rw\n");
	r->sys = strdup(tpath("sys"));
	r->proc = strdup(tpath("proc"));
}

static void free_roots(struct coredam_roots *r)
{
	free((char *)r->sys);
	free((char *)r->proc);
}

TEST(devices_partition_maps_to_disk)
{
	struct coredam_roots r = { 0 };
	struct coredam_dev_info d;

	fake_tree(&r);
	CHECK_OK(coredam_dev_resolve_path(&r, "/boot/cores", &d));
	CHECK(d.throttleable);
	CHECK_EQ_INT(d.kind, COREDAM_DEV_PARTITION);
	CHECK(d.major == 8 && d.minor == 0);
	CHECK(d.fs_major == 8 && d.fs_minor == 1);
	CHECK_STREQ(d.name, "sda");
	CHECK_STREQ(d.mountpoint, "/boot");
	CHECK(d.cgroup_writeback);
	free_roots(&r);
}

TEST(devices_dm_limits_top)
{
	struct coredam_roots r = { 0 };
	struct coredam_dev_info d;

	fake_tree(&r);
	CHECK_OK(coredam_dev_resolve_path(&r, "/var/lib/systemd/coredump", &d));
	CHECK(d.throttleable);
	CHECK_EQ_INT(d.kind, COREDAM_DEV_DM);
	CHECK(d.major == 253 && d.minor == 0);
	CHECK_STREQ(d.name, "dm-0");
	CHECK_STREQ(d.dm_name, "vg-root");
	CHECK_STREQ(d.slaves, "sda2");
	CHECK_STREQ(d.mountpoint, "/");
	free_roots(&r);
}

TEST(devices_md_limits_top)
{
	struct coredam_roots r = { 0 };
	struct coredam_dev_info d;

	fake_tree(&r);
	CHECK_OK(coredam_dev_resolve_path(&r, "/var/crash", &d));
	CHECK(d.throttleable);
	CHECK_EQ_INT(d.kind, COREDAM_DEV_MD);
	CHECK(d.major == 9 && d.minor == 0);
	CHECK(strstr(d.slaves, "sdb") && strstr(d.slaves, "sdc"));
	free_roots(&r);
}

TEST(devices_not_throttleable)
{
	struct coredam_roots r = { 0 };
	struct coredam_dev_info d;

	fake_tree(&r);
	CHECK_OK(coredam_dev_resolve_path(&r, "/run/cores", &d));
	CHECK(!d.throttleable);
	CHECK(strstr(d.reason, "tmpfs") != NULL);
	/* a tmpfs over a subdirectory of an md mount: the upper mount wins */
	CHECK_OK(coredam_dev_resolve_path(&r, "/var/crash/tmp/x", &d));
	CHECK(!d.throttleable);
	CHECK_OK(coredam_dev_resolve_path(&r, "/srv/nfs/cores", &d));
	CHECK(!d.throttleable);
	CHECK(strstr(d.reason, "network") != NULL);
	/* a prefix that is not a path component boundary does not match */
	CHECK_OK(coredam_dev_resolve_path(&r, "/var/crashes", &d));
	CHECK_STREQ(d.mountpoint, "/");
	CHECK_ERRNO(coredam_dev_resolve_path(&r, "relative", &d), -EINVAL);
	free_roots(&r);
}

TEST(devices_btrfs_anon_and_escaped)
{
	struct coredam_roots r = { 0 };
	struct coredam_dev_info d;

	fake_tree(&r);
	CHECK_OK(coredam_dev_resolve_path(&r, "/data/cores", &d));
	CHECK(d.throttleable);
	CHECK(d.major == 259 && d.minor == 0);
	CHECK_STREQ(d.name, "nvme0n1");
	CHECK_OK(coredam_dev_resolve_path(&r, "/my cores/../my cores/./x", &d));
	CHECK_STREQ(d.mountpoint, "/my cores");
	CHECK(d.major == 259 && d.minor == 0);
	free_roots(&r);
}

TEST(devices_spec)
{
	struct coredam_roots r = { 0 };
	struct coredam_dev_info d;

	fake_tree(&r);
	CHECK(coredam_dev_resolve_spec(&r, "8:2", &d) == 0 && d.major == 8 && d.minor == 0);
	CHECK(coredam_dev_resolve_spec(&r, "/dev/sda1", &d) == 0 && d.major == 8 && d.minor == 0);
	CHECK(coredam_dev_resolve_spec(&r, "/dev/mapper/vg-root", &d) == 0 && d.major == 253);
	CHECK(coredam_dev_resolve_spec(&r, "/dev/nope", &d) < 0);
	CHECK_ERRNO(coredam_dev_resolve_spec(&r, "7:7", &d), -ENOENT);
	free_roots(&r);
}
