// SPDX-License-Identifier: GPL-2.0
/*
 * corecheck: validate an ELF core file the way a user would, and report as
 * one JSON object on stdout:
 *   - ELF64 header of type ET_CORE,
 *   - every program header's data inside the file (a truncated core fails),
 *   - notes: how many NT_PRSTATUS (one per thread), the signal, and the
 *     process id (from NT_PRPSINFO; NT_PRSTATUS has the thread's),
 *   - the crasher's pattern: how many of its pages are present and intact.
 *
 *   corecheck FILE
 *
 * Exit status: 0 when the file is a complete ELF core, 1 otherwise, 2 on
 * usage or I/O errors.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/procfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pattern.h"

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

int main(int argc, char **argv)
{
	const char *path;
	const char *problem = "";
	struct stat st;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: corecheck FILE\n");
		return 2;
	}
	path = argv[1];
	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		fprintf(stderr, "corecheck: %s: %s\n", path, strerror(errno));
		return 2;
	}

	size_t size = (size_t)st.st_size;
	const unsigned char *m = NULL;

	if (size) {
		m = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			fprintf(stderr, "corecheck: mmap %s: %s\n", path, strerror(errno));
			return 2;
		}
	}

	long prstatus = 0, siginfo = 0, ntfile = 0, auxv = 0, loads = 0;
	long pid = -1, sig = -1, pages = 0, npages_expected = 0, dupes = 0;
	unsigned long long load_bytes = 0;
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)m;
	unsigned char *seen = NULL;

	if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
		problem = "not an ELF file";
		goto out;
	}
	if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_type != ET_CORE) {
		problem = "not a 64-bit ELF core";
		goto out;
	}
	if (eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff + (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr) > size) {
		problem = "program headers truncated";
		goto out;
	}

	const Elf64_Phdr *ph = (const Elf64_Phdr *)(m + eh->e_phoff);

	for (int i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_offset + ph[i].p_filesz > size) {
			problem = "segment data beyond end of file (truncated core)";
			goto out;
		}
		if (ph[i].p_type == PT_NOTE) {
			const unsigned char *n = m + ph[i].p_offset;
			const unsigned char *end = n + ph[i].p_filesz;

			while (n + sizeof(Elf64_Nhdr) <= end) {
				const Elf64_Nhdr *nh = (const Elf64_Nhdr *)n;
				size_t namesz = (nh->n_namesz + 3) & ~3u;
				size_t descsz = (nh->n_descsz + 3) & ~3u;
				const unsigned char *desc = n + sizeof(*nh) + namesz;

				if (desc + descsz > end)
					break;
				if (nh->n_type == NT_PRSTATUS) {
					if (!prstatus && nh->n_descsz >= sizeof(struct elf_prstatus)) {
						const struct elf_prstatus *ps = (const void *)desc;

						pid = ps->pr_pid;
						sig = ps->pr_cursig;
					}
					prstatus++;
				} else if (nh->n_type == NT_PRPSINFO &&
					   nh->n_descsz >= sizeof(struct elf_prpsinfo)) {
					/* the process id: NT_PRSTATUS has the thread's */
					pid = ((const struct elf_prpsinfo *)desc)->pr_pid;
				} else if (nh->n_type == NT_SIGINFO) {
					siginfo++;
				} else if (nh->n_type == NT_FILE) {
					ntfile++;
				} else if (nh->n_type == NT_AUXV) {
					auxv++;
				}
				n = desc + descsz;
			}
		} else if (ph[i].p_type == PT_LOAD && ph[i].p_filesz) {
			loads++;
			load_bytes += ph[i].p_filesz;
			for (uint64_t off = 0; off + PATTERN_PAGE <= ph[i].p_filesz;
			     off += PATTERN_PAGE) {
				struct pattern_hdr h;

				if (!pattern_check(m + ph[i].p_offset + off, &h))
					continue;
				if (pid >= 0 && h.pid != (uint32_t)pid)
					continue;
				if (!seen) {
					npages_expected = h.npages;
					seen = calloc(h.npages, 1);
					if (!seen)
						return 2;
				}
				if (h.npages != (uint32_t)npages_expected)
					continue;
				if (seen[h.index])
					dupes++;
				else
					pages++;
				seen[h.index] = 1;
			}
		}
	}
	if (!prstatus)
		problem = "no NT_PRSTATUS note";
out:
	printf("{");
	json_str("file", path, 1);
	printf("\"size\": %zu, ", size);
	printf("\"valid\": %s, ", *problem ? "false" : "true");
	json_str("problem", problem, 1);
	printf("\"prstatus\": %ld, \"siginfo\": %ld, \"nt_file\": %ld, \"auxv\": %ld, ",
	       prstatus, siginfo, ntfile, auxv);
	printf("\"pid\": %ld, \"signal\": %ld, \"loads\": %ld, \"load_bytes\": %llu, ",
	       pid, sig, loads, load_bytes);
	printf("\"pattern_pages\": %ld, \"pattern_pages_expected\": %ld, \"pattern_dupes\": %ld, ",
	       pages, npages_expected, dupes);
	printf("\"complete\": %s}\n",
	       !*problem && pages == npages_expected ? "true" : "false");
	return *problem ? 1 : 0;
}
