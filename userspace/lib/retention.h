/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Retention of the cores kept in [Pipe] Directory= ([Space] MaxUse=,
 * KeepFree=, MaxAge=), as systemd-coredump vacuums its store: after each
 * core is stored, the oldest kept cores are removed until the kept cores
 * take at most MaxUse=, the file system has at least KeepFree= free, and
 * none crashed longer than MaxAge= ago.
 *
 * What is a kept core is corelist's listing (corelist.h): a metadata file
 * "<core>.json" that parses and names its own core. Only a core whose name
 * is the store's own ("core.*"), whose metadata and core (when there) are
 * regular files of the caller's user (root's in production) is counted and
 * may be removed; anything else in the directory (a file someone put
 * there, a core with no metadata, a writer's hidden temporary
 * ".core....tmp", a symbolic link) is neither counted nor touched. Oldest
 * first means the order coredam_cores_list() gives: the metadata's "time"
 * (the crash time, seconds since the epoch: the kernel's %t, or when the
 * coredump socket accepted the dump), then pid. A core's disk use is what
 * its file and its metadata's have allocated (st_blocks), as du(1) counts.
 */
#ifndef COREDAM_RETENTION_H
#define COREDAM_RETENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "corelist.h"

struct coredam_retention_limits {
	uint64_t max_use;	/* bytes the kept cores may take; UINT64_MAX: no cap */
	uint64_t keep_free;	/* bytes to keep free (f_bavail); 0: none */
	uint64_t older_than;	/* a core that crashed before this (seconds since the epoch) goes; 0: none */
};

/*
 * Pure: the limits @cfg sets for a file system of @total bytes, at
 * @now (seconds since the epoch: MaxAge= counts back from it).
 */
void coredam_retention_limits(const struct coredam_config *cfg, uint64_t total, uint64_t now,
			      struct coredam_retention_limits *ret);

struct coredam_retention_result {
	size_t removed;		/* cores removed (dry run: would be) */
	uint64_t removed_bytes;	/* their disk use, cores and metadata */
	size_t kept;		/* kept cores counted, left in place */
	uint64_t use_before, use_after;	/* the kept cores' disk use */
	uint64_t free_before, free_after;	/* free bytes; after: estimated, free_before + removed_bytes */
	bool within;		/* the limits hold afterwards (the just stored core alone can break them) */
};

/* Called for each core removed (or that would be), oldest first, with its disk use. */
typedef void (*coredam_retention_cb)(const struct coredam_kept_core *c, uint64_t bytes, void *userdata);

#define COREDAM_RETENTION_DRY_RUN (1U << 0)
/* Never remove the newest kept core either (coredamctl vacuum: the last crash's core stays). */
#define COREDAM_RETENTION_KEEP_NEWEST (1U << 1)

/*
 * Remove the oldest kept cores in @dirfd, core and metadata with
 * unlinkat() relative to @dirfd, until within @lim, @free_bytes being the
 * file system's free space now. @keep (NULL: none) is a core's name that
 * is never removed: the one just stored. A file already gone (another
 * vacuum) is no error. 0, or -errno when the directory cannot be listed,
 * or a removal failed (*@ret says what was removed before it).
 */
int coredam_retention_vacuum_limits(int dirfd, const struct coredam_retention_limits *lim, uint64_t free_bytes,
				    const char *keep, unsigned int flags, coredam_retention_cb cb, void *userdata,
				    struct coredam_retention_result *ret);

/*
 * The same with @cfg's limits and the free space of @dirfd's file system,
 * under an exclusive flock() of @dirfd, so that two writers (coredam-pipe,
 * coredamd's socket writers, coredamctl vacuum) do not list and remove at
 * once.
 */
int coredam_retention_vacuum(int dirfd, const struct coredam_config *cfg, const char *keep, unsigned int flags,
			     coredam_retention_cb cb, void *userdata, struct coredam_retention_result *ret);

/*
 * After a core was stored as @stored in @dirfd (the directory @dir, named
 * in the log): vacuum with @cfg's limits, @stored kept, and log it once,
 * event=retention, when a core was removed or a removal failed. The number
 * of cores removed, for the removed_retention counter (those removed
 * before a failure too).
 */
size_t coredam_retention_after_store(int dirfd, const char *dir, const struct coredam_config *cfg,
				     const char *stored);

#endif
