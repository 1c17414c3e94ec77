// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "log.h"

int log_max_prio = LOG_INFO;
static bool journal;

void log_init(void)
{
	journal = getenv("JOURNAL_STREAM") != NULL;
}

void log_msg(int prio, const char *fmt, ...)
{
	va_list ap;

	if (prio > log_max_prio)
		return;
	if (journal)
		fprintf(stderr, "<%d>", prio);
	else
		fputs("coredamd: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}
