/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Bounded formatting and trimming of strings. */
#ifndef COREDAM_STRING_UTIL_H
#define COREDAM_STRING_UTIL_H

#include "macro.h"

/* snprintf into a fixed buffer; -ENOBUFS on truncation. */
int xsnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Text built in a fixed buffer by appending: the first failure (the text
 * does not fit, -ENOBUFS) sticks, later appends do nothing, and
 * strbuf_done() says how it went, so that a formatter checks once.
 */
struct strbuf {
	char *buf;
	size_t size, len;
	int err;
};

#define STRBUF_INIT(b, s) ((struct strbuf){ .buf = (b), .size = (s) })

void strbuf_printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The length of the text, or the first failure (-errno). */
int strbuf_done(const struct strbuf *sb);

/* Remove leading and trailing white space in place; returns @s. */
char *strstrip(char *s);

/* @word is one of the white-space separated words of @list (cgroup.controllers, core_modes, ...). */
bool coredam_word_in(const char *list, const char *word);

#endif
