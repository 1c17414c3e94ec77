// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"

static char dir[256];

void fuzz_fail(const char *file, int line, const char *what)
{
	fprintf(stderr, "%s:%d: property violated: %s\n", file, line, what);
	abort();
}

char *fuzz_string(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);

	if (!s)
		abort();
	memcpy(s, data, size);
	s[size] = '\0';
	return s;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static void remove_dir(void)
{
	if (dir[0])
		nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *fuzz_dir(void)
{
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");

		snprintf(dir, sizeof(dir), "%s/coredam-fuzz.XXXXXX", t && *t ? t : "/tmp");
		if (!mkdtemp(dir)) {
			perror(dir);
			abort();
		}
		atexit(remove_dir);
	}
	return dir;
}

const char *fuzz_path(const char *rel)
{
	static char ring[8][512];
	static unsigned int i;
	char *b = ring[i++ % 8];

	snprintf(b, sizeof(ring[0]), "%s/%s", fuzz_dir(), rel);
	return b;
}

static void mkparents(const char *path)
{
	char p[512];

	snprintf(p, sizeof(p), "%s", path);
	for (char *s = p + strlen(fuzz_dir()) + 1; (s = strchr(s, '/')); s++) {
		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST) {
			perror(p);
			abort();
		}
		*s = '/';
	}
}

void fuzz_write(const char *rel, const void *data, size_t size)
{
	const char *path = fuzz_path(rel);
	int fd;

	mkparents(path);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || (size && write(fd, data, size) != (ssize_t)size)) {
		perror(path);
		abort();
	}
	close(fd);
}

void fuzz_empty_dir(const char *rel)
{
	const char *path = fuzz_path(rel);
	char p[512];

	snprintf(p, sizeof(p), "%s", path);
	mkparents(p);
	nftw(p, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	if (mkdir(p, 0755) < 0 && errno != EEXIST) {
		perror(p);
		abort();
	}
}
