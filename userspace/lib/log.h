/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * One logger for coredamd, coredamctl, coredam-pipe and the library. A
 * program picks where its lines go once, with log_setup():
 *
 *   LOG_TARGET_AUTO    the journal when started by systemd (JOURNAL_STREAM
 *                      set), else stderr as "program: line"
 *   LOG_TARGET_JOURNAL the journal's native socket: one record a line, with
 *                      MESSAGE=, PRIORITY=, SYSLOG_IDENTIFIER= and a
 *                      COREDAM_KEY= field for each key=value word from
 *                      "event=" on (coredam_log_fields()); when the journal
 *                      cannot be reached, "<N>line" on stderr, which
 *                      journald reads as a priority
 *   LOG_TARGET_KMSG    /dev/kmsg as "<facility|N>program[pid]: line": for
 *                      the pipe helper, which the kernel starts with nothing
 *                      else to write to; also on stderr when that is a
 *                      terminal, and only there when /dev/kmsg cannot be
 *                      opened
 *   LOG_TARGET_STDERR  "program: line"
 *
 * Lines above log_max_prio are dropped (LOG_INFO unless a program turns
 * on LOG_DEBUG). The _errno variants take a negative errno @r, make "%m"
 * name it, and return @r, so that
 *
 *	return log_error_errno(r, "cannot write %s: %m", path);
 *
 * logs and fails in one line. A non-fatal warning says ", ignoring".
 */
#ifndef COREDAM_LOG_H
#define COREDAM_LOG_H

#include <stddef.h>
#include <syslog.h>

enum log_target {
	LOG_TARGET_AUTO,
	LOG_TARGET_JOURNAL,
	LOG_TARGET_KMSG,
	LOG_TARGET_STDERR,
};

void log_setup(const char *program, enum log_target target);

/*
 * Open what the target writes to (/dev/kmsg, the journal's socket) and the
 * journal's socket for log_journal_send() now: before a sandbox takes the
 * way there. A journal that is not there is no error: nothing is sent.
 */
void log_open(void);
/* Close them; the next line or record opens them again (tests point log_journal_socket elsewhere). */
void log_close(void);
/* The journal's MESSAGE_ID= of an event kind ("ready", "dump-end", ...), NULL if unknown. */
const char *log_message_id(const char *event);

int log_internal(int prio, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

extern int log_max_prio;

/*
 * One journal record of its own, whatever the target: @n fields (NAME as
 * the journal wants it: A-Z, 0-9, '_', not starting with '_'; any value
 * as a C string), then PRIORITY=@prio and SYSLOG_IDENTIFIER=. A value
 * with a newline, another control byte or a byte outside ASCII goes in
 * the protocol's binary form, so that any bytes arrive verbatim and none
 * can start another field. 0, -ENOTCONN when there is no journal (nothing
 * is written anywhere else), -E2BIG over LOG_FIELDS_MAX fields, or the
 * send's -errno (-EAGAIN: journald did not take it within 5 s).
 */
#define LOG_FIELDS_MAX 40
struct log_field {
	const char *name;
	const char *value;
};

int log_journal_send(int prio, const struct log_field *f, size_t n);

/* The journal's socket; another only in tests. */
extern const char *log_journal_socket;

#define log_full(prio, ...) log_internal((prio), 0, __VA_ARGS__)
#define log_error(...) log_internal(LOG_ERR, 0, __VA_ARGS__)
#define log_warning(...) log_internal(LOG_WARNING, 0, __VA_ARGS__)
#define log_notice(...) log_internal(LOG_NOTICE, 0, __VA_ARGS__)
#define log_info(...) log_internal(LOG_INFO, 0, __VA_ARGS__)
#define log_debug(...) log_internal(LOG_DEBUG, 0, __VA_ARGS__)

#define log_error_errno(r, ...) log_internal(LOG_ERR, (r), __VA_ARGS__)
#define log_warning_errno(r, ...) log_internal(LOG_WARNING, (r), __VA_ARGS__)
#define log_debug_errno(r, ...) log_internal(LOG_DEBUG, (r), __VA_ARGS__)

#endif
