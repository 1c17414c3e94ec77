/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Bounded formatting and trimming of strings. */
#ifndef COREDAM_STRING_UTIL_H
#define COREDAM_STRING_UTIL_H

#include "macro.h"

/* snprintf into a fixed buffer; -ENOBUFS on truncation. */
int xsnprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Remove leading and trailing white space in place; returns @s. */
char *strstrip(char *s);

#endif
