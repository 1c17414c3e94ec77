// SPDX-License-Identifier: LGPL-2.1-or-later
/* Laps of a busy stretch of the agent's loop. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "laps.h"
#include "macro.h"

static uint64_t tv_usec(const struct timeval *tv)
{
	return (uint64_t)tv->tv_sec * 1000000 + (uint64_t)tv->tv_usec;
}

void coredam_laps_start(struct coredam_laps *l, uint64_t now_usec)
{
	*l = (struct coredam_laps){ .running = true, .start_usec = now_usec, .last_usec = now_usec };
	(void)getrusage(RUSAGE_THREAD, &l->ru);
}

void coredam_laps_mark(struct coredam_laps *l, const char *name, uint64_t now_usec)
{
	uint64_t d;
	size_t i;

	if (!l->running)
		return;
	d = now_usec > l->last_usec ? now_usec - l->last_usec : 0;
	l->last_usec = MAX(now_usec, l->last_usec);
	for (i = 0; i < l->n; i++)
		if (strcmp(l->lap[i].name, name) == 0)
			break;
	if (i == l->n) {
		if (l->n == ELEMENTSOF(l->lap))
			i = l->n - 1;	/* more names than slots: the last one takes the rest */
		else
			l->lap[l->n++] = (struct coredam_lap){ .name = name };
	}
	l->lap[i].usec += d;
}

uint64_t coredam_laps_end(struct coredam_laps *l, uint64_t now_usec)
{
	struct rusage ru;

	if (!l->running)
		return l->total_usec;
	coredam_laps_mark(l, "other", now_usec);
	l->running = false;
	l->total_usec = l->last_usec - l->start_usec;
	if (getrusage(RUSAGE_THREAD, &ru) == 0) {
		uint64_t a = tv_usec(&l->ru.ru_utime) + tv_usec(&l->ru.ru_stime);
		uint64_t b = tv_usec(&ru.ru_utime) + tv_usec(&ru.ru_stime);

		l->cpu_usec = b > a ? b - a : 0;
		l->preempted = ru.ru_nivcsw - l->ru.ru_nivcsw;
		l->slept = ru.ru_nvcsw - l->ru.ru_nvcsw;
	}
	return l->total_usec;
}

static int by_time(const void *x, const void *y)
{
	const struct coredam_lap *a = x, *b = y;

	return a->usec < b->usec ? 1 : a->usec > b->usec ? -1 : strcmp(a->name, b->name);
}

int coredam_laps_format(const struct coredam_laps *l, char *buf, size_t size)
{
	struct coredam_lap s[COREDAM_LAPS_MAX];
	size_t len = 0, shown = 0;
	int r;

	memcpy(s, l->lap, l->n * sizeof(*s));
	qsort(s, l->n, sizeof(*s), by_time);
	r = snprintf(buf, size, "%" PRIu64 " ms:", l->total_usec / 1000);
	for (size_t i = 0; r >= 0 && (size_t)r < size - len && i < l->n && s[i].usec >= 1000; i++) {
		len += (size_t)r;
		r = snprintf(buf + len, size - len, "%s %s %" PRIu64 " ms", shown++ ? "," : "", s[i].name,
			     s[i].usec / 1000);
	}
	if (r >= 0 && (size_t)r < size - len) {
		len += (size_t)r;
		r = snprintf(buf + len, size - len, "%s on CPU %" PRIu64 " ms, preempted %ld times, slept %ld times",
			     shown ? ";" : "", l->cpu_usec / 1000, l->preempted, l->slept);
	}
	if (r < 0 || (size_t)r >= size - len)
		return -ENOBUFS;
	return (int)(len + (size_t)r);
}
