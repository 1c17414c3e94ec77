// SPDX-License-Identifier: LGPL-2.1-or-later
/* The expected size of an ELF core from the start of its stream. */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "elfcore.h"
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
