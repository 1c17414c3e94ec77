/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Repeats: twenty identical crashes a second are one bug. A crash's
 * signature is its executable, its signal and where it crashed (the file
 * and offset of the crashing thread's program counter: elfcore.h), hashed.
 * The first [Repeats] Keep= cores of a signature in every Interval= are
 * stored; the rest are skipped at once, before they take a place in the
 * queue or a byte of disk, and counted by signature.
 *
 * The table lives in <state>/pipe/repeats (root's, 0600: it names other
 * users' crashes), one line a signature, changed under the queue's lock:
 *
 *   HASH WINDOW_START LAST WINDOW_KEPT KEPT SKIPPED LABEL
 *
 * HASH in hex, times in CLOCK_BOOTTIME microseconds (the state directory
 * lives in /run: one boot), LABEL the signature for people, escaped
 * (escape.h) and the rest of the line. At most COREDAM_REPEATS_MAX
 * signatures: a new one replaces the one seen longest ago.
 */
#ifndef COREDAM_REPEATS_H
#define COREDAM_REPEATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "elfcore.h"

#define COREDAM_REPEATS_MAX 64
#define COREDAM_REPEATS_FILE "repeats"
#define COREDAM_REPEAT_LABEL_MAX 192

struct coredam_repeat_key {
	uint64_t hash;
	char label[COREDAM_REPEAT_LABEL_MAX];	/* raw bytes of the crashed process: escape to show */
};

struct coredam_repeat_entry {
	uint64_t hash;
	uint64_t window_start, last;	/* CLOCK_BOOTTIME usec */
	uint32_t window_kept;		/* cores let through in this window */
	uint64_t kept, skipped;		/* since the state directory was made */
	char label[COREDAM_REPEAT_LABEL_MAX];
};

struct coredam_repeats {
	size_t n;
	struct coredam_repeat_entry e[COREDAM_REPEATS_MAX];
};

/*
 * Pure: the signature of a crash. @site from coredam_elf_core_site() (NULL
 * or empty when the core's start could not be read); @comm the kernel's
 * %e, used when the core names no executable. A program counter in no
 * file (JIT code, a smashed stack) is not part of it: such addresses
 * differ from crash to crash.
 */
void coredam_repeat_key(const struct coredam_core_site *site, int signal, const char *comm,
			struct coredam_repeat_key *ret);

/* Pure: the file's text and back. A malformed line is skipped. */
int coredam_repeats_parse(const char *text, struct coredam_repeats *ret);
int coredam_repeats_format(const struct coredam_repeats *t, char *buf, size_t size);

/*
 * Pure: one crash of @k at @now. Starts the signature's window anew when
 * @interval_usec has passed since it began; the crash is kept while fewer
 * than @keep were kept in the window (0 = keep every one). Counts it kept
 * or skipped; *@ret_entry points at the signature's entry in @t.
 */
bool coredam_repeats_decide(struct coredam_repeats *t, const struct coredam_repeat_key *k, uint64_t now,
			    uint32_t keep, uint64_t interval_usec, const struct coredam_repeat_entry **ret_entry);

/*
 * coredam_repeats_decide() on <state>/pipe/repeats under the queue's lock,
 * at CLOCK_BOOTTIME now. 1 keep, 0 skip (the entry copied to
 * @ret_entry either way), -errno: the caller keeps the core. A damaged
 * file starts over.
 */
int coredam_repeats_check(const char *state_dir, const struct coredam_repeat_key *k, uint32_t keep,
			  uint64_t interval_usec, struct coredam_repeat_entry *ret_entry);

/* The table as it is; -ENOENT when no helper ever kept one. */
int coredam_repeats_read(const char *state_dir, struct coredam_repeats *ret);

/*
 * Is the @n-th skip of a signature one to log? A power of two (1st, 2nd,
 * 4th, ...), so that a storm of one crash writes a few lines, not one a
 * crash.
 */
static inline bool coredam_repeat_log_this(uint64_t n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

#endif
