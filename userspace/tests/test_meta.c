// SPDX-License-Identifier: LGPL-2.1-or-later
/* The JSON metadata beside each core the pipe helper stores. */
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

#include "meta.h"
#include "pipe-args.h"
#include "test.h"
#include "macro.h"

TEST(pipe_meta_json)
{
	struct coredam_core_meta m = {
		.core = "core.x.1.2", .pid = 1, .uid = 1000, .gid = 100, .signal = 11, .time = 2,
		.comm = "a\"b\\c\nd\x01\xff", .size = 10, .disk_size = 4, .compression = "zstd",
		.rlimit = UINT64_MAX, .dumpable = 1, .cgroup = "/coredump.slice",
	};
	char buf[2048], *s;
	int fd;

	/* one line, keys in their order, numbers, null and false as such */
	CHECK_EQ_INT(coredam_meta_format(&m, buf, sizeof(buf)), (int)strlen(buf));
	CHECK_STREQ(buf, "{\"core\": \"core.x.1.2\", \"pid\": 1, \"uid\": 1000, \"gid\": 100, \"signal\": 11, "
			 "\"time\": 2, \"comm\": \"a\\\"b\\\\c\\nd\\u0001\\u00FF\", \"size\": 10, \"disk_size\": 4, "
			 "\"compression\": \"zstd\", \"truncated\": false, \"rlimit\": null, \"dumpable\": 1, "
			 "\"ticket\": 0, \"waited_ms\": 0, \"write_ms\": 0, \"arrived_usec\": 0, "
			 "\"admitted_usec\": 0, \"done_usec\": 0, \"cgroup\": \"/coredump.slice\"}\n");
	CHECK_ERRNO(coredam_meta_format(&m, buf, 40), -ENOBUFS);

	mkdirs("d");
	fd = open(tpath("d"), O_RDONLY | O_DIRECTORY);
	CHECK_OK(coredam_meta_write_at(fd, "m.json", "{}\n", 0644));
	CHECK_ERRNO(coredam_meta_write_at(fd, "m.json", "{}\n", 0644), -EEXIST);	/* never replaces */
	s = slurp("d/m.json");
	CHECK(s && strcmp(s, "{}\n") == 0);
	free(s);
	close(fd);
}

/*
 * The metadata names the process, its uid and cgroup: it was written 0644,
 * so every user saw every crash, root's included. Now root's, 0640 (0600
 * for suid_dumpable=2), whatever the umask.
 */
TEST(pipe_meta_not_world_readable)
{
	struct coredam_pipe_args a = { .pid = 1, .uid = 1000, .gid = 100, .dumpable = 1 };
	struct coredam_pipe_files f;
	struct stat st;
	mode_t old;
	int fd;

	coredam_pipe_files(&a, &f);
	CHECK_EQ_INT(f.core_mode, 0640);
	CHECK_EQ_INT(f.meta_mode, 0640);
	a.dumpable = 2;
	coredam_pipe_files(&a, &f);
	CHECK_EQ_INT(f.core_mode, 0400);
	CHECK_EQ_INT(f.meta_mode, 0600);

	a.dumpable = 1;
	coredam_pipe_files(&a, &f);
	mkdirs("d");
	fd = open(tpath("d"), O_RDONLY | O_DIRECTORY);
	old = umask(0);
	CHECK_OK(coredam_meta_write_at(fd, "m.json", "{}\n", f.meta_mode));
	umask(old);
	CHECK(fstatat(fd, "m.json", &st, 0) == 0);
	CHECK_EQ_INT(st.st_mode & 07777, 0640);
	CHECK(!(st.st_mode & S_IROTH));
	close(fd);
}
