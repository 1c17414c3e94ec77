// SPDX-License-Identifier: LGPL-2.1-or-later
/* The expected size of an ELF core from the start of its stream, and the writer keeping that start. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "core-build.h"
#include "elfcore.h"
#include "pipe-writer.h"
#include "test.h"
#include "macro.h"

TEST(elfcore_size_from_headers)
{
	static unsigned char buf[4096];
	uint64_t size = 0;

	for (int c = 0; c < 4; c++) {
		bool is64 = c & 1, msb = c & 2;
		uint64_t want = core_make(buf, sizeof(buf), is64, msb, 4);

		CHECK(want == 4096 + 3 * 8192);
		size = 0;
		CHECK_OK(coredam_elf_core_size(buf, sizeof(buf), &size));
		CHECK_EQ_INT(size, want);
		/* exactly the headers is enough; one byte less is not */
		size_t hdrs = coredam_elf_head_want(buf, sizeof(Elf64_Ehdr));

		CHECK_EQ_INT(hdrs, (is64 ? 64 + 4 * 56 : 52 + 4 * 32));
		CHECK_OK(coredam_elf_core_size(buf, hdrs, &size));
		CHECK_ERRNO(coredam_elf_core_size(buf, hdrs - 1, &size), -ENODATA);
	}
}

TEST(elfcore_size_unknown)
{
	static unsigned char buf[4096];
	uint64_t size = 42;

	/* garbage, a short header, an empty stream */
	memset(buf, 0x5a, sizeof(buf));
	CHECK_ERRNO(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
	CHECK_EQ_INT(coredam_elf_head_want(buf, sizeof(buf)), sizeof(buf));
	core_make(buf, sizeof(buf), true, false, 4);
	CHECK_ERRNO(coredam_elf_core_size(buf, 10, &size), -ENODATA);
	CHECK_ERRNO(coredam_elf_core_size(buf, 40, &size), -ENODATA);
	CHECK_ERRNO(coredam_elf_core_size(buf, 0, &size), -ENODATA);
	CHECK_EQ_INT(size, 42);

	/* extended numbering: the count is in a section header the stream's start may not hold */
	core_put(buf + offsetof(Elf64_Ehdr, e_phnum), 2, PN_XNUM, false);
	CHECK_ERRNO(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
	/* no program headers, not a core, a foreign header size */
	core_put(buf + offsetof(Elf64_Ehdr, e_phnum), 2, 0, false);
	CHECK_ERRNO(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
	core_make(buf, sizeof(buf), true, false, 4);
	core_put(buf + offsetof(Elf64_Ehdr, e_type), 2, ET_EXEC, false);
	CHECK_ERRNO(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
	core_make(buf, sizeof(buf), true, false, 4);
	core_put(buf + offsetof(Elf64_Ehdr, e_phentsize), 2, 32, false);
	CHECK_ERRNO(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
	/* an end past 2^64 is no core the kernel wrote */
	core_make(buf, sizeof(buf), true, false, 2);
	core_put(buf + 64 + 56 + offsetof(Elf64_Phdr, p_offset), 8, UINT64_MAX - 10, false);
	CHECK_ERRNO(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
	CHECK_EQ_INT(size, 42);
}

/* Copy the first @len bytes of @core through the writer, keeping the head; is it cut short? */
static int copied_short(const unsigned char *core, size_t len, uint64_t limit, bool *ret_short)
{
	_cleanup_free_ void *head = malloc(COREDAM_ELF_HEAD_MAX);
	struct coredam_pipe_copy_opts o = { .limit = limit, .head = head, .head_size = COREDAM_ELF_HEAD_MAX };
	struct coredam_pipe_copy_result res = { 0 };
	uint64_t expected;
	int in, out, r;
	FILE *f = fopen(tpath("in"), "w");

	if (!f || !head)
		return -ENOMEM;
	fwrite(core, 1, len, f);
	fclose(f);
	in = open(tpath("in"), O_RDONLY);
	(void)unlink(tpath("out"));
	out = open(tpath("out"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	r = coredam_pipe_copy(in, out, &o, &res);
	close(in);
	close(out);
	if (r < 0)
		return r;
	if (res.truncated)
		return *ret_short = false, 1;	/* cut at the limit: not this check's business */
	r = coredam_elf_core_size(head, res.head_len, &expected);
	if (r < 0)
		return r;
	*ret_short = res.in_bytes < expected;
	return 0;
}

TEST(elfcore_stream_cut_short)
{
	size_t n = 4096 + 3 * 8192;
	unsigned char *core = malloc(n + 4096);
	bool cut = false;

	CHECK(core != NULL);
	if (!core)
		return;
	for (int c = 0; c < 2; c++) {
		CHECK(core_make(core, n + 4096, c, false, 4) == n);
		memset(core + 4096, 0xab, n - 4096);	/* the loads' data */
		CHECK_EQ_INT(copied_short(core, n, UINT64_MAX, &cut), 0);	/* exact: complete */
		CHECK(!cut);
		CHECK_EQ_INT(copied_short(core, n + 4096, UINT64_MAX, &cut), 0);	/* longer: fine */
		CHECK(!cut);
		CHECK_EQ_INT(copied_short(core, n - 1, UINT64_MAX, &cut), 0);	/* one byte short */
		CHECK(cut);
		CHECK_EQ_INT(copied_short(core, 4096 + 100, UINT64_MAX, &cut), 0);	/* killed mid-dump */
		CHECK(cut);
		/* RLIMIT_CORE's cut is left to the limit handling */
		CHECK_EQ_INT(copied_short(core, n, 8192, &cut), 1);
		CHECK(!cut);
	}
	/* the stream ends inside the program headers: unknown, never flagged */
	CHECK_ERRNO(copied_short(core, 70, UINT64_MAX, &cut), -ENODATA);
	free(core);
}

struct ids {
	uint64_t uid, gid, at_uid, at_euid, at_gid, at_egid, secure;
};

/*
 * A core whose note segment holds what the kernel writes first: the first
 * thread's NT_PRSTATUS, a NUL-less "LINUX" note, NT_PRPSINFO (of
 * @psinfo_size bytes: 136 for 64-bit, 124 or 128 for 32-bit) and NT_AUXV
 * with @ids. Returns the end of the notes.
 */
static size_t make_core_notes(unsigned char *buf, size_t size, bool is64, bool msb, size_t psinfo_size,
			      const struct ids *ids)
{
	size_t eh = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t ph = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	size_t w = is64 ? 8 : 4, pos = eh + 2 * ph, n = 0;
	unsigned char desc[512] = { 0 };
	const uint64_t auxv[][2] = {
		{ AT_PAGESZ, 4096 }, { AT_UID, ids->at_uid }, { AT_EUID, ids->at_euid }, { AT_GID, ids->at_gid },
		{ AT_EGID, ids->at_egid }, { AT_SECURE, ids->secure }, { AT_NULL, 0 }, { AT_UID, 0 },
	};

	core_make(buf, size, is64, msb, 2);
	pos = core_note(buf, pos, msb, "CORE", NT_PRSTATUS, desc, is64 ? 336 : 144);
	pos = core_note(buf, pos, msb, "LINUX", NT_PRPSINFO, desc, 16);	/* not CORE's: skipped */
	memset(desc, 0, sizeof(desc));
	if (psinfo_size == 124) {
		core_put(desc + 8, 2, ids->uid, msb);
		core_put(desc + 10, 2, ids->gid, msb);
	} else {
		core_put(desc + (is64 ? 16 : 8), 4, ids->uid, msb);
		core_put(desc + (is64 ? 20 : 12), 4, ids->gid, msb);
	}
	pos = core_note(buf, pos, msb, "CORE", NT_PRPSINFO, desc, psinfo_size);
	memset(desc, 0, sizeof(desc));
	/* AT_NULL ends the vector: the AT_UID after it is not read */
	for (size_t i = 0; i < ELEMENTSOF(auxv); i++, n += 2 * w) {
		core_put(desc + n, w, auxv[i][0], msb);
		core_put(desc + n + w, w, auxv[i][1], msb);
	}
	pos = core_note(buf, pos, msb, "CORE", NT_AUXV, desc, n);
	if (is64)
		core_put(buf + eh + offsetof(Elf64_Phdr, p_filesz), 8, pos - (eh + 2 * ph), msb);
	else
		core_put(buf + eh + offsetof(Elf32_Phdr, p_filesz), 4, pos - (eh + 2 * ph), msb);
	return pos;
}

TEST(elfcore_creds_from_notes)
{
	static unsigned char buf[4096];
	const struct ids ids = { 1000, 100, 1000, 1000, 100, 100, 0 };
	const struct { bool is64, msb; size_t psinfo; } layouts[] = {
		{ true, false, 136 }, { true, true, 136 }, { false, false, 124 }, { false, false, 128 },
		{ false, true, 124 },
	};
	struct coredam_core_creds c;

	for (size_t i = 0; i < ELEMENTSOF(layouts); i++) {
		size_t end = make_core_notes(buf, sizeof(buf), layouts[i].is64, layouts[i].msb, layouts[i].psinfo,
					     &ids);
		size_t hdrs = coredam_elf_head_want(buf, 64);

		/* the writer keeps the headers, then asks for the notes, then no more */
		CHECK_EQ_INT(coredam_elf_head_want(buf, hdrs), end);
		CHECK_EQ_INT(coredam_elf_head_want(buf, end), end);
		CHECK_OK(coredam_elf_core_creds(buf, end, &c));
		CHECK_EQ_INT(c.uid, 1000);
		CHECK_EQ_INT(c.gid, 100);
		CHECK_EQ_INT(c.at_uid, 1000);
		CHECK_EQ_INT(c.at_euid, 1000);
		CHECK_EQ_INT(c.at_gid, 100);
		CHECK_EQ_INT(c.at_egid, 100);
		CHECK_EQ_INT(c.at_secure, 0);
		/* one byte short of the auxv note: not known yet */
		CHECK_ERRNO(coredam_elf_core_creds(buf, end - 1, &c), -ENODATA);
		CHECK(c.uid == COREDAM_ELF_NO_ID && c.at_secure == COREDAM_ELF_NO_ID);
	}
}

TEST(elfcore_creds_unknown)
{
	static unsigned char buf[4096];
	const struct ids ids = { 1000, 100, 1000, 1000, 100, 100, 0 };
	struct coredam_core_creds c;
	size_t end;

	/* a prpsinfo of a size no Linux writes */
	end = make_core_notes(buf, sizeof(buf), true, false, 128, &ids);
	CHECK_ERRNO(coredam_elf_core_creds(buf, end, &c), -EMEDIUMTYPE);
	CHECK(c.uid == COREDAM_ELF_NO_ID);
	/* no auxv: the note segment ends before it */
	end = make_core_notes(buf, sizeof(buf), true, false, 136, &ids);
	core_put(buf + 64 + offsetof(Elf64_Phdr, p_filesz), 8, end - (64 + 2 * 56) - 100, false);
	CHECK_ERRNO(coredam_elf_core_creds(buf, end, &c), -EMEDIUMTYPE);
	/* a note whose size runs past the segment */
	end = make_core_notes(buf, sizeof(buf), true, false, 136, &ids);
	core_put(buf + 64 + 2 * 56 + 4, 4, UINT32_MAX, false);
	CHECK_ERRNO(coredam_elf_core_creds(buf, end, &c), -EMEDIUMTYPE);
	/* no note segment at all; not a core */
	core_make(buf, sizeof(buf), true, false, 2);
	core_put(buf + 64 + offsetof(Elf64_Phdr, p_type), 4, PT_LOAD, false);
	CHECK_ERRNO(coredam_elf_core_creds(buf, sizeof(buf), &c), -EMEDIUMTYPE);
	memset(buf, 0x5a, sizeof(buf));
	CHECK_ERRNO(coredam_elf_core_creds(buf, sizeof(buf), &c), -EMEDIUMTYPE);
	CHECK(c.at_uid == COREDAM_ELF_NO_ID);
}

/* What coredam-pipe decides from the notes the writer kept. */
TEST(elfcore_creds_through_the_writer)
{
	static unsigned char core[8192];
	const struct ids ids = { 1000, 100, 1000, 0, 100, 100, 1 };	/* a setuid-root program */
	_cleanup_free_ void *head = malloc(COREDAM_ELF_KEEP_MAX);
	struct coredam_pipe_copy_opts o = { .limit = UINT64_MAX, .head = head, .head_size = COREDAM_ELF_KEEP_MAX };
	struct coredam_pipe_copy_result res = { 0 };
	struct coredam_core_creds c;
	int in, out;
	FILE *f;

	CHECK(head != NULL);
	make_core_notes(core, sizeof(core), true, false, 136, &ids);
	f = fopen(tpath("notes.in"), "w");
	CHECK(f != NULL);
	if (!f || !head)
		return;
	fwrite(core, 1, sizeof(core), f);
	fclose(f);
	in = open(tpath("notes.in"), O_RDONLY);
	out = open(tpath("notes.out"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK_OK(coredam_pipe_copy(in, out, &o, &res));
	close(in);
	close(out);
	CHECK_OK(coredam_elf_core_creds(head, res.head_len, &c));
	CHECK_EQ_INT(c.at_euid, 0);
	CHECK_EQ_INT(c.at_secure, 1);
}
