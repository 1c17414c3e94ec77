/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * coredam-pipe's state directory, <state>/pipe (docs/pipe-helper.md): the
 * counters every helper adds to, and the budget coredamd publishes.
 */
#ifndef COREDAM_PIPE_STATE_H
#define COREDAM_PIPE_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "sysctl.h"

enum {
	COREDAM_PIPE_STARTED,		/* helper invocations */
	COREDAM_PIPE_ADMITTED,		/* got a slot */
	COREDAM_PIPE_COMPLETED,		/* core complete and renamed into place */
	COREDAM_PIPE_FAILED,		/* admitted, then the core could not be created or written */
	COREDAM_PIPE_SKIPPED_FULL,	/* queue at its cap on arrival */
	COREDAM_PIPE_SKIPPED_TIMEOUT,	/* no slot within the wait timeout */
	COREDAM_PIPE_SKIPPED_KILLED,	/* the helper was told to stop while waiting */
	COREDAM_PIPE_SKIPPED_RLIMIT,	/* RLIMIT_CORE below a page: dumping disabled */
	COREDAM_PIPE_SKIPPED_ERROR,	/* no valid destination, state dir or queue unusable */
	COREDAM_PIPE_SKIPPED_SPACE,	/* the destination below [Space] FreeSpaceFloor= on arrival */
	COREDAM_PIPE_SKIPPED_REPEAT,	/* a repeat of a crash signature whose cores were kept ([Repeats]) */
	COREDAM_PIPE_UNCHARGED,		/* could not join the dump cgroup (still written) */
	COREDAM_PIPE_TRUNCATED,		/* completed, but cut at RLIMIT_CORE, a [Pipe] cap or the
					   free-space floor (stored as .incomplete) */
	COREDAM_PIPE_REMOVED_RETENTION,	/* kept cores removed, oldest first, for [Space] MaxUse=, KeepFree= */
	COREDAM_PIPE_BYTES,		/* core bytes read from the kernel */
	COREDAM_PIPE_BYTES_DISK,	/* bytes stored (compressed size when compressing) */
	COREDAM_PIPE_HELD,		/* a gauge: dumps coredamd's coredump socket holds before its
					   answer; a delta of it is signed, the sum never below 0 */
	COREDAM_PIPE_LOST_CONNECT,	/* crashes the kernel could not connect to coredamd's coredump
					   socket (its listen backlog full, or no one listening), as the
					   kernel log tells them (kmsg.h): lost without a core */
	COREDAM_PIPE_KMSG_SEQ,		/* not a counter: the kernel log record the socket's server reads
					   next; a delta's nonzero value replaces it */
	COREDAM_PIPE_STATS_N,
};

struct coredam_pipe_stats {
	uint64_t v[COREDAM_PIPE_STATS_N];
};

extern const char *const coredam_pipe_stat_names[COREDAM_PIPE_STATS_N];

/* "name value" lines; unknown names are ignored, missing ones are 0. */
int coredam_pipe_stats_parse(const char *text, struct coredam_pipe_stats *ret);
int coredam_pipe_stats_format(const struct coredam_pipe_stats *s, char *buf, size_t size);
/* -ENOENT when no helper ever ran. */
int coredam_pipe_stats_read(const char *state_dir, struct coredam_pipe_stats *ret);
/* Add @delta under the queue lock; the directory is created if missing. */
int coredam_pipe_stats_add(const char *state_dir, const struct coredam_pipe_stats *delta);

/*
 * The helpers' counters under the kernel's core_dump_stats names, with the
 * writing/waiting gauges counted from the live tickets, so that status and
 * metrics treat both paths alike. rlimit and error skips are not dumps the
 * kernel would have started and are left out of "started". A core cut at
 * RLIMIT_CORE is what the kernel counts failed_limit, not completed; any
 * other failure of the helper is a failed write (failed_write). Nothing
 * maps onto core_pipe_limit, leases or the other failure reasons: 0.
 */
int coredam_pipe_stats_as_kernel(const char *state_dir, struct coredam_stats *ret);

/* ---- the budget ---- */

/* What coredamd publishes; the helper falls back to the configuration. */
struct coredam_pipe_budget {
	uint32_t concurrency;	/* 0 = unlimited */
	uint32_t waiting;	/* 0 = no cap */
	uint32_t timeout_ms;	/* 0 = no timeout */
};

int coredam_pipe_budget_write(const char *state_dir, const struct coredam_pipe_budget *b);
int coredam_pipe_budget_read(const char *state_dir, struct coredam_pipe_budget *ret);
int coredam_pipe_budget_remove(const char *state_dir);

/* Within the library: the names in <state>/pipe. */
#define COREDAM_PIPE_DIR_NAME "pipe"
#define COREDAM_PIPE_LOCK_FILE "lock"
#define COREDAM_PIPE_TICKET_FILE "ticket"
#define COREDAM_PIPE_BUDGET_FILE "budget"
#define COREDAM_PIPE_GRANTS_FILE "grants"
#define COREDAM_PIPE_STATS_FILE "stats"

/*
 * Within the library: open <state>/pipe (created with @create), and take
 * its lock file with flock() @op; the budget as published, read from the
 * open directory.
 */
int coredam_pipe_dir_open(const char *state_dir, bool create, int *ret_fd);
int coredam_pipe_dir_lock(int dirfd, int op, int *ret_fd);
int coredam_pipe_budget_read_at(int dirfd, struct coredam_pipe_budget *ret);

#endif
