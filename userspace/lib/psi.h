/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_PSI_H
#define COREDAM_PSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One pressure file (/proc/pressure/io or a cgroup's io.pressure). */
struct coredam_psi {
	double some_avg10, some_avg60, some_avg300;
	uint64_t some_total;	/* microseconds */
	bool has_full;
	double full_avg10, full_avg60, full_avg300;
	uint64_t full_total;
};

int coredam_psi_parse(const char *text, struct coredam_psi *ret);
int coredam_psi_read(int dirfd, const char *path, struct coredam_psi *ret);

/*
 * Arm a PSI trigger: "some <stall_us> <window_us>" written to @path opened
 * read-write; poll() the returned fd for POLLPRI. Window: 500ms..10s.
 */
int coredam_psi_trigger_open(int dirfd, const char *path, uint64_t stall_us, uint64_t window_us,
			     int *ret_fd);

/* Stalled fraction of an interval from two "total" readings, clamped to [0, 1]. */
double coredam_psi_fraction(uint64_t total_before, uint64_t total_after, uint64_t interval_usec);

#endif
