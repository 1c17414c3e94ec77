/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* ELF cores built byte by byte for the tests: the headers and notes the kernel writes. */
#ifndef COREDAM_TEST_CORE_BUILD_H
#define COREDAM_TEST_CORE_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* @v into the @n bytes at @p, in the byte order @msb says. */
void core_put(unsigned char *p, size_t n, uint64_t v, bool msb);

/*
 * A core as the kernel starts one: ELF header, @phnum program headers
 * (a note, then loads of 8 KiB each from offset 4096), into @buf of
 * @size bytes, zeroed. Returns the size the headers declare.
 */
uint64_t core_make(unsigned char *buf, size_t size, bool is64, bool msb, unsigned int phnum);

/* Append a note named @name of type @type with @desc at @pos; returns the next offset. */
size_t core_note(unsigned char *buf, size_t pos, bool msb, const char *name, uint32_t type,
		 const unsigned char *desc, size_t descsz);

/* A socket whose other end sent @len bytes of @buf and shut down: a core as a stream. */
int core_stream(const unsigned char *buf, size_t len);

#endif
