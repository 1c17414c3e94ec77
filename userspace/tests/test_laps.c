// SPDX-License-Identifier: LGPL-2.1-or-later
/* Laps of a busy stretch: named times add up, longest first, the CPU counted. */
#include <errno.h>

#include "laps.h"
#include "test.h"
#include "time-util.h"

TEST(laps_add_up_by_name)
{
	struct coredam_laps l;
	char buf[256];

	coredam_laps_start(&l, 1000000);
	coredam_laps_mark(&l, "dumps", 1020000);
	coredam_laps_mark(&l, "io.max", 1600000);
	coredam_laps_mark(&l, "dumps", 1605000);
	coredam_laps_mark(&l, "metrics", 1605400);	/* under a millisecond: not shown */
	CHECK_EQ_INT(coredam_laps_end(&l, 1612000), 612000);
	CHECK_EQ_INT(l.n, 4);
	CHECK(coredam_laps_format(&l, buf, sizeof(buf)) > 0);
	CHECK(strncmp(buf, "612 ms: io.max 580 ms, dumps 25 ms, other 6 ms; on CPU ", 55) == 0);
	CHECK(strstr(buf, "metrics") == NULL);
	CHECK(strstr(buf, " ms, preempted ") && strstr(buf, " times, slept "));
	/* the end is the end: no lap after it, the same length again */
	coredam_laps_mark(&l, "late", 2000000);
	CHECK_EQ_INT(l.n, 4);
	CHECK_EQ_INT(coredam_laps_end(&l, 3000000), 612000);
}

TEST(laps_not_started_and_clock_backwards)
{
	struct coredam_laps l = { 0 };

	coredam_laps_mark(&l, "dumps", 5);
	CHECK_EQ_INT(l.n, 0);
	coredam_laps_start(&l, 1000);
	coredam_laps_mark(&l, "a", 500);	/* never negative */
	CHECK_EQ_INT(l.lap[0].usec, 0);
	CHECK_EQ_INT(coredam_laps_end(&l, 2000), 1000);
}

TEST(laps_more_names_than_slots)
{
	static const char *names[] = { "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8", "n9", "n10", "n11",
				       "n12", "n13", "n14", "n15", "n16", "n17", "n18", "n19", "n20", "n21",
				       "n22", "n23", "n24", "n25" };
	struct coredam_laps l;
	uint64_t sum = 0;

	coredam_laps_start(&l, 0);
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		coredam_laps_mark(&l, names[i], (i + 1) * 1000);
	CHECK_EQ_INT(l.n, COREDAM_LAPS_MAX);
	CHECK_EQ_INT(coredam_laps_end(&l, 30000), 30000);
	for (size_t i = 0; i < l.n; i++)
		sum += l.lap[i].usec;
	CHECK_EQ_INT(sum, 30000);	/* nothing lost */
}

TEST(laps_cpu_and_short_buffer)
{
	struct coredam_laps l;
	char buf[256], small[20];
	volatile uint64_t x = 0;
	uint64_t t0 = now_usec(CLOCK_MONOTONIC);

	coredam_laps_start(&l, t0);
	/* 30 ms of this thread's own CPU, whatever else the machine does */
	for (uint64_t c0 = now_usec(CLOCK_THREAD_CPUTIME_ID); now_usec(CLOCK_THREAD_CPUTIME_ID) - c0 < 30000;)
		x++;
	coredam_laps_mark(&l, "spin", now_usec(CLOCK_MONOTONIC));
	coredam_laps_end(&l, now_usec(CLOCK_MONOTONIC));
	CHECK(l.cpu_usec >= 20000);
	CHECK(l.total_usec + 10000 >= l.cpu_usec);
	CHECK(coredam_laps_format(&l, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "spin ") != NULL);
	CHECK_EQ_INT(coredam_laps_format(&l, small, sizeof(small)), -ENOBUFS);
}
