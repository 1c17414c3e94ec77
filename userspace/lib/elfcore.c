// SPDX-License-Identifier: LGPL-2.1-or-later
/* The expected size of an ELF core from its first bytes; see elfcore.h. */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>

#include "elfcore.h"
#include "util.h"

/* Fields are read byte by byte: @head has no alignment and may be of either byte order. */
static uint64_t get(const unsigned char *p, size_t n, bool msb)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[msb ? i : n - 1 - i] << (8 * (n - 1 - i));
	return v;
}

struct layout {
	bool msb;
	size_t ehsize, phentsize;
	uint64_t phoff, phnum;
};

/* The ELF header: 0, -ENODATA when @len is short of it, -EMEDIUMTYPE when it is none this reads. */
static int read_ehdr(const unsigned char *h, size_t len, struct layout *ret)
{
	struct layout l = { 0 };
	bool is64;

	if (len < EI_NIDENT)
		return memcmp(h, ELFMAG, MIN(len, (size_t)SELFMAG)) == 0 ? -ENODATA : -EMEDIUMTYPE;
	if (memcmp(h, ELFMAG, SELFMAG) != 0)
		return -EMEDIUMTYPE;
	if (h[EI_CLASS] != ELFCLASS64 && h[EI_CLASS] != ELFCLASS32)
		return -EMEDIUMTYPE;
	if (h[EI_DATA] != ELFDATA2LSB && h[EI_DATA] != ELFDATA2MSB)
		return -EMEDIUMTYPE;
	is64 = h[EI_CLASS] == ELFCLASS64;
	l.msb = h[EI_DATA] == ELFDATA2MSB;
	l.ehsize = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	if (len < l.ehsize)
		return -ENODATA;
	if (get(h + offsetof(Elf64_Ehdr, e_type), 2, l.msb) != ET_CORE)
		return -EMEDIUMTYPE;
	if (is64) {
		l.phoff = get(h + offsetof(Elf64_Ehdr, e_phoff), 8, l.msb);
		l.phentsize = get(h + offsetof(Elf64_Ehdr, e_phentsize), 2, l.msb);
		l.phnum = get(h + offsetof(Elf64_Ehdr, e_phnum), 2, l.msb);
	} else {
		l.phoff = get(h + offsetof(Elf32_Ehdr, e_phoff), 4, l.msb);
		l.phentsize = get(h + offsetof(Elf32_Ehdr, e_phentsize), 2, l.msb);
		l.phnum = get(h + offsetof(Elf32_Ehdr, e_phnum), 2, l.msb);
	}
	if (l.phentsize != (is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr)))
		return -EMEDIUMTYPE;
	/* no program headers says nothing; PN_XNUM keeps the real count in a section header */
	if (l.phnum == 0 || l.phnum >= PN_XNUM)
		return -EMEDIUMTYPE;
	/* a table past what any stream start is kept for: never read */
	if (l.phoff > COREDAM_ELF_HEAD_MAX || l.phoff + l.phnum * l.phentsize > COREDAM_ELF_HEAD_MAX)
		return -EMEDIUMTYPE;
	*ret = l;
	return 0;
}

size_t coredam_elf_head_want(const void *head, size_t len)
{
	const unsigned char *h = head;
	struct layout l;
	int r;

	r = read_ehdr(h, len, &l);
	if (r == -ENODATA)
		return len < EI_NIDENT ? EI_NIDENT : sizeof(Elf64_Ehdr);
	if (r < 0)
		return len;
	return MAX(len, (size_t)(l.phoff + l.phnum * l.phentsize));
}

int coredam_elf_core_size(const void *head, size_t len, uint64_t *ret_size)
{
	const unsigned char *h = head;
	struct layout l;
	uint64_t size = 0;
	int r;

	r = read_ehdr(h, len, &l);
	if (r < 0)
		return r;
	if (l.phoff + l.phnum * l.phentsize > len)
		return -ENODATA;
	for (uint64_t i = 0; i < l.phnum; i++) {
		const unsigned char *p = h + l.phoff + i * l.phentsize;
		uint64_t off, filesz;

		if (l.phentsize == sizeof(Elf64_Phdr)) {
			off = get(p + offsetof(Elf64_Phdr, p_offset), 8, l.msb);
			filesz = get(p + offsetof(Elf64_Phdr, p_filesz), 8, l.msb);
		} else {
			off = get(p + offsetof(Elf32_Phdr, p_offset), 4, l.msb);
			filesz = get(p + offsetof(Elf32_Phdr, p_filesz), 4, l.msb);
		}
		if (off > UINT64_MAX - filesz)
			return -EMEDIUMTYPE;
		size = MAX(size, off + filesz);
	}
	*ret_size = size;
	return 0;
}
