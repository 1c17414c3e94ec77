// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "escape.h"

static bool cont(unsigned char c)
{
	return (c & 0xc0) == 0x80;
}

size_t coredam_utf8_len(const unsigned char *p)
{
	unsigned char c = p[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		return cont(p[1]) ? 2 : 0;
	if (c >= 0xe0 && c <= 0xef) {
		/* E0 A0..BF: no overlong forms; ED 80..9F: no surrogates */
		unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;

		return p[1] >= lo && p[1] <= hi && cont(p[2]) ? 3 : 0;
	}
	if (c >= 0xf0 && c <= 0xf4) {
		/* F0 90..BF: no overlong forms; F4 80..8F: nothing beyond U+10FFFF */
		unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;

		return p[1] >= lo && p[1] <= hi && cont(p[2]) && cont(p[3]) ? 4 : 0;
	}
	return 0;	/* 80..C1 (continuation, overlong 2-byte), F5..FF */
}

const char *coredam_escape(const char *s, unsigned int flags, char *buf, size_t size)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (size == 0)
		return buf;
	while (*p) {
		size_t n = coredam_utf8_len(p);
		char esc[16];
		size_t elen;

		if (n == 1 && *p >= 0x20 && *p != 0x7f && *p != '\\' &&
		    !((flags & COREDAM_ESCAPE_WORD) && (*p == ' ' || *p == '"'))) {
			esc[0] = (char)*p;
			elen = 1;
		} else if (n > 1 && !(n == 2 && p[0] == 0xc2 && p[1] < 0xa0)) {
			memcpy(esc, p, n);	/* valid UTF-8 other than a C1 control */
			elen = n;
		} else if (*p == '\\' || *p == '\n' || *p == '\t' || *p == '\r') {
			esc[0] = '\\';
			esc[1] = *p == '\\' ? '\\' : *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r';
			elen = 2;
			n = 1;
		} else {
			/* a control byte or a C1 control (each of its bytes), or a byte that is not UTF-8 */
			if (n == 0)
				n = 1;
			elen = 0;
			for (size_t i = 0; i < n; i++)
				elen += (size_t)snprintf(esc + elen, sizeof(esc) - elen, "\\x%02x", p[i]);
		}
		if (o + elen >= size)
			break;
		memcpy(buf + o, esc, elen);
		o += elen;
		p += n;
	}
	buf[o] = '\0';
	return buf;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The byte the escape at @p (a backslash, @left bytes in all) stands for, and its length; 0: none. */
static size_t unescape_one(const char *p, size_t left, char *ret)
{
	static const char from[] = "\\ntr", to[] = "\\\n\t\r";
	const char *c;
	int hi, lo;

	if (left >= 2 && p[1] && (c = strchr(from, p[1]))) {
		*ret = to[c - from];
		return 2;
	}
	if (left < 4 || p[1] != 'x' || (hi = hexval(p[2])) < 0 || (lo = hexval(p[3])) < 0 || hi + lo == 0)
		return 0;
	*ret = (char)(hi << 4 | lo);
	return 4;
}

const char *coredam_unescape(const char *s, size_t len, char *buf, size_t size)
{
	size_t i = 0, o = 0;

	if (size == 0)
		return buf;
	while (i < len && s[i] && o + 1 < size) {
		size_t n = s[i] == '\\' ? unescape_one(s + i, len - i, &buf[o]) : 0;

		if (n == 0) {
			buf[o] = s[i];
			n = 1;
		}
		o++;
		i += n;
	}
	buf[o] = '\0';
	return buf;
}

size_t coredam_log_fields(const char *line, struct coredam_log_field *f, size_t max)
{
	const char *p = line;
	bool started = false;
	size_t n = 0;

	while (n < max) {
		const char *word, *eq, *val, *end;
		size_t klen, vlen;

		p += strspn(p, " ");
		if (!*p)
			break;
		word = p;
		eq = word + strspn(word, "abcdefghijklmnopqrstuvwxyz0123456789_");
		klen = (size_t)(eq - word);
		if (*eq == '=' && eq[1] == '"') {
			val = eq + 2;
			end = strchr(val, '"');
			vlen = end ? (size_t)(end - val) : strlen(val);
			p = end ? end + 1 : val + vlen;
		} else {
			end = word + strcspn(word, " ");
			val = eq + 1;
			vlen = *eq == '=' ? (size_t)(end - val) : 0;
			p = end;
		}
		if (*eq != '=' || klen == 0 || (*p && *p != ' ')) {
			p += strcspn(p, " ");	/* no KEY=VALUE word: skipped whole */
			continue;
		}
		if (!started && !(klen == 5 && memcmp(word, "event", 5) == 0))
			continue;	/* the message, before "event=" */
		started = true;
		if (8 + klen >= sizeof(f[n].name))
			continue;
		memcpy(f[n].name, "COREDAM_", 8);
		for (size_t o = 0; o < klen; o++)
			f[n].name[8 + o] = (char)(word[o] >= 'a' && word[o] <= 'z' ? word[o] - 'a' + 'A' : word[o]);
		f[n].name[8 + klen] = '\0';
		if (vlen >= sizeof(f[n].value))
			vlen = sizeof(f[n].value) - 1;
		memcpy(f[n].value, val, vlen);
		f[n].value[vlen] = '\0';
		n++;
	}
	return n;
}
