/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Bounded formatting and trimming of strings. */
#ifndef COREDAM_STRING_UTIL_H
#define COREDAM_STRING_UTIL_H

#include "macro.h"

/* snprintf into a fixed buffer; -ENOBUFS on truncation. */
int xsnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * Write the message of a failure into @buf (cut to @size) and return @r,
 * the failure's -errno: "return error_msg(why, whysize, -EPERM, ...);".
 * errno is read by the caller before the call, never after.
 */
int error_msg(char *buf, size_t size, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Remove leading and trailing white space in place; returns @s. */
char *strstrip(char *s);

#endif
