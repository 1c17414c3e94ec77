// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdarg.h>

#include "debug.h"

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
