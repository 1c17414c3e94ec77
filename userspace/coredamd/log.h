/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAMD_LOG_H
#define COREDAMD_LOG_H

#include <syslog.h>

/*
 * One line per event, "key=value" fields after a message. Under systemd
 * (JOURNAL_STREAM set) each line is a journal record with a COREDAM_KEY=
 * field for each key=value from "event=" on (log.c), or, when the journal
 * cannot be reached, a line on stderr with a <N> priority prefix that
 * journald understands; otherwise lines start with "coredamd: ".
 */
void log_init(void);
void log_msg(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define log_error(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_notice(...) log_msg(LOG_NOTICE, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)

extern int log_max_prio;

#endif
