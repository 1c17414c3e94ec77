/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One error type from the library to the front ends: a failing call returns
 * a -errno and, where the caller passes one, fills a struct coredam_error
 * with what a person needs to fix it.
 */
#ifndef COREDAM_ERROR_H
#define COREDAM_ERROR_H

#include <limits.h>
#include <stdarg.h>
#include <stddef.h>

/*
 * What went wrong, for a person: the file at fault (a configuration file, a
 * cgroup file; "" when none), its line (0 when none), and the message.
 */
struct coredam_error {
	char where[PATH_MAX];
	int line;
	char msg[512];
};

/*
 * Fill *e (may be NULL: nothing is written) and return r, a -errno:
 * "return coredam_error_set(e, -EINVAL, "...", ...);". errno is read by the
 * caller before the call, never after.
 */
int coredam_error_set(struct coredam_error *e, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* The same, naming the file at fault and its line. */
int coredam_error_set_at(struct coredam_error *e, int r, const char *where, int line, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* coredam_error_set_at() with the arguments in @ap. */
int coredam_error_setv_at(struct coredam_error *e, int r, const char *where, int line, const char *fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

/* "where:line: msg", "where: msg" or "msg" into @buf (cut to @size); returns @buf. */
const char *coredam_error_str(const struct coredam_error *e, char *buf, size_t size);

#endif
