// SPDX-License-Identifier: GPL-2.0
/*
 * corecheck: validate an ELF core file the way a user would, and report as
 * one JSON object on stdout:
 *   - ELF64 header of type ET_CORE,
 *   - every program header's data inside the file (a truncated core fails),
 *   - notes: how many NT_PRSTATUS (one per thread), the signal, and the
 *     process id (from NT_PRPSINFO; NT_PRSTATUS has the thread's),
 *   - the crasher's pattern: how many of its pages are present and intact,
 *     against how many the process recorded in its pattern ledger
 *     (pattern.h; $PATTERN_LEDGER_DIR, default /tmp). The core is
 *     "complete" only when that ledger exists and every page it counts is
 *     in the core once and intact: a core's own pages cannot tell what is
 *     missing from it, and a core of zeros has none.
 *
 *   corecheck FILE
 *
 * Exit status: 0 when the file is a valid ELF core (whole or not, see
 * "complete"), 1 otherwise, 2 on usage or I/O errors.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pattern.h"

struct core {
	const unsigned char *m;
	size_t size;
	const char *problem;	/* "" when valid */
	bool phdrs;		/* the program headers are in the file */
	long prstatus, siginfo, ntfile, auxv, loads;
	long pid, sig;
	unsigned long long load_bytes;
};

struct pattern_count {
	bool ledger;		/* the process recorded its pages */
	long expected;		/* how many it recorded; -1 without a ledger */
	long pages, dupes;
};

static void json_str(const char *key, const char *val, int comma)
{
	printf("\"%s\": \"", key);
	for (const char *p = val; *p; p++) {
		if (*p == '"' || *p == '\\')
			printf("\\%c", *p);
		else if ((unsigned char)*p < 0x20)
			printf("\\u%04x", *p);
		else
			putchar(*p);
	}
	printf("\"%s", comma ? ", " : "");
}

static void read_notes(struct core *c, const unsigned char *n, const unsigned char *end)
{
	while (n + sizeof(Elf64_Nhdr) <= end) {
		const Elf64_Nhdr *nh = (const Elf64_Nhdr *)n;
		size_t namesz = (nh->n_namesz + 3) & ~3u;
		size_t descsz = (nh->n_descsz + 3) & ~3u;
		const unsigned char *desc = n + sizeof(*nh) + namesz;

		if (desc + descsz > end)
			break;
		if (nh->n_type == NT_PRSTATUS) {
			if (!c->prstatus && nh->n_descsz >= sizeof(struct elf_prstatus)) {
				const struct elf_prstatus *ps = (const void *)desc;

				if (c->pid < 0)
					c->pid = ps->pr_pid;
				c->sig = ps->pr_cursig;
			}
			c->prstatus++;
		} else if (nh->n_type == NT_PRPSINFO &&
			   nh->n_descsz >= sizeof(struct elf_prpsinfo)) {
			/* the process id: NT_PRSTATUS has the thread's */
			c->pid = ((const struct elf_prpsinfo *)desc)->pr_pid;
		} else if (nh->n_type == NT_SIGINFO) {
			c->siginfo++;
		} else if (nh->n_type == NT_FILE) {
			c->ntfile++;
		} else if (nh->n_type == NT_AUXV) {
			c->auxv++;
		}
		n = desc + descsz;
	}
}

/* The headers, the notes and the segments' extent; c->problem says what is wrong. */
static void check_elf(struct core *c)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)c->m;

	if (c->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
		c->problem = "not an ELF file";
		return;
	}
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_CORE) {
		c->problem = "not a 64-bit ELF core";
		return;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > c->size) {
		c->problem = "program headers truncated";
		return;
	}

	const Elf64_Phdr *ph = (const Elf64_Phdr *)(c->m + eh->e_phoff);

	c->phdrs = true;
	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_offset + ph[i].p_filesz > c->size) {
			c->problem = "segment data beyond end of file (truncated core)";
			return;
		}
		if (ph[i].p_type == PT_NOTE) {
			read_notes(c, c->m + ph[i].p_offset,
				   c->m + ph[i].p_offset + ph[i].p_filesz);
		} else if (ph[i].p_type == PT_LOAD && ph[i].p_filesz) {
			c->loads++;
			c->load_bytes += ph[i].p_filesz;
		}
	}
	if (!c->prstatus)
		c->problem = "no NT_PRSTATUS note";
}

/* What the process recorded, into ret->ledger and ret->expected. */
static void read_ledger(const struct core *c, struct pattern_count *ret)
{
	char path[4096];
	uint32_t npages = 0;
	int r;

	ret->ledger = false;
	ret->expected = -1;
	if (c->pid < 0)
		return;
	r = pattern_ledger_read(c->pid, &npages);
	if (r == -ENOENT)
		return;
	if (r < 0) {
		(void)pattern_ledger_path(c->pid, path, sizeof(path));
		fprintf(stderr, "corecheck: cannot read the pattern ledger %s: %s\n",
			path, strerror(-r));
		return;
	}
	ret->ledger = true;
	ret->expected = npages;
}

/*
 * The intact pattern pages of process c->pid in the core's segments (as
 * far as they are in the file, for a core cut short), each counted once. A page whose header gives another page count than the
 * ledger's is not one the process recorded (without a ledger, the first
 * intact page's count is taken, for the report only): 0, or -ENOMEM.
 */
static int count_pattern(const struct core *c, struct pattern_count *ret)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)c->m;
	const Elf64_Phdr *ph = (const Elf64_Phdr *)(c->m + eh->e_phoff);
	long want = ret->expected;
	unsigned char *seen = NULL;

	for (int i = 0; i < eh->e_phnum; i++) {
		uint64_t len = ph[i].p_filesz;

		if (ph[i].p_type != PT_LOAD || ph[i].p_offset >= c->size)
			continue;
		if (len > c->size - ph[i].p_offset)
			len = c->size - ph[i].p_offset;
		for (uint64_t off = 0; off + PATTERN_PAGE <= len; off += PATTERN_PAGE) {
			struct pattern_hdr h;

			if (!pattern_check(c->m + ph[i].p_offset + off, &h))
				continue;
			if (c->pid >= 0 && h.pid != (uint32_t)c->pid)
				continue;
			if (want < 0)
				want = h.npages;
			if (h.npages != (uint32_t)want)
				continue;
			if (!seen) {
				seen = calloc((size_t)want, 1);
				if (!seen)
					return -ENOMEM;
			}
			if (seen[h.index])
				ret->dupes++;
			else
				ret->pages++;
			seen[h.index] = 1;
		}
	}
	free(seen);
	return 0;
}

static void print_report(const char *path, const struct core *c, const struct pattern_count *p)
{
	bool complete = !*c->problem && p->ledger && p->pages == p->expected && !p->dupes;

	printf("{");
	json_str("file", path, 1);
	printf("\"size\": %zu, ", c->size);
	printf("\"valid\": %s, ", *c->problem ? "false" : "true");
	json_str("problem", c->problem, 1);
	printf("\"prstatus\": %ld, \"siginfo\": %ld, \"nt_file\": %ld, \"auxv\": %ld, ",
	       c->prstatus, c->siginfo, c->ntfile, c->auxv);
	printf("\"pid\": %ld, \"signal\": %ld, \"loads\": %ld, \"load_bytes\": %llu, ",
	       c->pid, c->sig, c->loads, c->load_bytes);
	printf("\"ledger\": %s, ", p->ledger ? "true" : "false");
	printf("\"pattern_pages\": %ld, \"pattern_pages_expected\": %ld, \"pattern_dupes\": %ld, ",
	       p->pages, p->expected, p->dupes);
	printf("\"complete\": %s}\n", complete ? "true" : "false");
}

int main(int argc, char **argv)
{
	struct core c = { .problem = "", .pid = -1, .sig = -1 };
	struct pattern_count p = { .expected = -1 };
	const char *path;
	struct stat st;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: corecheck FILE\n");
		return 2;
	}
	path = argv[1];
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "corecheck: %s: %s\n", path, strerror(errno));
		return 2;
	}
	c.size = (size_t)st.st_size;
	if (c.size) {
		c.m = mmap(NULL, c.size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (c.m == MAP_FAILED) {
			fprintf(stderr, "corecheck: mmap %s: %s\n", path, strerror(errno));
			return 2;
		}
	}

	check_elf(&c);
	if (c.phdrs) {
		read_ledger(&c, &p);
		if (count_pattern(&c, &p) < 0) {
			fprintf(stderr, "corecheck: %s: %s\n", path, strerror(ENOMEM));
			return 2;
		}
	}
	print_report(path, &c, &p);
	return *c.problem ? 1 : 0;
}
