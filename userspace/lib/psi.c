// SPDX-License-Identifier: LGPL-2.1-or-later
/* Pressure stall information: parsing and triggers. */
#include <fcntl.h>
#include <inttypes.h>

#include "psi.h"
#include "macro.h"
#include "fileio.h"
#include "string-util.h"

int coredam_psi_parse(const char *text, struct coredam_psi *ret)
{
	struct coredam_psi p = { 0 };
	bool some = false;
	const char *line = text;

	while (*line) {
		double a10, a60, a300;
		uint64_t total;
		char kind[8];
		size_t len = strcspn(line, "\n");

		if (sscanf(line, "%7s avg10=%lf avg60=%lf avg300=%lf total=%" SCNu64, kind, &a10, &a60,
			   &a300, &total) == 5) {
			if (strcmp(kind, "some") == 0) {
				p.some_avg10 = a10;
				p.some_avg60 = a60;
				p.some_avg300 = a300;
				p.some_total = total;
				some = true;
			} else if (strcmp(kind, "full") == 0) {
				p.full_avg10 = a10;
				p.full_avg60 = a60;
				p.full_avg300 = a300;
				p.full_total = total;
				p.has_full = true;
			}
		} else if (len > 0) {
			return -EBADMSG;
		}
		line += len;
		if (*line)
			line++;
	}
	if (!some)
		return -EBADMSG;
	*ret = p;
	return 0;
}

int coredam_psi_read(int dirfd, const char *path, struct coredam_psi *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = read_file_at(dirfd, path, 4096, &s);
	if (r < 0)
		return r;
	return coredam_psi_parse(s, ret);
}

int coredam_psi_trigger_open(int dirfd, const char *path, uint64_t stall_us, uint64_t window_us,
			     int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	char buf[64];
	ssize_t n;
	int r;

	if (window_us < 500000 || window_us > 10000000 || stall_us == 0 || stall_us > window_us)
		return -EINVAL;
	r = xsnprintf(buf, sizeof(buf), "some %" PRIu64 " %" PRIu64, stall_us, window_us);
	if (r < 0)
		return r;
	fd = openat(dirfd, path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* the kernel wants the terminating NUL */
	n = write(fd, buf, strlen(buf) + 1);
	if (n < 0)
		return -errno;
	if ((size_t)n != strlen(buf) + 1)
		return -EIO;
	*ret_fd = take_fd(&fd);
	return 0;
}

double coredam_psi_fraction(uint64_t total_before, uint64_t total_after, uint64_t interval_usec)
{
	double f;

	if (interval_usec == 0 || total_after < total_before)
		return 0.0;
	f = (double)(total_after - total_before) / (double)interval_usec;
	return f > 1.0 ? 1.0 : f;
}
