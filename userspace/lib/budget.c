// SPDX-License-Identifier: LGPL-2.1-or-later
#include "budget.h"
#include "macro.h"

uint64_t coredam_budget_auto_ceiling(uint64_t floor_bps, uint64_t measured_peak_bps)
{
	uint64_t c = COREDAM_AUTO_CEILING_BPS;

	if (measured_peak_bps)
		c = MAX(c, measured_peak_bps / 4 * 3);
	return MAX(c, floor_bps);
}

void coredam_budget_params_from_config(const struct coredam_config *cfg, uint64_t measured_peak_bps,
				       struct coredam_budget_params *ret)
{
	struct coredam_budget_params p = {
		.mode = cfg->mode,
		.fixed_bps = cfg->write_bps,
		.fixed_concurrency = cfg->concurrency,
		.floor_bps = cfg->floor_bps ? cfg->floor_bps : 1000000,
		.concurrency_floor = cfg->concurrency_floor,
		.concurrency_ceiling = MAX(cfg->concurrency_ceiling, cfg->concurrency_floor),
		.target = cfg->pressure_target,
		.backoff = cfg->backoff,
		.hold_intervals = cfg->hold_intervals,
		.lift = cfg->lift_when_idle,
	};

	p.ceiling_bps = cfg->ceiling_bps ? cfg->ceiling_bps
					 : coredam_budget_auto_ceiling(p.floor_bps, measured_peak_bps);
	p.ceiling_bps = MAX(p.ceiling_bps, p.floor_bps);
	p.busy_ceiling_bps = cfg->busy_ceiling_bps ? cfg->busy_ceiling_bps : p.floor_bps;
	p.busy_ceiling_bps = MIN(MAX(p.busy_ceiling_bps, p.floor_bps), p.ceiling_bps);
	p.step_bps = cfg->step_bps ? cfg->step_bps : (p.ceiling_bps - p.floor_bps) / 4;
	if (p.step_bps == 0)
		p.step_bps = 1;
	*ret = p;
}

void coredam_budget_init(const struct coredam_budget_params *p, struct coredam_budget *ret)
{
	if (p->mode == COREDAM_MODE_FIXED)
		*ret = (struct coredam_budget){ .wbps = p->fixed_bps, .concurrency = p->fixed_concurrency };
	else
		*ret = (struct coredam_budget){ .wbps = p->floor_bps, .concurrency = p->concurrency_floor };
}

bool coredam_budget_step(const struct coredam_budget_params *p, const struct coredam_budget *cur,
			 const struct coredam_pressure_sample *s, struct coredam_budget *ret)
{
	struct coredam_budget b = *cur;
	uint64_t ceiling = p->ceiling_bps;

	/* somebody else uses the disk: CeilingWhenBusy= is the top (kept within floor..ceiling by the params) */
	if (s->others_busy)
		ceiling = p->busy_ceiling_bps;

	if (p->mode == COREDAM_MODE_FIXED) {
		b.wbps = p->fixed_bps;
		b.concurrency = p->fixed_concurrency;
		b.quiet = b.idle = 0;
	} else {
		/* LiftWhenIdle= turned off while lifted: the budget from before */
		if (b.lifted && !p->lift) {
			b.lifted = false;
			b.wbps = b.lifted_from_wbps;
			b.concurrency = b.lifted_from_concurrency;
		}
		/* a budget from fixed mode or an older config: bring it in range first */
		if (b.lifted)
			b.wbps = 0;
		else if (b.wbps == 0 || b.wbps > ceiling)
			b.wbps = ceiling;
		if (!b.lifted && b.wbps < p->floor_bps)
			b.wbps = p->floor_bps;
		if (b.concurrency == 0 || b.concurrency > p->concurrency_ceiling)
			b.concurrency = p->concurrency_ceiling;
		if (b.concurrency < p->concurrency_floor)
			b.concurrency = p->concurrency_floor;

		if (b.lifted && (s->triggered || s->foreground > p->target || !s->others_idle)) {
			/* somebody else uses the disk again: the budget from before the lift */
			b.lifted = false;
			b.wbps = MIN(MAX(b.lifted_from_wbps, p->floor_bps), ceiling);
			b.concurrency = MIN(MAX(b.lifted_from_concurrency, p->concurrency_floor),
					    p->concurrency_ceiling);
		}
		if (s->triggered || s->foreground > p->target) {
			uint64_t w = (uint64_t)((double)b.wbps * p->backoff);

			b.wbps = MAX(w, p->floor_bps);
			if (b.concurrency > p->concurrency_floor)
				b.concurrency--;
			b.quiet = b.idle = 0;
		} else if (!b.lifted && cur->lifted) {
			b.quiet = b.idle = 0;
		} else if (s->foreground < p->target / 2) {
			b.quiet++;
			b.idle = s->others_idle ? b.idle + 1 : 0;
			if (b.lifted) {
				/* at the top: nothing left to raise */
			} else if (p->lift && b.idle >= p->hold_intervals) {
				/* work-conserving: nobody else needs the disk */
				b.lifted = true;
				b.lifted_from_wbps = b.wbps;
				b.lifted_from_concurrency = b.concurrency;
				b.wbps = 0;
				b.concurrency = p->concurrency_ceiling;
				b.quiet = b.idle = 0;
			} else if (b.quiet >= p->hold_intervals) {
				if (b.wbps >= ceiling) {
					if (b.concurrency < p->concurrency_ceiling)
						b.concurrency++;
				} else {
					b.wbps = MIN(b.wbps + p->step_bps, ceiling);
				}
				b.quiet = 0;
			}
		} else {
			b.quiet = b.idle = 0;
		}
	}
	*ret = b;
	return b.wbps != cur->wbps || b.concurrency != cur->concurrency || b.lifted != cur->lifted;
}
