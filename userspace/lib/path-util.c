// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>

#include "path-util.h"
#include "string-util.h"

int path_join(char *buf, size_t size, const char *a, const char *b)
{
	size_t la = strlen(a);

	while (la > 1 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	if (la == 1 && a[0] == '/')
		return xsnprintf(buf, size, "/%s", b);
	if (!*b)
		return xsnprintf(buf, size, "%.*s", (int)la, a);
	return xsnprintf(buf, size, "%.*s/%s", (int)la, a, b);
}

int open_dir_at(int dirfd, const char *path, int *ret_fd)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	*ret_fd = fd;
	return 0;
}

int opendir_at(int dirfd, const char *path, DIR **ret)
{
	DIR *d;
	int fd;

	fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		int r = -errno;

		close(fd);
		return r;
	}
	*ret = d;
	return 0;
}

int mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	int r;

	r = xsnprintf(buf, sizeof(buf), "%s", path);
	if (r < 0)
		return r;
	for (char *p = buf + 1;; p++) {
		if (*p != '/' && *p != '\0')
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(buf, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			break;
	}
	return 0;
}

int path_split(const char *path, char *dir, size_t dirsize, const char **ret_base)
{
	const char *slash = strrchr(path, '/');

	if (!slash || !slash[1])
		return -EINVAL;
	/* a name in the root keeps its '/' as the directory */
	if (xsnprintf(dir, dirsize, "%.*s", (int)(slash == path ? 1 : slash - path), path) < 0)
		return -ENOBUFS;
	*ret_base = slash + 1;
	return 0;
}

const char *path_basename(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

int mkdir_parent(const char *path, mode_t mode)
{
	char dir[PATH_MAX];
	const char *base;
	int r;

	r = path_split(path, dir, sizeof(dir), &base);
	if (r < 0)
		return r;
	return mkdir_p(dir, mode);
}
