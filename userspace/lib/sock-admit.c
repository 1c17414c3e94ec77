// SPDX-License-Identifier: LGPL-2.1-or-later
/* Admission of the coredump socket's dumps (see sock-admit.h). */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "alloc-util.h"
#include "macro.h"

#include "sock-admit.h"

static bool slot_free(const struct coredam_pipe_budget *b, uint32_t writing)
{
	return b->concurrency == 0 || writing < b->concurrency;
}

enum coredam_sock_verdict coredam_sock_arrive(const struct coredam_pipe_budget *b, uint32_t writing,
					      uint32_t waiting)
{
	if (waiting == 0 && slot_free(b, writing))
		return COREDAM_SOCK_ADMIT;
	if (b->waiting && waiting >= b->waiting)
		return COREDAM_SOCK_REJECT_FULL;
	return COREDAM_SOCK_WAIT;
}

uint64_t coredam_sock_deadline(const struct coredam_pipe_budget *b, uint64_t oldest_usec)
{
	if (b->timeout_ms == 0)
		return UINT64_MAX;
	return oldest_usec + (uint64_t)b->timeout_ms * 1000;
}

void coredam_sock_granted(struct coredam_sock_grants *g, uint32_t uid)
{
	if (g->n == ELEMENTSOF(g->uid)) {
		memmove(g->uid, g->uid + 1, sizeof(g->uid) - sizeof(g->uid[0]));
		g->n--;
	}
	g->uid[g->n++] = uid;
}

size_t coredam_sock_admit(const struct coredam_pipe_budget *b, uint32_t writing, const uint64_t *arrived_usec,
			  const uint32_t *uid, size_t n, const struct coredam_sock_grants *g, uint64_t now_usec,
			  enum coredam_sock_verdict *ret)
{
	_cleanup_free_ struct coredam_pipe_entry *v = NULL;
	struct coredam_sock_grants recent = *g;
	size_t admitted = 0;

	v = calloc(n ? n : 1, sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		ret[i] = COREDAM_SOCK_WAIT;
		if (v)
			v[i] = (struct coredam_pipe_entry){ .ticket = i, .uid = uid[i], .state = 'Q' };
	}
	while (admitted < n && slot_free(b, writing)) {
		size_t pick = admitted;	/* without memory for the turns: arrival order */

		if (v) {
			/* the waiter with none ahead of it in turn: coredam-pipe's ranking */
			for (size_t i = 0; i < n; i++) {
				uint32_t w, ahead;

				if (v[i].state != 'Q')
					continue;
				coredam_pipe_rank(v, n, recent.uid, recent.n, v[i].ticket, &w, &ahead);
				if (ahead == w) {
					pick = i;
					break;
				}
			}
			v[pick].state = 'W';
		}
		ret[pick] = COREDAM_SOCK_ADMIT;
		coredam_sock_granted(&recent, uid[pick]);
		writing++;
		admitted++;
	}
	for (size_t i = 0; i < n; i++)
		if (ret[i] == COREDAM_SOCK_WAIT && now_usec >= coredam_sock_deadline(b, arrived_usec[i]))
			ret[i] = COREDAM_SOCK_REJECT_TIMEOUT;
	return admitted;
}
