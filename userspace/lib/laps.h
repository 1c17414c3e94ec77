/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Where a busy stretch of the agent's loop went: its laps by name, and the
 * thread's CPU time and context switches over it, so that a slow round
 * says whether it computed, waited for a CPU (preempted) or slept in the
 * kernel (a cgroup file, a disk, a lock):
 *
 *	coredam_laps_start(&l, now);
 *	... coredam_laps_mark(&l, "io.max", now); ...
 *	if (coredam_laps_end(&l, now) >= slow)
 *		coredam_laps_format(&l, buf, sizeof(buf));
 *
 * The time since the last mark goes to the named lap; laps of one name
 * add up; marks outside a stretch are ignored.
 */
#ifndef COREDAM_LAPS_H
#define COREDAM_LAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/resource.h>

#define COREDAM_LAPS_MAX 24

struct coredam_lap {
	const char *name;	/* a string constant */
	uint64_t usec;
};

struct coredam_laps {
	bool running;
	uint64_t start_usec, last_usec, total_usec;
	struct rusage ru;	/* this thread's, at the start */
	uint64_t cpu_usec;	/* user + system time over the stretch */
	long preempted, slept;	/* involuntary and voluntary context switches */
	size_t n;
	struct coredam_lap lap[COREDAM_LAPS_MAX];
};

void coredam_laps_start(struct coredam_laps *l, uint64_t now_usec);
void coredam_laps_mark(struct coredam_laps *l, const char *name, uint64_t now_usec);
/* End the stretch (its tail is the lap "other"); returns its length. */
uint64_t coredam_laps_end(struct coredam_laps *l, uint64_t now_usec);
/*
 * "612 ms: io.max 580 ms, dumps 20 ms, ...; on CPU 15 ms, preempted 40
 * times, slept 3 times": the laps of a millisecond or more, longest first.
 * Returns the length written, or -ENOBUFS.
 */
int coredam_laps_format(const struct coredam_laps *l, char *buf, size_t size);

#endif
