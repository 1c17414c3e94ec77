// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Storing one core from a stream (the pipe helper's stdin, a connection
 * of the coredump socket): here a socket, as the socket's writer reads.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "config.h"
#include "core-build.h"
#include "core-store.h"
#include "pipe-outcome.h"
#include "test.h"
#include "macro.h"

static struct coredam_pipe_args args(int dumpable)
{
	struct coredam_pipe_args a = {
		.pid = 42, .uid = 1000, .gid = 1000, .signal = 11, .time = 1700000000, .rlimit = UINT64_MAX,
		.dumpable = dumpable,
	};

	snprintf(a.dir, sizeof(a.dir), "%s", tpath("cores"));
	snprintf(a.comm, sizeof(a.comm), "crasher");
	return a;
}

static mode_t mode_of(const char *rel)
{
	struct stat st;

	if (stat(tpath(rel), &st) < 0)
		return (mode_t)-1;
	return st.st_mode & 07777;
}

TEST(core_store_whole_cut_empty)
{
	static unsigned char core[32768];
	uint64_t size = core_make(core, sizeof(core), true, false, 3);
	struct coredam_config cfg;
	struct coredam_pipe_args a;
	struct coredam_core_meta m;
	struct coredam_core_stored st;
	struct coredam_pipe_outcome o;
	struct coredam_error e;
	_cleanup_close_ int dirfd = -1;
	int fd;

	coredam_config_init(&cfg);
	mkdirs("cores");
	dirfd = open(tpath("cores"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(size == 4096 + 2 * 8192);

	/* whole: under its name, root's and 0640, its metadata beside it, completed */
	a = args(1);
	m = (struct coredam_core_meta){ .pid = 42, .comm = "crasher", .rlimit = UINT64_MAX, .compression = "none" };
	fd = core_stream(core, size);
	CHECK_OK(coredam_core_store(fd, NULL, 0, &cfg, &a, dirfd, 0, &m, &st, &e));
	close(fd);
	CHECK_STREQ(st.final, "core.crasher.42.1700000000");
	CHECK_EQ_INT(st.res.in_bytes, size);
	CHECK_EQ_INT(st.expected, size);
	CHECK_EQ_INT(mode_of("cores/core.crasher.42.1700000000"), 0640);
	CHECK_EQ_INT(mode_of("cores/core.crasher.42.1700000000.json"), 0640);
	o = (struct coredam_pipe_outcome){ 0 };
	CHECK_EQ_INT(coredam_pipe_outcome_stored(&o, 0, &st.res, st.expected), COREDAM_PIPE_EXIT_STORED);

	/* cut short by the kernel: kept, never under a whole-looking name, failed; 0400 for a root dump */
	a = args(2);
	a.time++;
	fd = core_stream(core, size - 5000);
	CHECK_OK(coredam_core_store(fd, NULL, 0, &cfg, &a, dirfd, 0, &m, &st, &e));
	close(fd);
	CHECK_STREQ(st.final, "core.crasher.42.1700000001.incomplete");
	CHECK_EQ_INT(st.expected, size);
	CHECK_EQ_INT(mode_of("cores/core.crasher.42.1700000001.incomplete"), 0400);
	CHECK_EQ_INT(mode_of("cores/core.crasher.42.1700000001"), (mode_t)-1);
	o = (struct coredam_pipe_outcome){ 0 };
	CHECK_EQ_INT(coredam_pipe_outcome_stored(&o, 0, &st.res, st.expected), COREDAM_PIPE_EXIT_FAILED);

	/* nothing sent: nothing kept, no temporary file left */
	a.time++;
	fd = core_stream(core, 0);
	CHECK_ERRNO(coredam_core_store(fd, NULL, 0, &cfg, &a, dirfd, 0, &m, &st, &e), -ENODATA);
	close(fd);
	CHECK_EQ_INT(mode_of("cores/core.crasher.42.1700000002"), (mode_t)-1);
	CHECK_EQ_INT(mode_of("cores/.core.crasher.42.1700000002.tmp"), (mode_t)-1);
	{
		char rel[64];

		snprintf(rel, sizeof(rel), "cores/.core.crasher.42.1700000002.%d.tmp", (int)getpid());
		CHECK_EQ_INT(mode_of(rel), (mode_t)-1);
	}
}
