// SPDX-License-Identifier: LGPL-2.1-or-later
/* The expected size of an ELF core from its first bytes; see elfcore.h. */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "elfcore.h"
#include "macro.h"

/* Fields are read byte by byte: @head has no alignment and may be of either byte order. */
static uint64_t get(const unsigned char *p, size_t n, bool msb)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[msb ? i : n - 1 - i] << (8 * (n - 1 - i));
	return v;
}

struct layout {
	bool msb, is64;
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
	l.is64 = is64;
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

/* The first PT_NOTE in the (whole) program header table: 0, or -ENOENT. */
static int first_note(const unsigned char *h, const struct layout *l, uint64_t *ret_off, uint64_t *ret_size)
{
	for (uint64_t i = 0; i < l->phnum; i++) {
		const unsigned char *p = h + l->phoff + i * l->phentsize;

		if (l->is64) {
			if (get(p + offsetof(Elf64_Phdr, p_type), 4, l->msb) != PT_NOTE)
				continue;
			*ret_off = get(p + offsetof(Elf64_Phdr, p_offset), 8, l->msb);
			*ret_size = get(p + offsetof(Elf64_Phdr, p_filesz), 8, l->msb);
		} else {
			if (get(p + offsetof(Elf32_Phdr, p_type), 4, l->msb) != PT_NOTE)
				continue;
			*ret_off = get(p + offsetof(Elf32_Phdr, p_offset), 4, l->msb);
			*ret_size = get(p + offsetof(Elf32_Phdr, p_filesz), 4, l->msb);
		}
		return 0;
	}
	return -ENOENT;
}

/* A walk over the "CORE" notes of the first PT_NOTE, as much of it as @len holds. */
struct notes {
	const unsigned char *h;
	struct layout l;
	uint64_t pos, end;
	bool cut;		/* the segment runs past @len: a note missing may be in the rest */
};

/* Start a walk: 0, -ENODATA when @len is short of the headers or the notes, -EMEDIUMTYPE when not a core this reads. */
static int notes_begin(const void *head, size_t len, struct notes *ret)
{
	struct notes n = { .h = head };
	uint64_t off, size;
	int r;

	r = read_ehdr(n.h, len, &n.l);
	if (r < 0)
		return r;
	if (n.l.phoff + n.l.phnum * n.l.phentsize > len)
		return -ENODATA;
	if (first_note(n.h, &n.l, &off, &size) < 0)
		return -EMEDIUMTYPE;
	if (off >= len)
		return -ENODATA;
	n.cut = size > len - off;
	n.pos = off;
	n.end = n.cut ? len : off + size;
	*ret = n;
	return 0;
}

/*
 * The next "CORE" note whole within the walk: its type, descriptor and the
 * descriptor's size; false at the end. Each note is namesz, descsz, type,
 * then name and desc, each padded to 4 bytes.
 */
static bool notes_next(struct notes *n, uint64_t *ret_type, const unsigned char **ret_desc, uint64_t *ret_size)
{
	while (n->end - n->pos >= 12) {
		uint64_t namesz = get(n->h + n->pos, 4, n->l.msb), descsz = get(n->h + n->pos + 4, 4, n->l.msb);
		uint64_t type = get(n->h + n->pos + 8, 4, n->l.msb);
		uint64_t name = n->pos + 12, desc = name + ((namesz + 3) & ~3ULL);
		uint64_t next = desc + ((descsz + 3) & ~3ULL);

		if (next > n->end || next <= n->pos)
			break;
		n->pos = next;
		if (namesz == 5 && memcmp(n->h + name, "CORE", 5) == 0) {
			*ret_type = type;
			*ret_desc = n->h + desc;
			*ret_size = descsz;
			return true;
		}
	}
	n->pos = n->end;
	return false;
}

size_t coredam_elf_head_want(const void *head, size_t len)
{
	const unsigned char *h = head;
	uint64_t end, off, size;
	struct layout l;
	int r;

	r = read_ehdr(h, len, &l);
	if (r == -ENODATA)
		return len < EI_NIDENT ? EI_NIDENT : sizeof(Elf64_Ehdr);
	if (r < 0)
		return len;
	end = l.phoff + l.phnum * l.phentsize;
	if (len < end)
		return (size_t)end;
	/* then the start of the notes, as far as anything is kept */
	if (first_note(h, &l, &off, &size) < 0 || off >= COREDAM_ELF_KEEP_MAX)
		return len;
	end = MIN(off + MIN(size, (uint64_t)COREDAM_ELF_NOTES_MAX), (uint64_t)COREDAM_ELF_KEEP_MAX);
	return MAX(len, (size_t)end);
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

/* NT_PRPSINFO's pr_uid and pr_gid, by the layouts Linux writes; false for another. */
static bool read_psinfo(const unsigned char *d, uint64_t size, const struct layout *l,
			struct coredam_core_creds *c)
{
	/*
	 * 64-bit: four chars, padding, unsigned long pr_flag, then 32-bit
	 * ids (136 bytes). 32-bit: four chars, pr_flag, then 16-bit ids
	 * (x86, arm, m68k, sh and compat tasks: 124 bytes) or 32-bit ones
	 * (128 bytes).
	 */
	if (l->is64 && size == 136) {
		c->uid = get(d + 16, 4, l->msb);
		c->gid = get(d + 20, 4, l->msb);
	} else if (!l->is64 && size == 124) {
		c->uid = get(d + 8, 2, l->msb);
		c->gid = get(d + 10, 2, l->msb);
	} else if (!l->is64 && size == 128) {
		c->uid = get(d + 8, 4, l->msb);
		c->gid = get(d + 12, 4, l->msb);
	} else {
		return false;
	}
	return true;
}

/* NT_AUXV: (type, value) pairs of the ELF class's word, to AT_NULL. */
static bool read_auxv(const unsigned char *d, uint64_t size, const struct layout *l,
		      struct coredam_core_creds *c)
{
	size_t w = l->is64 ? 8 : 4;

	if (size % (2 * w) != 0)
		return false;
	for (uint64_t i = 0; i + 2 * w <= size; i += 2 * w) {
		uint64_t type = get(d + i, w, l->msb), v = get(d + i + w, w, l->msb);

		switch (type) {
		case AT_NULL:
			return true;
		case AT_UID:
			c->at_uid = v;
			break;
		case AT_EUID:
			c->at_euid = v;
			break;
		case AT_GID:
			c->at_gid = v;
			break;
		case AT_EGID:
			c->at_egid = v;
			break;
		case AT_SECURE:
			c->at_secure = v;
			break;
		}
	}
	return true;
}

int coredam_elf_core_creds(const void *head, size_t len, struct coredam_core_creds *ret)
{
	const struct coredam_core_creds none = {
		.uid = COREDAM_ELF_NO_ID, .gid = COREDAM_ELF_NO_ID,
		.at_uid = COREDAM_ELF_NO_ID, .at_euid = COREDAM_ELF_NO_ID,
		.at_gid = COREDAM_ELF_NO_ID, .at_egid = COREDAM_ELF_NO_ID,
		.at_secure = COREDAM_ELF_NO_ID,
	};
	struct coredam_core_creds c = none;
	bool psinfo = false, auxv = false;
	const unsigned char *desc;
	uint64_t type, size;
	struct notes n;
	int r;

	*ret = none;
	r = notes_begin(head, len, &n);
	if (r < 0)
		return r;
	while (!(psinfo && auxv) && notes_next(&n, &type, &desc, &size)) {
		if (type == NT_PRPSINFO && !psinfo) {
			if (!read_psinfo(desc, size, &n.l, &c))
				return -EMEDIUMTYPE;
			psinfo = true;
		} else if (type == NT_AUXV && !auxv) {
			if (!read_auxv(desc, size, &n.l, &c))
				return -EMEDIUMTYPE;
			auxv = true;
		}
	}
	if (!psinfo || !auxv)
		return n.cut ? -ENODATA : -EMEDIUMTYPE;
	*ret = c;
	return 0;
}

/* ---- where it crashed ---- */

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

/*
 * The program counter in the first NT_PRSTATUS: struct elf_prstatus's
 * pr_reg starts at byte 112 on 64-bit Linux; rip is its 17th word on
 * x86-64 (user_regs_struct), pc its 33rd on aarch64 (user_pt_regs).
 */
static bool read_prstatus_pc(const unsigned char *d, uint64_t size, unsigned int machine,
			     const struct layout *l, uint64_t *ret)
{
	if (!l->is64)
		return false;
	if (machine == EM_X86_64 && size == 336)
		*ret = get(d + 112 + 16 * 8, 8, l->msb);
	else if (machine == EM_AARCH64 && size == 392)
		*ret = get(d + 112 + 32 * 8, 8, l->msb);
	else
		return false;
	return true;
}

/* AT_ENTRY from NT_AUXV, or 0. */
static uint64_t read_auxv_entry(const unsigned char *d, uint64_t size, const struct layout *l)
{
	size_t w = l->is64 ? 8 : 4;

	for (uint64_t i = 0; i + 2 * w <= size; i += 2 * w) {
		uint64_t type = get(d + i, w, l->msb);

		if (type == AT_NULL)
			break;
		if (type == AT_ENTRY)
			return get(d + i + w, w, l->msb);
	}
	return 0;
}

/*
 * NT_FILE: count and page size, count (start, end, page offset) triples,
 * then count NUL-terminated names. The name of the mapping that holds
 * @addr into @name (cut to @size) and the offset of @addr in that file;
 * false when none holds it or the note is malformed.
 */
static bool file_of(const unsigned char *d, uint64_t size, const struct layout *l, uint64_t addr,
		    char *name, size_t namesize, uint64_t *ret_offset)
{
	size_t w = l->is64 ? 8 : 4;
	uint64_t count, page, names, pos, found = UINT64_MAX, off = 0;

	if (size < 2 * w)
		return false;
	count = get(d, w, l->msb);
	page = get(d + w, w, l->msb);
	if (count > (size - 2 * w) / (3 * w))
		return false;
	names = 2 * w + count * 3 * w;
	for (uint64_t i = 0; i < count && found == UINT64_MAX; i++) {
		const unsigned char *t = d + 2 * w + i * 3 * w;
		uint64_t start = get(t, w, l->msb), end = get(t + w, w, l->msb), pgoff = get(t + 2 * w, w, l->msb);

		if (addr >= start && addr < end) {
			found = i;
			off = addr - start + pgoff * page;
		}
	}
	if (found == UINT64_MAX)
		return false;
	/* the found-th name */
	pos = names;
	for (uint64_t i = 0; i < found; i++) {
		const unsigned char *z = memchr(d + pos, 0, size - pos);

		if (!z)
			return false;
		pos = (uint64_t)(z - d) + 1;
		if (pos >= size)
			return false;
	}
	{
		const unsigned char *z = memchr(d + pos, 0, size - pos);
		size_t n = z ? (size_t)(z - (d + pos)) : 0;

		if (!z || namesize == 0)
			return false;
		n = MIN(n, namesize - 1);
		memcpy(name, d + pos, n);
		name[n] = '\0';
	}
	*ret_offset = off;
	return true;
}

int coredam_elf_core_site(const void *head, size_t len, struct coredam_core_site *ret)
{
	struct coredam_core_site s = { 0 };
	const unsigned char *file_note = NULL, *desc;
	uint64_t type, size, file_size = 0, entry = 0;
	bool prstatus = false;
	unsigned int machine;
	struct notes n;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = notes_begin(head, len, &n);
	if (r < 0)
		return r;
	machine = (unsigned int)get(n.h + offsetof(Elf64_Ehdr, e_machine), 2, n.l.msb);
	while (notes_next(&n, &type, &desc, &size)) {
		if (type == NT_PRSTATUS && !prstatus) {
			prstatus = true;
			s.have_pc = read_prstatus_pc(desc, size, machine, &n.l, &s.pc);
		} else if (type == NT_AUXV && !entry) {
			entry = read_auxv_entry(desc, size, &n.l);
		} else if (type == NT_FILE && !file_note) {
			file_note = desc;
			file_size = size;
		}
	}
	if (file_note) {
		uint64_t ignored;

		if (entry)
			(void)file_of(file_note, file_size, &n.l, entry, s.exe, sizeof(s.exe), &ignored);
		if (s.have_pc)
			(void)file_of(file_note, file_size, &n.l, s.pc, s.file, sizeof(s.file), &s.offset);
	}
	*ret = s;
	return 0;
}
