// SPDX-License-Identifier: LGPL-2.1-or-later
/* Admission of the coredump socket's dumps: FIFO, the slots, the cap, the timeout. */
#include <stdint.h>

#include "macro.h"
#include "sock-admit.h"
#include "test.h"

/* one source: uid 1000 for every waiter, no grants yet */
static const uint32_t one[8] = { 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000 };
static const struct coredam_sock_grants none;

TEST(sock_arrive)
{
	struct coredam_pipe_budget b = { .concurrency = 2, .waiting = 3, .timeout_ms = 1000 };

	CHECK_EQ_INT(coredam_sock_arrive(&b, 0, 0), COREDAM_SOCK_ADMIT);
	CHECK_EQ_INT(coredam_sock_arrive(&b, 1, 0), COREDAM_SOCK_ADMIT);
	CHECK_EQ_INT(coredam_sock_arrive(&b, 2, 0), COREDAM_SOCK_WAIT);
	/* a free slot goes to a waiter, never to a newcomer */
	CHECK_EQ_INT(coredam_sock_arrive(&b, 1, 1), COREDAM_SOCK_WAIT);
	CHECK_EQ_INT(coredam_sock_arrive(&b, 2, 2), COREDAM_SOCK_WAIT);
	/* every waiting place taken */
	CHECK_EQ_INT(coredam_sock_arrive(&b, 2, 3), COREDAM_SOCK_REJECT_FULL);
	CHECK_EQ_INT(coredam_sock_arrive(&b, 2, 7), COREDAM_SOCK_REJECT_FULL);
	/* no cap, no concurrency limit */
	b.waiting = 0;
	CHECK_EQ_INT(coredam_sock_arrive(&b, 2, 1000), COREDAM_SOCK_WAIT);
	b.concurrency = 0;
	CHECK_EQ_INT(coredam_sock_arrive(&b, 1000, 0), COREDAM_SOCK_ADMIT);
}

TEST(sock_admit_fifo)
{
	struct coredam_pipe_budget b = { .concurrency = 2, .waiting = 0, .timeout_ms = 1000 };
	uint64_t arrived[4] = { 100, 200, 300, 400 };
	enum coredam_sock_verdict v[4];

	/* both slots taken: everybody waits */
	CHECK_EQ_INT(coredam_sock_admit(&b, 2, arrived, one, 4, &none, 1000, v), 0);
	for (size_t i = 0; i < 4; i++)
		CHECK_EQ_INT(v[i], COREDAM_SOCK_WAIT);
	/* one frees up: the oldest gets it */
	CHECK_EQ_INT(coredam_sock_admit(&b, 1, arrived, one, 4, &none, 1000, v), 1);
	CHECK_EQ_INT(v[0], COREDAM_SOCK_ADMIT);
	CHECK_EQ_INT(v[1], COREDAM_SOCK_WAIT);
	CHECK_EQ_INT(v[3], COREDAM_SOCK_WAIT);
	/* concurrency raised: the two oldest, in order */
	b.concurrency = 4;
	CHECK_EQ_INT(coredam_sock_admit(&b, 2, arrived, one, 4, &none, 1000, v), 2);
	CHECK_EQ_INT(v[0], COREDAM_SOCK_ADMIT);
	CHECK_EQ_INT(v[1], COREDAM_SOCK_ADMIT);
	CHECK_EQ_INT(v[2], COREDAM_SOCK_WAIT);
	/* lowered below what streams: nothing admitted, nothing aborted */
	b.concurrency = 1;
	CHECK_EQ_INT(coredam_sock_admit(&b, 3, arrived, one, 4, &none, 1000, v), 0);
}

TEST(sock_admit_timeout)
{
	struct coredam_pipe_budget b = { .concurrency = 1, .waiting = 0, .timeout_ms = 10 };
	uint64_t arrived[3] = { 0, 5000, 9000 };
	enum coredam_sock_verdict v[3];

	/* at 10 ms: the first has waited exactly the timeout */
	CHECK_EQ_INT(coredam_sock_admit(&b, 1, arrived, one, 3, &none, 10000, v), 0);
	CHECK_EQ_INT(v[0], COREDAM_SOCK_REJECT_TIMEOUT);
	CHECK_EQ_INT(v[1], COREDAM_SOCK_WAIT);
	CHECK_EQ_INT(v[2], COREDAM_SOCK_WAIT);
	/* a slot beats the timeout: the oldest is admitted, the next timed out */
	CHECK_EQ_INT(coredam_sock_admit(&b, 0, arrived, one, 3, &none, 16000, v), 1);
	CHECK_EQ_INT(v[0], COREDAM_SOCK_ADMIT);
	CHECK_EQ_INT(v[1], COREDAM_SOCK_REJECT_TIMEOUT);
	CHECK_EQ_INT(v[2], COREDAM_SOCK_WAIT);
	CHECK_EQ_INT(coredam_sock_deadline(&b, 9000), 19000);
	/* no timeout */
	b.timeout_ms = 0;
	CHECK_EQ_INT(coredam_sock_admit(&b, 1, arrived, one, 3, &none, UINT64_MAX - 1, v), 0);
	CHECK_EQ_INT(v[0], COREDAM_SOCK_WAIT);
	CHECK(coredam_sock_deadline(&b, 9000) == UINT64_MAX);
}

/* Two sources: one user's storm waits, another user's crash arrives after it. */
TEST(sock_admit_fair_across_sources)
{
	struct coredam_pipe_budget b = { .concurrency = 1, .waiting = 0, .timeout_ms = 0 };
	uint64_t arrived[5] = { 100, 200, 300, 400, 500 };
	uint32_t uid[5] = { 1000, 1000, 1000, 1000, 0 };
	struct coredam_sock_grants g = { 0 };
	enum coredam_sock_verdict v[5];

	/* uid 1000 had the last slot: root's crash, the newest, goes first */
	coredam_sock_granted(&g, 1000);
	CHECK_EQ_INT(coredam_sock_admit(&b, 0, arrived, uid, 5, &g, 1000, v), 1);
	CHECK_EQ_INT(v[4], COREDAM_SOCK_ADMIT);
	for (size_t i = 0; i < 4; i++)
		CHECK_EQ_INT(v[i], COREDAM_SOCK_WAIT);
	/* two slots: root's and then uid 1000's oldest */
	b.concurrency = 2;
	CHECK_EQ_INT(coredam_sock_admit(&b, 0, arrived, uid, 5, &g, 1000, v), 2);
	CHECK(v[4] == COREDAM_SOCK_ADMIT && v[0] == COREDAM_SOCK_ADMIT && v[1] == COREDAM_SOCK_WAIT);
	/* the grants are the caller's to record: unchanged */
	CHECK_EQ_INT(g.n, 1);
	/* with no grants, root's crash still goes before uid 1000's second waiter: turns 0, 1, 2, 3 against 0 */
	g.n = 0;
	b.concurrency = 2;
	CHECK_EQ_INT(coredam_sock_admit(&b, 0, arrived, uid, 5, &g, 1000, v), 2);
	CHECK(v[0] == COREDAM_SOCK_ADMIT && v[4] == COREDAM_SOCK_ADMIT && v[1] == COREDAM_SOCK_WAIT);
}

TEST(sock_grants_keep_the_last)
{
	struct coredam_sock_grants g = { 0 };

	for (uint32_t u = 0; u < COREDAM_PIPE_RECENT + 3; u++)
		coredam_sock_granted(&g, u);
	CHECK_EQ_INT(g.n, COREDAM_PIPE_RECENT);
	CHECK_EQ_INT(g.uid[0], 3);
	CHECK_EQ_INT(g.uid[COREDAM_PIPE_RECENT - 1], COREDAM_PIPE_RECENT + 2);
}
