// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>

#include "test.h"
#include "macro.h"
#include "fileio.h"
#include "time-util.h"

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

/* What a stream gave by the deadline, then no more waiting; without one, to its end. */
TEST(read_full_until_deadline)
{
	char buf[16] = "";
	bool timed_out = false;
	uint64_t t0;
	int p[2];

	CHECK(pipe(p) == 0);
	CHECK(write(p[1], "abc", 3) == 3);
	/* the write end stays open: the stream stalls after 3 bytes */
	t0 = now_usec(CLOCK_MONOTONIC);
	CHECK_EQ_INT(read_full_until(p[0], buf, sizeof(buf), t0 + 100 * 1000, &timed_out), 3);
	CHECK(timed_out && memcmp(buf, "abc", 3) == 0);
	CHECK(now_usec(CLOCK_MONOTONIC) - t0 >= 100 * 1000);
	CHECK(now_usec(CLOCK_MONOTONIC) - t0 < 5 * 1000000);

	/* a deadline already past reads nothing */
	timed_out = false;
	CHECK(write(p[1], "de", 2) == 2);
	CHECK_EQ_INT(read_full_until(p[0], buf, sizeof(buf), t0, &timed_out), 0);
	CHECK(timed_out);

	/* the stream ends before the deadline: all of it, not timed out */
	close(p[1]);
	timed_out = false;
	CHECK_EQ_INT(read_full_until(p[0], buf, sizeof(buf), now_usec(CLOCK_MONOTONIC) + 60 * 1000000ULL,
				     &timed_out), 2);
	CHECK(!timed_out && memcmp(buf, "de", 2) == 0);
	/* no deadline: read_full(), to the end */
	CHECK_EQ_INT(read_full_until(p[0], buf, sizeof(buf), 0, NULL), 0);
	close(p[0]);
}
