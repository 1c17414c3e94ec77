/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Small helpers shared by the library and the front ends: cleanup
 * attributes, file I/O relative to a directory fd, number parsing.
 *
 * Every fallible function returns 0 or a positive count on success and
 * -errno on failure; output parameters come last, are named ret_*, and are
 * left untouched on failure.
 */
#ifndef COREDAM_UTIL_H
#define COREDAM_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

#define _cleanup_(x) __attribute__((cleanup(x)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Hand an fd or a pointer out of a cleanup variable. */
static inline int take_fd(int *fd)
{
	int r = *fd;

	*fd = -1;
	return r;
}

#define TAKE_PTR(p) ({ __typeof__(p) _t = (p); (p) = NULL; _t; })

/* Debug logging of the library; off unless the front end turns it on. */
extern bool coredam_debug;
void coredam_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define log_debug(...) do { if (coredam_debug) coredam_log_debug(__VA_ARGS__); } while (0)

/*
 * Room for one more element in the array *@p of *@alloc elements of @size
 * bytes, @n of them used: doubled when full, @first elements the first
 * time. -ENOMEM leaves the array as it was.
 */
int grow_array(void **p, size_t *alloc, size_t n, size_t size, size_t first);

/* Fill @buf from @fd up to @size bytes or EOF; the count read. */
ssize_t read_full(int fd, void *buf, size_t size);

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

/*
 * Finish a temporary file @tmp (open as @fd) under @dirfd: set @mode, fsync,
 * renameat2() it to @path with @flags. On failure @tmp is removed.
 */
int tmpfile_commit_at(int dirfd, int fd, const char *tmp, const char *path, mode_t mode, unsigned int flags);

/* snprintf into a fixed buffer; -ENOBUFS on truncation. */
int xsnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Strict unsigned decimal; no sign, no trailing junk. */
int parse_u64(const char *s, uint64_t *ret);
int parse_u32(const char *s, uint32_t *ret);

/*
 * "50M", "1G", "4096", "512K": @base is 1024 for sizes (memory, space)
 * and 1000 for rates (bandwidth), following systemd's conventions.
 * Suffixes K M G T, optional trailing "B" ("10MB") and, for rates, "/s".
 */
int parse_size(const char *s, uint64_t base, uint64_t *ret);

/* "30s", "500ms", "2min", "1h", "250us"; a bare number is seconds. Result in microseconds. */
int parse_duration(const char *s, uint64_t *ret_usec);

/* yes/no/true/false/on/off/1/0 */
int parse_bool(const char *s, bool *ret);

/* Human form for messages: "10.0M", "1.5G". */
const char *format_size(char *buf, size_t size, uint64_t v);

/* Remove leading and trailing white space in place; returns @s. */
char *strstrip(char *s);

/* Join @a and @b with exactly one '/' between them. */
int path_join(char *buf, size_t size, const char *a, const char *b);

/* Open a directory relative to @dirfd (O_PATH is not used: we read/write through it). */
int open_dir_at(int dirfd, const char *path, int *ret_fd);

/* The same as a DIR stream, for readdir(). */
int opendir_at(int dirfd, const char *path, DIR **ret);

/* mkdir -p */
int mkdir_p(const char *path, mode_t mode);

uint64_t now_usec(int clock);

#endif
