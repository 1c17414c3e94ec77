// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"
#include "macro.h"
#include "fileio.h"

static struct test tests[256];
static size_t n_tests;
int test_failed_checks;
static char root[256];

void test_register(const char *name, void (*fn)(void))
{
	if (n_tests < ELEMENTSOF(tests))
		tests[n_tests++] = (struct test){ name, fn };
}

const char *test_errno_str(long long r, char *buf, size_t size)
{
	const char *name = NULL;

	if (r >= 0 || r < -INT_MAX) {
		snprintf(buf, size, r >= 0 ? "%lld" : "%lld (not an errno)", r);
		return buf;
	}
#ifdef __GLIBC__
#if __GLIBC_PREREQ(2, 32)
	name = strerrorname_np((int)-r);
#endif
#endif
	if (name)
		snprintf(buf, size, "-%s (%s)", name, strerror((int)-r));
	else
		snprintf(buf, size, "%lld (%s)", r, strerror((int)-r));
	return buf;
}

const char *tmp_root(void)
{
	if (!root[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(root, sizeof(root), "%s/coredam-test.XXXXXX", t && *t ? t : P_tmpdir);
		if (!mkdtemp(root)) {
			perror("mkdtemp");
			abort();
		}
	}
	return root;
}

const char *tpath(const char *rel)
{
	static char ring[8][4096];
	static int i;
	char *b = ring[i++ % 8];

	snprintf(b, 4096, "%s/%s", tmp_root(), rel);
	return b;
}

static char *kept[64];
static size_t n_kept;

const char *tkeep(const char *rel)
{
	char *s = strdup(tpath(rel));

	if (!s || n_kept >= ELEMENTSOF(kept))
		abort();
	kept[n_kept++] = s;
	return s;
}

void mkdirs(const char *rel)
{
	char p[4096];

	snprintf(p, sizeof(p), "%s", tpath(rel));
	for (char *s = p + strlen(tmp_root()) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		mkdir(p, 0755);
		*s = '/';
	}
	mkdir(p, 0755);
}

static void mkparents(const char *rel)
{
	char d[4096], *s;

	snprintf(d, sizeof(d), "%s", rel);
	s = strrchr(d, '/');
	if (s) {
		*s = '\0';
		mkdirs(d);
	}
}

void mkfile(const char *rel, const char *content)
{
	FILE *f;

	mkparents(rel);
	f = fopen(tpath(rel), "w");
	if (!f) {
		perror(tpath(rel));
		abort();
	}
	fputs(content, f);
	fclose(f);
}

void mklink(const char *rel, const char *target)
{
	mkparents(rel);
	unlink(tpath(rel));
	if (symlink(target, tpath(rel)) < 0) {
		perror(tpath(rel));
		abort();
	}
}

char *slurp(const char *rel)
{
	char *s = NULL;

	if (read_file_at(AT_FDCWD, tpath(rel), 1 << 20, &s) < 0)
		return NULL;
	return s;
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;

	for (size_t i = 0; i < n_tests; i++) {
		int before = test_failed_checks;

		if (argc > 1 && !strstr(tests[i].name, argv[1]))
			continue;
		root[0] = '\0';
		tests[i].fn();
		while (n_kept)
			free(kept[--n_kept]);
		if (root[0])
			nftw(root, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
		if (test_failed_checks == before) {
			passed++;
			printf("ok %s\n", tests[i].name);
		} else {
			failed++;
			printf("FAIL %s\n", tests[i].name);
		}
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
