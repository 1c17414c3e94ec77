/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The page pattern the crasher writes and corecheck looks for: every page
 * starts with a header naming the process and the page's index, and the
 * rest of the page is a byte sequence derived from that index, so a page
 * that reached the core intact can be told from a torn or missing one.
 *
 * How many pages a process wrote is recorded outside its core, in a ledger
 * file $PATTERN_LEDGER_DIR/coredam-pattern.PID (default /tmp): a core of
 * zeros, or one cut short, has no pages of its own to tell what is missing.
 */
#ifndef COREDAM_PATTERN_H
#define COREDAM_PATTERN_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PATTERN_PAGE 4096
#define PATTERN_MAGIC "CDAMPAT1"
#define PATTERN_LEDGER_ENV "PATTERN_LEDGER_DIR"
#define PATTERN_LEDGER_DIR "/tmp"

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

/* the ledger's name for process @pid: 0, or -ENAMETOOLONG */
static inline int pattern_ledger_path(long pid, char *ret_path, size_t size)
{
	const char *dir = getenv(PATTERN_LEDGER_ENV);
	int n;

	if (!dir || !*dir)
		dir = PATTERN_LEDGER_DIR;
	n = snprintf(ret_path, size, "%s/coredam-pattern.%ld", dir, pid);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/*
 * Record that this process wrote @npages pattern pages: 0, or -errno.
 * O_NOFOLLOW: the directory is shared (world-writable /tmp), and a link
 * planted there must not make us write elsewhere.
 */
static inline int pattern_ledger_write(uint32_t npages)
{
	char path[4096], line[16];
	int fd, n, r;

	r = pattern_ledger_path((long)getpid(), path, sizeof(path));
	if (r < 0)
		return r;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = snprintf(line, sizeof(line), "%u\n", npages);
	errno = 0;
	if (write(fd, line, (size_t)n) != n)
		r = errno ? -errno : -EIO;
	if (close(fd) < 0 && !r)
		r = -errno;
	return r;
}

/*
 * How many pattern pages process @pid recorded, into *ret_npages:
 * 0, -ENOENT when it recorded none, -EBADMSG when the ledger is not one
 * number, or another -errno.
 */
static inline int pattern_ledger_read(long pid, uint32_t *ret_npages)
{
	char path[4096], line[16], *end;
	unsigned long v;
	ssize_t n;
	int fd, r;

	r = pattern_ledger_path(pid, path, sizeof(path));
	if (r < 0)
		return r;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, line, sizeof(line) - 1);
	r = n < 0 ? -errno : 0;
	close(fd);
	if (r < 0)
		return r;
	line[n] = '\0';
	if (line[0] < '0' || line[0] > '9')
		return -EBADMSG;
	errno = 0;
	v = strtoul(line, &end, 10);
	if (errno || strcmp(end, "\n") != 0 || v > UINT32_MAX)
		return -EBADMSG;
	*ret_npages = (uint32_t)v;
	return 0;
}

#endif
