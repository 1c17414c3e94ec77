/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_DEVICES_H
#define COREDAM_DEVICES_H

#include <limits.h>
#include <stdbool.h>

#include "roots.h"

enum coredam_dev_kind {
	COREDAM_DEV_DISK,	/* a whole disk: limited as is */
	COREDAM_DEV_PARTITION,	/* a partition: its disk is limited */
	COREDAM_DEV_DM,		/* device-mapper: the dm device itself is limited */
	COREDAM_DEV_MD,		/* md RAID: the md device itself is limited */
};

/*
 * What io.max must name so that writes to a path are throttled.
 *
 * Stacked devices (dm, md): io.max is applied to the top device, the one
 * the filesystem sits on. blk-throttle charges bios where they enter the
 * block layer, i.e. at the top device, with the dumper's cgroup; the bios
 * dm and md clone to the members are no longer attributed to the dump
 * cgroup in a way that io.max of the members can rely on. Limiting the top
 * device also keeps the rule meaningful when members are added or removed.
 */
struct coredam_dev_info {
	char mountpoint[PATH_MAX];
	char fstype[64];
	char source[256];
	bool throttleable;		/* false: reason says why */
	char reason[256];
	bool cgroup_writeback;		/* fs throttles buffered writes per cgroup */
	enum coredam_dev_kind kind;
	unsigned int fs_major, fs_minor;	/* the filesystem's device */
	unsigned int major, minor;		/* the device io.max names */
	char name[64];				/* kernel name of that device */
	char dm_name[128];			/* device-mapper name, if any */
	char slaves[256];			/* members of a dm/md device */
};

const char *coredam_dev_kind_str(enum coredam_dev_kind k);

/* Resolve the block device under @path (lexically normalized, absolute). */
int coredam_dev_resolve_path(const struct coredam_roots *roots, const char *path,
			     struct coredam_dev_info *ret);

/* Resolve a MAJ:MIN to the device io.max must name, via /sys/dev/block. */
int coredam_dev_resolve_devnum(const struct coredam_roots *roots, unsigned int major,
			       unsigned int minor, struct coredam_dev_info *ret);

/* "8:16", "/dev/sdb", "sdb", "/dev/mapper/vg-lv" */
int coredam_dev_resolve_spec(const struct coredam_roots *roots, const char *spec,
			     struct coredam_dev_info *ret);

/* Does the filesystem type support cgroup writeback (buffered writes throttled)? */
bool coredam_fs_cgroup_writeback(const char *fstype);

#endif
