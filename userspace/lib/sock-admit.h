/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Admission of the dumps coredamd serves on the coredump socket: the
 * kernel waits for the ack with no timeout, so the server queues a dump by
 * holding its ack. Pure: the agent keeps the connections in arrival order
 * and asks here what becomes of them. The budget is the one coredam-pipe
 * reads (concurrency, waiting places, wait timeout; 0 = none of a limit).
 */
#ifndef COREDAM_SOCK_ADMIT_H
#define COREDAM_SOCK_ADMIT_H

#include <stddef.h>
#include <stdint.h>

#include "pipe-queue.h"
#include "pipe-state.h"

enum coredam_sock_verdict {
	COREDAM_SOCK_WAIT,		/* hold the ack */
	COREDAM_SOCK_ADMIT,		/* ack COREDUMP_KERNEL: stream it */
	COREDAM_SOCK_REJECT_FULL,	/* ack COREDUMP_REJECT: every waiting place taken */
	COREDAM_SOCK_REJECT_TIMEOUT,	/* ack COREDUMP_REJECT: no slot within the wait timeout */
};

/*
 * A dump arrives with @writing dumps streaming and @waiting held. Nobody
 * waits and a slot is free: admitted at once. Otherwise it waits at the
 * end of the queue, unless the waiting places (b->waiting) are all taken:
 * rejected, full. A slot that frees up goes to the oldest waiter, never to
 * a newcomer.
 */
enum coredam_sock_verdict coredam_sock_arrive(const struct coredam_pipe_budget *b, uint32_t writing,
					      uint32_t waiting);

/*
 * Fair shares, as coredam-pipe's queue has them (pipe-queue.h): the source
 * of a dump is the crashed process's real uid, and the sources of the last
 * COREDAM_PIPE_RECENT grants are kept here (coredam_sock_granted() on each
 * dump that gets a slot).
 */
struct coredam_sock_grants {
	uint32_t uid[COREDAM_PIPE_RECENT];
	size_t n;
};

void coredam_sock_granted(struct coredam_sock_grants *g, uint32_t uid);

/*
 * The waiters, oldest first, that arrived at @arrived_usec[0..n) from the
 * sources @uid[0..n), with @writing dumps streaming and @g the last grants,
 * at @now_usec: each one's verdict in @ret. A free slot goes to the waiter
 * whose turn comes first (its source's recent grants plus its source's
 * older waiters), the oldest of equal turns: with one source, arrival
 * order. A waiter that got none and has waited the timeout (b->timeout_ms)
 * or longer is rejected; the others wait. Lowering the concurrency aborts
 * no dump that streams. Returns how many were admitted; @g is not changed
 * (the caller records each grant as it makes it).
 */
size_t coredam_sock_admit(const struct coredam_pipe_budget *b, uint32_t writing, const uint64_t *arrived_usec,
			  const uint32_t *uid, size_t n, const struct coredam_sock_grants *g, uint64_t now_usec,
			  enum coredam_sock_verdict *ret);

/* When the oldest waiter (arrived at @oldest_usec) times out; UINT64_MAX with no timeout. */
uint64_t coredam_sock_deadline(const struct coredam_pipe_budget *b, uint64_t oldest_usec);

#endif
