// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe's library: what became of a crash (counters, exit status, the log's words). */
#include <elf.h>
#include <stdint.h>

#include "macro.h"
#include "pipe-outcome.h"
#include "test.h"

/* How often each counter was added to. */
static uint64_t counted(const struct coredam_pipe_outcome *o, int what)
{
	struct coredam_pipe_stats d;

	coredam_pipe_outcome_delta(o, &d);
	return d.v[what];
}

TEST(pipe_outcome_stored)
{
	struct coredam_pipe_copy_result res = { .in_bytes = 8192, .out_bytes = 4096 };
	struct coredam_pipe_outcome o = { 0 };

	/* nothing kept: failed, the bytes read counted, none on disk */
	CHECK_EQ_INT(coredam_pipe_outcome_stored(&o, -ENOSPC, &res, 0), COREDAM_PIPE_EXIT_FAILED);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_FAILED), 1);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_COMPLETED), 0);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_BYTES), 8192);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_BYTES_DISK), 0);

	/* the kernel stopped before the headers' end: kept, but failed, never completed */
	o = (struct coredam_pipe_outcome){ 0 };
	CHECK_EQ_INT(coredam_pipe_outcome_stored(&o, 0, &res, 8193), COREDAM_PIPE_EXIT_FAILED);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_FAILED), 1);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_COMPLETED), 0);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_BYTES_DISK), 4096);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_REMOVED_RETENTION), 0);
	/* the older cores removed after it was stored */
	o.removed = 3;
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_REMOVED_RETENTION), 3);

	/* whole, as long as its headers say, or with no headers to tell */
	o = (struct coredam_pipe_outcome){ 0 };
	CHECK_EQ_INT(coredam_pipe_outcome_stored(&o, 0, &res, 8192), COREDAM_PIPE_EXIT_STORED);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_COMPLETED), 1);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_FAILED) + counted(&o, COREDAM_PIPE_TRUNCATED), 0);
	o = (struct coredam_pipe_outcome){ 0 };
	CHECK_EQ_INT(coredam_pipe_outcome_stored(&o, 0, &res, 0), COREDAM_PIPE_EXIT_STORED);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_COMPLETED), 1);

	/* cut by the helper (a cap, RLIMIT_CORE, the floor): completed and truncated */
	res.truncated = true;
	o = (struct coredam_pipe_outcome){ 0 };
	coredam_pipe_outcome_add(&o, COREDAM_PIPE_UNCHARGED);
	CHECK_EQ_INT(coredam_pipe_outcome_stored(&o, 0, &res, 0), COREDAM_PIPE_EXIT_STORED);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_COMPLETED), 1);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_TRUNCATED), 1);
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_UNCHARGED), 1);

	/* a fifth counter is dropped, never written past the array */
	for (int i = 0; i < 3; i++)
		coredam_pipe_outcome_add(&o, COREDAM_PIPE_STARTED);
	CHECK_EQ_INT(o.n, ELEMENTSOF(o.what));
	CHECK_EQ_INT(counted(&o, COREDAM_PIPE_STARTED), 1);
}

TEST(pipe_outcome_not_admitted)
{
	CHECK_EQ_INT(coredam_pipe_wait_skip(COREDAM_PIPE_FULL), COREDAM_PIPE_SKIPPED_FULL);
	CHECK_EQ_INT(coredam_pipe_wait_skip(COREDAM_PIPE_PUSHED_OUT), COREDAM_PIPE_SKIPPED_FULL);
	CHECK_EQ_INT(coredam_pipe_wait_skip(COREDAM_PIPE_TIMEOUT), COREDAM_PIPE_SKIPPED_TIMEOUT);
	CHECK_EQ_INT(coredam_pipe_wait_skip(COREDAM_PIPE_INTERRUPTED), COREDAM_PIPE_SKIPPED_KILLED);

	CHECK(coredam_pipe_rlimit_disables(0));
	CHECK(coredam_pipe_rlimit_disables(4095));
	CHECK(!coredam_pipe_rlimit_disables(4096));
	CHECK(!coredam_pipe_rlimit_disables(UINT64_MAX));
}

TEST(pipe_outcome_cut_reason)
{
	struct coredam_pipe_copy_result res = { .in_bytes = 1 << 20 };

	CHECK_STREQ(coredam_pipe_cut_reason(&res, UINT64_MAX), "");
	res.truncated = true;
	CHECK_STREQ(coredam_pipe_cut_reason(&res, UINT64_MAX), " (cut at [Pipe] CoreSizeMax=)");
	CHECK_STREQ(coredam_pipe_cut_reason(&res, 1 << 20), " (cut at RLIMIT_CORE)");
	res.no_space = true;
	CHECK_STREQ(coredam_pipe_cut_reason(&res, 1 << 20), " (cut at the free-space floor, [Space] FreeSpaceFloor=)");
	res.timed_out = true;
	CHECK_STREQ(coredam_pipe_cut_reason(&res, 1 << 20), " (cut at [Pipe] CoreTimeMax=)");
}

TEST(pipe_outcome_cut_short)
{
	struct {
		Elf64_Ehdr eh;
		Elf64_Phdr ph[2];
	} head = { 0 };
	struct coredam_pipe_copy_result res = { .head_len = sizeof(head) };
	uint64_t expected = 0;

	memcpy(head.eh.e_ident, ELFMAG, SELFMAG);
	head.eh.e_ident[EI_CLASS] = ELFCLASS64;
	head.eh.e_ident[EI_DATA] = ELFDATA2LSB;
	head.eh.e_ident[EI_VERSION] = EV_CURRENT;
	head.eh.e_type = ET_CORE;
	head.eh.e_phoff = sizeof(head.eh);
	head.eh.e_ehsize = sizeof(head.eh);
	head.eh.e_phentsize = sizeof(Elf64_Phdr);
	head.eh.e_phnum = 2;
	head.ph[0] = (Elf64_Phdr){ .p_type = PT_NOTE, .p_offset = sizeof(head), .p_filesz = 100 };
	head.ph[1] = (Elf64_Phdr){ .p_type = PT_LOAD, .p_offset = 4096, .p_filesz = 8192, .p_memsz = 8192 };

	res.in_bytes = 12287;
	CHECK(coredam_pipe_cut_short(&head, &res, &expected));
	CHECK_EQ_INT(expected, 12288);
	res.in_bytes = 12288;
	CHECK(!coredam_pipe_cut_short(&head, &res, &expected));

	/* cut by the helper, or no headers to read: nothing is claimed */
	expected = 0;
	res.in_bytes = 100;
	res.truncated = true;
	CHECK(!coredam_pipe_cut_short(&head, &res, &expected));
	res.truncated = false;
	CHECK(!coredam_pipe_cut_short(NULL, &res, &expected));
	res.head_len = 16;
	CHECK(!coredam_pipe_cut_short(&head, &res, &expected));
	CHECK_EQ_INT(expected, 0);
}
