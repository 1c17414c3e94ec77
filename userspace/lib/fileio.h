/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Reading and writing whole small files relative to a directory fd. */
#ifndef COREDAM_FILEIO_H
#define COREDAM_FILEIO_H

#include "macro.h"

/* Fill @buf from @fd up to @size bytes or EOF; the count read. */
ssize_t read_full(int fd, void *buf, size_t size);

/*
 * The same, giving up at @deadline (CLOCK_MONOTONIC; 0: never, as
 * read_full()): the bytes read by then, with *@ret_timed_out set. A stream
 * that stalls does not hold the reader past its deadline.
 */
ssize_t read_full_until(int fd, void *buf, size_t size, uint64_t deadline, bool *ret_timed_out);

/* Write all @len bytes of @data to @fd, retrying short writes and EINTR. */
int write_all(int fd, const void *data, size_t len);

/*
 * Read a whole small file (at most @max bytes) relative to @dirfd into a
 * NUL-terminated buffer. -EFBIG when the file is larger than @max.
 */
int read_file_at(int dirfd, const char *path, size_t max, char **ret);

/* Read the first line of a file into @buf, newline stripped. -ENOBUFS if it does not fit. */
int read_line_at(int dirfd, const char *path, char *buf, size_t size);

/*
 * Write @s with one write() to an existing file relative to @dirfd (no
 * O_CREAT, no O_TRUNC: the cgroupfs/procfs way). A short write is -EIO.
 */
int write_file_at(int dirfd, const char *path, const char *s);

/*
 * Create or replace @path under @dirfd atomically: write a temporary file
 * in the same directory, fsync it, rename it over @path.
 *
 * Safe in a directory others can write to: the temporary is an O_TMPFILE
 * linked to a random name, or else a random name created with
 * O_CREAT|O_EXCL|O_NOFOLLOW; nothing that exists is followed, truncated or
 * chmod()ed. A symlink at @path is replaced, not followed. On failure no
 * temporary is left behind.
 */
int write_file_atomic_at(int dirfd, const char *path, const char *data, size_t len, mode_t mode);

/* The same for an absolute or relative @path: its directory must exist. */
int write_file_atomic(const char *path, const char *data, size_t len, mode_t mode);

/*
 * Finish a temporary file @tmp (open as @fd) under @dirfd: set @mode, fsync,
 * renameat2() it to @path with @flags. On failure @tmp is removed.
 */
int tmpfile_commit_at(int dirfd, int fd, const char *tmp, const char *path, mode_t mode, unsigned int flags);

#endif
