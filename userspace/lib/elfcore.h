/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * How long a complete ELF core is, read from its first bytes: the ELF
 * header and the program headers the kernel writes at the start of a core.
 *
 * A core piped to a helper has no holes: the kernel writes zeros for them,
 * so a complete core is at least max(p_offset + p_filesz) over its program
 * headers long. A stream that ends before that was cut short (the crashed
 * process killed, or out of memory, while the kernel dumped it).
 */
#ifndef COREDAM_ELFCORE_H
#define COREDAM_ELFCORE_H

#include <stddef.h>
#include <stdint.h>

/*
 * The most of a stream's start worth keeping for coredam_elf_core_size():
 * a 64-bit ELF header and 65534 program headers (one more is PN_XNUM,
 * extended numbering, which is not read).
 */
#define COREDAM_ELF_HEAD_MAX (64 + 65534 * 56)

/*
 * Pure: how many bytes of the stream's start coredam_elf_core_size() needs
 * to decide, given the @len bytes of @head seen so far: the ELF header
 * first, then the end of the program header table, at most
 * COREDAM_ELF_HEAD_MAX. Returns @len (want no more) once more bytes cannot
 * change the answer.
 */
size_t coredam_elf_head_want(const void *head, size_t len);

/*
 * Pure: the size of the complete core whose first @len bytes are @head,
 * max(p_offset + p_filesz) over its program headers. 32-bit and 64-bit
 * ELF, either byte order. Returns 0 and *ret_size, or (*ret_size
 * untouched) -EMEDIUMTYPE when @head is no ELF core this can read (not ELF,
 * not ET_CORE, an unknown header size, no program headers, e_phnum ==
 * PN_XNUM, an end that overflows) and -ENODATA when @len does not reach
 * the end of the program header table. Either means: size unknown.
 */
int coredam_elf_core_size(const void *head, size_t len, uint64_t *ret_size);

#endif
