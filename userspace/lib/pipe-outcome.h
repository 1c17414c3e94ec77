/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * coredam-pipe: what became of one crash, decided from what the helper
 * saw: the counters it adds to, the exit status (documented in
 * coredam-pipe(8)), and how a stored core is named and described. Pure:
 * the front end does the I/O and the logging.
 */
#ifndef COREDAM_PIPE_OUTCOME_H
#define COREDAM_PIPE_OUTCOME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pipe-queue.h"
#include "pipe-state.h"
#include "pipe-writer.h"

enum coredam_pipe_exit {
	COREDAM_PIPE_EXIT_STORED = 0,
	COREDAM_PIPE_EXIT_FAILED = 1,	/* admitted, the write failed (partial file removed), or the kernel's
					   stream ended before the core's headers said: kept as .incomplete */
	COREDAM_PIPE_EXIT_USAGE = 2,
	COREDAM_PIPE_EXIT_DROPPED = 3,	/* queue full or unusable, wait timeout, stopped while waiting, or not
					   confined */
	COREDAM_PIPE_EXIT_RLIMIT = 4,	/* RLIMIT_CORE of the crashed process disables dumping */
	COREDAM_PIPE_EXIT_DEST = 5,	/* the destination directory failed its checks */
	COREDAM_PIPE_EXIT_SPACE = 6,	/* the destination below its free-space floor on arrival */
	COREDAM_PIPE_EXIT_REPEAT = 7,	/* a repeat of a crash whose cores were kept ([Repeats]) */
};

/*
 * The counters (COREDAM_PIPE_*) one crash adds 1 to, the bytes it adds,
 * and the older cores removed after it was stored (retention.h).
 */
struct coredam_pipe_outcome {
	int what[4];
	size_t n;
	uint64_t bytes, disk;
	uint64_t removed;
};

/* Count @what once more for this crash (at most four counters; more are ignored). */
void coredam_pipe_outcome_add(struct coredam_pipe_outcome *o, int what);

/* The outcome as a delta for coredam_pipe_stats_add(). */
void coredam_pipe_outcome_delta(const struct coredam_pipe_outcome *o, struct coredam_pipe_stats *ret);

/* Does an RLIMIT_CORE of @rlimit bytes disable dumping? (Below a page: the kernel's own test.) */
bool coredam_pipe_rlimit_disables(uint64_t rlimit);

/* The counter of a dump that got no slot: queue full or pushed out, timed out, or stopped. */
int coredam_pipe_wait_skip(enum coredam_pipe_wait_result wr);

/*
 * A core the kernel stopped sending before its program headers' data was
 * all there: the crashed process was killed (SIGKILL, the OOM killer)
 * while it dumped. A pipe core has no holes, so a complete one is at least
 * as long as its headers say (@head, @res->head_len bytes of them). A core
 * the helper cut itself (@res->truncated: RLIMIT_CORE, a cap, the floor) is
 * not this. Without readable headers nothing is claimed. *@ret_expected is
 * the size the headers declare, when they could be read.
 */
bool coredam_pipe_cut_short(const void *head, const struct coredam_pipe_copy_result *res,
			    uint64_t *ret_expected);

/*
 * An admitted dump: @r the result of storing it (< 0: nothing kept), @res
 * what was read and stored, @expected the size its headers declare (0 if
 * unknown). Counts completed (and truncated when the helper cut it) for a
 * core that is whole as far as the kernel sent it, failed for one that
 * could not be stored or that the kernel cut short. Returns the exit
 * status.
 */
int coredam_pipe_outcome_stored(struct coredam_pipe_outcome *o, int r, const struct coredam_pipe_copy_result *res,
				uint64_t expected);

/*
 * Why the helper cut a stored core, for the log (" (cut at ...)"), or ""
 * when it is whole. @rlimit is the crashed process's RLIMIT_CORE: a copy
 * limited below it was cut at [Pipe] CoreSizeMax=.
 */
const char *coredam_pipe_cut_reason(const struct coredam_pipe_copy_result *res, uint64_t rlimit);

#endif
