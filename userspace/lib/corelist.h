/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The cores kept in a destination directory, read back from the metadata
 * stored beside each ("<core>.json", meta.h), for coredamctl list, info
 * and dump. The metadata is root's, but its strings are the crashed
 * process's: escape them to show them. A metadata file whose "core" is not
 * its own name without ".json" is not read, so that none can point at
 * another file.
 */
#ifndef COREDAM_CORELIST_H
#define COREDAM_CORELIST_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct coredam_kept_core {
	char core[NAME_MAX + 1];	/* file name in the directory */
	char meta[NAME_MAX + 1];	/* its metadata's: "<core as stored>.json" */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int signal;
	uint64_t time;			/* seconds since the epoch */
	char comm[64];			/* %e, raw */
	uint64_t size, disk_size;
	bool zstd;
	bool truncated;			/* cut at a limit, or cut short (NAME.incomplete) */
	bool present;			/* the core file is there (a regular file) */
};

/*
 * Pure: one metadata line for the core named @name. 0, or -EBADMSG (not
 * the JSON object coredam_meta_format() writes, or another core's).
 */
int coredam_meta_parse(const char *text, const char *name, struct coredam_kept_core *ret);

/*
 * Every core whose metadata is in @dirfd, oldest first (time, then pid).
 * Damaged metadata files are skipped and counted in *@ret_damaged.
 * 0, or -errno (the directory unreadable, no memory).
 */
int coredam_cores_list(int dirfd, struct coredam_kept_core **ret, size_t *ret_n, size_t *ret_damaged);

/*
 * The core @id names among @v: a file name, or a pid (the newest core of
 * that pid). NULL when none does.
 */
const struct coredam_kept_core *coredam_cores_find(const struct coredam_kept_core *v, size_t n, const char *id);

/* "complete", "incomplete", "missing" (the file is gone); with ", zstd" when compressed is the caller's */
const char *coredam_kept_core_state(const struct coredam_kept_core *c);

#endif
