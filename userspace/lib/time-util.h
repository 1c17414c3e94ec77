/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Clocks. */
#ifndef COREDAM_TIME_UTIL_H
#define COREDAM_TIME_UTIL_H

#include "macro.h"

#include <time.h>

/* @clock (CLOCK_MONOTONIC, CLOCK_BOOTTIME, ...) in microseconds. */
static inline uint64_t now_usec(int clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

#endif
