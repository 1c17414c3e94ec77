// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <sys/stat.h>

#include "escape.h"
#include "meta.h"
#include "macro.h"
#include "fileio.h"
#include "string-util.h"

int coredam_json_string(char *buf, size_t size, size_t *pos, const char *s)
{
	size_t o = *pos;

#define PUT(c)                          \
	do {                            \
		if (o + 1 >= size)      \
			return -ENOBUFS; \
		buf[o++] = (c);         \
	} while (0)
#define PUTU(u)                                          \
	do {                                             \
		static const char hex[] = "0123456789abcdef"; \
		PUT('\\');                                    \
		PUT('u');                                \
		PUT(hex[((u) >> 12) & 15]);              \
		PUT(hex[((u) >> 8) & 15]);               \
		PUT(hex[((u) >> 4) & 15]);               \
		PUT(hex[(u) & 15]);                      \
	} while (0)

	PUT('"');
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = coredam_utf8_len(p);
		uint32_t cp;

		if (*p == '"' || *p == '\\') {
			PUT('\\');
			PUT((char)*p++);
			continue;
		}
		if (n == 1 && *p >= 0x20 && *p != 0x7f) {
			PUT((char)*p++);
			continue;
		}
		if (n == 0) {
			/* not UTF-8: the byte's Latin-1 reading, so that nothing is lost */
			cp = *p;
			n = 1;
		} else {
			/* a control character, or any other character outside ASCII */
			static const uint8_t lead_bits[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };

			cp = p[0] & lead_bits[n];
			for (size_t i = 1; i < n; i++)
				cp = cp << 6 | (p[i] & 0x3f);
		}
		p += n;
		if (cp >= 0x10000) {
			/* a surrogate pair, as JSON spells characters beyond the BMP */
			cp -= 0x10000;
			PUTU(0xd800 | (cp >> 10));
			PUTU(0xdc00 | (cp & 0x3ff));
		} else {
			PUTU(cp);
		}
	}
	PUT('"');
#undef PUT
#undef PUTU
	buf[o] = '\0';
	*pos = o;
	return 0;
}

void strbuf_json(struct strbuf *sb, const char *s)
{
	if (!sb->err)
		sb->err = coredam_json_string(sb->buf, sb->size, &sb->len, s);
}

int coredam_meta_format(const struct coredam_core_meta *m, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT(buf, size);

	strbuf_printf(&sb, "{\"core\": ");
	strbuf_json(&sb, m->core ?: "");
	strbuf_printf(&sb, ", \"pid\": %d, \"uid\": %u, \"gid\": %u, \"signal\": %d, \"time\": %" PRIu64
		      ", \"comm\": ", (int)m->pid, (unsigned)m->uid, (unsigned)m->gid, m->signal, m->time);
	strbuf_json(&sb, m->comm ?: "");
	strbuf_printf(&sb, ", \"size\": %" PRIu64 ", \"disk_size\": %" PRIu64 ", \"compression\": ", m->size,
		      m->disk_size);
	strbuf_json(&sb, m->compression ?: "");
	strbuf_printf(&sb, ", \"truncated\": %s, \"rlimit\": ", m->truncated ? "true" : "false");
	if (m->rlimit == UINT64_MAX)
		strbuf_printf(&sb, "null");
	else
		strbuf_printf(&sb, "%" PRIu64, m->rlimit);
	if (m->dumpable < 0)
		strbuf_printf(&sb, ", \"dumpable\": null");
	else
		strbuf_printf(&sb, ", \"dumpable\": %d", m->dumpable);
	strbuf_printf(&sb, ", \"ticket\": %" PRIu64 ", \"waited_ms\": %" PRIu64 ", \"write_ms\": %" PRIu64
		      ", \"arrived_usec\": %" PRIu64 ", \"admitted_usec\": %" PRIu64 ", \"done_usec\": %" PRIu64
		      ", \"cgroup\": ", m->ticket, m->waited_ms, m->write_ms, m->arrived_usec, m->admitted_usec,
		      m->done_usec);
	strbuf_json(&sb, m->cgroup ?: "");
	strbuf_printf(&sb, "}\n");
	return strbuf_done(&sb);
}

int coredam_meta_write_at(int dirfd, const char *name, const char *text, mode_t mode)
{
	_cleanup_close_ int fd = -1;
	size_t len = strlen(text);
	char tmp[NAME_MAX + 1];
	ssize_t n;
	int r;

	r = xsnprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	if (r < 0)
		return r;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0 || (size_t)n != len) {
		r = n < 0 ? -errno : -EIO;
		goto out_unlink;
	}
	return tmpfile_commit_at(dirfd, fd, tmp, name, mode, RENAME_NOREPLACE);

out_unlink:
	unlinkat(dirfd, tmp, 0);
	return r;
}
