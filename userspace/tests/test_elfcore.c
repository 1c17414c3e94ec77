// SPDX-License-Identifier: LGPL-2.1-or-later
/* The expected size of an ELF core from the start of its stream, and the writer keeping that start. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "elfcore.h"
#include "pipe.h"
#include "test.h"
#include "util.h"

static void put(unsigned char *p, size_t n, uint64_t v, bool msb)
{
	for (size_t i = 0; i < n; i++)
		p[msb ? n - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

/*
 * A core as the kernel starts one: ELF header, @phnum program headers
 * (a note, then loads of 8 KiB each from offset 4096), into @buf of
 * @size bytes, zeroed. Returns the size the headers declare.
 */
static uint64_t make_core(unsigned char *buf, size_t size, bool is64, bool msb, unsigned int phnum)
{
	size_t eh = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t ph = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	uint64_t end = 0;

	memset(buf, 0, size);
	memcpy(buf, ELFMAG, SELFMAG);
	buf[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
	buf[EI_DATA] = msb ? ELFDATA2MSB : ELFDATA2LSB;
	buf[EI_VERSION] = EV_CURRENT;
	put(buf + offsetof(Elf64_Ehdr, e_type), 2, ET_CORE, msb);
	if (is64) {
		put(buf + offsetof(Elf64_Ehdr, e_phoff), 8, eh, msb);
		put(buf + offsetof(Elf64_Ehdr, e_ehsize), 2, eh, msb);
		put(buf + offsetof(Elf64_Ehdr, e_phentsize), 2, ph, msb);
		put(buf + offsetof(Elf64_Ehdr, e_phnum), 2, phnum, msb);
	} else {
		put(buf + offsetof(Elf32_Ehdr, e_phoff), 4, eh, msb);
		put(buf + offsetof(Elf32_Ehdr, e_ehsize), 2, eh, msb);
		put(buf + offsetof(Elf32_Ehdr, e_phentsize), 2, ph, msb);
		put(buf + offsetof(Elf32_Ehdr, e_phnum), 2, phnum, msb);
	}
	for (unsigned int i = 0; i < phnum; i++) {
		unsigned char *p = buf + eh + i * ph;
		uint64_t off = i == 0 ? eh + phnum * ph : 4096 + (uint64_t)(i - 1) * 8192;
		uint64_t filesz = i == 0 ? 100 : 8192;

		if (is64) {
			put(p + offsetof(Elf64_Phdr, p_type), 4, i == 0 ? PT_NOTE : PT_LOAD, msb);
			put(p + offsetof(Elf64_Phdr, p_offset), 8, off, msb);
			put(p + offsetof(Elf64_Phdr, p_filesz), 8, filesz, msb);
			put(p + offsetof(Elf64_Phdr, p_memsz), 8, i == 0 ? 0 : filesz, msb);
		} else {
			put(p + offsetof(Elf32_Phdr, p_type), 4, i == 0 ? PT_NOTE : PT_LOAD, msb);
			put(p + offsetof(Elf32_Phdr, p_offset), 4, off, msb);
			put(p + offsetof(Elf32_Phdr, p_filesz), 4, filesz, msb);
			put(p + offsetof(Elf32_Phdr, p_memsz), 4, i == 0 ? 0 : filesz, msb);
		}
		end = MAX(end, off + filesz);
	}
	return end;
}

TEST(elfcore_size_from_headers)
{
	static unsigned char buf[4096];
	uint64_t size = 0;

	for (int c = 0; c < 4; c++) {
		bool is64 = c & 1, msb = c & 2;
		uint64_t want = make_core(buf, sizeof(buf), is64, msb, 4);

		CHECK(want == 4096 + 3 * 8192);
		size = 0;
		CHECK_EQ_INT(coredam_elf_core_size(buf, sizeof(buf), &size), 0);
		CHECK_EQ_INT(size, want);
		/* exactly the headers is enough; one byte less is not */
		size_t hdrs = coredam_elf_head_want(buf, sizeof(Elf64_Ehdr));

		CHECK_EQ_INT(hdrs, (is64 ? 64 + 4 * 56 : 52 + 4 * 32));
		CHECK_EQ_INT(coredam_elf_core_size(buf, hdrs, &size), 0);
		CHECK_EQ_INT(coredam_elf_core_size(buf, hdrs - 1, &size), -ENODATA);
	}
}

TEST(elfcore_size_unknown)
{
	static unsigned char buf[4096];
	uint64_t size = 42;

	/* garbage, a short header, an empty stream */
	memset(buf, 0x5a, sizeof(buf));
	CHECK_EQ_INT(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
	CHECK_EQ_INT(coredam_elf_head_want(buf, sizeof(buf)), sizeof(buf));
	make_core(buf, sizeof(buf), true, false, 4);
	CHECK_EQ_INT(coredam_elf_core_size(buf, 10, &size), -ENODATA);
	CHECK_EQ_INT(coredam_elf_core_size(buf, 40, &size), -ENODATA);
	CHECK_EQ_INT(coredam_elf_core_size(buf, 0, &size), -ENODATA);
	CHECK_EQ_INT(size, 42);

	/* extended numbering: the count is in a section header the stream's start may not hold */
	put(buf + offsetof(Elf64_Ehdr, e_phnum), 2, PN_XNUM, false);
	CHECK_EQ_INT(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
	/* no program headers, not a core, a foreign header size */
	put(buf + offsetof(Elf64_Ehdr, e_phnum), 2, 0, false);
	CHECK_EQ_INT(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
	make_core(buf, sizeof(buf), true, false, 4);
	put(buf + offsetof(Elf64_Ehdr, e_type), 2, ET_EXEC, false);
	CHECK_EQ_INT(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
	make_core(buf, sizeof(buf), true, false, 4);
	put(buf + offsetof(Elf64_Ehdr, e_phentsize), 2, 32, false);
	CHECK_EQ_INT(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
	/* an end past 2^64 is no core the kernel wrote */
	make_core(buf, sizeof(buf), true, false, 2);
	put(buf + 64 + 56 + offsetof(Elf64_Phdr, p_offset), 8, UINT64_MAX - 10, false);
	CHECK_EQ_INT(coredam_elf_core_size(buf, sizeof(buf), &size), -EMEDIUMTYPE);
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
		CHECK(make_core(core, n + 4096, c, false, 4) == n);
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
	CHECK_EQ_INT(copied_short(core, 70, UINT64_MAX, &cut), -ENODATA);
	free(core);
}
