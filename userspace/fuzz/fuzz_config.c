// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredam.conf and its drop-ins, through coredam_config_load() as coredamd
 * calls it. The input is the main file; NUL bytes split off drop-ins
 * (10.conf, 11.conf, ...), read after it in that order.
 *
 * Properties, beyond "no crash, leak or undefined behaviour":
 * - comment lines do not count: the same files with every comment line
 *   emptied load to the same configuration or fail with the same error
 *   (unless a line was refused as too long);
 * - coredamctl set --persist keeps meaning: after coredam_dropin_set() on
 *   the last drop-in of a good configuration, it loads to the same
 *   configuration but for the key that was set.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"

#define MAX_DROPINS 8

/* Write the main file and drop-ins of @tree; the number of drop-ins. */
static int write_tree(const char *tree, const uint8_t *data, size_t size, bool strip_comments)
{
	char rel[64], *buf;
	int n = -1;

	snprintf(rel, sizeof(rel), "%s/coredam.conf.d", tree);
	fuzz_empty_dir(rel);
	buf = malloc(size + 1);
	if (!buf)
		abort();
	while (n < MAX_DROPINS) {
		const uint8_t *nul = memchr(data, '\0', size);
		size_t len = nul ? (size_t)(nul - data) : size, o = 0;

		/* emptied comment lines keep their newline: the line numbers stay */
		for (size_t i = 0; i < len;) {
			size_t end = i, j = i;

			while (end < len && data[end] != '\n')
				end++;
			while (j < end && isspace(data[j]))
				j++;
			if (!(strip_comments && j < end && (data[j] == '#' || data[j] == ';'))) {
				memcpy(buf + o, data + i, end - i);
				o += end - i;
			}
			if (end < len)
				buf[o++] = '\n';
			i = end + 1;
		}
		if (n < 0)
			snprintf(rel, sizeof(rel), "%s/coredam.conf", tree);
		else
			snprintf(rel, sizeof(rel), "%s/coredam.conf.d/%d.conf", tree, 10 + n);
		fuzz_write(rel, buf, o);
		n++;
		if (!nul)
			break;
		size -= len + 1;
		data = nul + 1;
	}
	free(buf);
	return n;
}

static int load(const char *tree, struct coredam_config *c, struct coredam_error *e)
{
	char main_rel[64], dropin_rel[64], main_file[PATH_MAX], dropin_dir[PATH_MAX];

	snprintf(main_rel, sizeof(main_rel), "%s/coredam.conf", tree);
	snprintf(dropin_rel, sizeof(dropin_rel), "%s/coredam.conf.d", tree);
	snprintf(main_file, sizeof(main_file), "%s", fuzz_path(main_rel));
	snprintf(dropin_dir, sizeof(dropin_dir), "%s", fuzz_path(dropin_rel));
	return coredam_config_load(main_file, (const char *const[]){ dropin_dir, NULL }, c, e);
}

static void format(const struct coredam_config *c, char *buf, size_t size)
{
	FUZZ_CHECK(coredam_config_format(c, buf, size) > 0);
}

/* The error with the tree's directory taken off the file name. */
static const char *error_file(const struct coredam_error *e)
{
	const char *s = strstr(e->where, "/coredam.conf");

	return s ? s : e->where;
}

static void check_comments_do_not_count(int r, const struct coredam_config *c,
					const struct coredam_error *e)
{
	struct coredam_config c2;
	struct coredam_error e2;
	static char a[8192], b[8192];
	int r2;

	if (r < 0 && strstr(e->msg, "too long"))
		return;
	r2 = load("s", &c2, &e2);
	FUZZ_CHECK(r == r2);
	if (r < 0 && r == r2) {
		FUZZ_CHECK(e->line == e2.line);
		FUZZ_CHECK(strcmp(e->msg, e2.msg) == 0);
		FUZZ_CHECK(strcmp(error_file(e), error_file(&e2)) == 0);
	}
	if (r == 0 && r2 == 0) {
		format(c, a, sizeof(a));
		format(&c2, b, sizeof(b));
		FUZZ_CHECK(strcmp(a, b) == 0);
	}
}

static void check_persist(int n_dropins, const struct coredam_config *c)
{
	struct coredam_config want = *c, got;
	struct coredam_error e;
	static char a[8192], b[8192];
	char rel[64];
	int r;

	snprintf(rel, sizeof(rel), "o/coredam.conf.d/%d.conf", 10 + n_dropins - 1);
	r = coredam_dropin_set(fuzz_path(rel), "Limits", "Concurrency", "7");
	if (r == -E2BIG)
		return;	/* the drop-in holds as many assignments as it may */
	FUZZ_CHECK(r == 0);
	want.concurrency = 7;
	r = load("o", &got, &e);
	FUZZ_CHECK(r == 0);
	if (r == 0) {
		format(&want, a, sizeof(a));
		format(&got, b, sizeof(b));
		FUZZ_CHECK(strcmp(a, b) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct coredam_config c;
	struct coredam_error e;
	int n, r;

	n = write_tree("o", data, size, false);
	write_tree("s", data, size, true);
	r = load("o", &c, &e);
	check_comments_do_not_count(r, &c, &e);
	if (r == 0 && n > 0)
		check_persist(n, &c);
	return 0;
}
