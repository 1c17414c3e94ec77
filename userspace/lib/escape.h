/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Strings from a crashed process (its executable's path, its comm, the
 * names it chose) reach log lines, terminals and JSON. Every such string
 * goes through one of these (or, into JSON, coredam_json_text()), so that
 * it cannot end a log record and forge the next one, send escape
 * sequences to a terminal, or break a JSON document. Printable ASCII and
 * valid UTF-8 pass unchanged (but for the few characters each form must
 * quote), so ordinary paths read as before.
 */
#ifndef COREDAM_ESCAPE_H
#define COREDAM_ESCAPE_H

#include <stddef.h>

/*
 * The length of the valid UTF-8 character at @p (1 to 4 bytes; 1 for
 * ASCII, NUL included), or 0 when @p does not start one: a stray
 * continuation byte, an overlong form, a surrogate, a code point beyond
 * U+10FFFF, a sequence cut short.
 */
size_t coredam_utf8_len(const unsigned char *p);

/* also quote ' ' and '"': the result is one word of a "key=value" log line */
#define COREDAM_ESCAPE_WORD (1U << 0)

/* a buffer large enough for any string of @len bytes */
#define COREDAM_ESCAPE_SIZE(len) (4 * (len) + 1)

/*
 * Copy @s to @buf with C-style escapes: "\\" for a backslash, "\n", "\t",
 * "\r", and "\xNN" for every other control byte (C0, DEL, and the two bytes
 * of a C1 control U+0080..U+009F) and for every byte that is not part of
 * valid UTF-8. With COREDAM_ESCAPE_WORD also "\x20" for a space and "\x22"
 * for '"'. The result is valid UTF-8 with no control character. Cut at an
 * escape boundary when @size is too small; returns @buf.
 */
const char *coredam_escape(const char *s, unsigned int flags, char *buf, size_t size);

/*
 * The inverse of coredam_escape(): the first @len bytes of @s (fewer at a
 * NUL) to @buf with its escapes "\\", "\n", "\t", "\r" and "\xNN" turned
 * back into their bytes; a backslash that starts none of them is kept. Cut
 * when @size is too small; returns @buf.
 */
const char *coredam_unescape(const char *s, size_t len, char *buf, size_t size);

/*
 * The fields of a log line for the journal: every word from the first
 * "event=" word on that is KEY=VALUE with KEY of [a-z0-9_] becomes
 * COREDAM_KEY (upper case) = VALUE; a VALUE in double quotes may hold
 * spaces and loses its quotes. Other words are skipped. The line is one
 * whose crashed-process strings went through coredam_escape(), so no
 * field can hold a newline. Returns the number of fields (at most @max);
 * a value too long for its field is cut.
 */
struct coredam_log_field {
	char name[48];		/* COREDAM_KEY */
	char value[1024];
};

size_t coredam_log_fields(const char *line, struct coredam_log_field *f, size_t max);

#endif
