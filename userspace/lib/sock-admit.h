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
 * The waiters, oldest first, that arrived at @arrived_usec[0..n) with
 * @writing dumps streaming, at @now_usec: each one's verdict in @ret.
 * Free slots go to the oldest; a waiter that got none and has waited the
 * timeout (b->timeout_ms) or longer is rejected; the others wait. Lowering
 * the concurrency aborts no dump that streams. Returns how many were
 * admitted.
 */
size_t coredam_sock_admit(const struct coredam_pipe_budget *b, uint32_t writing, const uint64_t *arrived_usec,
			  size_t n, uint64_t now_usec, enum coredam_sock_verdict *ret);

/* When the oldest waiter (arrived at @oldest_usec) times out; UINT64_MAX with no timeout. */
uint64_t coredam_sock_deadline(const struct coredam_pipe_budget *b, uint64_t oldest_usec);

#endif
