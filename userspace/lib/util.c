// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>

#include "util.h"

bool coredam_debug;

void coredam_log_debug(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("debug: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

ssize_t read_full(int fd, void *buf, size_t size)
{
	size_t o = 0;

	while (o < size) {
		ssize_t n = read(fd, (unsigned char *)buf + o, size - o);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		o += (size_t)n;
	}
	return (ssize_t)o;
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

int tmpfile_commit_at(int dirfd, int fd, const char *tmp, const char *path, mode_t mode, unsigned int flags)
{
	int r;

	if (fchmod(fd, mode) < 0 || fsync(fd) < 0) {
		r = -errno;
		goto out_unlink;
	}
	if (renameat2(dirfd, tmp, dirfd, path, flags) < 0) {
		r = -errno;
		goto out_unlink;
	}
	return 0;

out_unlink:
	unlinkat(dirfd, tmp, 0);
	return r;
}

/* "<path>.tmp.<16 hex digits>": a name nobody can plant anything at in advance. */
static int random_tmp_name(const char *path, char *buf, size_t size)
{
	uint64_t v;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t)sizeof(v))
		v = now_usec(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)buf;
	return xsnprintf(buf, size, "%s.tmp.%016" PRIx64, path, v);
}

static int write_all_fd(int fd, const char *data, size_t len)
{
	while (len > 0) {
		ssize_t n = write(fd, data, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		data += n;
		len -= (size_t)n;
	}
	return 0;
}

/* @data into @fd, then @mode, then to disk. */
static int fill_fd(int fd, const char *data, size_t len, mode_t mode)
{
	int r;

	r = write_all_fd(fd, data, len);
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
			goto rename;
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
		goto out_unlink;

rename:
	/* rename() replaces the name @path, a symlink there included, and never follows it */
	if (renameat(dirfd, tmp, dirfd, path) < 0) {
		r = -errno;
		goto out_unlink;
	}
	return 0;

out_unlink:
	unlinkat(dirfd, tmp, 0);
	return r;
}

int xsnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size)
		return -ENOBUFS;
	return n;
}

/* The decimal number at the start of @s; *ret_end points after its digits. */
static int parse_leading_u64(const char *s, unsigned long long *ret, char **ret_end)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -errno;
	*ret = v;
	*ret_end = end;
	return 0;
}

int parse_u64(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;
	int r;

	r = parse_leading_u64(s, &v, &end);
	if (r < 0)
		return r;
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_u32(const char *s, uint32_t *ret)
{
	uint64_t v;
	int r;

	r = parse_u64(s, &v);
	if (r < 0)
		return r;
	if (v > UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

int parse_size(const char *s, uint64_t base, uint64_t *ret)
{
	static const char suffixes[] = "KMGT";
	unsigned long long whole, frac = 0, frac_div = 1;
	uint64_t mult = 1, v;
	const char *p;
	char *end;
	int r;

	r = parse_leading_u64(s, &whole, &end);
	if (r < 0)
		return r;
	p = end;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		while (isdigit((unsigned char)*p)) {
			if (frac_div < 1000000) {
				frac = frac * 10 + (*p - '0');
				frac_div *= 10;
			}
			p++;
		}
	}
	if (*p) {
		const char *c = strchr(suffixes, toupper((unsigned char)*p));

		if (!c || !*c)
			return -EINVAL;
		for (int i = 0; i <= c - suffixes; i++)
			mult *= base;
		p++;
		if (*p == 'i' && base == 1024)
			p++;
	}
	if (*p == 'B' || *p == 'b')
		p++;
	if (base == 1000 && strcmp(p, "/s") == 0)
		p += 2;
	if (*p)
		return -EINVAL;
	if (mult > 1 && whole > UINT64_MAX / mult)
		return -ERANGE;
	v = whole * mult;
	if (frac) {
		uint64_t part;

		if (mult == 1)
			return -EINVAL; /* fractions of a byte */
		part = (uint64_t)((double)frac / frac_div * mult);
		if (part > UINT64_MAX - v)
			return -ERANGE;
		v += part;
	}
	*ret = v;
	return 0;
}

int parse_duration(const char *s, uint64_t *ret_usec)
{
	static const struct {
		const char *suffix;
		uint64_t usec;
	} units[] = {
		{ "", 1000000 }, { "s", 1000000 }, { "sec", 1000000 },
		{ "ms", 1000 }, { "msec", 1000 }, { "us", 1 }, { "usec", 1 },
		{ "m", 60000000 }, { "min", 60000000 }, { "h", 3600000000ULL },
	};
	unsigned long long v;
	char *end;
	int r;

	r = parse_leading_u64(s, &v, &end);
	if (r < 0)
		return r;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < ELEMENTSOF(units); i++) {
		if (strcmp(end, units[i].suffix) != 0)
			continue;
		if (v > UINT64_MAX / units[i].usec)
			return -ERANGE;
		*ret_usec = v * units[i].usec;
		return 0;
	}
	return -EINVAL;
}

int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "1", "yes", "y", "true", "on" };
	static const char *const no[] = { "0", "no", "n", "false", "off" };

	for (size_t i = 0; i < ELEMENTSOF(yes); i++)
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
	for (size_t i = 0; i < ELEMENTSOF(no); i++)
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	return -EINVAL;
}

const char *format_size(char *buf, size_t size, uint64_t v)
{
	static const char units[] = "KMGT";
	double d = (double)v;
	int u = -1;

	while (d >= 1024.0 && u < 3) {
		d /= 1024.0;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%" PRIu64 "B", v);
	else
		snprintf(buf, size, "%.1f%c", d, units[u]);
	return buf;
}

char *strstrip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

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

uint64_t now_usec(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
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

int grow_array(void **p, size_t *alloc, size_t n, size_t size, size_t first)
{
	size_t want;
	void *nv;

	if (n < *alloc)
		return 0;
	want = *alloc ? 2 * *alloc : first;
	nv = realloc(*p, want * size);
	if (!nv)
		return -ENOMEM;
	*p = nv;
	*alloc = want;
	return 0;
}
