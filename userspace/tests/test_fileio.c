// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

#include "test.h"
#include "macro.h"
#include "fileio.h"

TEST(atomic_write)
{
	char *s;
	int fd;

	mkdirs("d");
	fd = open(tpath("d"), O_RDONLY | O_DIRECTORY);
	CHECK_OK(write_file_atomic_at(fd, "f", "one\n", 4, 0644));
	CHECK_OK(write_file_atomic_at(fd, "f", "two\n", 4, 0644));
	s = slurp("d/f");
	CHECK(s && strcmp(s, "two\n") == 0);
	free(s);
	CHECK(faccessat(fd, "f.tmp", F_OK, 0) < 0);
	close(fd);
}

/* how many names d/ holds besides @keep1, @keep2 and @keep3 */
static int count_other_entries(const char *keep1, const char *keep2, const char *keep3)
{
	DIR *d = opendir(tpath("d"));
	struct dirent *de;
	int n = 0;

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, keep1) &&
		    strcmp(de->d_name, keep2) && strcmp(de->d_name, keep3))
			n++;
	closedir(d);
	return n;
}

/*
 * The directory's owner plants symlinks at every name the writer could
 * use (the old code opened "PATH.tmp.PID" with O_TRUNC and fchmod()ed it):
 * the files they point to must keep their content and mode, and a symlink
 * at the target itself is replaced, not written through.
 */
TEST(atomic_write_planted_symlinks)
{
	char old_tmp[64], *s;
	struct stat st;
	int fd;

	mkdirs("d");
	mkfile("victim", "root only\n");
	mkfile("victim2", "also root only\n");
	chmod(tpath("victim"), 0600);
	chmod(tpath("victim2"), 0600);
	snprintf(old_tmp, sizeof(old_tmp), "f.tmp.%d", (int)getpid());
	mklink("d/f.tmp", tpath("victim"));
	{
		char rel[80];

		snprintf(rel, sizeof(rel), "d/%s", old_tmp);
		mklink(rel, tpath("victim"));
	}
	mklink("d/f", tpath("victim2"));
	fd = open(tpath("d"), O_RDONLY | O_DIRECTORY);
	CHECK_OK(write_file_atomic_at(fd, "f", "new\n", 4, 0644));
	s = slurp("victim");
	CHECK(s && strcmp(s, "root only\n") == 0);
	free(s);
	s = slurp("victim2");
	CHECK(s && strcmp(s, "also root only\n") == 0);
	free(s);
	CHECK(stat(tpath("victim"), &st) == 0 && (st.st_mode & 07777) == 0600);
	CHECK(stat(tpath("victim2"), &st) == 0 && (st.st_mode & 07777) == 0600);
	CHECK(fstatat(fd, "f", &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode) && (st.st_mode & 07777) == 0644);
	s = slurp("d/f");
	CHECK(s && strcmp(s, "new\n") == 0);
	free(s);
	/* the planted links stay as they were; no temporary is left */
	CHECK(fstatat(fd, old_tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode));
	CHECK_EQ_INT(count_other_entries("f", old_tmp, "f.tmp"), 0);
	close(fd);
}

/* a write that cannot be renamed into place (a directory there) leaves no temporary behind */
TEST(atomic_write_failure_cleans_up)
{
	int fd;

	mkdirs("d/f");
	fd = open(tpath("d"), O_RDONLY | O_DIRECTORY);
	CHECK_ERRNO(write_file_atomic_at(fd, "f", "x\n", 2, 0644), -EISDIR);
	CHECK_EQ_INT(count_other_entries("f", "f", "f"), 0);
	close(fd);
}
