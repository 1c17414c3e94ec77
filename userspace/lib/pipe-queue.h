/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * coredam-pipe: the arrival-order slot queue shared by every helper.
 *
 * The queue (documented in docs/pipe-helper.md) lives in <state>/pipe:
 *
 *   lock          flock()ed around every change and every count
 *   ticket        the next ticket number (decimal)
 *   q.<ticket>    one per helper alive, created and flock(LOCK_EX)ed under
 *                 "lock", holding "<state> <pid>"; state Q (waiting) or
 *                 W (writing). A file whose lock can be taken belongs to a
 *                 helper that died: whoever counts removes it.
 *   budget        written by coredamd: concurrency, waiting, timeout_ms.
 *   stats         the counters, "name value" lines, replaced atomically
 *                 under "lock".
 *
 * A helper may write when fewer than `concurrency` live tickets are older
 * than its own, so slots go in ticket (arrival) order whatever order the
 * writers finish in. The first `concurrency` waiters sleep in poll() on an
 * inotify watch of the directory (a ticket file deleted or closed after
 * writing, the budget replaced); waiters further back, or without inotify,
 * count again at a fixed interval. Whatever fails, no helper writes
 * without a slot.
 */
#ifndef COREDAM_PIPE_QUEUE_H
#define COREDAM_PIPE_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "pipe-state.h"

struct coredam_pipe_queue {
	char path[PATH_MAX];	/* <state>/pipe */
	int dirfd;
	int entry_fd;		/* our q.<ticket>, flock()ed */
	uint64_t ticket;
	uint32_t uid;		/* the source */
	char entry[32];
};

#define COREDAM_PIPE_QUEUE_INIT { .dirfd = -1, .entry_fd = -1 }

/* Open (create) <state>/pipe. */
int coredam_pipe_queue_open(const char *state_dir, struct coredam_pipe_queue *q);

/*
 * Fair shares. The source of a dump is the real uid of the crashed
 * process (%u). The sources of the last COREDAM_PIPE_RECENT grants are
 * kept (<state>/pipe/grants). A waiter's turn is how many of those its
 * source had, plus its source's waiters older than it; slots go by turn,
 * then by ticket. One user's storm then holds back another user's crash
 * by the dumps already writing, sources that wrote less lately go first,
 * and the dumps of one source keep their order: with one source this is
 * arrival order.
 */
#define COREDAM_PIPE_RECENT 16
#define COREDAM_PIPE_NO_UID UINT32_MAX	/* an entry without a uid (an older helper's) */

struct coredam_pipe_entry {
	uint64_t ticket;
	uint32_t uid;
	char state;		/* 'Q' waiting, 'W' writing, 'X' pushed out, leaving */
};

/*
 * Pure: of the live entries @v, with @recent the sources of the last
 * grants, how many write, and how many are ahead of @ticket: those writing
 * plus the waiters whose turn comes before it. A ticket not in @v (a
 * newcomer) has every waiter ahead.
 */
void coredam_pipe_rank(const struct coredam_pipe_entry *v, size_t n, const uint32_t *recent, size_t n_recent,
		       uint64_t ticket, uint32_t *ret_writing, uint32_t *ret_ahead);

/*
 * Pure: a dump of source @uid finds the queue full. The waiter to push out
 * instead of it: the newest waiter of the source that holds the most
 * waiting places, if that is more than @uid's source holds counting the
 * new dump; NULL when the new dump is the one not queued.
 */
const struct coredam_pipe_entry *coredam_pipe_pick_pushed_out(const struct coredam_pipe_entry *v, size_t n,
							      uint32_t uid);

/*
 * Draw a ticket, unless the queue is at its cap: the budget (as
 * coredam_pipe_wait() reads it) has a concurrency and a waiting cap and at
 * least concurrency + waiting tickets are live, and no other source holds
 * more waiting places than @uid's would (then its newest waiter is pushed
 * out and this dump queued). Returns 1 with a ticket and *ret_ahead the
 * live tickets ahead of it (coredam_pipe_rank()); 0 when full, with nothing
 * created and *ret_ahead the live tickets; < 0 on error, with no ticket.
 */
int coredam_pipe_enqueue(struct coredam_pipe_queue *q, pid_t pid, uid_t uid,
			 const struct coredam_pipe_budget *fallback, uint32_t *ret_ahead);

/* Live tickets: writing and waiting, from their state letters. */
int coredam_pipe_queue_count(const char *state_dir, uint32_t *ret_writing, uint32_t *ret_waiting);

enum coredam_pipe_wait_result {
	COREDAM_PIPE_ADMIT,
	COREDAM_PIPE_FULL,		/* from coredam_pipe_enqueue() returning 0 */
	COREDAM_PIPE_TIMEOUT,
	COREDAM_PIPE_INTERRUPTED,
	COREDAM_PIPE_PUSHED_OUT,	/* a dump of a source with fewer places took ours */
};

/*
 * Wait for a slot, in ticket order within each source and fairly across
 * sources (coredam_pipe_rank()); an admitted ticket is marked writing
 * under the queue's lock. The budget is read again on every
 * wake-up (from <state>/pipe/budget if present, else @fallback). @stop_fd
 * (-1 for none) readable ends the wait with COREDAM_PIPE_INTERRUPTED (a
 * signalfd in the helper). @ret_waited_usec is set in every outcome.
 * The first `concurrency` waiters sleep on an inotify watch; the others,
 * and any waiter inotify refuses, count again every COREDAM_PIPE_POLL_MSEC.
 * < 0 means the queue could not be read: the caller has no slot.
 */
#define COREDAM_PIPE_POLL_MSEC 200
int coredam_pipe_wait(struct coredam_pipe_queue *q, const struct coredam_pipe_budget *fallback, int stop_fd,
		      enum coredam_pipe_wait_result *ret, uint64_t *ret_waited_usec);

/*
 * inotify_init1(), a seam for tests: replaced by a function failing with
 * EMFILE it stands for root's inotify instances used up.
 */
extern int (*coredam_pipe_inotify_init1)(int flags);

/* Mark our ticket as writing. */
int coredam_pipe_mark_writing(struct coredam_pipe_queue *q);

/* Give the slot (or the place in the queue) back; safe to call twice. */
void coredam_pipe_release(struct coredam_pipe_queue *q);

#endif
