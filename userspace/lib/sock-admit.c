// SPDX-License-Identifier: LGPL-2.1-or-later
/* Admission of the coredump socket's dumps (see sock-admit.h). */
#include <stdbool.h>

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

size_t coredam_sock_admit(const struct coredam_pipe_budget *b, uint32_t writing, const uint64_t *arrived_usec,
			  size_t n, uint64_t now_usec, enum coredam_sock_verdict *ret)
{
	size_t admitted = 0;

	for (size_t i = 0; i < n; i++) {
		if (slot_free(b, writing)) {
			ret[i] = COREDAM_SOCK_ADMIT;
			writing++;
			admitted++;
		} else if (now_usec >= coredam_sock_deadline(b, arrived_usec[i])) {
			ret[i] = COREDAM_SOCK_REJECT_TIMEOUT;
		} else {
			ret[i] = COREDAM_SOCK_WAIT;
		}
	}
	return admitted;
}
