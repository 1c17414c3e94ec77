/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_BUDGET_H
#define COREDAM_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

/*
 * The dump cgroup's budget: write bandwidth and concurrency. Pure
 * arithmetic: no I/O, no clock; the daemon feeds one sample per interval
 * (and one per PSI trigger event), the tests feed recorded traces.
 */
struct coredam_budget_params {
	enum coredam_mode mode;
	uint64_t fixed_bps;
	uint32_t fixed_concurrency;
	uint64_t floor_bps, ceiling_bps;	/* effective: ceiling >= floor > 0 */
	uint64_t busy_ceiling_bps;		/* effective: floor <= it <= ceiling */
	uint32_t concurrency_floor, concurrency_ceiling;
	double target;				/* foreground stall fraction */
	uint64_t step_bps;
	double backoff;
	uint32_t hold_intervals;
	bool lift;				/* LiftWhenIdle=: no limit on an idle disk */
};

struct coredam_budget {
	uint64_t wbps;			/* 0 = no limit: fixed mode's, or adaptive lifted */
	uint32_t concurrency;		/* 0 = unlimited */
	uint32_t quiet;			/* consecutive quiet samples */
	uint32_t idle;			/* ... of which the disk was otherwise idle */
	bool lifted;			/* adaptive: no bandwidth limit, nobody else uses the disk */
	uint64_t lifted_from_wbps;	/* the budget before the lift, to come back to */
	uint32_t lifted_from_concurrency;
};

struct coredam_pressure_sample {
	double foreground;		/* stalled fraction of the interval, 0..1 */
	bool triggered;			/* a PSI trigger fired during the interval */
	bool others_idle;		/* no watched cgroup made a request to the dump
					   device in the interval (false: some did, or
					   nobody can tell) */
	bool others_busy;		/* one of them did (false: none did, or nobody
					   can tell) */
};

/* Without a better measurement, the auto ceiling is 30 MB/s. */
#define COREDAM_AUTO_CEILING_BPS 30000000ULL

/*
 * Effective ceiling for Ceiling=auto: 3/4 of the highest write rate
 * measured on the device (0 = not measured), never below the floor and
 * never below COREDAM_AUTO_CEILING_BPS when nothing was measured.
 */
uint64_t coredam_budget_auto_ceiling(uint64_t floor_bps, uint64_t measured_peak_bps);

void coredam_budget_params_from_config(const struct coredam_config *cfg, uint64_t measured_peak_bps,
				       struct coredam_budget_params *ret);

/* Starting point: fixed caps, or the floor in adaptive mode. */
void coredam_budget_init(const struct coredam_budget_params *p, struct coredam_budget *ret);

/*
 * One control step. Adaptive mode, an AIMD controller with hysteresis:
 *  - pressure above target (or a trigger fired): bandwidth *= backoff (not
 *    below the floor), concurrency - 1 (not below its floor);
 *  - pressure below half the target for hold_intervals samples in a row:
 *    bandwidth += step (not above the ceiling); once at the ceiling,
 *    concurrency + 1 (not above its ceiling);
 *  - in between: hold.
 * While somebody else uses the disk (s->others_busy), CeilingWhenBusy=
 * (p->busy_ceiling_bps) takes the place of the ceiling: the bandwidth
 * comes down to it at once and climbs no higher. The foreground's stall
 * share does not see all it pays for the dumps' rate (an fdatasync() on
 * ext4 waits for the journal commit outside PSI's I/O stall), so its
 * requests alone cap the rate.
 * With LiftWhenIdle= (p->lift), work-conserving: quiet with the disk
 * otherwise idle (s->others_idle) for hold_intervals samples in a row, the
 * bandwidth limit is lifted and every slot opened, from wherever the
 * budget was; the first request of anybody else brings back the budget
 * it had before, the first pressure that budget's bandwidth times backoff
 * and a slot fewer.
 * Returns true when the budget changed.
 */
bool coredam_budget_step(const struct coredam_budget_params *p, const struct coredam_budget *cur,
			 const struct coredam_pressure_sample *s, struct coredam_budget *ret);

#endif
