// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredamd's tick decided: see tick.h. */

#include "tick.h"

/*
 * The dump cgroup removed under the agent: set it up again at once, then
 * every COREDAM_CGROUP_RETRY_USEC while that fails, so that the next dumps
 * are paced again instead of going uncharged.
 */
static void decide_cgroup(const struct coredam_tick_in *in, struct coredam_tick_state *st,
			  struct coredam_tick_out *out)
{
	if (!st->cg_lost) {
		if (!in->cgroup_gone)
			return;
		st->cg_lost = true;
		st->cg_retry_usec = 0;
		out->cgroup_lost = true;
	}
	if (in->now_usec < st->cg_retry_usec)
		return;
	st->cg_retry_usec = in->now_usec + COREDAM_CGROUP_RETRY_USEC;
	out->setup_cgroup = true;
}

/*
 * A new core_pattern may name another disk; an io.max someone else wrote is
 * put back. A removed cgroup has no io.max to read: setting it up writes it.
 */
static void decide_io(const struct coredam_tick_in *in, const struct coredam_tick_state *st,
		      struct coredam_tick_out *out)
{
	if (in->pattern_changed) {
		out->resolve_devices = true;
		out->apply_io = true;
	} else if (!in->io_in_force && !st->cg_lost) {
		out->io_restored = true;
		out->apply_io = true;
	}
}

/*
 * The write rate of the first device since the last tick. A rate 10%
 * above the highest seen raises Ceiling=auto (3/4 of it), when that is
 * above the ceiling used without a measurement.
 */
static void decide_disk(const struct coredam_config *cfg, const struct coredam_tick_in *in,
			struct coredam_tick_state *st, struct coredam_budget_params *params,
			struct coredam_tick_out *out)
{
	if (!in->have_disk)
		return;
	if (st->disk_last_usec && in->now_usec > st->disk_last_usec && in->disk_sectors >= st->disk_last_sectors) {
		uint64_t bps = (in->disk_sectors - st->disk_last_sectors) * 512 * 1000000 /
			       (in->now_usec - st->disk_last_usec);

		if (bps > st->peak_write_bps * 11 / 10 && cfg->ceiling_bps == 0 &&
		    bps / 4 * 3 > COREDAM_AUTO_CEILING_BPS) {
			st->peak_write_bps = bps;
			coredam_budget_params_from_config(cfg, bps, params);
			out->new_peak_bps = bps;
		}
	}
	st->disk_last_sectors = in->disk_sectors;
	st->disk_last_usec = in->now_usec;
}

static void decide_budget(const struct coredam_config *cfg, const struct coredam_tick_in *in,
			  const struct coredam_budget_params *params, struct coredam_budget *budget,
			  struct coredam_tick_out *out)
{
	struct coredam_budget nb;

	if (cfg->mode != COREDAM_MODE_ADAPTIVE)
		return;
	if (coredam_budget_step(params, budget, &in->pressure, &nb)) {
		out->budget_changed = true;
		out->apply_io = true;
		out->apply_admission = true;
	}
	*budget = nb;
}

/* The destination crossing its free-space floor squeezes admission, or lets it go. */
static void decide_space(const struct coredam_tick_in *in, struct coredam_tick_state *st,
			 struct coredam_tick_out *out)
{
	bool was = st->space_valid && st->space_below;

	if (!in->dest_known)
		return;
	if (in->space_err < 0) {
		out->space_error = st->space_valid;
		st->space_valid = false;
		return;
	}
	st->space_valid = true;
	st->space_below = in->space.below;
	if (in->space.below == was)
		return;
	out->space = in->space.below ? COREDAM_SPACE_LOW : COREDAM_SPACE_OK;
	out->apply_admission = true;
}

/*
 * Every dump that ended, not only those counted failed: the ELF writer
 * reports success once its notes are collected, and a kernel without the
 * series' "count a core cut short as failed" counts a core cut short by
 * ENOSPC or a write error as completed. Looked for only once nothing is
 * writing: a core being written is short by design.
 */
static void decide_incomplete(const struct coredam_config *cfg, const struct coredam_tick_in *in,
			      struct coredam_tick_state *st, struct coredam_tick_out *out)
{
	if (!cfg->mark_incomplete || !in->dest_known || !in->have_stats)
		return;
	if (in->ended > st->ended_seen)
		st->incomplete_pending = true;
	st->ended_seen = in->ended;
	if (!st->incomplete_pending || in->active != 0)
		return;
	st->incomplete_pending = false;
	out->mark_incomplete = true;
}

void coredam_tick_decide(const struct coredam_config *cfg, const struct coredam_tick_in *in,
			 struct coredam_tick_state *st, struct coredam_budget_params *params,
			 struct coredam_budget *budget, struct coredam_tick_out *ret)
{
	struct coredam_tick_out out = { 0 };

	decide_cgroup(in, st, &out);
	decide_io(in, st, &out);
	decide_disk(cfg, in, st, params, &out);
	decide_budget(cfg, in, params, budget, &out);
	decide_space(in, st, &out);
	decide_incomplete(cfg, in, st, &out);
	*ret = out;
}
