// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe's library: the arrival-order, per-uid fair queue. */
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
#include "pipe-queue.h"
#include "test.h"
#include "macro.h"
#include "fileio.h"

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

	CHECK_OK(coredam_pipe_queue_open(state, &a));
	CHECK_OK(coredam_pipe_queue_open(state, &b));
	CHECK_OK(coredam_pipe_queue_open(state, &c));
	CHECK(coredam_pipe_enqueue(&a, 100, 1000, &one, &ahead) == 1 && ahead == 0);
	CHECK(coredam_pipe_enqueue(&b, 101, 1000, &one, &ahead) == 1 && ahead == 1);
	CHECK(b.ticket == a.ticket + 1);

	CHECK(coredam_pipe_wait(&a, &one, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
	CHECK_OK(coredam_pipe_mark_writing(&a));
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

		CHECK_OK(coredam_pipe_budget_write(state, &pub));
		CHECK(coredam_pipe_wait(&b, &one, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
		CHECK_OK(coredam_pipe_budget_remove(state));
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
	CHECK_OK(coredam_pipe_queue_open(state, &a));
	CHECK_OK(coredam_pipe_queue_open(state, &b));
	CHECK(coredam_pipe_enqueue(&a, 100, 1000, &quick, &ahead) == 1 && ahead == 0);
	CHECK(coredam_pipe_wait(&a, &quick, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
	CHECK(coredam_pipe_enqueue(&b, 101, 1000, &quick, &ahead) == 1 && ahead == 1);
	/* a holds the only slot: b is refused its watch, keeps waiting, and times out */
	CHECK_OK(coredam_pipe_wait(&b, &quick, -1, &wr, &waited));
	CHECK_EQ_INT(wr, COREDAM_PIPE_TIMEOUT);
	CHECK(waited >= 300000 && waited < 5000000);
	CHECK(inotify_calls > 0);
	/* a releases after 400 ms: b's next count (every 200 ms) admits it */
	CHECK(pthread_create(&t, NULL, release_later, &rel) == 0);
	CHECK_OK(coredam_pipe_wait(&b, &slow, -1, &wr, &waited));
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
		CHECK_OK(coredam_pipe_queue_open(state, &q[i]));
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
		CHECK_OK(coredam_pipe_queue_open(state, &q[i]));
	/* uid 1000: one writing, three waiting; the queue is full */
	for (int i = 0; i < 4; i++)
		CHECK(coredam_pipe_enqueue(&q[i], 100 + i, 1000, &b, &ahead) == 1);
	CHECK(coredam_pipe_wait(&q[0], &b, -1, &wr, &waited) == 0 && wr == COREDAM_PIPE_ADMIT);
	/* root's crash: uid 1000's newest waiter makes room */
	CHECK_EQ_INT(coredam_pipe_enqueue(&q[4], 200, 0, &b, &ahead), 1);
	CHECK_EQ_INT(ahead, 1);
	CHECK(read_file_at(AT_FDCWD, tpath("state/pipe/q.00000000000000000003"), 64, &text) >= 0);
	CHECK(text && text[0] == 'X');
	CHECK_OK(coredam_pipe_wait(&q[3], &b, -1, &wr, &waited));
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
	CHECK_OK(coredam_pipe_queue_open(state, &q));
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

		CHECK_OK(coredam_pipe_queue_open(state, &h));
		CHECK(coredam_pipe_enqueue(&h, 101, 1000, &none, &ahead) == 1);
		CHECK(h.ticket == 1);
		coredam_pipe_release(&h);
		close(h.dirfd);
	}
	close(q.dirfd);
}
