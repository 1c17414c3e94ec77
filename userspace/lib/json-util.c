// SPDX-License-Identifier: LGPL-2.1-or-later
#include <limits.h>

#include "escape.h"
#include "json-util.h"
#include "macro.h"

json_t *coredam_json_text(const char *s)
{
	_cleanup_free_ char *u = malloc(2 * strlen(s) + 1);
	size_t o = 0;

	if (!u)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = coredam_utf8_len(p);

		if (n == 0) {
			/* not UTF-8: the byte's Latin-1 character, U+0080..U+00FF, in two bytes */
			u[o++] = (char)(0xc0 | *p >> 6);
			u[o++] = (char)(0x80 | (*p & 0x3f));
			p++;
			continue;
		}
		memcpy(u + o, p, n);
		o += n;
		p += n;
	}
	return json_stringn_nocheck(u, o);
}

json_t *coredam_json_u64(uint64_t v)
{
	return v <= INT64_MAX ? json_integer((json_int_t)v) : json_real((double)v);
}

/* Where a dump goes: a buffer (@f NULL) or a stream; the first failure sticks. */
struct sink {
	char *buf;
	size_t size, len;
	FILE *f;
	int err;
};

static void sink_put(struct sink *k, const char *p, size_t n)
{
	if (k->err || n == 0)
		return;
	if (k->f) {
		if (fwrite(p, 1, n, k->f) != n)
			k->err = -EIO;
		return;
	}
	if (n >= k->size - k->len) {
		k->err = -ENOBUFS;
		return;
	}
	memcpy(k->buf + k->len, p, n);
	k->len += n;
}

/* jansson's output on its way: DEL, the one control character it leaves, escaped too */
static int sink_dump(const char *p, size_t size, void *data)
{
	struct sink *k = data;

	while (size && !k->err) {
		const char *del = memchr(p, 0x7f, size);
		size_t n = del ? (size_t)(del - p) : size;

		sink_put(k, p, n);
		p += n;
		size -= n;
		if (del) {
			sink_put(k, "\\u007F", 6);
			p++;
			size--;
		}
	}
	return k->err ? -1 : 0;
}

static int dump(const json_t *j, size_t flags, struct sink *k)
{
	if (json_dump_callback(j, sink_dump, k, flags | JSON_ENSURE_ASCII) < 0)
		return k->err ?: -ENOMEM;
	return 0;
}

int coredam_json_dumpb(const json_t *j, size_t flags, char *buf, size_t size)
{
	struct sink k = { .buf = buf, .size = size };
	int r;

	if (size == 0)
		return -ENOBUFS;
	r = dump(j, flags, &k);
	buf[r < 0 ? 0 : k.len] = '\0';
	if (r < 0)
		return r;
	return k.len > INT_MAX ? -EOVERFLOW : (int)k.len;
}

int coredam_json_dumpf(const json_t *j, size_t flags, FILE *f)
{
	struct sink k = { .f = f };

	return dump(j, flags, &k);
}
