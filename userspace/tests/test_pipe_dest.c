// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe's library: the destination and helper checks. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>

#include "pipe-dest.h"
#include "test.h"
#include "macro.h"

TEST(pipe_destination_checks)
{
	struct coredam_error e;
	uid_t me = getuid();
	int fd = -1;

	mkdirs("a/dest");
	chmod(tpath("a"), 0755);
	chmod(tpath("a/dest"), 0755);
	CHECK_OK(coredam_pipe_open_dest(tpath("a/dest"), me, &fd, &e));
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);

	fd = -1;
	mklink("a/link", tpath("a/dest"));
	CHECK_ERRNO(coredam_pipe_open_dest(tpath("a/link"), me, &fd, &e), -ELOOP);
	CHECK(strstr(e.msg, "symbolic link") != NULL);
	/* a symlink among the ancestors is refused as well */
	mklink("b", tpath("a"));
	CHECK_ERRNO(coredam_pipe_open_dest(tpath("b/dest"), me, &fd, &e), -ELOOP);

	chmod(tpath("a/dest"), 0775);
	CHECK_ERRNO(coredam_pipe_open_dest(tpath("a/dest"), me, &fd, &e), -EPERM);
	CHECK(strstr(e.msg, "writable by group or others") != NULL);
	chmod(tpath("a/dest"), 01777);	/* sticky does not help the destination itself */
	CHECK_ERRNO(coredam_pipe_open_dest(tpath("a/dest"), me, &fd, &e), -EPERM);
	chmod(tpath("a/dest"), 0755);
	chmod(tpath("a"), 0777);	/* an ancestor anyone may rename things in */
	CHECK_ERRNO(coredam_pipe_open_dest(tpath("a/dest"), me, &fd, &e), -EPERM);
	chmod(tpath("a"), 01777);	/* sticky ancestor (as /tmp): fine */
	CHECK_OK(coredam_pipe_open_dest(tpath("a/dest"), me, &fd, &e));
	if (fd >= 0)
		close(fd);
	chmod(tpath("a"), 0755);

	CHECK_ERRNO(coredam_pipe_open_dest(tpath("a/dest"), me + 4242, &fd, &e), -EPERM);
	CHECK(strstr(e.msg, "owned by uid") != NULL);
	CHECK_ERRNO(coredam_pipe_open_dest(tpath("a/missing"), me, &fd, &e), -ENOENT);
	CHECK_ERRNO(coredam_pipe_open_dest("relative/dir", me, &fd, &e), -EINVAL);
	CHECK_ERRNO(coredam_pipe_open_dest(tpath("a/dest/../dest"), me, &fd, &e), -EINVAL);
	mkfile("a/file", "x");
	CHECK_ERRNO(coredam_pipe_open_dest(tpath("a/file"), me, &fd, &e), -ENOTDIR);
}

/*
 * coredamd installed a pipe core_pattern whose helper was missing (every
 * core lost) and doctor said [ OK ]. The helper must be an executable
 * regular file of its owner's, writable by no one else, in directories no
 * one else can write.
 */
TEST(pipe_helper_checked)
{
	uid_t me = getuid();
	struct coredam_error e;

	mkfile("bin/helper", "#!/bin/sh\n");
	chmod(tpath("bin/helper"), 0755);
	CHECK_OK(coredam_pipe_helper_check(tpath("bin/helper"), me, &e));
	mklink("bin/link", tpath("bin/helper"));
	CHECK_OK(coredam_pipe_helper_check(tpath("bin/link"), me, &e));

	CHECK_ERRNO(coredam_pipe_helper_check(tpath("bin/missing"), me, &e), -ENOENT);
	CHECK(strstr(e.msg, "bin/missing") != NULL);
	mklink("bin/dangling", tpath("bin/missing"));
	CHECK_ERRNO(coredam_pipe_helper_check(tpath("bin/dangling"), me, &e), -ENOENT);
	CHECK_ERRNO(coredam_pipe_helper_check("bin/helper", me, &e), -EINVAL);
	CHECK_ERRNO(coredam_pipe_helper_check(tpath("bin"), me, &e), -EINVAL);
	CHECK_ERRNO(coredam_pipe_helper_check(tpath("bin/helper"), me + 1, &e), -EPERM);

	chmod(tpath("bin/helper"), 0644);
	CHECK_ERRNO(coredam_pipe_helper_check(tpath("bin/helper"), me, &e), -EACCES);
	chmod(tpath("bin/helper"), 0775);
	CHECK_ERRNO(coredam_pipe_helper_check(tpath("bin/helper"), me, &e), -EPERM);
	CHECK(strstr(e.msg, "writable") != NULL);

	/* its directory open to all, sticky or not: another program can take its place */
	mkfile("open/helper", "#!/bin/sh\n");
	chmod(tpath("open/helper"), 0755);
	chmod(tpath("open"), 01777);
	CHECK_ERRNO(coredam_pipe_helper_check(tpath("open/helper"), me, &e), -EPERM);
	chmod(tpath("open"), 0755);
	CHECK_OK(coredam_pipe_helper_check(tpath("open/helper"), me, &e));
	/* an ancestor open to all, not sticky: the directory itself can be renamed away */
	mkfile("top/sub/helper", "#!/bin/sh\n");
	chmod(tpath("top/sub/helper"), 0755);
	chmod(tpath("top"), 0777);
	CHECK_ERRNO(coredam_pipe_helper_check(tpath("top/sub/helper"), me, &e), -EPERM);
	chmod(tpath("top"), 01777);
	CHECK_OK(coredam_pipe_helper_check(tpath("top/sub/helper"), me, &e));
}
