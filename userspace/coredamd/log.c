// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <systemd/sd-journal.h>

#include "escape.h"
#include "log.h"

#define MAX_FIELDS 24

int log_max_prio = LOG_INFO;
static bool journal;

void log_init(void)
{
	journal = getenv("JOURNAL_STREAM") != NULL;
}

/*
 * To the journal as one record: MESSAGE= the line, PRIORITY=, and a
 * COREDAM_KEY= field for each key=value word from "event=" on
 * (coredam_log_fields()), so that `journalctl COREDAM_EVENT=dump-end`
 * finds the records without parsing the text. Fails when the journal
 * cannot be reached; the caller then writes the line to stderr.
 */
static int journal_send(int prio, const char *msg)
{
	static struct coredam_log_field f[MAX_FIELDS];
	static char text[MAX_FIELDS][sizeof(f[0].name) + sizeof(f[0].value) + 1];
	struct iovec iov[3 + MAX_FIELDS];
	char m[4200], pr[16];
	size_t n = coredam_log_fields(msg, f, MAX_FIELDS), k = 0;

	snprintf(m, sizeof(m), "MESSAGE=%s", msg);
	snprintf(pr, sizeof(pr), "PRIORITY=%d", prio);
	iov[k++] = (struct iovec){ m, strlen(m) };
	iov[k++] = (struct iovec){ pr, strlen(pr) };
	iov[k++] = (struct iovec){ (char *)"SYSLOG_IDENTIFIER=coredamd", sizeof("SYSLOG_IDENTIFIER=coredamd") - 1 };
	for (size_t i = 0; i < n; i++) {
		snprintf(text[i], sizeof(text[i]), "%s=%s", f[i].name, f[i].value);
		iov[k++] = (struct iovec){ text[i], strlen(text[i]) };
	}
	return sd_journal_sendv(iov, (int)k);
}

void log_msg(int prio, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	if (prio > log_max_prio)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (journal && journal_send(prio, msg) >= 0)
		return;
	if (journal)
		fprintf(stderr, "<%d>%s\n", prio, msg);
	else
		fprintf(stderr, "coredamd: %s\n", msg);
	fflush(stderr);
}
