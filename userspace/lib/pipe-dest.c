// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe: destination and helper checks. */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>

#include "pipe-dest.h"
#include "error.h"
#include "macro.h"
#include "string-util.h"

/*
 * May nobody but @owner (and root, where @root_ok) change the directory
 * @st? Others may write it only when it is sticky and not @last, the
 * directory that holds the file itself.
 */
static int check_dir_stat(const struct stat *st, const char *shown, uid_t owner, bool root_ok, bool last,
			  struct coredam_error *reterr)
{
	if (st->st_uid != owner && !(root_ok && st->st_uid == 0))
		return coredam_error_set(reterr, -EPERM,
					 "%s: owned by uid %u, not %u", shown, (unsigned)st->st_uid, (unsigned)owner);
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (last || !(st->st_mode & S_ISVTX)))
		return coredam_error_set(reterr, -EPERM, "%s: writable by group or others (mode %04o)", shown,
					 (unsigned)(st->st_mode & 07777));
	return 0;
}

static int check_dir(int fd, const char *shown, uid_t owner, bool last, struct coredam_error *reterr)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return coredam_error_set(reterr, -errno, "%s: fstat: %s", shown, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return coredam_error_set(reterr, -ENOTDIR, "%s: not a directory", shown);
	/* the destination itself is @owner's; its ancestors may be root's */
	return check_dir_stat(&st, shown, owner, !last, last, reterr);
}

int coredam_pipe_open_dest(const char *dir, uid_t owner, int *ret_fd, struct coredam_error *reterr)
{
	_cleanup_close_ int fd = -1;
	char buf[PATH_MAX], shown[PATH_MAX] = "";
	char *p, *save = NULL;
	size_t so = 0;
	int r;

	if (dir[0] != '/')
		return coredam_error_set(reterr, -EINVAL, "%s: not an absolute path", dir);
	r = xsnprintf(buf, sizeof(buf), "%s", dir);
	if (r < 0)
		return coredam_error_set(reterr, r, "destination path too long");
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return coredam_error_set(reterr, -errno, "/: %s", strerror(errno));
	p = strtok_r(buf, "/", &save);
	if (!p)
		return coredam_error_set(reterr, -EINVAL, "/ cannot be the destination");
	for (; p; p = strtok_r(NULL, "/", &save)) {
		int nfd;

		if (strcmp(p, ".") == 0 || strcmp(p, "..") == 0)
			return coredam_error_set(reterr, -EINVAL, "%s: \".\" and \"..\" are not allowed", dir);
		/* ancestors must hold still: root's (or @owner's), no one else may write them unless sticky */
		r = check_dir(fd, so ? shown : "/", owner, false, reterr);
		if (r < 0)
			return r;
		so += (size_t)snprintf(shown + so, sizeof(shown) - so, "/%s", p);
		if (so >= sizeof(shown))
			so = sizeof(shown) - 1;
		nfd = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			r = -errno;
			if (errno == ELOOP || errno == ENOTDIR) {
				struct stat st;

				if (fstatat(fd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
					return coredam_error_set(reterr, -ELOOP,
								 "%s: is a symbolic link", shown);
			}
			return coredam_error_set(reterr, r, "%s: %s", shown, strerror(-r));
		}
		close(fd);
		fd = nfd;
	}
	r = check_dir(fd, shown, owner, true, reterr);
	if (r < 0)
		return r;
	*ret_fd = take_fd(&fd);
	return 0;
}

/* Is the directory @path (of the helper, @last: its own) safe from everyone but @owner and root? */
static int check_helper_dir(const char *path, uid_t owner, bool last, struct coredam_error *reterr)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return coredam_error_set(reterr, -errno, "%s: %s", path, strerror(errno));
	return check_dir_stat(&st, path, owner, true, last, reterr);
}

int coredam_pipe_helper_check(const char *path, uid_t owner, struct coredam_error *reterr)
{
	char real[PATH_MAX], dir[PATH_MAX];
	const char *base;
	struct stat st;
	int r;

	if (path[0] != '/')
		return coredam_error_set(reterr, -EINVAL, "%s: not an absolute path", path);
	if (!realpath(path, real))
		return coredam_error_set(reterr, -errno, "%s: %s", path, strerror(errno));
	if (stat(real, &st) < 0)
		return coredam_error_set(reterr, -errno, "%s: %s", real, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return coredam_error_set(reterr, -EINVAL, "%s: not a regular file", real);
	if (!(st.st_mode & S_IXUSR))
		return coredam_error_set(reterr, -EACCES,
					 "%s: not executable (mode %04o)", real, (unsigned)(st.st_mode & 07777));
	if (st.st_uid != owner)
		return coredam_error_set(reterr, -EPERM,
					 "%s: owned by uid %u, not %u", real, (unsigned)st.st_uid, (unsigned)owner);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return coredam_error_set(reterr, -EPERM, "%s: writable by group or others (mode %04o)", real,
					 (unsigned)(st.st_mode & 07777));
	/*
	 * Whoever may write a directory on the way may put another program
	 * in its place: each is @owner's or root's and writable by nobody
	 * else (an ancestor may be sticky; the helper's own directory not).
	 */
	base = strrchr(real, '/');
	for (const char *p = real; p; p = strchr(p + 1, '/')) {
		if (p > base)
			break;
		r = xsnprintf(dir, sizeof(dir), "%.*s", p == real ? 1 : (int)(p - real), real);
		if (r < 0)
			return r;
		r = check_helper_dir(dir, owner, p == base, reterr);
		if (r < 0)
			return r;
	}
	return 0;
}
