// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe: what became of one crash (see pipe-outcome.h). */
#include "elfcore.h"
#include "macro.h"
#include "pipe-outcome.h"

void coredam_pipe_outcome_add(struct coredam_pipe_outcome *o, int what)
{
	if (o->n < ELEMENTSOF(o->what))
		o->what[o->n++] = what;
}

void coredam_pipe_outcome_delta(const struct coredam_pipe_outcome *o, struct coredam_pipe_stats *ret)
{
	*ret = (struct coredam_pipe_stats){ 0 };
	for (size_t i = 0; i < o->n; i++)
		ret->v[o->what[i]]++;
	ret->v[COREDAM_PIPE_BYTES] = o->bytes;
	ret->v[COREDAM_PIPE_BYTES_DISK] = o->disk;
	ret->v[COREDAM_PIPE_REMOVED_RETENTION] = o->removed;
}

bool coredam_pipe_rlimit_disables(uint64_t rlimit)
{
	return rlimit < 4096;
}

int coredam_pipe_wait_skip(enum coredam_pipe_wait_result wr)
{
	switch (wr) {
	case COREDAM_PIPE_FULL:
	case COREDAM_PIPE_PUSHED_OUT:
		return COREDAM_PIPE_SKIPPED_FULL;
	case COREDAM_PIPE_TIMEOUT:
		return COREDAM_PIPE_SKIPPED_TIMEOUT;
	default:
		return COREDAM_PIPE_SKIPPED_KILLED;
	}
}

bool coredam_pipe_cut_short(const void *head, const struct coredam_pipe_copy_result *res,
			    uint64_t *ret_expected)
{
	uint64_t expected;

	if (!head || res->truncated || coredam_elf_core_size(head, res->head_len, &expected) < 0)
		return false;
	*ret_expected = expected;
	return res->in_bytes < expected;
}

int coredam_pipe_outcome_stored(struct coredam_pipe_outcome *o, int r, const struct coredam_pipe_copy_result *res,
				uint64_t expected)
{
	o->bytes = res->in_bytes;
	if (r < 0) {
		coredam_pipe_outcome_add(o, COREDAM_PIPE_FAILED);
		return COREDAM_PIPE_EXIT_FAILED;
	}
	o->disk = res->out_bytes;
	if (res->in_bytes < expected) {
		/* kept for what it holds, but no complete core: failed, never completed */
		coredam_pipe_outcome_add(o, COREDAM_PIPE_FAILED);
		return COREDAM_PIPE_EXIT_FAILED;
	}
	coredam_pipe_outcome_add(o, COREDAM_PIPE_COMPLETED);
	if (res->truncated)
		coredam_pipe_outcome_add(o, COREDAM_PIPE_TRUNCATED);
	return COREDAM_PIPE_EXIT_STORED;
}

const char *coredam_pipe_cut_reason(const struct coredam_pipe_copy_result *res, uint64_t rlimit)
{
	if (!res->truncated)
		return "";
	if (res->timed_out)
		return " (cut at [Pipe] CoreTimeMax=)";
	if (res->no_space)
		return " (cut at the free-space floor, [Space] FreeSpaceFloor=)";
	if (rlimit > res->in_bytes)
		return " (cut at [Pipe] CoreSizeMax=)";
	return " (cut at RLIMIT_CORE)";
}
