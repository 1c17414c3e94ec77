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

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The most of a stream's start worth keeping for coredam_elf_core_size():
 * a 64-bit ELF header and 65534 program headers (one more is PN_XNUM,
 * extended numbering, which is not read).
 */
#define COREDAM_ELF_HEAD_MAX (64 + 65534 * 56)

/*
 * The most of the first note segment kept besides, for
 * coredam_elf_core_creds(): the kernel writes the process-wide notes
 * (NT_PRPSINFO, NT_SIGINFO, NT_AUXV) right after the first thread's
 * NT_PRSTATUS, within the first few KiB of the segment.
 */
#define COREDAM_ELF_NOTES_MAX (64 * 1024)

/* The most of a stream's start coredam_elf_head_want() ever asks for. */
#define COREDAM_ELF_KEEP_MAX (COREDAM_ELF_HEAD_MAX + COREDAM_ELF_NOTES_MAX)

/*
 * Pure: how many bytes of the stream's start coredam_elf_core_size() and
 * coredam_elf_core_creds() need to decide, given the @len bytes of @head
 * seen so far: the ELF header first, then the end of the program header
 * table, then the first COREDAM_ELF_NOTES_MAX bytes of the first PT_NOTE
 * segment; at most COREDAM_ELF_KEEP_MAX. Returns @len (want no more) once
 * more bytes cannot change the answers.
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

/*
 * Who the crashed process was, from its core's own notes (never from
 * /proc/PID, which may be another process by the time it is read): the
 * real uid and gid when it dumped (NT_PRPSINFO) and the ids and AT_SECURE
 * the kernel gave it at exec (NT_AUXV), each as the process saw them in
 * its own user namespace. A field the notes do not hold is
 * COREDAM_ELF_NO_ID.
 */
#define COREDAM_ELF_NO_ID UINT64_MAX

struct coredam_core_creds {
	uint64_t uid, gid;			/* NT_PRPSINFO pr_uid, pr_gid */
	uint64_t at_uid, at_euid, at_gid, at_egid;	/* NT_AUXV */
	uint64_t at_secure;
};

/*
 * Pure: read the first @len bytes of a core (@head) for the notes above,
 * in the first PT_NOTE segment as far as @len holds it. Returns 0 when
 * both NT_PRPSINFO and NT_AUXV were found and read, with every field
 * either read or COREDAM_ELF_NO_ID; -EMEDIUMTYPE or -ENODATA as
 * coredam_elf_core_size(), also when either note is missing, malformed or
 * of a layout this does not know (then *ret is all COREDAM_ELF_NO_ID).
 */
int coredam_elf_core_creds(const void *head, size_t len, struct coredam_core_creds *ret);

/*
 * Where a process crashed, from its core's notes, for telling one crash
 * from another (repeats.h): the executable (the NT_FILE mapping that holds
 * AT_ENTRY) and the crashing thread's program counter (the first
 * NT_PRSTATUS, the thread that dumped), as a file and an offset into it
 * (the NT_FILE mapping that holds it), which address-space randomization
 * does not move. The names are the kernel's paths of the mapped files:
 * bytes the crashed user chose, cut at their field's size, never
 * unescaped into a log or a path.
 */
struct coredam_core_site {
	char exe[256];		/* "" when unknown */
	char file[256];		/* the file the pc is in; "" when it is in none */
	uint64_t offset;	/* of the pc in @file */
	uint64_t pc;
	bool have_pc;		/* the architecture is one this reads (x86-64, aarch64) */
};

/*
 * Pure: read the first @len bytes of a core (@head) for its site. Returns
 * 0 with whatever was found (a field not found is "" or have_pc false),
 * or -EMEDIUMTYPE or -ENODATA as coredam_elf_core_size() (then *ret is
 * zeroed): a core that says nothing cannot be told from another.
 */
int coredam_elf_core_site(const void *head, size_t len, struct coredam_core_site *ret);

#endif
