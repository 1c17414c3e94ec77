/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_TICK_H
#define COREDAM_TICK_H

#include <stdbool.h>
#include <stdint.h>

#include "budget.h"
#include "config.h"
#include "space.h"

/*
 * coredamd's tick, observe -> decide -> apply. The daemon reads what it
 * needs (struct coredam_tick_in), coredam_tick_decide() works out from
 * that, the configuration and what it remembers from the ticks before
 * (struct coredam_tick_state) what is to be done (struct coredam_tick_out),
 * and the daemon does it and logs it. Deciding does no I/O and reads no
 * clock: the unit tests feed it readings.
 */

/* What one tick read. */
struct coredam_tick_in {
	uint64_t now_usec;			/* CLOCK_MONOTONIC */
	bool cgroup_gone;			/* the dump cgroup was removed */
	bool pattern_changed;			/* core_pattern is not the one resolved */
	bool io_in_force;			/* io.max says what the agent wrote */
	bool have_disk;				/* disk_sectors was read */
	uint64_t disk_sectors;			/* written on the first device */
	struct coredam_pressure_sample pressure;
	bool dest_known;			/* the destination is a directory */
	int space_err;				/* 0, or -errno of statvfs() of it */
	struct coredam_space space;		/* when space_err is 0 */
	bool have_stats;			/* the kernel's or coredam-pipe's */
	uint64_t ended;				/* completed + failed */
	uint64_t active;			/* dumps writing */
};

/* What the agent remembers from one tick to the next. */
struct coredam_tick_state {
	bool cg_lost;				/* removed, not set up again yet */
	uint64_t cg_retry_usec;			/* next attempt to set it up */
	uint64_t disk_last_sectors, disk_last_usec;
	uint64_t peak_write_bps;		/* highest rate measured: Ceiling=auto */
	bool space_valid;			/* the last statvfs() worked */
	bool space_below;			/* ... and found it below the floor */
	uint64_t ended_seen;			/* completed + failed, last tick */
	bool incomplete_pending;		/* a dump ended; look once none writes */
};

enum coredam_space_change {
	COREDAM_SPACE_SAME,
	COREDAM_SPACE_LOW,			/* went below the floor */
	COREDAM_SPACE_OK,			/* back above it */
};

/* What to do, in this order. */
struct coredam_tick_out {
	bool cgroup_lost;			/* found removed this tick */
	bool setup_cgroup;			/* create it again, point the kernel at it */
	bool resolve_devices;			/* core_pattern changed */
	bool io_restored;			/* io.max changed by someone else */
	uint64_t new_peak_bps;			/* nonzero: a higher rate measured */
	bool budget_changed;			/* adaptive: a new budget */
	bool apply_io;
	bool apply_admission;
	bool space_error;			/* statvfs() failed, after working */
	enum coredam_space_change space;
	bool mark_incomplete;			/* look for cores cut short */
};

/* Every this often, a removed dump cgroup is set up again until that works. */
#define COREDAM_CGROUP_RETRY_USEC 5000000ULL

/*
 * Decide one tick: @st and, in adaptive mode, @params and @budget are
 * updated; the caller tells a cgroup set up again by clearing st->cg_lost.
 */
void coredam_tick_decide(const struct coredam_config *cfg, const struct coredam_tick_in *in,
			 struct coredam_tick_state *st, struct coredam_budget_params *params,
			 struct coredam_budget *budget, struct coredam_tick_out *ret);

#endif
