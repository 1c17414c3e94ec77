// SPDX-License-Identifier: LGPL-2.1-or-later
/* The STATUS answer: struct coredam_status to "key=value" lines and back. */
#include <inttypes.h>
#include <math.h>

#include "escape.h"
#include "json-util.h"
#include "macro.h"
#include "parse-util.h"
#include "status.h"

enum kind { KIND_INT, KIND_U64, KIND_DOUBLE, KIND_STR, KIND_DEVICES };

struct field {
	const char *key;
	enum kind kind;
	size_t offset, size;
};

#define FIELD(f, k, member)                                                                          \
	[COREDAM_STATUS_##f] = { #member, k, offsetof(struct coredam_status, member),                \
				 sizeof(((struct coredam_status *)NULL)->member) }

static const struct field fields[COREDAM_STATUS_N_FIELDS] = {
	FIELD(AGENT_PID, KIND_INT, agent_pid),
	FIELD(CONFIG, KIND_STR, config),
	FIELD(LAST_RELOAD, KIND_STR, last_reload),
	FIELD(MODE, KIND_STR, mode),
	FIELD(CGROUP, KIND_STR, cgroup),
	FIELD(WRITE_BPS, KIND_U64, write_bps),
	FIELD(READ_BPS, KIND_U64, read_bps),
	FIELD(CONCURRENCY, KIND_U64, concurrency),
	FIELD(QUEUE_CAP, KIND_U64, queue_cap),
	FIELD(WAIT_TIMEOUT_MS, KIND_U64, wait_timeout_ms),
	FIELD(FLOOR_BPS, KIND_U64, floor_bps),
	FIELD(CEILING_BPS, KIND_U64, ceiling_bps),
	FIELD(BUSY_CEILING_BPS, KIND_U64, busy_ceiling_bps),
	FIELD(FOREGROUND_PRESSURE, KIND_DOUBLE, foreground_pressure),
	FIELD(CORE_PATTERN, KIND_STR, core_pattern),
	FIELD(DESTINATION, KIND_STR, destination),
	FIELD(PIPE_HELPER, KIND_STR, pipe_helper),
	FIELD(STATS_SOURCE, KIND_STR, stats_source),
	FIELD(SPACE_BELOW, KIND_INT, space_below),
	FIELD(FREE_BYTES, KIND_U64, free_bytes),
	FIELD(FLOOR_BYTES, KIND_U64, floor_bytes),
	[COREDAM_STATUS_DEVICES] = { "device", KIND_DEVICES, 0, 0 },
	FIELD(BUDGET_CHANGES, KIND_U64, budget_changes),
	FIELD(RELOADS, KIND_U64, reloads),
	FIELD(RELOAD_FAILURES, KIND_U64, reload_failures),
	FIELD(WAITING_MEMORY, KIND_U64, waiting_memory),
	FIELD(DUMPER_MEMORY, KIND_U64, dumper_memory),
	FIELD(LIMITS_THROUGH, KIND_STR, limits_through),
	FIELD(UNIT_CALLS, KIND_U64, unit_calls),
};

const char *coredam_status_key(enum coredam_status_field f)
{
	return (unsigned int)f < ELEMENTSOF(fields) ? fields[f].key : NULL;
}

/* the largest string field, escaped */
#define ESCAPED_MAX COREDAM_ESCAPE_SIZE(sizeof(((struct coredam_status *)NULL)->core_pattern))

static void format_devices(const struct coredam_status *s, struct strbuf *sb)
{
	char name[COREDAM_ESCAPE_SIZE(sizeof(s->devices[0].name))];
	char kind[COREDAM_ESCAPE_SIZE(sizeof(s->devices[0].kind))];

	/* one word each: a space would move the kind into the name */
	for (size_t i = 0; i < s->n_devices && i < ELEMENTSOF(s->devices); i++)
		strbuf_printf(sb, "device=%u:%u %s %s\n", s->devices[i].major, s->devices[i].minor,
			      coredam_escape(s->devices[i].name, COREDAM_ESCAPE_WORD, name, sizeof(name)),
			      coredam_escape(s->devices[i].kind, COREDAM_ESCAPE_WORD, kind, sizeof(kind)));
}

/* The value of a field but the devices, as "key=" lines hold it. */
static void format_value(const struct field *f, const struct coredam_status *s, struct strbuf *sb)
{
	const void *p = (const char *)s + f->offset;
	char esc[ESCAPED_MAX];

	switch (f->kind) {
	case KIND_INT:
		strbuf_printf(sb, "%d", *(const int *)p);
		break;
	case KIND_U64:
		strbuf_printf(sb, "%" PRIu64, *(const uint64_t *)p);
		break;
	case KIND_DOUBLE:
		strbuf_printf(sb, "%.4f", *(const double *)p);
		break;
	case KIND_STR:
		strbuf_printf(sb, "%s", coredam_escape(p, 0, esc, sizeof(esc)));
		break;
	case KIND_DEVICES:
		break;
	}
}

int coredam_status_value(const struct coredam_status *s, enum coredam_status_field f, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT(buf, size);

	if ((unsigned int)f >= ELEMENTSOF(fields) || fields[f].kind == KIND_DEVICES)
		return -EINVAL;
	if (!coredam_status_has(s, f))
		return -ENOENT;
	format_value(&fields[f], s, &sb);
	return strbuf_done(&sb);
}

void coredam_status_format(const struct coredam_status *s, struct strbuf *sb)
{
	for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
		if (!coredam_status_has(s, i))
			continue;
		if (fields[i].kind == KIND_DEVICES) {
			format_devices(s, sb);
			continue;
		}
		strbuf_printf(sb, "%s=", fields[i].key);
		format_value(&fields[i], s, sb);
		strbuf_printf(sb, "\n");
	}
}

json_t *coredam_status_json(const struct coredam_status *s, enum coredam_status_field f)
{
	const void *p;

	if ((unsigned int)f >= ELEMENTSOF(fields) || !coredam_status_has(s, f))
		return NULL;
	p = (const char *)s + fields[f].offset;
	switch (fields[f].kind) {
	case KIND_INT:
		return json_integer(*(const int *)p);
	case KIND_U64:
		return coredam_json_u64(*(const uint64_t *)p);
	case KIND_DOUBLE:
		return json_real(*(const double *)p);
	case KIND_STR:
		return coredam_json_text(p);
	case KIND_DEVICES:
		break;
	}
	return NULL;
}

/* "8:0 sda disk": three words, the last two escaped; words after them are a newer daemon's */
static int parse_device(const char *v, size_t len, struct coredam_status_device *ret)
{
	struct coredam_status_device d = { 0 };
	char line[512], *words[3], *save = NULL, *minor;
	size_t n = 0;

	if (len >= sizeof(line))
		return -EINVAL;
	memcpy(line, v, len);
	line[len] = '\0';
	for (char *w = strtok_r(line, " ", &save); w && n < ELEMENTSOF(words); w = strtok_r(NULL, " ", &save))
		words[n++] = w;
	if (n < ELEMENTSOF(words) || !(minor = strchr(words[0], ':')))
		return -EINVAL;
	*minor++ = '\0';
	if (parse_u32(words[0], &d.major) < 0 || parse_u32(minor, &d.minor) < 0)
		return -EINVAL;
	coredam_unescape(words[1], SIZE_MAX, d.name, sizeof(d.name));
	coredam_unescape(words[2], SIZE_MAX, d.kind, sizeof(d.kind));
	*ret = d;
	return 0;
}

static int parse_number(enum kind kind, const char *v, void *ret)
{
	char *end;
	int32_t i;
	double d;

	switch (kind) {
	case KIND_INT:
		if (parse_i32(v, &i) < 0)
			return -EINVAL;
		*(int *)ret = i;
		return 0;
	case KIND_U64:
		return parse_u64(v, ret);
	case KIND_DOUBLE:
		errno = 0;
		d = strtod(v, &end);
		if (errno || end == v || *end || !isfinite(d))
			return -EINVAL;
		*(double *)ret = d;
		return 0;
	default:
		return -EINVAL;
	}
}

/* One value of field @f, @len bytes at @v; 0 when it is present now. */
static int parse_value(const struct field *f, const char *v, size_t len, struct coredam_status *s)
{
	void *p = (char *)s + f->offset;
	char num[32];

	switch (f->kind) {
	case KIND_STR:
		coredam_unescape(v, len, p, f->size);
		return 0;
	case KIND_DEVICES:
		if (s->n_devices >= ELEMENTSOF(s->devices) || parse_device(v, len, &s->devices[s->n_devices]) < 0)
			return -EINVAL;
		s->n_devices++;
		return 0;
	default:
		if (len >= sizeof(num))
			return -EINVAL;
		memcpy(num, v, len);
		num[len] = '\0';
		return parse_number(f->kind, num, p);
	}
}

static void parse_line(const char *line, size_t len, struct coredam_status *s)
{
	const char *eq = memchr(line, '=', len);
	size_t klen;

	if (!eq)
		return;
	klen = (size_t)(eq - line);
	for (size_t i = 0; i < ELEMENTSOF(fields); i++) {
		if (strlen(fields[i].key) != klen || memcmp(fields[i].key, line, klen) != 0)
			continue;
		if (coredam_status_has(s, i) && fields[i].kind != KIND_DEVICES)
			return;	/* the first value counts */
		if (parse_value(&fields[i], eq + 1, len - klen - 1, s) == 0)
			s->have |= UINT32_C(1) << i;
		return;
	}
}

int coredam_status_parse(const char *text, struct coredam_status *ret)
{
	int n = 0;

	memset(ret, 0, sizeof(*ret));
	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");

		parse_line(p, len, ret);
		p += len;
		if (*p)
			p++;
	}
	for (size_t i = 0; i < ELEMENTSOF(fields); i++)
		n += coredam_status_has(ret, i);
	return n;
}
