// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>

#include "string-util.h"

int xsnprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	if ((size_t)n >= size)
		return -ENOBUFS;
	return n;
}

void strbuf_printf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sb->err)
		return;
	va_start(ap, fmt);
	n = vsnprintf(sb->buf + sb->len, sb->size - sb->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		sb->err = -EINVAL;
	else if ((size_t)n >= sb->size - sb->len)
		sb->err = -ENOBUFS;
	else
		sb->len += (size_t)n;
}

int strbuf_done(const struct strbuf *sb)
{
	if (sb->err)
		return sb->err;
	return sb->len > INT_MAX ? -EOVERFLOW : (int)sb->len;
}

char *strstrip(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

bool coredam_word_in(const char *list, const char *word)
{
	size_t wl = strlen(word);

	for (const char *p = list; *p;) {
		size_t len;

		p += strspn(p, " \t\n");
		len = strcspn(p, " \t\n");
		if (len == wl && strncmp(p, word, wl) == 0)
			return true;
		p += len;
	}
	return false;
}
