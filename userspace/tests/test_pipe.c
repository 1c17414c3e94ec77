// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe's library: arguments, destination, queue, counters, writer, metadata. */
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

#include "cgroup.h"
#include "config.h"
#include "meta.h"
#include "pipe-args.h"
#include "pipe-dest.h"
#include "pipe-state.h"
#include "pipe-queue.h"
#include "pipe-writer.h"
#include "test.h"
#include "macro.h"
#include "fileio.h"
#include "time-util.h"

TEST(pipe_args)
{
	char *full[] = { "/var/lib/coredam/cores", "4242", "1000", "100", "11", "1700000000",
			 "18446744073709551615", "2", "my", "prog" };
	char *min[] = { "/d", "7", "0", "0", "6", "1" };
	char *bad_pid[] = { "/d", "0", "0", "0", "6", "1" };
	char *rel[] = { "d", "7", "0", "0", "6", "1" };
	char *bad_dump[] = { "/d", "7", "0", "0", "6", "1", "0", "3" };
	struct coredam_pipe_args a;

	CHECK(coredam_pipe_args_parse(ELEMENTSOF(full), full, &a) == 0);
	CHECK_STREQ(a.dir, "/var/lib/coredam/cores");
	CHECK_EQ_INT(a.pid, 4242);
	CHECK_EQ_INT(a.uid, 1000);
	CHECK_EQ_INT(a.gid, 100);
	CHECK_EQ_INT(a.signal, 11);
	CHECK(a.time == 1700000000);
	CHECK(a.have_rlimit && a.rlimit == UINT64_MAX);
	CHECK_EQ_INT(a.dumpable, 2);
	CHECK_STREQ(a.comm, "my prog");	/* split %e joined back */

	CHECK(coredam_pipe_args_parse(ELEMENTSOF(min), min, &a) == 0);
	CHECK(!a.have_rlimit && a.dumpable == COREDAM_DUMPABLE_UNKNOWN && a.comm[0] == '\0');
	CHECK(coredam_pipe_args_parse(ELEMENTSOF(bad_pid), bad_pid, &a) == -EINVAL);
	CHECK(coredam_pipe_args_parse(ELEMENTSOF(rel), rel, &a) == -EINVAL);
	CHECK(coredam_pipe_args_parse(ELEMENTSOF(bad_dump), bad_dump, &a) == -EINVAL);
	CHECK(coredam_pipe_args_parse(3, full, &a) == -EINVAL);
}

TEST(pipe_names_never_trust_comm)
{
	struct coredam_pipe_args a = { .pid = 12, .time = 99 };
	char out[64], name[256];

	coredam_pipe_sanitize("../../etc/x", out, sizeof(out));
	CHECK_STREQ(out, "_._.._etc_x");
	coredam_pipe_sanitize("a\nb\tc d", out, sizeof(out));
	CHECK_STREQ(out, "a_b_c_d");
	coredam_pipe_sanitize(".hidden", out, sizeof(out));
	CHECK_STREQ(out, "_hidden");
	coredam_pipe_sanitize("", out, sizeof(out));
	CHECK_STREQ(out, "_");
	coredam_pipe_sanitize("abcdefghijklmnopqrstuvwxyz", out, sizeof(out));
	CHECK_STREQ(out, "abcdefghijklmno");
	coredam_pipe_sanitize("\xc3\xa9t\xc3\xa9", out, sizeof(out));
	CHECK_STREQ(out, "__t__");
	coredam_pipe_sanitize("abc", out, 3);
	CHECK_STREQ(out, "ab");

	snprintf(a.comm, sizeof(a.comm), "../x");
	CHECK(coredam_pipe_core_name(&a, false, name, sizeof(name)) > 0);
	CHECK_STREQ(name, "core._._x.12.99");
	CHECK(!strchr(name, '/'));
	CHECK(coredam_pipe_core_name(&a, true, name, sizeof(name)) > 0);
	CHECK_STREQ(name, "core._._x.12.99.zst");
}

TEST(pipe_destination_checks)
{
	char why[512];
	uid_t me = getuid();
	int fd = -1;

	mkdirs("a/dest");
	chmod(tpath("a"), 0755);
	chmod(tpath("a/dest"), 0755);
	CHECK(coredam_pipe_open_dest(tpath("a/dest"), me, why, sizeof(why), &fd) == 0);
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);

	fd = -1;
	mklink("a/link", tpath("a/dest"));
	CHECK(coredam_pipe_open_dest(tpath("a/link"), me, why, sizeof(why), &fd) == -ELOOP);
	CHECK(strstr(why, "symbolic link") != NULL);
	/* a symlink among the ancestors is refused as well */
	mklink("b", tpath("a"));
	CHECK(coredam_pipe_open_dest(tpath("b/dest"), me, why, sizeof(why), &fd) == -ELOOP);

	chmod(tpath("a/dest"), 0775);
	CHECK(coredam_pipe_open_dest(tpath("a/dest"), me, why, sizeof(why), &fd) == -EPERM);
	CHECK(strstr(why, "writable by group or others") != NULL);
	chmod(tpath("a/dest"), 01777);	/* sticky does not help the destination itself */
	CHECK(coredam_pipe_open_dest(tpath("a/dest"), me, why, sizeof(why), &fd) == -EPERM);
	chmod(tpath("a/dest"), 0755);
	chmod(tpath("a"), 0777);	/* an ancestor anyone may rename things in */
	CHECK(coredam_pipe_open_dest(tpath("a/dest"), me, why, sizeof(why), &fd) == -EPERM);
	chmod(tpath("a"), 01777);	/* sticky ancestor (as /tmp): fine */
	CHECK(coredam_pipe_open_dest(tpath("a/dest"), me, why, sizeof(why), &fd) == 0);
	if (fd >= 0)
		close(fd);
	chmod(tpath("a"), 0755);

	CHECK(coredam_pipe_open_dest(tpath("a/dest"), me + 4242, why, sizeof(why), &fd) == -EPERM);
	CHECK(strstr(why, "owned by uid") != NULL);
	CHECK(coredam_pipe_open_dest(tpath("a/missing"), me, why, sizeof(why), &fd) == -ENOENT);
	CHECK(coredam_pipe_open_dest("relative/dir", me, why, sizeof(why), &fd) == -EINVAL);
	CHECK(coredam_pipe_open_dest(tpath("a/dest/../dest"), me, why, sizeof(why), &fd) == -EINVAL);
	mkfile("a/file", "x");
	CHECK(coredam_pipe_open_dest(tpath("a/file"), me, why, sizeof(why), &fd) == -ENOTDIR);
}

TEST(pipe_rlimit_from_proc)
{
	uint64_t v = 7;

	mkfile("proc/10/limits", "Limit                     Soft Limit           Hard Limit           Units     \n"
				 "Max cpu time              unlimited            unlimited            seconds   \n"
				 "Max core file size        0                    unlimited            bytes     \n");
	mkfile("proc/11/limits", "Limit  Soft Hard Units\nMax core file size        unlimited            unlimited            bytes     \n");
	mkfile("proc/12/limits", "Limit  Soft Hard Units\nMax core file size        1048576              unlimited            bytes     \n");
	CHECK(coredam_pipe_read_rlimit(tpath("proc"), 10, &v) == 0 && v == 0);
	CHECK(coredam_pipe_read_rlimit(tpath("proc"), 11, &v) == 0 && v == UINT64_MAX);
	CHECK(coredam_pipe_read_rlimit(tpath("proc"), 12, &v) == 0 && v == 1048576);
	CHECK(coredam_pipe_read_rlimit(tpath("proc"), 13, &v) == -ENOENT);
}

TEST(pipe_stats_and_budget)
{
	const char *state = tkeep("state");
	struct coredam_pipe_stats d = { 0 }, s;
	struct coredam_pipe_budget b = { 3, 10, 500 }, got;
	struct coredam_stats k;
	char buf[1024];

	CHECK(coredam_pipe_stats_read(state, &s) == -ENOENT);
	d.v[COREDAM_PIPE_STARTED] = 5;
	d.v[COREDAM_PIPE_ADMITTED] = 3;
	d.v[COREDAM_PIPE_COMPLETED] = 2;
	d.v[COREDAM_PIPE_FAILED] = 1;
	d.v[COREDAM_PIPE_SKIPPED_TIMEOUT] = 1;
	d.v[COREDAM_PIPE_SKIPPED_RLIMIT] = 1;
	d.v[COREDAM_PIPE_UNCHARGED] = 1;
	d.v[COREDAM_PIPE_TRUNCATED] = 1;
	d.v[COREDAM_PIPE_BYTES_DISK] = 1000;
	CHECK(coredam_pipe_stats_add(state, &d) == 0);
	CHECK(coredam_pipe_stats_add(state, &d) == 0);
	CHECK(coredam_pipe_stats_read(state, &s) == 0);
	CHECK(s.v[COREDAM_PIPE_STARTED] == 10 && s.v[COREDAM_PIPE_BYTES_DISK] == 2000);
	CHECK(coredam_pipe_stats_format(&s, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "skipped_timeout 2\n") != NULL);
	CHECK(strstr(buf, "uncharged 2\n") != NULL);

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
	CHECK(coredam_pipe_stats_parse("started x\n", &s) == -EBADMSG);

	CHECK(coredam_pipe_budget_read(state, &got) == -ENOENT);
	CHECK(coredam_pipe_budget_write(state, &b) == 0);
	CHECK(coredam_pipe_budget_read(state, &got) == 0);
	CHECK(got.concurrency == 3 && got.waiting == 10 && got.timeout_ms == 500);
	CHECK(coredam_pipe_budget_remove(state) == 0);
	CHECK(coredam_pipe_budget_read(state, &got) == -ENOENT);
}

struct releaser {
	struct coredam_pipe_queue *q;
	int ms;
};

static void *release_later(void *p)
{
	struct releaser *r = p;
	struct timespec ts = { 0, r->ms * 1000000L };

	nanosleep(&ts, NULL);
	coredam_pipe_release(r->q);
	return NULL;
}

TEST(pipe_queue_arrival_order)
{
	const char *state = tkeep("state");
	struct coredam_pipe_queue a = COREDAM_PIPE_QUEUE_INIT, b = COREDAM_PIPE_QUEUE_INIT,
				  c = COREDAM_PIPE_QUEUE_INIT;
	struct coredam_pipe_budget one = { 1, 0, 50 }, two = { 2, 0, 50 }, cap = { 1, 1, 50 };
	enum coredam_pipe_wait_result wr;
	uint32_t ahead = 99, writing = 9, waiting = 9;
	uint64_t waited;

	CHECK(coredam_pipe_queue_open(state, &a) == 0);
	CHECK(coredam_pipe_queue_open(state, &b) == 0);
	CHECK(coredam_pipe_queue_open(state, &c) == 0);
	CHECK(coredam_pipe_enqueue(&a, 100, 1000, &one, &ahead) == 1 && ahead == 0);
	CHECK(coredam_pipe_enqueue(&b, 101, 1000, &one, &ahead) == 1 && ahead == 1);
	CHECK(b.ticket == a.ticket + 1);

	CHECK(coredam_pipe_wait(&a, &one, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
	CHECK(coredam_pipe_mark_writing(&a) == 0);
	CHECK(coredam_pipe_queue_count(state, &writing, &waiting) == 0);
	CHECK_EQ_INT(writing, 1);
	CHECK_EQ_INT(waiting, 1);
	/* one slot, taken: b times out after about 50 ms */
	CHECK(coredam_pipe_wait(&b, &one, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_TIMEOUT);
	CHECK(waited >= 50000 && waited < 5000000);
	/* two slots: b goes at once */
	CHECK(coredam_pipe_wait(&b, &two, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
	/* one slot and one waiter allowed: c is the second waiter, skipped at once, no ticket drawn */
	CHECK(coredam_pipe_enqueue(&c, 102, 1000, &cap, &ahead) == 0 && ahead == 2);
	CHECK(c.entry_fd < 0);
	coredam_pipe_release(&c);

	/* the published budget wins over the fallback */
	{
		struct coredam_pipe_budget pub = { 5, 0, 0 };

		CHECK(coredam_pipe_budget_write(state, &pub) == 0);
		CHECK(coredam_pipe_wait(&b, &one, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
		CHECK(coredam_pipe_budget_remove(state) == 0);
	}

	/* a release wakes the waiter (inotify, no polling): b admitted well before its 10 s timeout */
	{
		struct coredam_pipe_budget slow = { 1, 0, 10000 };
		struct releaser rel = { &a, 100 };
		pthread_t t;

		CHECK(pthread_create(&t, NULL, release_later, &rel) == 0);
		CHECK(coredam_pipe_wait(&b, &slow, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
		CHECK(waited >= 50000 && waited < 5000000);
		pthread_join(t, NULL);
	}
	coredam_pipe_release(&b);
	coredam_pipe_release(&b);	/* twice is fine */
	CHECK(coredam_pipe_queue_count(state, &writing, &waiting) == 0 && writing == 0 && waiting == 0);
	close(a.dirfd);
	close(b.dirfd);
	close(c.dirfd);
}

static unsigned int inotify_calls;

static int inotify_counted(int flags)
{
	inotify_calls++;
	return inotify_init1(flags);
}

/* root's inotify instances used up (fs.inotify.max_user_instances) */
static int inotify_emfile(int flags)
{
	(void)flags;
	inotify_calls++;
	errno = EMFILE;
	return -1;
}

static unsigned int count_tickets(const char *rel)
{
	DIR *d = opendir(tpath(rel));
	struct dirent *de;
	unsigned int n = 0;

	if (!d)
		return 999;
	while ((de = readdir(d)))
		n += strncmp(de->d_name, "q.", 2) == 0;
	closedir(d);
	return n;
}

/* Without inotify a waiter polls for its slot; it never writes without one. */
TEST(pipe_queue_no_inotify_still_queues)
{
	const char *state = tkeep("state");
	struct coredam_pipe_queue a = COREDAM_PIPE_QUEUE_INIT, b = COREDAM_PIPE_QUEUE_INIT;
	struct coredam_pipe_budget quick = { 1, 0, 300 }, slow = { 1, 0, 10000 };
	struct releaser rel = { &a, 400 };
	enum coredam_pipe_wait_result wr = COREDAM_PIPE_ADMIT;
	uint64_t waited = 0;
	uint32_t ahead;
	pthread_t t;

	coredam_pipe_inotify_init1 = inotify_emfile;
	inotify_calls = 0;
	CHECK(coredam_pipe_queue_open(state, &a) == 0);
	CHECK(coredam_pipe_queue_open(state, &b) == 0);
	CHECK(coredam_pipe_enqueue(&a, 100, 1000, &quick, &ahead) == 1 && ahead == 0);
	CHECK(coredam_pipe_wait(&a, &quick, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
	CHECK(coredam_pipe_enqueue(&b, 101, 1000, &quick, &ahead) == 1 && ahead == 1);
	/* a holds the only slot: b is refused its watch, keeps waiting, and times out */
	CHECK(coredam_pipe_wait(&b, &quick, -1, &wr, &waited) == 0);
	CHECK_EQ_INT(wr, COREDAM_PIPE_TIMEOUT);
	CHECK(waited >= 300000 && waited < 5000000);
	CHECK(inotify_calls > 0);
	/* a releases after 400 ms: b's next count (every 200 ms) admits it */
	CHECK(pthread_create(&t, NULL, release_later, &rel) == 0);
	CHECK(coredam_pipe_wait(&b, &slow, -1, &wr, &waited) == 0);
	CHECK_EQ_INT(wr, COREDAM_PIPE_ADMIT);
	CHECK(waited >= 350000 && waited < 5000000);
	pthread_join(t, NULL);
	coredam_pipe_release(&b);
	coredam_pipe_inotify_init1 = inotify_init1;
	close(a.dirfd);
	close(b.dirfd);
}

/* Beyond the cap nothing is taken; behind the next in line, no inotify instance. */
TEST(pipe_queue_cap_costs_nothing)
{
	const char *state = tkeep("state");
	struct coredam_pipe_queue q[4] = { COREDAM_PIPE_QUEUE_INIT, COREDAM_PIPE_QUEUE_INIT, COREDAM_PIPE_QUEUE_INIT,
					   COREDAM_PIPE_QUEUE_INIT };
	struct coredam_pipe_budget b = { 1, 2, 100 };
	enum coredam_pipe_wait_result wr = COREDAM_PIPE_ADMIT;
	_cleanup_free_ char *ticket = NULL;
	uint64_t waited = 0;
	uint32_t ahead = 0;

	coredam_pipe_inotify_init1 = inotify_counted;
	for (int i = 0; i < 4; i++)
		CHECK(coredam_pipe_queue_open(state, &q[i]) == 0);
	for (int i = 0; i < 3; i++)
		CHECK(coredam_pipe_enqueue(&q[i], 100 + i, 1000, &b, &ahead) == 1 && ahead == (uint32_t)i);
	/* one writing, two waiting: the fourth is full before a ticket exists */
	CHECK(coredam_pipe_enqueue(&q[3], 103, 1000, &b, &ahead) == 0);
	CHECK_EQ_INT(ahead, 3);
	CHECK(q[3].entry_fd < 0);
	CHECK_EQ_INT(count_tickets("state/pipe"), 3);
	CHECK(read_file_at(AT_FDCWD, tpath("state/pipe/ticket"), 64, &ticket) >= 0);
	CHECK_STREQ(ticket, "3\n");
	/* the second waiter polls: it cannot be admitted before the first waiter */
	inotify_calls = 0;
	CHECK(coredam_pipe_wait(&q[2], &b, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_TIMEOUT);
	CHECK_EQ_INT(inotify_calls, 0);
	/* the first waiter, next in line, watches */
	CHECK(coredam_pipe_wait(&q[1], &b, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_TIMEOUT);
	CHECK_EQ_INT(inotify_calls, 1);
	coredam_pipe_inotify_init1 = inotify_init1;
	for (int i = 0; i < 4; i++) {
		coredam_pipe_release(&q[i]);
		close(q[i].dirfd);
	}
}

/* The ranking alone: slots by turn (recent grants of the source, then its waiters ahead), then ticket. */
TEST(pipe_rank_fair_across_sources)
{
	/* uid 1000 writes one and waits with three; root's crash arrives last */
	struct coredam_pipe_entry v[] = {
		{ 1, 1000, 'W' }, { 2, 1000, 'Q' }, { 3, 1000, 'Q' }, { 4, 1000, 'Q' }, { 5, 0, 'Q' },
	};
	uint32_t recent[] = { 1000, 1000, 1000 }, writing, ahead;

	/* root's is next: ahead of it only the dump writing */
	coredam_pipe_rank(v, 5, recent, 3, 5, &writing, &ahead);
	CHECK_EQ_INT(writing, 1);
	CHECK_EQ_INT(ahead, 1);
	/* uid 1000's keep their order, behind root's */
	coredam_pipe_rank(v, 5, recent, 3, 2, &writing, &ahead);
	CHECK_EQ_INT(ahead, 2);
	coredam_pipe_rank(v, 5, recent, 3, 4, &writing, &ahead);
	CHECK_EQ_INT(ahead, 4);
	/* without grants remembered (the file lost), the sources' waiters interleave by turn */
	coredam_pipe_rank(v, 5, NULL, 0, 5, &writing, &ahead);
	CHECK_EQ_INT(ahead, 2);
	coredam_pipe_rank(v, 5, NULL, 0, 3, &writing, &ahead);
	CHECK_EQ_INT(ahead, 3);
	/* one source: arrival order, as before */
	v[4].uid = 1000;
	coredam_pipe_rank(v, 5, recent, 3, 5, &writing, &ahead);
	CHECK_EQ_INT(ahead, 4);
	coredam_pipe_rank(v, 5, recent, 3, 3, &writing, &ahead);
	CHECK_EQ_INT(ahead, 2);
	/* a pushed-out entry is leaving: neither writing nor ahead; a newcomer has every waiter ahead */
	v[1].state = 'X';
	coredam_pipe_rank(v, 5, recent, 3, UINT64_MAX, &writing, &ahead);
	CHECK_EQ_INT(writing, 1);
	CHECK_EQ_INT(ahead, 4);
}

TEST(pipe_pick_pushed_out)
{
	struct coredam_pipe_entry v[] = {
		{ 1, 1000, 'W' }, { 2, 1000, 'Q' }, { 3, 1000, 'Q' }, { 4, 1001, 'Q' },
	};
	const struct coredam_pipe_entry *out;

	/* root holds no place: uid 1000 (two) holds more than root would (one): its newest goes */
	out = coredam_pipe_pick_pushed_out(v, 4, 0);
	CHECK(out && out->ticket == 3);
	/* uid 1001 would hold two, as many as uid 1000: the newcomer is the one not queued */
	CHECK(coredam_pipe_pick_pushed_out(v, 4, 1001) == NULL);
	/* nor does a source push out its own */
	CHECK(coredam_pipe_pick_pushed_out(v, 4, 1000) == NULL);
	/* the writing dump is never pushed out */
	v[1].state = 'W';
	v[2].state = 'W';
	CHECK(coredam_pipe_pick_pushed_out(v, 4, 0) == NULL);
}

/*
 * With files and helpers' tickets: one user's storm fills the queue; root's
 * crash pushes out that user's newest waiter, and gets the next slot.
 */
TEST(pipe_queue_fair_shares)
{
	const char *state = tkeep("state");
	struct coredam_pipe_queue q[6] = { COREDAM_PIPE_QUEUE_INIT, COREDAM_PIPE_QUEUE_INIT, COREDAM_PIPE_QUEUE_INIT,
					   COREDAM_PIPE_QUEUE_INIT, COREDAM_PIPE_QUEUE_INIT, COREDAM_PIPE_QUEUE_INIT };
	struct coredam_pipe_budget b = { 1, 3, 50 };
	enum coredam_pipe_wait_result wr = COREDAM_PIPE_ADMIT;
	_cleanup_free_ char *text = NULL;
	uint64_t waited = 0;
	uint32_t ahead = 0;

	for (int i = 0; i < 6; i++)
		CHECK(coredam_pipe_queue_open(state, &q[i]) == 0);
	/* uid 1000: one writing, three waiting; the queue is full */
	for (int i = 0; i < 4; i++)
		CHECK(coredam_pipe_enqueue(&q[i], 100 + i, 1000, &b, &ahead) == 1);
	CHECK(coredam_pipe_wait(&q[0], &b, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
	/* root's crash: uid 1000's newest waiter makes room */
	CHECK_EQ_INT(coredam_pipe_enqueue(&q[4], 200, 0, &b, &ahead), 1);
	CHECK_EQ_INT(ahead, 1);
	CHECK(read_file_at(AT_FDCWD, tpath("state/pipe/q.00000000000000000003"), 64, &text) >= 0);
	CHECK(text && text[0] == 'X');
	CHECK(coredam_pipe_wait(&q[3], &b, -1, &wr, &waited) == 0);
	CHECK_EQ_INT(wr, COREDAM_PIPE_PUSHED_OUT);
	coredam_pipe_release(&q[3]);
	/* another of uid 1000 finds the queue full and is the one not queued */
	CHECK_EQ_INT(coredam_pipe_enqueue(&q[5], 104, 1000, &b, &ahead), 0);
	/* the slot is freed: root's goes before uid 1000's older waiters */
	coredam_pipe_release(&q[0]);
	CHECK(coredam_pipe_wait(&q[1], &b, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_TIMEOUT);
	CHECK(coredam_pipe_wait(&q[4], &b, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
	free(text);
	text = NULL;
	CHECK(read_file_at(AT_FDCWD, tpath("state/pipe/grants"), 256, &text) >= 0);
	CHECK_STREQ(text, "1000 0\n");
	/* then uid 1000's, in their order */
	coredam_pipe_release(&q[4]);
	CHECK(coredam_pipe_wait(&q[2], &b, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_TIMEOUT);
	CHECK(coredam_pipe_wait(&q[1], &b, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
	for (int i = 0; i < 6; i++) {
		coredam_pipe_release(&q[i]);
		close(q[i].dirfd);
	}
}

TEST(pipe_queue_dead_helper)
{
	const char *state = tkeep("state");
	struct coredam_pipe_queue q = COREDAM_PIPE_QUEUE_INIT;
	struct coredam_pipe_budget none = { 0, 0, 0 };
	uint32_t ahead = 99;

	/* a helper that died holding ticket 3: its file is left, its lock gone */
	mkfile("state/pipe/q.00000000000000000003", "W 77\n");
	mkfile("state/pipe/ticket", "4\n");
	CHECK(coredam_pipe_queue_open(state, &q) == 0);
	CHECK(coredam_pipe_enqueue(&q, 100, 1000, &none, &ahead) == 1);
	CHECK_EQ_INT(ahead, 0);
	CHECK(q.ticket == 4);
	CHECK(access(tpath("state/pipe/q.00000000000000000003"), F_OK) < 0);
	coredam_pipe_release(&q);
	/* a lost counter never hands out a ticket in use */
	unlink(tpath("state/pipe/ticket"));
	mkfile("state/pipe/q.00000000000000000000", "");
	{
		struct coredam_pipe_queue h = COREDAM_PIPE_QUEUE_INIT;

		CHECK(coredam_pipe_queue_open(state, &h) == 0);
		CHECK(coredam_pipe_enqueue(&h, 101, 1000, &none, &ahead) == 1);
		CHECK(h.ticket == 1);
		coredam_pipe_release(&h);
		close(h.dirfd);
	}
	close(q.dirfd);
}

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
	{
		FILE *f = fopen(tpath("in"), "w");

		fwrite(data, 1, n, f);
		fclose(f);
	}
	in = open(tpath("in"), O_RDONLY);
	out = open(tpath("out"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(coredam_pipe_copy(in, out, &o, &res) == 0);
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
	CHECK(coredam_pipe_copy(in, out, &o, &res) == 0);
	CHECK(res.in_bytes == 1 << 20 && res.truncated);
	close(in);
	close(out);

	/* zstd, then back */
	o.limit = UINT64_MAX;
	o.compress_level = 3;
	in = open(tpath("in"), O_RDONLY);
	out = open(tpath("z"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(coredam_pipe_copy(in, out, &o, &res) == 0);
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
	CHECK(coredam_pipe_decompress(in, dec, &back) == -EBADMSG);
	close(in);
	close(dec);
	free(data);
}

TEST(pipe_meta_json)
{
	struct coredam_core_meta m = {
		.core = "core.x.1.2", .pid = 1, .uid = 1000, .gid = 100, .signal = 11, .time = 2,
		.comm = "a\"b\\c\nd\x01\xff", .size = 10, .disk_size = 4, .compression = "zstd",
		.rlimit = UINT64_MAX, .dumpable = 1, .cgroup = "/coredump.slice",
	};
	char buf[2048], *s;
	int fd;

	CHECK(coredam_meta_format(&m, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"comm\": \"a\\\"b\\\\c\\u000ad\\u0001\\u00ff\"") != NULL);
	CHECK(strstr(buf, "\"rlimit\": null") != NULL);
	CHECK(strstr(buf, "\"cgroup\": \"/coredump.slice\"") != NULL);
	CHECK(coredam_meta_format(&m, buf, 40) == -ENOBUFS);

	mkdirs("d");
	fd = open(tpath("d"), O_RDONLY | O_DIRECTORY);
	CHECK(coredam_meta_write_at(fd, "m.json", "{}\n", 0644) == 0);
	CHECK(coredam_meta_write_at(fd, "m.json", "{}\n", 0644) == -EEXIST);	/* never replaces */
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
	CHECK(coredam_meta_write_at(fd, "m.json", "{}\n", f.meta_mode) == 0);
	umask(old);
	CHECK(fstatat(fd, "m.json", &st, 0) == 0);
	CHECK_EQ_INT(st.st_mode & 07777, 0640);
	CHECK(!(st.st_mode & S_IROTH));
	close(fd);
}

TEST(pipe_cgroup_helpers)
{
	char buf[256];

	mkfile("proc/self/mountinfo",
	       "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
	       "30 22 0:26 / /sys/fs/cg\\040two rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
	CHECK(coredam_cg2_mount(tpath("proc"), buf, sizeof(buf)) == 0);
	CHECK_STREQ(buf, "/sys/fs/cg two");
	mkfile("proc2/self/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
	CHECK(coredam_cg2_mount(tpath("proc2"), buf, sizeof(buf)) == -ENOENT);

	mkfile("proc/55/cgroup", "0::/coredump.slice\n");
	CHECK(coredam_cg_of_pid(tpath("proc"), 55, buf, sizeof(buf)) == 0);
	CHECK_STREQ(buf, "/coredump.slice");

	mkfile("cg/coredump.slice/cgroup.procs", "");
	{
		int root = open(tpath("cg"), O_RDONLY | O_DIRECTORY), cg = -1;
		char *s;

		CHECK(coredam_cg_open(root, "/coredump.slice", false, &cg) == 0);
		CHECK(coredam_cg_attach(cg, 1234) == 0);
		s = slurp("cg/coredump.slice/cgroup.procs");
		CHECK(s && strcmp(s, "1234\n") == 0);
		free(s);
		close(cg);
		close(root);
	}
}

TEST(pipe_config_keys)
{
	struct coredam_config c;
	char err[256];

	coredam_config_init(&c);
	CHECK(!c.pipe_set_core_pattern && !c.pipe_compress);
	CHECK_STREQ(c.pipe_program, "/usr/libexec/coredam/coredam-pipe");
	CHECK_STREQ(c.pipe_directory, "/var/lib/coredam/cores");
	CHECK_EQ_INT(c.pipe_compress_level, 3);
	/* one core is read for at most 32 GiB and one hour: no dump holds a slot for ever */
	CHECK(c.pipe_size_max == 32ULL << 30);
	CHECK(c.pipe_time_max_usec == 3600ULL * 1000000);
	/* confined unless the operator says otherwise */
	CHECK(c.pipe_sandbox);
	CHECK(coredam_config_set(&c, "Pipe", "Sandbox", "no", err, sizeof(err)) == 0 && !c.pipe_sandbox);
	CHECK(coredam_config_set(&c, "Pipe", "CoreSizeMax", "max", err, sizeof(err)) == 0 && c.pipe_size_max == 0);
	CHECK(coredam_config_set(&c, "Pipe", "CoreTimeMax", "0", err, sizeof(err)) == 0 &&
	      c.pipe_time_max_usec == 0);
	CHECK(coredam_config_set(&c, "Pipe", "CoreTimeMax", "forever", err, sizeof(err)) < 0);
	CHECK(coredam_config_set(&c, "Pipe", "SetCorePattern", "yes", err, sizeof(err)) == 0 &&
	      c.pipe_set_core_pattern);
	CHECK(coredam_config_set(&c, "Pipe", "Directory", "cores", err, sizeof(err)) == -EINVAL);
	CHECK(coredam_config_set(&c, "Pipe", "CompressLevel", "0", err, sizeof(err)) < 0);

	mkfile("c.conf", "[Pipe]\nCompressLevel=20\n");
	{
		struct coredam_config_error e;

		CHECK(coredam_config_load(tpath("c.conf"), NULL, &c, &e) == -EINVAL);
		CHECK(strstr(e.msg, "CompressLevel") != NULL && e.line == 2);
	}
	mkfile("d.conf", "[Pipe]\nDirectory=/var/my cores\n");
	{
		struct coredam_config_error e;

		CHECK(coredam_config_load(tpath("d.conf"), NULL, &c, &e) == -EINVAL);
		CHECK(strstr(e.msg, "white space") != NULL);
	}
}

/*
 * coredamd installed a pipe core_pattern whose helper was missing (every
 * core lost) and doctor said [ OK ]. The helper must be an executable
 * regular file of its owner's, writable by no one else, in directories no
 * one else can write.
 */
/*
 * A core_pattern without %d made the helper assume dumpable=1: the core of
 * a setuid program (suid_dumpable=2) went to the user who crashed it, with
 * the program's secrets (the CVE-2022-4415 class). Unknown is now root's.
 */
TEST(pipe_no_dumpable_is_not_the_users)
{
	char *no_d[] = { "/d", "7", "1000", "100", "6", "1", "0" };
	char *one[] = { "/d", "7", "1000", "100", "6", "1", "0", "1" };
	struct coredam_pipe_args a;
	struct coredam_pipe_files f;
	struct coredam_core_meta m = { .core = "c", .comm = "x", .compression = "none" };
	char buf[2048];

	CHECK(coredam_pipe_args_parse(ELEMENTSOF(no_d), no_d, &a) == 0);
	CHECK_EQ_INT(a.dumpable, COREDAM_DUMPABLE_UNKNOWN);
	coredam_pipe_files(&a, &f);
	CHECK_EQ_INT(f.core_mode, 0400);
	CHECK_EQ_INT(f.meta_mode, 0600);
	m.dumpable = a.dumpable;
	CHECK(coredam_meta_format(&m, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"dumpable\": null") != NULL);

	CHECK(coredam_pipe_args_parse(ELEMENTSOF(one), one, &a) == 0);
	CHECK_EQ_INT(a.dumpable, 1);
	coredam_pipe_files(&a, &f);
	CHECK_EQ_INT(f.core_mode, 0640);
	a.dumpable = 0;	/* not dumpable to the user either */
	coredam_pipe_files(&a, &f);
	CHECK_EQ_INT(f.core_mode, 0400);
}

TEST(pipe_helper_checked)
{
	uid_t me = getuid();
	char why[PATH_MAX + 128];

	mkfile("bin/helper", "#!/bin/sh\n");
	chmod(tpath("bin/helper"), 0755);
	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("bin/helper"), me, why, sizeof(why)), 0);
	mklink("bin/link", tpath("bin/helper"));
	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("bin/link"), me, why, sizeof(why)), 0);

	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("bin/missing"), me, why, sizeof(why)), -ENOENT);
	CHECK(strstr(why, "bin/missing") != NULL);
	mklink("bin/dangling", tpath("bin/missing"));
	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("bin/dangling"), me, why, sizeof(why)), -ENOENT);
	CHECK_EQ_INT(coredam_pipe_helper_check("bin/helper", me, why, sizeof(why)), -EINVAL);
	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("bin"), me, why, sizeof(why)), -EINVAL);
	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("bin/helper"), me + 1, why, sizeof(why)), -EPERM);

	chmod(tpath("bin/helper"), 0644);
	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("bin/helper"), me, why, sizeof(why)), -EACCES);
	chmod(tpath("bin/helper"), 0775);
	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("bin/helper"), me, why, sizeof(why)), -EPERM);
	CHECK(strstr(why, "writable") != NULL);

	/* its directory open to all, sticky or not: another program can take its place */
	mkfile("open/helper", "#!/bin/sh\n");
	chmod(tpath("open/helper"), 0755);
	chmod(tpath("open"), 01777);
	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("open/helper"), me, why, sizeof(why)), -EPERM);
	chmod(tpath("open"), 0755);
	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("open/helper"), me, why, sizeof(why)), 0);
	/* an ancestor open to all, not sticky: the directory itself can be renamed away */
	mkfile("top/sub/helper", "#!/bin/sh\n");
	chmod(tpath("top/sub/helper"), 0755);
	chmod(tpath("top"), 0777);
	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("top/sub/helper"), me, why, sizeof(why)), -EPERM);
	chmod(tpath("top"), 01777);
	CHECK_EQ_INT(coredam_pipe_helper_check(tpath("top/sub/helper"), me, why, sizeof(why)), 0);
}

/*
 * The helper gave the core to %u, the real uid: a root process that had
 * changed only its real uid (or a setuid program under suid_dumpable=1)
 * handed its memory to that user, who then owned the file. Now the core
 * stays root's and the user may read it only when the core's notes say
 * the process ran as that user from exec to dump, with no setuid bit.
 */
TEST(pipe_user_may_read_by_the_notes)
{
	struct coredam_pipe_args a = { .pid = 1, .uid = 1000, .gid = 100, .dumpable = 1 };
	const struct coredam_core_creds ok = { 1000, 100, 1000, 1000, 100, 100, 0 };
	struct coredam_core_creds c = ok;

	CHECK(coredam_pipe_user_may_read(&a, &c));
	/* root that set only its real uid to 1000: exec'd as root */
	c.at_uid = c.at_euid = 0;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	/* a setuid or setgid program, by its ids or by AT_SECURE alone */
	c = ok, c.at_euid = 0;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	c = ok, c.at_egid = 0;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	c = ok, c.at_secure = 1;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	/* another uid or gid at the dump than %u:%g says (another user namespace) */
	c = ok, c.uid = 0;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	c = ok, c.gid = 0;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	/* notes not read */
	c = ok, c.at_secure = COREDAM_ELF_NO_ID;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	/* %d other than 1, or unknown */
	c = ok;
	for (int d = -1; d <= 2; d++) {
		a.dumpable = d;
		CHECK(coredam_pipe_user_may_read(&a, &c) == (d == 1));
	}
	/* root, system accounts, nobody */
	const uid_t never[] = { 0, 1, 999, 65534, 65535, (uid_t)-1 };

	for (size_t i = 0; i < ELEMENTSOF(never); i++) {
		a = (struct coredam_pipe_args){ .pid = 1, .uid = never[i], .gid = 100, .dumpable = 1 };
		c = ok, c.uid = c.at_uid = c.at_euid = never[i];
		CHECK(!coredam_pipe_user_may_read(&a, &c));
	}
}

/* open(@name) in @dirfd as @uid:@gid: 0 if it opened, else errno. */
static int open_as(int dirfd, const char *name, uid_t uid, gid_t gid)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int fd;

		if (fchdir(dirfd) < 0 || setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			_exit(255);
		fd = open(name, O_RDONLY);
		_exit(fd >= 0 ? 0 : errno);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* The ACL gives the user read access and nothing more, and no one else anything. */
TEST(pipe_acl_user_read)
{
	unsigned char acl[COREDAM_ACL_USER_READ_SIZE], got[COREDAM_ACL_USER_READ_SIZE + 8];
	const unsigned char want[] = {
		2, 0, 0, 0,
		0x01, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,	/* user::rw- */
		0x02, 0, 4, 0, 0xe9, 0x03, 0, 0,	/* user:1001:r-- */
		0x04, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,	/* group::r-- */
		0x10, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,	/* mask::r-- */
		0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,	/* other::--- */
	};
	size_t n = coredam_acl_user_read(1001, acl);
	int dirfd, fd;
	ssize_t g;

	CHECK_EQ_INT(n, sizeof(want));
	CHECK(memcmp(acl, want, sizeof(want)) == 0);
	if (geteuid() != 0)
		return;	/* the rest needs root, as the helper has */
	mkdirs("acl");
	CHECK(chmod(tpath("acl"), 0755) == 0);
	dirfd = open(tpath("acl"), O_RDONLY | O_DIRECTORY);
	fd = openat(dirfd, "core", O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK(fchmod(fd, 0640) == 0);
	CHECK(fsetxattr(fd, "system.posix_acl_access", acl, n, 0) == 0);
	g = fgetxattr(fd, "system.posix_acl_access", got, sizeof(got));
	CHECK_EQ_INT(g, (ssize_t)n);
	close(fd);
	CHECK_EQ_INT(open_as(dirfd, "core", 1001, 1001), 0);
	CHECK_EQ_INT(open_as(dirfd, "core", 1002, 1002), EACCES);
	CHECK_EQ_INT(open_as(dirfd, "core", 1002, 0), 0);	/* group root, as 0640 says */
	close(dirfd);
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
	CHECK_EQ_INT(coredam_pipe_copy(p[0], out, &o, &res), 0);
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
	CHECK_EQ_INT(coredam_pipe_copy(p[0], out, &o, &res), 0);
	CHECK_EQ_INT(res.in_bytes, 8192);
	CHECK(res.truncated && !res.timed_out);
	close(out);

	/* a stream that ends before the deadline is whole */
	close(p[1]);
	out = open(tpath("end.out"), O_WRONLY | O_CREAT | O_EXCL, 0600);
	o.limit = UINT64_MAX;
	res = (struct coredam_pipe_copy_result){ 0 };
	CHECK_EQ_INT(coredam_pipe_copy(p[0], out, &o, &res), 0);
	CHECK_EQ_INT(res.in_bytes, sizeof(data) - 8192 - 1);
	CHECK(!res.truncated && !res.timed_out);
	close(out);
	close(p[0]);
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
	CHECK_EQ_INT(coredam_pipe_copy(p[0], out, &o, &res), 0);
	CHECK_EQ_INT(res.in_bytes, 0);
	CHECK(res.truncated && res.no_space && !res.timed_out);
	/* a floor of 1 byte: all of it */
	o.space_floor = 1;
	res = (struct coredam_pipe_copy_result){ 0 };
	CHECK_EQ_INT(coredam_pipe_copy(p[0], out, &o, &res), 0);
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
