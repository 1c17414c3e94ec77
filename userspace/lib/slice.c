// SPDX-License-Identifier: LGPL-2.1-or-later
/* The dump cgroup as a systemd slice unit: see slice.h. */
#include <inttypes.h>

#include "macro.h"
#include "parse-util.h"
#include "slice.h"
#include "string-util.h"

static const char *const prop_names[COREDAM_SLICE_N_PROPS] = {
	[COREDAM_SLICE_IO_WRITE_BPS] = "IOWriteBandwidthMax",
	[COREDAM_SLICE_IO_READ_BPS] = "IOReadBandwidthMax",
	[COREDAM_SLICE_IO_WRITE_IOPS] = "IOWriteIOPSMax",
	[COREDAM_SLICE_IO_READ_IOPS] = "IOReadIOPSMax",
	[COREDAM_SLICE_MEMORY_HIGH] = "MemoryHigh",
};

const char *coredam_slice_prop_name(enum coredam_slice_prop p)
{
	return (unsigned int)p < ELEMENTSOF(prop_names) ? prop_names[p] : NULL;
}

/* The characters of a unit name (systemd's VALID_CHARS_WITH_AT without "@": a slice has no instance). */
static bool unit_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr(":-_.\\", c);
}

int coredam_slice_unit_name(const char *cgroup, char *buf, size_t size)
{
	const char *p = cgroup, *prefix = NULL;
	size_t prefix_len = 0;

	if (!cgroup || cgroup[0] != '/')
		return -EINVAL;
	while (*p == '/') {
		const char *name = p + 1;
		size_t len = strcspn(name, "/"), stem;

		p = name + len;
		if (len > 0 && name[0] == '_') {	/* systemd's cg_escape() */
			name++;
			len--;
		}
		if (len <= 6 || len > 255 || memcmp(name + len - 6, ".slice", 6) != 0)
			return -EINVAL;
		stem = len - 6;
		for (size_t i = 0; i < stem; i++)
			if (!unit_char(name[i]))
				return -EINVAL;
		/* "a-b.slice" lives in "a.slice": its stem is the parent's, "-", one word */
		if (prefix) {
			if (stem <= prefix_len + 1 || memcmp(name, prefix, prefix_len) != 0 || name[prefix_len] != '-' ||
			    memchr(name + prefix_len + 1, '-', stem - prefix_len - 1))
				return -EINVAL;
		} else if (memchr(name, '-', stem)) {
			return -EINVAL;
		}
		prefix = name;
		prefix_len = stem;
	}
	if (*p || !prefix)
		return -EINVAL;
	return xsnprintf(buf, size, "%.*s.slice", (int)prefix_len, prefix);
}

unsigned int coredam_slice_want_diff(const struct coredam_slice_want *a, const struct coredam_slice_want *b)
{
	bool devs = a->n_devs == b->n_devs;
	unsigned int mask = 0;

	for (size_t i = 0; devs && i < a->n_devs; i++)
		devs = a->major[i] == b->major[i] && a->minor[i] == b->minor[i];
	for (int p = 0; p < COREDAM_SLICE_N_IO; p++)
		if (a->io[p] != b->io[p] || (!devs && (a->io[p] || b->io[p])))
			mask |= 1u << p;
	if (a->memory_high != b->memory_high)
		mask |= 1u << COREDAM_SLICE_MEMORY_HIGH;
	return mask;
}

int coredam_slice_parse_dev_block(const char *path, unsigned int *ret_major, unsigned int *ret_minor)
{
	unsigned int major, minor;
	int n = 0;

	if (strncmp(path, "/dev/block/", 11) != 0 || sscanf(path + 11, "%u:%u%n", &major, &minor, &n) != 2 ||
	    path[11 + n] != '\0' || !(path[11] >= '0' && path[11] <= '9'))
		return -EINVAL;
	*ret_major = major;
	*ret_minor = minor;
	return 0;
}

int coredam_slice_dev_path(const struct coredam_slice_known *known, size_t n, unsigned int major,
			   unsigned int minor, char *buf, size_t size)
{
	for (size_t i = 0; i < n; i++)
		if (known[i].resolved && known[i].major == major && known[i].minor == minor)
			return xsnprintf(buf, size, "%s", known[i].path);
	return xsnprintf(buf, size, "/dev/block/%u:%u", major, minor);
}

/* A path as the saved file can hold it: absolute, one word, printable. */
static bool path_ok(const char *path)
{
	if (path[0] != '/')
		return false;
	for (const char *c = path; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == 0x7f)
			return false;
	return true;
}

static void format_limit(struct strbuf *sb, uint64_t v)
{
	if (v == COREDAM_SLICE_NO_LIMIT)
		strbuf_printf(sb, "max\n");
	else
		strbuf_printf(sb, "%" PRIu64 "\n", v);
}

int coredam_slice_limits_format(const struct coredam_slice_limits *l, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT(buf, size);

	for (int p = 0; p < COREDAM_SLICE_N_IO; p++)
		for (size_t i = 0; i < l->n_io[p]; i++) {
			if (!path_ok(l->io[p][i].path))
				return -EINVAL;
			strbuf_printf(&sb, "%s %s ", prop_names[p], l->io[p][i].path);
			format_limit(&sb, l->io[p][i].limit);
		}
	strbuf_printf(&sb, "%s ", prop_names[COREDAM_SLICE_MEMORY_HIGH]);
	format_limit(&sb, l->memory_high);
	return strbuf_done(&sb);
}

static int parse_limit(const char *s, uint64_t *ret)
{
	if (strcmp(s, "max") == 0) {
		*ret = COREDAM_SLICE_NO_LIMIT;
		return 0;
	}
	return parse_u64(s, ret);
}

static int parse_line(char *line, struct coredam_slice_limits *l, bool *have_memory)
{
	char *save = NULL, *name = strtok_r(line, " ", &save), *a = strtok_r(NULL, " ", &save),
	     *b = strtok_r(NULL, " ", &save);
	int p;

	if (!name || !a)
		return -EINVAL;
	for (p = 0; p < COREDAM_SLICE_N_PROPS; p++)
		if (strcmp(name, prop_names[p]) == 0)
			break;
	if (p == COREDAM_SLICE_MEMORY_HIGH) {
		if (b || *have_memory)
			return -EINVAL;
		*have_memory = true;
		return parse_limit(a, &l->memory_high);
	}
	if (p == COREDAM_SLICE_N_PROPS || !b || strtok_r(NULL, " ", &save) || !path_ok(a) ||
	    l->n_io[p] == COREDAM_SLICE_MAX_IO || strlen(a) >= sizeof(l->io[p][0].path))
		return -EINVAL;
	snprintf(l->io[p][l->n_io[p]].path, sizeof(l->io[p][0].path), "%s", a);
	if (parse_limit(b, &l->io[p][l->n_io[p]].limit) < 0)
		return -EINVAL;
	l->n_io[p]++;
	return 0;
}

int coredam_slice_limits_parse(const char *text, struct coredam_slice_limits *ret)
{
	_cleanup_free_ struct coredam_slice_limits *l = calloc(1, sizeof(*l));
	_cleanup_free_ char *copy = strdup(text);
	char *save = NULL;
	bool have_memory = false;

	if (!l || !copy)
		return -ENOMEM;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		int r = parse_line(line, l, &have_memory);

		if (r < 0)
			return r;
	}
	if (!have_memory)
		return -EINVAL;
	*ret = *l;
	return 0;
}
