// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "kmsg.h"

/* a decimal at @p up to @end, no sign; the position after it at *@ret_end */
static int dec(const char *p, const char *end, uint64_t *ret, const char **ret_end)
{
	uint64_t v = 0;
	const char *q = p;

	for (; q < end && *q >= '0' && *q <= '9'; q++)
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(*q - '0'), &v))
			return -EBADMSG;
	if (q == p)
		return -EBADMSG;
	*ret = v;
	*ret_end = q;
	return 0;
}

/* does [@p, @end) end with @suffix? then *@ret_start is where it begins */
static int ends_with(const char *p, const char *end, const char *suffix, const char **ret_start)
{
	size_t n = strlen(suffix);

	if ((size_t)(end - p) < n || memcmp(end - n, suffix, n) != 0)
		return 0;
	*ret_start = end - n;
	return 1;
}

static int starts_with(const char *p, const char *end, const char *prefix)
{
	size_t n = strlen(prefix);

	return (size_t)(end - p) >= n && memcmp(p, prefix, n) == 0;
}

/*
 * "coredump: PID(COMM): " then @rest to the end: COMM is the crashed
 * process's, escaped by the kernel but free to hold "): ", so the line is
 * matched from its end: @rest begins right after the last "): " before it.
 */
static int coredump_line(const char *msg, const char *end, const char *rest_start)
{
	const char *p = msg + strlen("coredump: ");
	uint64_t pid;

	if (!starts_with(msg, end, "coredump: ") || dec(p, end, &pid, &p) < 0 || *p != '(')
		return 0;
	return rest_start - p >= 4 && memcmp(rest_start - 3, "): ", 3) == 0;
}

int coredam_kmsg_parse(const char *rec, size_t len, const char *path, struct coredam_kmsg_record *ret)
{
	const char *end = rec + len, *p = rec, *msg, *s;
	struct coredam_kmsg_record r = { 0 };
	uint64_t prio, n;
	char want[4200];

	if (dec(p, end, &prio, &p) < 0 || p == end || *p != ',' || dec(p + 1, end, &r.seq, &p) < 0 ||
	    p == end || (*p != ',' && *p != ';'))
		return -EBADMSG;
	msg = memchr(p, ';', (size_t)(end - p));
	if (!msg)
		return -EBADMSG;
	msg++;
	/* the message ends at its newline; continuation lines follow */
	s = memchr(msg, '\n', (size_t)(end - msg));
	if (s)
		end = s;
	*ret = r;
	if (prio >> 3 != 0 || strlen(path) > 4096)
		return 0;	/* not the kernel's */

	snprintf(want, sizeof(want), "Coredump socket %s receive queue full", path);
	if (ends_with(msg, end, want, &s) && coredump_line(msg, end, s)) {
		ret->loss = COREDAM_KMSG_BACKLOG;
		ret->count = 1;
		return 0;
	}
	/* "... failed -111": the errno, then the fixed part before it */
	for (s = end; s > msg && s[-1] >= '0' && s[-1] <= '9'; s--)
		;
	if (s < end && s > msg && s[-1] == '-')
		s--;
	snprintf(want, sizeof(want), "Coredump socket connection %s failed ", path);
	if (s < end && ends_with(msg, s, want, &s) && coredump_line(msg, end, s)) {
		ret->loss = COREDAM_KMSG_CONNECT;
		ret->count = 1;
		return 0;
	}
	if (starts_with(msg, end, "coredump_sock_connect: ") &&
	    dec(msg + strlen("coredump_sock_connect: "), end, &n, &s) == 0 &&
	    (size_t)(end - s) == strlen(" callbacks suppressed") && starts_with(s, end, " callbacks suppressed")) {
		ret->loss = COREDAM_KMSG_SUPPRESSED;
		ret->count = n;
	}
	return 0;
}
