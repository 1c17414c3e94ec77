// SPDX-License-Identifier: LGPL-2.1-or-later
/* ELF cores built byte by byte for the tests; see core-build.h. */
#include <elf.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core-build.h"
#include "macro.h"
#include "test.h"

void core_put(unsigned char *p, size_t n, uint64_t v, bool msb)
{
	for (size_t i = 0; i < n; i++)
		p[msb ? n - 1 - i : i] = (unsigned char)(v >> (8 * i));
}

uint64_t core_make(unsigned char *buf, size_t size, bool is64, bool msb, unsigned int phnum)
{
	size_t eh = is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	size_t ph = is64 ? sizeof(Elf64_Phdr) : sizeof(Elf32_Phdr);
	uint64_t end = 0;

	memset(buf, 0, size);
	memcpy(buf, ELFMAG, SELFMAG);
	buf[EI_CLASS] = is64 ? ELFCLASS64 : ELFCLASS32;
	buf[EI_DATA] = msb ? ELFDATA2MSB : ELFDATA2LSB;
	buf[EI_VERSION] = EV_CURRENT;
	core_put(buf + offsetof(Elf64_Ehdr, e_type), 2, ET_CORE, msb);
	if (is64) {
		core_put(buf + offsetof(Elf64_Ehdr, e_phoff), 8, eh, msb);
		core_put(buf + offsetof(Elf64_Ehdr, e_ehsize), 2, eh, msb);
		core_put(buf + offsetof(Elf64_Ehdr, e_phentsize), 2, ph, msb);
		core_put(buf + offsetof(Elf64_Ehdr, e_phnum), 2, phnum, msb);
	} else {
		core_put(buf + offsetof(Elf32_Ehdr, e_phoff), 4, eh, msb);
		core_put(buf + offsetof(Elf32_Ehdr, e_ehsize), 2, eh, msb);
		core_put(buf + offsetof(Elf32_Ehdr, e_phentsize), 2, ph, msb);
		core_put(buf + offsetof(Elf32_Ehdr, e_phnum), 2, phnum, msb);
	}
	for (unsigned int i = 0; i < phnum; i++) {
		unsigned char *p = buf + eh + i * ph;
		uint64_t off = i == 0 ? eh + phnum * ph : 4096 + (uint64_t)(i - 1) * 8192;
		uint64_t filesz = i == 0 ? 100 : 8192;

		if (is64) {
			core_put(p + offsetof(Elf64_Phdr, p_type), 4, i == 0 ? PT_NOTE : PT_LOAD, msb);
			core_put(p + offsetof(Elf64_Phdr, p_offset), 8, off, msb);
			core_put(p + offsetof(Elf64_Phdr, p_filesz), 8, filesz, msb);
			core_put(p + offsetof(Elf64_Phdr, p_memsz), 8, i == 0 ? 0 : filesz, msb);
		} else {
			core_put(p + offsetof(Elf32_Phdr, p_type), 4, i == 0 ? PT_NOTE : PT_LOAD, msb);
			core_put(p + offsetof(Elf32_Phdr, p_offset), 4, off, msb);
			core_put(p + offsetof(Elf32_Phdr, p_filesz), 4, filesz, msb);
			core_put(p + offsetof(Elf32_Phdr, p_memsz), 4, i == 0 ? 0 : filesz, msb);
		}
		end = MAX(end, off + filesz);
	}
	return end;
}

size_t core_note(unsigned char *buf, size_t pos, bool msb, const char *name, uint32_t type,
		 const unsigned char *desc, size_t descsz)
{
	size_t namesz = strlen(name) + 1;

	core_put(buf + pos, 4, namesz, msb);
	core_put(buf + pos + 4, 4, descsz, msb);
	core_put(buf + pos + 8, 4, type, msb);
	memcpy(buf + pos + 12, name, namesz);
	pos += 12 + ((namesz + 3) & ~(size_t)3);
	memcpy(buf + pos, desc, descsz);
	return pos + ((descsz + 3) & ~(size_t)3);
}

int core_stream(const unsigned char *buf, size_t len)
{
	int sv[2];

	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	if (len)
		CHECK_EQ_INT(send(sv[1], buf, len, 0), (long long)len);
	close(sv[1]);
	return sv[0];
}
