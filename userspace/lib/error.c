// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdarg.h>
#include <stdio.h>

#include "error.h"

int coredam_error_setv_at(struct coredam_error *e, int r, const char *where, int line, const char *fmt, va_list ap)
{
	if (!e)
		return r;
	(void)snprintf(e->where, sizeof(e->where), "%s", where ? where : "");
	e->line = line;
	(void)vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	return r;
}

int coredam_error_set(struct coredam_error *e, int r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r = coredam_error_setv_at(e, r, "", 0, fmt, ap);
	va_end(ap);
	return r;
}

int coredam_error_set_at(struct coredam_error *e, int r, const char *where, int line, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r = coredam_error_setv_at(e, r, where, line, fmt, ap);
	va_end(ap);
	return r;
}

const char *coredam_error_str(const struct coredam_error *e, char *buf, size_t size)
{
	if (!e->where[0])
		(void)snprintf(buf, size, "%s", e->msg);
	else if (e->line > 0)
		(void)snprintf(buf, size, "%s:%d: %s", e->where, e->line, e->msg);
	else
		(void)snprintf(buf, size, "%s: %s", e->where, e->msg);
	return buf;
}
