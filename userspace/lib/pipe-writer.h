/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredam-pipe's writer: write-behind window, holes, zstd, and reading zstd back. */
#ifndef COREDAM_PIPE_WRITER_H
#define COREDAM_PIPE_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct coredam_pipe_copy_opts {
	uint64_t window;	/* write-behind window in bytes; 0 = none (plain buffered writes) */
	uint64_t limit;		/* stop after this many input bytes; UINT64_MAX = none */
	int compress_level;	/* 0 = store as is (sparse), > 0 = zstd at this level */
	void *head;		/* NULL, or keep the input's ELF headers here (see elfcore.h) */
	size_t head_size;	/* room at @head, at most what is kept */
	uint64_t deadline_usec;	/* CLOCK_MONOTONIC: read no more once it has passed; 0 = none */
	int space_fd;		/* with @space_floor: a file on the destination's file system */
	uint64_t space_floor;	/* stop once its free space (f_bavail) is below this; 0 = never */
	const void *prefix;	/* bytes of the input already read (coredam_pipe_read_head()), */
	size_t prefix_len;	/* copied before anything more is read */
};

struct coredam_pipe_copy_result {
	uint64_t in_bytes;	/* read from the input (up to the limit) */
	uint64_t out_bytes;	/* file size written */
	bool truncated;		/* input had more than the limit, or was cut at the deadline */
	bool timed_out;		/* cut at the deadline */
	bool no_space;		/* cut at the free-space floor */
	size_t head_len;	/* bytes kept at opts.head */
};

/*
 * Copy @infd to @outfd (a new regular file at offset 0). Uncompressed,
 * whole zero pages become holes. At most about two windows of the file are
 * dirty or under writeback at any time: writeback of each full window is
 * started with sync_file_range(SYNC_FILE_RANGE_WRITE), then the previous
 * window is waited for and dropped from the page cache. The file is
 * fdatasync()ed at the end. With @o->head, the start of the input is kept
 * there as far as coredam_elf_head_want() asks, for coredam_elf_core_size().
 * With @o->deadline_usec, the input is read (polled) no longer: what came
 * by then is kept, and the copy is truncated and timed out; the kernel, its
 * pipe closed when the helper exits, ends the dump. With @o->space_floor,
 * the free space of @o->space_fd's file system is checked before every
 * COREDAM_PIPE_SPACE_EVERY bytes: below the floor the copy stops,
 * truncated and out of space.
 */
#define COREDAM_PIPE_SPACE_EVERY (16ULL << 20)
int coredam_pipe_copy(int infd, int outfd, const struct coredam_pipe_copy_opts *o,
		      struct coredam_pipe_copy_result *ret);

/*
 * Read the start of a core from @infd into @buf (@size bytes, at least
 * COREDAM_ELF_KEEP_MAX to read all coredam_elf_head_want() may ask for)
 * until coredam_elf_head_want() wants no more, the input ends, or
 * @deadline_usec (CLOCK_MONOTONIC, 0 = none) passes. The bytes read go to
 * coredam_pipe_copy() as its prefix. 0 and their count in *@ret_len, or
 * -errno.
 */
int coredam_pipe_read_head(int infd, void *buf, size_t size, uint64_t deadline_usec, size_t *ret_len);

/*
 * A core read ahead of the disk (coredam_pipe_spool()): @len bytes at
 * @buf, in an anonymous mapping of @size bytes whose pages exist only as
 * they were filled; @ended when the input ended there, @timed_out when
 * the deadline cut the reading short.
 */
struct coredam_spool {
	void *buf;
	size_t size, len;
	bool ended, timed_out;
};

/*
 * Read @infd into memory as fast as it comes, until it ends, @max bytes
 * are read or @deadline_usec (CLOCK_MONOTONIC, 0 = none) passes: the
 * sender (a crashed process dumping into the coredump socket) is done
 * without waiting for the disk, and the bytes go to coredam_pipe_copy()
 * as its prefix. An error of the input ends the reading like its end
 * (what was read is kept; the copy meets the error again). 0, or -errno
 * when no memory could be mapped (*@ret empty).
 */
int coredam_pipe_spool(int infd, size_t max, uint64_t deadline_usec, struct coredam_spool *ret);
void coredam_spool_free(struct coredam_spool *s);

/* zstd stream @infd -> @outfd; returns the decompressed size in *ret_bytes. */
int coredam_pipe_decompress(int infd, int outfd, uint64_t *ret_bytes);

/*
 * Read the zstd stream on @fd to its end without storing it: its
 * decompressed length, and its first @head_size bytes in @head (how many in
 * *@ret_head_len). -EBADMSG when the stream is not zstd or ends inside a
 * frame (a compressed core cut short).
 */
int coredam_zstd_scan(int fd, void *head, size_t head_size, size_t *ret_head_len, uint64_t *ret_bytes);

#endif
