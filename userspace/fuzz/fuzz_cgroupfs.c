// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * What the agent reads from cgroupfs and procfs as text: io.max (whole
 * files and single rules, as the kernel prints them or a user writes them),
 * io.pressure and /proc/pressure/io, kernel.core_dump_stats,
 * coredam-pipe's counters file, and cgroup paths from the configuration.
 *
 * Properties: a parsed io.max rule formats to a rule that parses back to
 * itself; core_dump_stats parses only when every counter the agent knows is
 * named at the start of a line, and then parses the same with the lines in
 * another order; the pipe counters survive format and parse; a cgroup path
 * that passes is absolute, not the root, without "." or ".." components;
 * a slice's unit name is the path's last component (without systemd's
 * "_" escape), ends in ".slice" and holds no "/"; the saved limits
 * survive format and parse.
 */
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "fuzz.h"
#include "pipe-state.h"
#include "psi.h"
#include "slice.h"
#include "sysctl.h"
#include "macro.h"

static void check_rule(const struct coredam_io_limit *l)
{
	struct coredam_io_limit back;
	char line[160];

	FUZZ_CHECK(coredam_io_limit_format(l, line, sizeof(line)) > 0);
	FUZZ_CHECK(coredam_io_limit_parse(line, &back) == 0);
	FUZZ_CHECK(memcmp(&back, l, sizeof(back)) == 0);
}

static void check_io_max(const char *s)
{
	struct coredam_io_limit *v = NULL, l;
	size_t n = 0;

	if (coredam_io_max_parse(s, &v, &n) == 0) {
		for (size_t i = 0; i < n; i++)
			check_rule(&v[i]);
		free(v);
	}
	memset(&l, 0, sizeof(l));
	if (coredam_io_limit_parse(s, &l) == 0)
		check_rule(&l);
}

static void check_pipe_stats(const char *s)
{
	struct coredam_pipe_stats st, back;
	char buf[2048];

	if (coredam_pipe_stats_parse(s, &st) < 0)
		return;
	FUZZ_CHECK(coredam_pipe_stats_format(&st, buf, sizeof(buf)) > 0);
	FUZZ_CHECK(coredam_pipe_stats_parse(buf, &back) == 0);
	FUZZ_CHECK(memcmp(&st, &back, sizeof(st)) == 0);
}

static void check_stats(const char *s)
{
	struct coredam_stats st, back;
	char *rev, *o;
	size_t len = strlen(s);

	if (coredam_stats_parse(s, &st) < 0)
		return;
	(void)coredam_stats_consistent(&st);
	for (int i = 0; i < COREDAM_STATS_N; i++) {
		size_t n = strlen(coredam_stat_names[i]);
		bool found = strncmp(s, coredam_stat_names[i], n) == 0 && s[n] == ' ';

		for (const char *p = s; !found && (p = strchr(p, '\n')); p++)
			found = strncmp(p + 1, coredam_stat_names[i], n) == 0 && p[1 + n] == ' ';
		FUZZ_CHECK(found);
	}
	/* the same lines, last first */
	rev = malloc(len + 2);
	FUZZ_CHECK(rev);
	o = rev;
	for (size_t end = len; end > 0;) {
		size_t start;

		if (s[end - 1] == '\n')
			end--;
		start = end;
		while (start > 0 && s[start - 1] != '\n')
			start--;
		memcpy(o, s + start, end - start);
		o += end - start;
		*o++ = '\n';
		end = start;
	}
	*o = '\0';
	FUZZ_CHECK(coredam_stats_parse(rev, &back) == 0);
	FUZZ_CHECK(memcmp(&st, &back, sizeof(st)) == 0);
	free(rev);
}

static void check_cg_path(const char *s)
{
	const char *p = s;

	if (coredam_cg_path_valid(s) < 0)
		return;
	FUZZ_CHECK(s[0] == '/');
	FUZZ_CHECK(strspn(s, "/") < strlen(s));
	while (*p) {
		size_t len;

		p += strspn(p, "/");
		len = strcspn(p, "/");
		FUZZ_CHECK(!(len == 1 && p[0] == '.'));
		FUZZ_CHECK(!(len == 2 && p[0] == '.' && p[1] == '.'));
		p += len;
	}
}

static void check_slice(const char *s)
{
	static struct coredam_slice_limits l, back;
	char name[256], text[16384];
	const char *last = strrchr(s, '/');

	if (coredam_slice_unit_name(s, name, sizeof(name)) >= 0) {
		FUZZ_CHECK(last && !strchr(name, '/'));
		last += 1 + (last[1] == '_');
		FUZZ_CHECK(strcmp(name, last) == 0);
		FUZZ_CHECK(strlen(name) > 6 && strcmp(name + strlen(name) - 6, ".slice") == 0);
	}
	if (coredam_slice_limits_parse(s, &l) < 0)
		return;
	FUZZ_CHECK(coredam_slice_limits_format(&l, text, sizeof(text)) > 0);
	FUZZ_CHECK(coredam_slice_limits_parse(text, &back) == 0);
	FUZZ_CHECK(memcmp(&l, &back, sizeof(l)) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	struct coredam_psi psi;

	check_io_max(s);
	if (coredam_psi_parse(s, &psi) == 0)
		FUZZ_CHECK(!psi.has_full || strstr(s, "full"));
	check_stats(s);
	check_pipe_stats(s);
	check_cg_path(s);
	check_slice(s);
	free(s);
	return 0;
}
