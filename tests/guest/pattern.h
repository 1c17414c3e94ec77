/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page pattern the crasher writes and corecheck looks for: every page
 * starts with a header naming the process and the page's index, and the
 * rest of the page is a byte sequence derived from that index, so a page
 * that reached the core intact can be told from a torn or missing one.
 */
#ifndef COREDAM_PATTERN_H
#define COREDAM_PATTERN_H

#include <stdint.h>
#include <string.h>

#define PATTERN_PAGE 4096
#define PATTERN_MAGIC "CDAMPAT1"

struct pattern_hdr {
	char magic[8];
	uint32_t pid;
	uint32_t index;
	uint32_t npages;
	uint32_t check;
};

static inline unsigned char pattern_byte(uint32_t index, size_t off)
{
	return (unsigned char)(index * 131u + off * 7u + (off >> 8));
}

static inline void pattern_fill(unsigned char *page, uint32_t pid, uint32_t index,
				uint32_t npages)
{
	struct pattern_hdr h;

	memcpy(h.magic, PATTERN_MAGIC, 8);
	h.pid = pid;
	h.index = index;
	h.npages = npages;
	h.check = pid ^ index ^ npages ^ 0x5a5a5a5au;
	memcpy(page, &h, sizeof(h));
	for (size_t off = sizeof(h); off < PATTERN_PAGE; off++)
		page[off] = pattern_byte(index, off);
}

/* 1: a whole, intact pattern page; 0: anything else */
static inline int pattern_check(const unsigned char *page, struct pattern_hdr *ret_hdr)
{
	struct pattern_hdr h;

	memcpy(&h, page, sizeof(h));
	if (memcmp(h.magic, PATTERN_MAGIC, 8) != 0)
		return 0;
	if (h.check != (h.pid ^ h.index ^ h.npages ^ 0x5a5a5a5au) || h.index >= h.npages)
		return 0;
	for (size_t off = sizeof(h); off < PATTERN_PAGE; off++)
		if (page[off] != pattern_byte(h.index, off))
			return 0;
	*ret_hdr = h;
	return 1;
}

#endif
