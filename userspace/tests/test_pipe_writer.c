// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe's library: the writer: window, holes, zstd, caps, free-space floor. */
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
#include "pipe-writer.h"
#include "test.h"
#include "macro.h"
#include "fileio.h"
#include "time-util.h"

static char *slurp_big(const char *rel, size_t max)
{
	char *s = NULL;

	if (read_file_at(AT_FDCWD, tpath(rel), max, &s) < 0)
		return NULL;
	return s;
}

static void fill(unsigned char *buf, size_t n)
{
	uint32_t x = 12345;

	for (size_t i = 0; i < n; i++) {
		x = x * 1103515245 + 12345;
		buf[i] = (unsigned char)(x >> 16);
	}
}

/* The test's file @rel holding @n bytes of @data. */
static void put(const char *rel, const void *data, size_t n)
{
	FILE *f = fopen(tpath(rel), "w");

	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(fwrite(data, 1, n, f) == n);
	CHECK(fclose(f) == 0);
}

TEST(pipe_copy_window_holes_limit_zstd)
{
	size_t n = 3 << 20;
	unsigned char *data = malloc(n);
	struct coredam_pipe_copy_opts o = { .window = 256 << 10, .limit = UINT64_MAX };
	struct coredam_pipe_copy_result res;
	int in, out, dec;
	char *got;
	struct stat st;
	uint64_t back = 0;

	CHECK(data != NULL);
	if (!data)
		return;
	fill(data, n);
	memset(data + (1 << 20), 0, 1 << 20);	/* one zero MiB: a hole */
	memset(data + n - 8192, 0, 8192);	/* zero tail: ftruncate */
	put("in", data, n);
	in = open(tpath("in"), O_RDONLY);
	out = open(tpath("out"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK_OK(coredam_pipe_copy(in, out, &o, &res));
	CHECK(res.in_bytes == n && res.out_bytes == n && !res.truncated);
	close(in);
	close(out);
	got = slurp_big("out", n);
	CHECK(got && memcmp(got, data, n) == 0);
	free(got);
	CHECK(stat(tpath("out"), &st) == 0 && (uint64_t)st.st_size == n);
	/* fewer blocks than bytes where the filesystem keeps holes (tmpfs, ext4) */
	CHECK((uint64_t)st.st_blocks * 512 <= n);

	/* cut at the limit */
	o.limit = 1 << 20;
	in = open(tpath("in"), O_RDONLY);
	out = open(tpath("cut"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK_OK(coredam_pipe_copy(in, out, &o, &res));
	CHECK(res.in_bytes == 1 << 20 && res.truncated);
	close(in);
	close(out);

	/* zstd, then back */
	o.limit = UINT64_MAX;
	o.compress_level = 3;
	in = open(tpath("in"), O_RDONLY);
	out = open(tpath("z"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK_OK(coredam_pipe_copy(in, out, &o, &res));
	CHECK(res.in_bytes == n && res.out_bytes < n);
	close(in);
	close(out);
	in = open(tpath("z"), O_RDONLY);
	dec = open(tpath("unz"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(coredam_pipe_decompress(in, dec, &back) == 0 && back == n);
	close(in);
	close(dec);
	got = slurp_big("unz", n);
	CHECK(got && memcmp(got, data, n) == 0);
	free(got);
	/* a cut stream is refused */
	CHECK(truncate(tpath("z"), (off_t)(res.out_bytes / 2)) == 0);
	in = open(tpath("z"), O_RDONLY);
	dec = open(tpath("unz2"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK_ERRNO(coredam_pipe_decompress(in, dec, &back), -EBADMSG);
	close(in);
	close(dec);
	free(data);
}

/*
 * Any user could hold a slot for hours: a 64 TiB sparse mapping dumps as
 * 64 TiB of zeros through the pipe. The copy stops at the size cap (the
 * writer's limit) and at the deadline, even while the stream stalls.
 */
TEST(pipe_copy_deadline_and_cap)
{
	static unsigned char data[16384];
	struct coredam_pipe_copy_opts o = { .limit = UINT64_MAX };
	struct coredam_pipe_copy_result res = { 0 };
	uint64_t t0;
	int p[2], out;

	memset(data, 0x5a, sizeof(data));
	CHECK(pipe(p) == 0);
	CHECK(write(p[1], data, sizeof(data)) == (ssize_t)sizeof(data));
	/* the write end stays open: the stream stalls after 16 KiB */
	out = open(tpath("deadline.out"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	t0 = now_usec(CLOCK_MONOTONIC);
	o.deadline_usec = t0 + 300 * 1000;
	CHECK_OK(coredam_pipe_copy(p[0], out, &o, &res));
	CHECK(now_usec(CLOCK_MONOTONIC) - t0 >= 300 * 1000);
	CHECK(now_usec(CLOCK_MONOTONIC) - t0 < 5 * 1000000);
	CHECK_EQ_INT(res.in_bytes, sizeof(data));
	CHECK(res.truncated && res.timed_out);
	close(out);

	/* the cap: 8 KiB of 16, more after it, no deadline reached */
	CHECK(write(p[1], data, sizeof(data)) == (ssize_t)sizeof(data));
	out = open(tpath("cap.out"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	o.limit = 8192;
	o.deadline_usec = now_usec(CLOCK_MONOTONIC) + 60 * 1000000ULL;
	res = (struct coredam_pipe_copy_result){ 0 };
	CHECK_OK(coredam_pipe_copy(p[0], out, &o, &res));
	CHECK_EQ_INT(res.in_bytes, 8192);
	CHECK(res.truncated && !res.timed_out);
	close(out);

	/* a stream that ends before the deadline is whole */
	close(p[1]);
	out = open(tpath("end.out"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	o.limit = UINT64_MAX;
	res = (struct coredam_pipe_copy_result){ 0 };
	CHECK_OK(coredam_pipe_copy(p[0], out, &o, &res));
	CHECK_EQ_INT(res.in_bytes, sizeof(data) - 8192 - 1);
	CHECK(!res.truncated && !res.timed_out);
	close(out);
	close(p[0]);
}

/*
 * The socket server's read-ahead: a core read into memory as fast as the
 * kernel sends it, so that its process is gone before the paced writes,
 * then written from memory as if read now: the same bytes and holes,
 * whether it all fit or the rest followed from the stream.
 */
TEST(pipe_spool_then_copy)
{
	size_t n = 3 << 20;
	unsigned char *data = malloc(n);
	struct coredam_pipe_copy_opts o = { .window = 256 << 10, .limit = UINT64_MAX };
	struct coredam_pipe_copy_result res;
	struct coredam_spool sp;
	struct stat st;
	int in, out;
	char *got;

	CHECK(data != NULL);
	if (!data)
		return;
	fill(data, n);
	memset(data + (1 << 20), 0, 1 << 20);	/* a zero MiB, read ahead: still a hole */
	put("spool.in", data, n);
	/* all of it fits: read to its end */
	in = open(tpath("spool.in"), O_RDONLY);
	CHECK_OK(coredam_pipe_spool(in, 8 << 20, 0, &sp));
	CHECK(sp.len == n && sp.ended && !sp.timed_out && sp.size == 8 << 20);
	o.prefix = sp.buf;
	o.prefix_len = sp.len;
	out = open(tpath("spool.out"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK_OK(coredam_pipe_copy(in, out, &o, &res));
	CHECK(res.in_bytes == n && res.out_bytes == n && !res.truncated);
	coredam_spool_free(&sp);
	CHECK(sp.buf == NULL && sp.len == 0);
	close(in);
	close(out);
	got = slurp_big("spool.out", n);
	CHECK(got && memcmp(got, data, n) == 0);
	free(got);
	CHECK(stat(tpath("spool.out"), &st) == 0 && (uint64_t)st.st_size == n);
	CHECK((uint64_t)st.st_blocks * 512 <= n - (1 << 20) + (64 << 10));

	/* 1.5 MiB of 3 read ahead, the rest from the stream */
	in = open(tpath("spool.in"), O_RDONLY);
	CHECK_OK(coredam_pipe_spool(in, 3 << 19, 0, &sp));
	CHECK(sp.len == 3 << 19 && !sp.ended);
	o.prefix = sp.buf;
	o.prefix_len = sp.len;
	out = open(tpath("spool.out2"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK_OK(coredam_pipe_copy(in, out, &o, &res));
	CHECK(res.in_bytes == n && res.out_bytes == n && !res.truncated);
	close(out);
	got = slurp_big("spool.out2", n);
	CHECK(got && memcmp(got, data, n) == 0);
	free(got);

	/* a limit inside what was read ahead cuts there */
	o.limit = 1 << 19;
	out = open(tpath("spool.out3"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK_OK(coredam_pipe_copy(in, out, &o, &res));
	CHECK(res.in_bytes == 1 << 19 && res.truncated);
	close(out);
	coredam_spool_free(&sp);
	close(in);

	/* ... and the free-space floor is checked as it is written */
	in = open(tpath("spool.in"), O_RDONLY);
	CHECK_OK(coredam_pipe_spool(in, n, 0, &sp));
	o = (struct coredam_pipe_copy_opts){ .limit = UINT64_MAX, .prefix = sp.buf, .prefix_len = sp.len };
	out = open(tpath("spool.out4"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	o.space_fd = out;
	o.space_floor = UINT64_MAX;
	CHECK_OK(coredam_pipe_copy(in, out, &o, &res));
	CHECK(res.in_bytes == 0 && res.truncated && res.no_space);
	close(out);
	coredam_spool_free(&sp);
	close(in);

	/* a stream that stalls: cut at the deadline, what came kept */
	{
		int p[2];
		uint64_t t0 = now_usec(CLOCK_MONOTONIC);

		CHECK(pipe(p) == 0);
		CHECK(write(p[1], data, 4096) == 4096);
		CHECK_OK(coredam_pipe_spool(p[0], 1 << 20, t0 + 200 * 1000, &sp));
		CHECK(sp.len == 4096 && !sp.ended && sp.timed_out);
		CHECK(now_usec(CLOCK_MONOTONIC) - t0 >= 200 * 1000);
		coredam_spool_free(&sp);
		close(p[0]);
		close(p[1]);
	}
	/* nothing to read ahead: nothing mapped */
	CHECK_OK(coredam_pipe_spool(0, 0, 0, &sp));
	CHECK(sp.buf == NULL && sp.len == 0);
	free(data);
}

/*
 * Below the free-space floor the helper still wrote one core at a time,
 * as root, past the root reservation. The writer now checks the
 * destination's free space as it writes and stops below the floor.
 */
TEST(pipe_copy_stops_below_the_floor)
{
	static unsigned char data[65536];
	struct coredam_pipe_copy_opts o = { .limit = UINT64_MAX };
	struct coredam_pipe_copy_result res = { 0 };
	struct coredam_pipe_stats s = { 0 }, back;
	char buf[1024];
	int p[2], out;

	memset(data, 0x5a, sizeof(data));
	CHECK(pipe(p) == 0);
	CHECK(write(p[1], data, sizeof(data)) == (ssize_t)sizeof(data));
	close(p[1]);
	out = open(tpath("floor.out"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	/* a floor no file system reaches: nothing is written */
	o.space_fd = out;
	o.space_floor = UINT64_MAX;
	CHECK_OK(coredam_pipe_copy(p[0], out, &o, &res));
	CHECK_EQ_INT(res.in_bytes, 0);
	CHECK(res.truncated && res.no_space && !res.timed_out);
	/* a floor of 1 byte: all of it */
	o.space_floor = 1;
	res = (struct coredam_pipe_copy_result){ 0 };
	CHECK_OK(coredam_pipe_copy(p[0], out, &o, &res));
	CHECK_EQ_INT(res.in_bytes, sizeof(data));
	CHECK(!res.truncated && !res.no_space);
	close(out);
	close(p[0]);

	/* turned away before the queue: counted, and not started as the kernel counts */
	s.v[COREDAM_PIPE_STARTED] = 3;
	s.v[COREDAM_PIPE_SKIPPED_SPACE] = 2;
	CHECK(coredam_pipe_stats_format(&s, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "skipped_space 2\n") != NULL);
	CHECK(coredam_pipe_stats_parse(buf, &back) == 0 && back.v[COREDAM_PIPE_SKIPPED_SPACE] == 2);
}
