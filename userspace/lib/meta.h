/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The metadata coredam-pipe stores beside each core: "<core>.json", one
 * JSON object on one line. Strings from the crashed process are escaped,
 * never trusted.
 */
#ifndef COREDAM_META_H
#define COREDAM_META_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct coredam_core_meta {
	const char *core;		/* file name in the destination */
	pid_t pid;
	uid_t uid;
	gid_t gid;
	int signal;
	uint64_t time;			/* %t */
	const char *comm;		/* %e, as the kernel gave it */
	uint64_t size;			/* core bytes from the kernel (the original size) */
	uint64_t disk_size;		/* bytes of the stored file */
	const char *compression;	/* "none" or "zstd" */
	bool truncated;			/* cut at RLIMIT_CORE */
	uint64_t rlimit;		/* UINT64_MAX = unlimited */
	int dumpable;			/* < 0: unknown (no %d), written as null */
	uint64_t ticket;
	uint64_t waited_ms;
	uint64_t arrived_usec, admitted_usec, done_usec;	/* CLOCK_MONOTONIC */
	uint64_t write_ms;
	const char *cgroup;		/* the helper's cgroup while writing */
};

/*
 * @m as one line: a JSON object (keys in a fixed order, which tests and
 * the agent's renaming of cores rely on) and a newline. Strings go
 * through coredam_json_text(): whatever bytes they hold, the line is
 * valid JSON in printable ASCII, a byte that is not UTF-8 spelt \u00NN
 * (its Latin-1 reading). Its length; -ENOBUFS when it does not fit in
 * @size, -ENOMEM.
 */
int coredam_meta_format(const struct coredam_core_meta *m, char *buf, size_t size);

/*
 * Store @text as @name under @dirfd: a hidden temporary file created with
 * O_EXCL|O_NOFOLLOW, fsync()ed, renamed into place without replacing
 * anything (RENAME_NOREPLACE). Mode @mode.
 */
int coredam_meta_write_at(int dirfd, const char *name, const char *text, mode_t mode);

#endif
