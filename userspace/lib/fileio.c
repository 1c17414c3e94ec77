// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "fileio.h"
#include "path-util.h"
#include "string-util.h"
#include "time-util.h"

/*
 * Wait until @fd is readable or @deadline (CLOCK_MONOTONIC) passes: 1
 * readable, 0 to ask again (a signal, poll()'s own timeout), -ETIME at the
 * deadline, -errno.
 */
static int wait_readable(int fd, uint64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t now = now_usec(CLOCK_MONOTONIC);
	int r;

	if (now >= deadline)
		return -ETIME;
	r = poll(&p, 1, (int)MIN((deadline - now + 999) / 1000, (uint64_t)INT_MAX));
	if (r < 0 && errno != EINTR)
		return -errno;
	return r > 0;
}

ssize_t read_full_until(int fd, void *buf, size_t size, uint64_t deadline, bool *ret_timed_out)
{
	size_t o = 0;

	while (o < size) {
		ssize_t n;

		if (deadline) {
			int r = wait_readable(fd, deadline);

			if (r == -ETIME) {
				*ret_timed_out = true;
				break;
			}
			if (r < 0)
				return r;
			if (r == 0)
				continue;
		}
		n = read(fd, (unsigned char *)buf + o, size - o);
		if (n < 0) {
			if (errno == EINTR || (deadline && errno == EAGAIN))
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		o += (size_t)n;
	}
	return (ssize_t)o;
}

ssize_t read_full(int fd, void *buf, size_t size)
{
	return read_full_until(fd, buf, size, 0, NULL);
}

int read_file_at(int dirfd, const char *path, size_t max, char **ret)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len;
	ssize_t n;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	buf = malloc(max + 1);
	if (!buf)
		return -ENOMEM;
	n = read_full(fd, buf, max + 1);
	if (n < 0)
		return (int)n;
	len = (size_t)n;
	if (len > max)
		return -EFBIG;
	buf[len] = '\0';
	*ret = TAKE_PTR(buf);
	return (int)MIN(len, (size_t)INT32_MAX);
}

int read_line_at(int dirfd, const char *path, char *buf, size_t size)
{
	_cleanup_free_ char *s = NULL;
	size_t n;
	int r;

	r = read_file_at(dirfd, path, 65536, &s);
	if (r < 0)
		return r;
	n = strcspn(s, "\n");
	if (n >= size)
		return -ENOBUFS;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return 0;
}

int write_file_at(int dirfd, const char *path, const char *s)
{
	_cleanup_close_ int fd = -1;
	size_t len = strlen(s);
	ssize_t n;

	fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	n = write(fd, s, len);
	if (n < 0)
		return -errno;
	if ((size_t)n != len)
		return -EIO;
	return 0;
}

/* Remove the temporary @tmp after the failure @r; returns @r. */
static int tmp_remove_at(int dirfd, const char *tmp, int r)
{
	unlinkat(dirfd, tmp, 0);
	return r;
}

/*
 * renameat2() @tmp to @path with @flags; on failure @tmp is removed. With
 * no flags rename() replaces the name @path, a symlink there included, and
 * never follows it.
 */
static int tmp_rename_at(int dirfd, const char *tmp, const char *path, unsigned int flags)
{
	if (renameat2(dirfd, tmp, dirfd, path, flags) < 0)
		return tmp_remove_at(dirfd, tmp, -errno);
	return 0;
}

int tmpfile_commit_at(int dirfd, int fd, const char *tmp, const char *path, mode_t mode, unsigned int flags)
{
	if (fchmod(fd, mode) < 0 || fsync(fd) < 0)
		return tmp_remove_at(dirfd, tmp, -errno);
	return tmp_rename_at(dirfd, tmp, path, flags);
}

/* "<path>.tmp.<16 hex digits>": a name nobody can plant anything at in advance. */
static int random_tmp_name(const char *path, char *buf, size_t size)
{
	uint64_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
		v = now_usec(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)buf;
	return xsnprintf(buf, size, "%s.tmp.%016" PRIx64, path, v);
}

int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* @data into @fd, then @mode, then to disk. */
static int fill_fd(int fd, const char *data, size_t len, mode_t mode)
{
	int r;

	r = write_all(fd, data, len);
	if (r < 0)
		return r;
	if (fchmod(fd, mode) < 0 || fsync(fd) < 0)
		return -errno;
	return 0;
}

/*
 * An unnamed file (O_TMPFILE) in the directory of @path, filled; nothing
 * exists under any name yet, so nothing planted can be reached. -EOPNOTSUPP
 * (or -EISDIR, -EINVAL from older kernels) when the filesystem has none.
 */
static int anon_file_at(int dirfd, const char *path, const char *data, size_t len, mode_t mode, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int r;

	r = slash ? xsnprintf(dir, sizeof(dir), "%.*s", (int)(slash - path + 1), path)
		  : xsnprintf(dir, sizeof(dir), ".");
	if (r < 0)
		return r;
	fd = openat(dirfd, dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	r = fill_fd(fd, data, len, mode);
	if (r < 0)
		return r;
	*ret_fd = take_fd(&fd);
	return 0;
}

/*
 * Give the unnamed file @fd a fresh random name beside @path. linkat()
 * never follows a symlink at the new name and never replaces anything: a
 * name taken (by chance or by someone) is EEXIST, and another is tried.
 * -ENOENT when the kernel lets neither AT_EMPTY_PATH (CAP_DAC_READ_SEARCH)
 * nor /proc/self/fd name the file.
 */
static int link_anon_at(int fd, int dirfd, const char *path, char *tmp, size_t size)
{
	char proc[64];
	int r;

	r = xsnprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (r < 0)
		return r;
	for (int i = 0; i < 16; i++) {
		r = random_tmp_name(path, tmp, size);
		if (r < 0)
			return r;
		if (linkat(fd, "", dirfd, tmp, AT_EMPTY_PATH) == 0 ||
		    linkat(AT_FDCWD, proc, dirfd, tmp, AT_SYMLINK_FOLLOW) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* A fresh random name beside @path, created exclusively: never an existing file, never through a symlink. */
static int create_tmp_at(int dirfd, const char *path, char *tmp, size_t size, int *ret_fd)
{
	for (int i = 0; i < 16; i++) {
		int fd, r;

		r = random_tmp_name(path, tmp, size);
		if (r < 0)
			return r;
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
		if (fd >= 0) {
			*ret_fd = fd;
			return 0;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int write_file_atomic_at(int dirfd, const char *path, const char *data, size_t len, mode_t mode)
{
	_cleanup_close_ int fd = -1;
	char tmp[PATH_MAX];
	int r;

	/*
	 * The directory may belong to someone else (a metrics textfile
	 * directory): whatever they plant at a name must not be followed,
	 * truncated or chmod()ed by root. Preferred: an unnamed file, filled,
	 * then linked to a random name (linkat() cannot replace @path itself).
	 */
	r = anon_file_at(dirfd, path, data, len, mode, &fd);
	if (r == 0) {
		r = link_anon_at(fd, dirfd, path, tmp, sizeof(tmp));
		if (r == 0)
			return tmp_rename_at(dirfd, tmp, path, 0);
		if (r != -ENOENT)
			return r;
		close(take_fd(&fd));
	} else if (r != -EOPNOTSUPP && r != -EISDIR && r != -EINVAL) {
		return r;
	}
	/* no O_TMPFILE here (or no way to link one): a random name created with O_EXCL */
	r = create_tmp_at(dirfd, path, tmp, sizeof(tmp), &fd);
	if (r < 0)
		return r;
	r = fill_fd(fd, data, len, mode);
	if (r < 0)
		return tmp_remove_at(dirfd, tmp, r);
	return tmp_rename_at(dirfd, tmp, path, 0);
}

int write_file_atomic(const char *path, const char *data, size_t len, mode_t mode)
{
	_cleanup_close_ int dfd = -1;
	char dir[PATH_MAX];
	const char *base;
	int r;

	r = path_split(path, dir, sizeof(dir), &base);
	if (r < 0)
		return r;
	r = open_dir_at(AT_FDCWD, dir, &dfd);
	if (r < 0)
		return r;
	return write_file_atomic_at(dfd, base, data, len, mode);
}
