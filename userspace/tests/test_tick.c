// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredamd's tick decided from readings: what it does when the dump
 * cgroup is removed, core_pattern or io.max change, the disk turns out
 * faster, pressure rises, the destination crosses its floor and dumps end.
 */
#include <errno.h>

#include "tick.h"
#include "test.h"

#define SEC 1000000ULL

struct tick {
	struct coredam_config cfg;
	struct coredam_tick_state st;
	struct coredam_budget_params params;
	struct coredam_budget budget;
	struct coredam_tick_in in;	/* the next reading: a quiet tick */
	struct coredam_tick_out out;
};

static void tick_init(struct tick *t, enum coredam_mode mode)
{
	memset(t, 0, sizeof(*t));
	coredam_config_init(&t->cfg);
	t->cfg.mode = mode;
	coredam_budget_params_from_config(&t->cfg, 0, &t->params);
	coredam_budget_init(&t->params, &t->budget);
	t->in.now_usec = 100 * SEC;
	t->in.io_in_force = true;
}

/* Decide one tick on t->in, then move the clock on by @step. */
static const struct coredam_tick_out *tick_run(struct tick *t, uint64_t step)
{
	coredam_tick_decide(&t->cfg, &t->in, &t->st, &t->params, &t->budget, &t->out);
	t->in.now_usec += step;
	return &t->out;
}

static bool nothing_to_do(const struct coredam_tick_out *o)
{
	return !o->cgroup_lost && !o->setup_cgroup && !o->resolve_devices && !o->io_restored &&
	       !o->new_peak_bps && !o->budget_changed && !o->apply_io && !o->apply_admission &&
	       !o->space_error && o->space == COREDAM_SPACE_SAME && !o->mark_incomplete;
}

TEST(tick_quiet_does_nothing)
{
	struct tick t;

	tick_init(&t, COREDAM_MODE_FIXED);
	for (int i = 0; i < 3; i++)
		CHECK(nothing_to_do(tick_run(&t, SEC)));
	/* adaptive, no pressure: the budget climbs, and every change is applied */
	tick_init(&t, COREDAM_MODE_ADAPTIVE);
	for (int i = 0; i < 20; i++) {
		const struct coredam_tick_out *o = tick_run(&t, SEC);

		CHECK(o->apply_io == o->budget_changed && o->apply_admission == o->budget_changed);
	}
	CHECK(t.budget.wbps > t.params.floor_bps);
}

TEST(tick_cgroup_removed_is_set_up_again_every_5s)
{
	struct tick t;
	const struct coredam_tick_out *o;

	tick_init(&t, COREDAM_MODE_FIXED);
	t.in.cgroup_gone = true;
	t.in.io_in_force = false;	/* there is no io.max to read: not "changed by someone" */
	o = tick_run(&t, SEC);
	CHECK(o->cgroup_lost && o->setup_cgroup);
	CHECK(!o->io_restored && !o->apply_io);
	/* setting it up failed: the agent keeps st.cg_lost, and reads no more "gone" */
	t.in.cgroup_gone = false;
	for (int i = 1; i < 5; i++) {
		o = tick_run(&t, SEC);
		CHECK(!o->cgroup_lost && !o->setup_cgroup && !o->io_restored);
	}
	t.in.io_in_force = true;
	o = tick_run(&t, SEC);
	CHECK(!o->cgroup_lost && o->setup_cgroup);
	/* it worked; removed again later: at once */
	t.st.cg_lost = false;
	CHECK(nothing_to_do(tick_run(&t, SEC)));
	t.in.cgroup_gone = true;
	o = tick_run(&t, SEC);
	CHECK(o->cgroup_lost && o->setup_cgroup);
}

TEST(tick_core_pattern_and_io_max)
{
	struct tick t;
	const struct coredam_tick_out *o;

	tick_init(&t, COREDAM_MODE_FIXED);
	t.in.pattern_changed = true;
	t.in.io_in_force = false;	/* another disk: the old io.max no longer says it */
	o = tick_run(&t, SEC);
	CHECK(o->resolve_devices && o->apply_io && !o->io_restored);
	t.in.pattern_changed = false;
	o = tick_run(&t, SEC);
	CHECK(!o->resolve_devices && o->apply_io && o->io_restored);
	CHECK(!o->apply_admission);
}

TEST(tick_faster_disk_raises_the_auto_ceiling)
{
	struct tick t;
	const struct coredam_tick_out *o;
	uint64_t sectors = 1000;

	tick_init(&t, COREDAM_MODE_ADAPTIVE);
	t.in.have_disk = true;
	t.in.disk_sectors = sectors;
	/* the first reading: nothing to compare with */
	CHECK_EQ_INT(tick_run(&t, SEC)->new_peak_bps, 0);
	/* 100 MB in a second: the auto ceiling becomes 3/4 of it */
	sectors += 100000000 / 512;
	t.in.disk_sectors = sectors;
	o = tick_run(&t, SEC);
	CHECK(o->new_peak_bps > 99000000 && o->new_peak_bps <= 100000000);
	CHECK_EQ_INT(t.params.ceiling_bps, o->new_peak_bps / 4 * 3);
	/* 105 MB: not 10% above the peak */
	sectors += 105000000 / 512;
	t.in.disk_sectors = sectors;
	CHECK_EQ_INT(tick_run(&t, SEC)->new_peak_bps, 0);
	/* a counter that went back (a new device) is a new start, not a rate */
	t.in.disk_sectors = 10;
	CHECK_EQ_INT(tick_run(&t, SEC)->new_peak_bps, 0);
	CHECK_EQ_INT(t.st.disk_last_sectors, 10);

	/* a fixed ceiling is never raised */
	tick_init(&t, COREDAM_MODE_ADAPTIVE);
	t.cfg.ceiling_bps = 40000000;
	coredam_budget_params_from_config(&t.cfg, 0, &t.params);
	t.in.have_disk = true;
	t.in.disk_sectors = 0;
	tick_run(&t, SEC);
	t.in.disk_sectors = 200000000 / 512;
	CHECK_EQ_INT(tick_run(&t, SEC)->new_peak_bps, 0);
	CHECK_EQ_INT(t.params.ceiling_bps, 40000000);
}

TEST(tick_pressure_backs_the_budget_off)
{
	struct tick t;
	const struct coredam_tick_out *o;
	uint64_t before;

	tick_init(&t, COREDAM_MODE_ADAPTIVE);
	for (int i = 0; i < 30; i++)
		tick_run(&t, SEC);
	before = t.budget.wbps;
	t.in.pressure.foreground = 0.5;
	o = tick_run(&t, SEC);
	CHECK(o->budget_changed && o->apply_io && o->apply_admission);
	CHECK(t.budget.wbps < before);
	/* fixed mode: pressure changes nothing */
	tick_init(&t, COREDAM_MODE_FIXED);
	t.in.pressure = (struct coredam_pressure_sample){ .foreground = 0.9, .triggered = true };
	CHECK(nothing_to_do(tick_run(&t, SEC)));
}

TEST(tick_space_floor_squeezes_admission_on_each_crossing)
{
	struct tick t;
	const struct coredam_tick_out *o;

	tick_init(&t, COREDAM_MODE_FIXED);
	t.in.dest_known = true;
	t.in.space = (struct coredam_space){ .free_bytes = 10, .floor_bytes = 100, .below = true };
	o = tick_run(&t, SEC);
	CHECK(o->space == COREDAM_SPACE_LOW && o->apply_admission);
	CHECK(nothing_to_do(tick_run(&t, SEC)));
	t.in.space.below = false;
	o = tick_run(&t, SEC);
	CHECK(o->space == COREDAM_SPACE_OK && o->apply_admission);
	/* statvfs() fails: said once, and the squeeze is not in force */
	t.in.space_err = -ENOENT;
	CHECK(tick_run(&t, SEC)->space_error);
	CHECK(nothing_to_do(tick_run(&t, SEC)));
	CHECK(!t.st.space_valid);
	/* below again once it can be read */
	t.in.space_err = 0;
	t.in.space.below = true;
	CHECK(tick_run(&t, SEC)->space == COREDAM_SPACE_LOW);
	/* no destination directory (a pipe): no guard */
	t.in.dest_known = false;
	t.in.space.below = false;
	CHECK(nothing_to_do(tick_run(&t, SEC)));
}

TEST(tick_incomplete_cores_looked_for_once_nothing_writes)
{
	struct tick t;

	tick_init(&t, COREDAM_MODE_FIXED);
	t.cfg.mark_incomplete = true;
	t.in.dest_known = true;
	t.in.have_stats = true;
	CHECK(!tick_run(&t, SEC)->mark_incomplete);
	/* one ended while another still writes: wait for it */
	t.in.ended = 1;
	t.in.active = 1;
	CHECK(!tick_run(&t, SEC)->mark_incomplete);
	CHECK(!tick_run(&t, SEC)->mark_incomplete);
	t.in.active = 0;
	CHECK(tick_run(&t, SEC)->mark_incomplete);
	CHECK(!tick_run(&t, SEC)->mark_incomplete);
	/* the switch off: never */
	t.cfg.mark_incomplete = false;
	t.in.ended = 2;
	CHECK(!tick_run(&t, SEC)->mark_incomplete);
	/* no counters: nothing tells that a dump ended */
	t.cfg.mark_incomplete = true;
	t.in.have_stats = false;
	t.in.ended = 3;
	CHECK(!tick_run(&t, SEC)->mark_incomplete);
}
