/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_SLICE_H
#define COREDAM_SLICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The dump cgroup as a systemd slice unit: its unit name, and its limits
 * as systemd's unit properties hold them (what `systemctl set-property
 * --runtime` sets). Pure: the daemon talks to systemd (coredamd/unit.c),
 * this decides what to say and keeps what was there before.
 */

/* The properties the agent sets, in the order a call sends them. */
enum coredam_slice_prop {
	COREDAM_SLICE_IO_WRITE_BPS,	/* IOWriteBandwidthMax, a(st) */
	COREDAM_SLICE_IO_READ_BPS,	/* IOReadBandwidthMax */
	COREDAM_SLICE_IO_WRITE_IOPS,	/* IOWriteIOPSMax */
	COREDAM_SLICE_IO_READ_IOPS,	/* IOReadIOPSMax */
	COREDAM_SLICE_N_IO,
	COREDAM_SLICE_MEMORY_HIGH = COREDAM_SLICE_N_IO,	/* MemoryHigh, t */
	COREDAM_SLICE_N_PROPS,
};

#define COREDAM_SLICE_IO_MASK ((1u << COREDAM_SLICE_N_IO) - 1)
/* systemd's CGROUP_LIMIT_MAX: no limit */
#define COREDAM_SLICE_NO_LIMIT UINT64_MAX
/* entries of one IO property kept; more are refused */
#define COREDAM_SLICE_MAX_IO 16
#define COREDAM_SLICE_MAX_DEVS 8

/* One entry of an IO property: a path systemd resolves to a block device, and its limit. */
struct coredam_slice_io {
	char path[256];
	uint64_t limit;
};

/* A slice's limits as systemd reports them: every IO property's entries in its order, and MemoryHigh. */
struct coredam_slice_limits {
	struct coredam_slice_io io[COREDAM_SLICE_N_IO][COREDAM_SLICE_MAX_IO];
	size_t n_io[COREDAM_SLICE_N_IO];
	uint64_t memory_high;		/* COREDAM_SLICE_NO_LIMIT: none */
};

/* What the agent wants of the slice: each IO limit on every device, and MemoryHigh. */
struct coredam_slice_want {
	unsigned int major[COREDAM_SLICE_MAX_DEVS], minor[COREDAM_SLICE_MAX_DEVS];
	size_t n_devs;
	uint64_t io[COREDAM_SLICE_N_IO];	/* 0: no limit */
	uint64_t memory_high;			/* 0: no limit */
};

/* A path systemd holds for some device, and the device the agent found under it. */
struct coredam_slice_known {
	const char *path;
	bool resolved;
	unsigned int major, minor;
};

/* "IOWriteBandwidthMax", ..., "MemoryHigh"; NULL out of range. */
const char *coredam_slice_prop_name(enum coredam_slice_prop p);

/*
 * The slice unit whose cgroup is @cgroup, as systemd names it: "/a.slice"
 * is "a.slice", "/a.slice/a-b.slice" is "a-b.slice" (a cgroup directory
 * systemd escaped with a leading "_" is taken without it). -EINVAL when
 * @cgroup cannot be a slice's: a component that is not NAME.slice, or one
 * not named after its parent.
 */
int coredam_slice_unit_name(const char *cgroup, char *buf, size_t size);

/* The properties (1 << enum coredam_slice_prop) in which @a and @b differ. */
unsigned int coredam_slice_want_diff(const struct coredam_slice_want *a, const struct coredam_slice_want *b);

/*
 * The path to name device MAJ:MIN by in an IO property: the first of
 * @known (@n of them, the slice's configured entries first) that resolves
 * to it, else "/dev/block/MAJ:MIN". systemd keeps one entry per path and
 * writes one io.max line per entry, all four limits in each, in its own
 * order: a second path for the same disk would write over the first.
 */
int coredam_slice_dev_path(const struct coredam_slice_known *known, size_t n, unsigned int major,
			   unsigned int minor, char *buf, size_t size);

/* "/dev/block/MAJ:MIN": its device; -EINVAL for any other path. */
int coredam_slice_parse_dev_block(const char *path, unsigned int *ret_major, unsigned int *ret_minor);

/*
 * @l as text, one "PROPERTY PATH LIMIT" line per IO entry and one
 * "MemoryHigh LIMIT" line, a limit in decimal or "max"; the parser takes
 * what the formatter wrote and refuses anything else (-EINVAL): a path
 * that is not absolute or holds a space or a control character, an
 * unknown property, too many entries. The formatter refuses such a path
 * as well.
 */
int coredam_slice_limits_format(const struct coredam_slice_limits *l, char *buf, size_t size);
int coredam_slice_limits_parse(const char *text, struct coredam_slice_limits *ret);

#endif
