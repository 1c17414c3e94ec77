// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe's library: the counters and the published budget. */
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

#include "pipe-state.h"
#include "test.h"
#include "macro.h"

TEST(pipe_stats_and_budget)
{
	const char *state = tkeep("state");
	struct coredam_pipe_stats d = { 0 }, s;
	struct coredam_pipe_budget b = { 3, 10, 500 }, got;
	struct coredam_stats k, k0;
	char buf[1024];

	CHECK_ERRNO(coredam_pipe_stats_read(state, &s), -ENOENT);
	d.v[COREDAM_PIPE_STARTED] = 5;
	d.v[COREDAM_PIPE_ADMITTED] = 3;
	d.v[COREDAM_PIPE_COMPLETED] = 2;
	d.v[COREDAM_PIPE_FAILED] = 1;
	d.v[COREDAM_PIPE_SKIPPED_TIMEOUT] = 1;
	d.v[COREDAM_PIPE_SKIPPED_RLIMIT] = 1;
	d.v[COREDAM_PIPE_UNCHARGED] = 1;
	d.v[COREDAM_PIPE_TRUNCATED] = 1;
	d.v[COREDAM_PIPE_BYTES_DISK] = 1000;
	d.v[COREDAM_PIPE_REMOVED_RETENTION] = 3;
	CHECK_OK(coredam_pipe_stats_add(state, &d));
	CHECK_OK(coredam_pipe_stats_add(state, &d));
	CHECK_OK(coredam_pipe_stats_read(state, &s));
	CHECK(s.v[COREDAM_PIPE_STARTED] == 10 && s.v[COREDAM_PIPE_BYTES_DISK] == 2000);
	CHECK(coredam_pipe_stats_format(&s, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "skipped_timeout 2\n") != NULL);
	CHECK(strstr(buf, "uncharged 2\n") != NULL);
	CHECK(strstr(buf, "removed_retention 6\n") != NULL);

	/* under the kernel's names: rlimit skips are not dumps the kernel would start */
	CHECK(coredam_pipe_stats_as_kernel(state, &k) == 0);
	CHECK_EQ_INT(k.v[COREDAM_STAT_STARTED], 8);
	CHECK_EQ_INT(k.v[COREDAM_STAT_ADMITTED], 6);
	/* a core cut at RLIMIT_CORE is the kernel's failed_limit, not completed */
	CHECK_EQ_INT(k.v[COREDAM_STAT_COMPLETED], 2);
	CHECK_EQ_INT(k.v[COREDAM_STAT_FAILED_LIMIT], 2);
	CHECK_EQ_INT(k.v[COREDAM_STAT_FAILED_WRITE], 2);
	CHECK_EQ_INT(k.v[COREDAM_STAT_FAILED], 4);
	CHECK_EQ_INT(k.v[COREDAM_STAT_UNCHARGED], 2);
	CHECK(k.v[COREDAM_STAT_SKIPPED_TIMEOUT] == 2 && k.v[COREDAM_STAT_BYTES] == 2000);
	CHECK(k.v[COREDAM_STAT_ACTIVE] == 0 && k.v[COREDAM_STAT_WAITING] == 0);
	CHECK(coredam_stats_consistent(&k));

	CHECK(coredam_pipe_stats_parse("started 1\nfuture_counter 9\n", &s) == 0 && s.v[0] == 1);
	CHECK_ERRNO(coredam_pipe_stats_parse("started x\n", &s), -EBADMSG);

	/* the socket's held gauge: an arrival raises it with started, an answer lowers it */
	memset(&d, 0, sizeof(d));
	d.v[COREDAM_PIPE_STARTED] = 2;
	d.v[COREDAM_PIPE_HELD] = 2;
	CHECK_OK(coredam_pipe_stats_add(state, &d));
	CHECK(coredam_pipe_stats_as_kernel(state, &k) == 0);
	/* two started and not answered: waiting, as the kernel counts its own */
	CHECK_EQ_INT(k.v[COREDAM_STAT_STARTED], 10);
	CHECK_EQ_INT(k.v[COREDAM_STAT_WAITING], 2);
	CHECK(coredam_stats_consistent(&k));
	memset(&d, 0, sizeof(d));
	d.v[COREDAM_PIPE_SKIPPED_KILLED] = 1;
	d.v[COREDAM_PIPE_HELD] = (uint64_t)-1;
	CHECK_OK(coredam_pipe_stats_add(state, &d));
	CHECK_OK(coredam_pipe_stats_read(state, &s));
	CHECK(s.v[COREDAM_PIPE_HELD] == 1 && s.v[COREDAM_PIPE_SKIPPED_KILLED] == 1);
	CHECK(coredam_pipe_stats_as_kernel(state, &k) == 0 && coredam_stats_consistent(&k));
	/* lowered past 0 (a file that started over): 0, never a wrapped huge number */
	d.v[COREDAM_PIPE_HELD] = (uint64_t)-5;
	CHECK_OK(coredam_pipe_stats_add(state, &d));
	CHECK_OK(coredam_pipe_stats_read(state, &s));
	CHECK_EQ_INT(s.v[COREDAM_PIPE_HELD], 0);

	/* the kernel log's position is set, not added, and only by a nonzero value */
	CHECK(coredam_pipe_stats_as_kernel(state, &k) == 0);
	k0 = k;
	memset(&d, 0, sizeof(d));
	d.v[COREDAM_PIPE_LOST_CONNECT] = 3;
	d.v[COREDAM_PIPE_KMSG_SEQ] = 812;
	CHECK_OK(coredam_pipe_stats_add(state, &d));
	d.v[COREDAM_PIPE_KMSG_SEQ] = 900;
	CHECK_OK(coredam_pipe_stats_add(state, &d));
	memset(&d, 0, sizeof(d));
	CHECK_OK(coredam_pipe_stats_add(state, &d));
	CHECK_OK(coredam_pipe_stats_read(state, &s));
	CHECK_EQ_INT(s.v[COREDAM_PIPE_LOST_CONNECT], 6);
	CHECK_EQ_INT(s.v[COREDAM_PIPE_KMSG_SEQ], 900);
	/* crashes lost before they connected never started, as the kernel counts */
	CHECK(coredam_pipe_stats_as_kernel(state, &k) == 0);
	CHECK(memcmp(&k, &k0, sizeof(k)) == 0);

	CHECK_ERRNO(coredam_pipe_budget_read(state, &got), -ENOENT);
	CHECK_OK(coredam_pipe_budget_write(state, &b));
	CHECK_OK(coredam_pipe_budget_read(state, &got));
	CHECK(got.concurrency == 3 && got.waiting == 10 && got.timeout_ms == 500);
	CHECK_OK(coredam_pipe_budget_remove(state));
	CHECK_ERRNO(coredam_pipe_budget_read(state, &got), -ENOENT);
}
