// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The budget controller against pressure traces. The traces are
 * foreground "some" stall fractions per 1 s interval, recorded in the
 * testbed of DESIGN.md (idle; a storm where a probe's fsyncs suffer; and a
 * foreground burst that comes and goes).
 */
#include "budget.h"
#include "test.h"
#include "macro.h"

static void adaptive_cfg(struct coredam_config *c)
{
	coredam_config_init(c);
	c->mode = COREDAM_MODE_ADAPTIVE;
	c->floor_bps = 10000000;
	c->ceiling_bps = 0; /* auto */
}

TEST(budget_fixed_ignores_pressure)
{
	struct coredam_config c;
	struct coredam_budget_params p;
	struct coredam_budget b, n;
	struct coredam_pressure_sample s = { .foreground = 0.9, .triggered = true };

	coredam_config_init(&c);
	coredam_budget_params_from_config(&c, 0, &p);
	coredam_budget_init(&p, &b);
	CHECK_EQ_INT(b.wbps, 10000000);
	CHECK_EQ_INT(b.concurrency, 2);
	CHECK(!coredam_budget_step(&p, &b, &s, &n));
	CHECK_EQ_INT(n.wbps, 10000000);
}

TEST(budget_auto_ceiling)
{
	CHECK_EQ_INT(coredam_budget_auto_ceiling(10000000, 0), 30000000);
	CHECK_EQ_INT(coredam_budget_auto_ceiling(10000000, 100000000), 75000000);
	CHECK_EQ_INT(coredam_budget_auto_ceiling(10000000, 20000000), 30000000);
	CHECK_EQ_INT(coredam_budget_auto_ceiling(50000000, 0), 50000000);
}

static const double trace_idle[] = { 0.00, 0.01, 0.00, 0.02, 0.00, 0.00, 0.01, 0.00, 0.00, 0.00,
				     0.00, 0.01, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00 };

TEST(budget_idle_rises_to_ceiling)
{
	struct coredam_config c;
	struct coredam_budget_params p;
	struct coredam_budget b;
	uint64_t drained = 0;

	adaptive_cfg(&c);
	coredam_budget_params_from_config(&c, 0, &p);
	CHECK_EQ_INT(p.ceiling_bps, 30000000);
	CHECK_EQ_INT(p.step_bps, 5000000);
	coredam_budget_init(&p, &b);
	CHECK_EQ_INT(b.wbps, 10000000);
	CHECK_EQ_INT(b.concurrency, 1);
	for (size_t i = 0; i < ELEMENTSOF(trace_idle); i++) {
		struct coredam_pressure_sample s = { .foreground = trace_idle[i] };

		coredam_budget_step(&p, &b, &s, &b);
		CHECK(b.wbps >= p.floor_bps && b.wbps <= p.ceiling_bps);
		drained += b.wbps;
	}
	CHECK_EQ_INT(b.wbps, 30000000);
	CHECK(b.concurrency > 1 && b.concurrency <= 4);
	/* the goal: on an idle disk, at least twice what the fixed floor drains */
	CHECK(drained >= 2 * 10000000ULL * ELEMENTSOF(trace_idle));
}

/* a storm: foreground suffers at once (35-60% stalled), then settles */
static const double trace_storm[] = { 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00, 0.00,
				      0.35, 0.60, 0.42, 0.18, 0.07, 0.04, 0.03, 0.03, 0.02, 0.02 };

TEST(budget_storm_backs_off_to_floor)
{
	struct coredam_config c;
	struct coredam_budget_params p;
	struct coredam_budget b;
	uint64_t peak = 0;

	adaptive_cfg(&c);
	coredam_budget_params_from_config(&c, 0, &p);
	coredam_budget_init(&p, &b);
	for (size_t i = 0; i < ELEMENTSOF(trace_storm); i++) {
		struct coredam_pressure_sample s = { .foreground = trace_storm[i] };

		coredam_budget_step(&p, &b, &s, &b);
		if (i == 9)
			peak = b.wbps;
		if (i == 12) {
			/* three pressured samples: halved three times, clamped at the floor */
			CHECK_EQ_INT(b.wbps, 10000000);
			CHECK_EQ_INT(b.concurrency, 1);
		}
		if (i == 13)
			CHECK_EQ_INT(b.wbps, 10000000); /* 18%: still above the target */
	}
	CHECK_EQ_INT(peak, 30000000);
	/* pressure gone: it climbs again, but not past the ceiling */
	CHECK(b.wbps > 10000000 && b.wbps <= 30000000);
}

TEST(budget_trigger_event_backs_off)
{
	struct coredam_config c;
	struct coredam_budget_params p;
	struct coredam_budget b = { .wbps = 30000000, .concurrency = 3 }, n;
	struct coredam_pressure_sample s = { .foreground = 0.0, .triggered = true };

	adaptive_cfg(&c);
	coredam_budget_params_from_config(&c, 0, &p);
	CHECK(coredam_budget_step(&p, &b, &s, &n));
	CHECK_EQ_INT(n.wbps, 15000000);
	CHECK_EQ_INT(n.concurrency, 2);
}

TEST(budget_out_of_range_state_clamped)
{
	struct coredam_config c;
	struct coredam_budget_params p;
	struct coredam_budget b = { .wbps = 0, .concurrency = 0 }, n;
	struct coredam_pressure_sample s = { .foreground = 0.12 };

	adaptive_cfg(&c);
	c.ceiling_bps = 40000000;
	coredam_budget_params_from_config(&c, 0, &p);
	coredam_budget_step(&p, &b, &s, &n); /* from fixed "unlimited" */
	CHECK(n.wbps <= 40000000 && n.wbps >= 10000000);
	CHECK(n.concurrency >= 1 && n.concurrency <= 4);
}

TEST(budget_lifts_when_idle_and_drops_back_on_pressure)
{
	struct coredam_config c;
	struct coredam_budget_params p;
	struct coredam_budget b, up, nb;
	struct coredam_pressure_sample idle = { .foreground = 0.0, .others_idle = true },
				       quiet = { .foreground = 0.0 },
				       busy = { .foreground = 0.5, .others_idle = true };
	size_t i;

	adaptive_cfg(&c);
	c.lift_when_idle = true;
	coredam_budget_params_from_config(&c, 0, &p);
	coredam_budget_init(&p, &b);
	/* a disk nobody else uses: no limit after hold_intervals, from the floor */
	for (i = 0; i < 40 && !b.lifted; i++)
		coredam_budget_step(&p, &b, &idle, &b);
	CHECK_EQ_INT(i, p.hold_intervals);
	CHECK(b.lifted);
	CHECK_EQ_INT(b.wbps, 0);
	CHECK_EQ_INT(b.concurrency, p.concurrency_ceiling);
	/* nothing more to raise, nothing changes */
	CHECK(!coredam_budget_step(&p, &b, &idle, &nb) && nb.lifted);
	/* somebody else's request, no pressure: the budget from before the lift */
	CHECK(coredam_budget_step(&p, &b, &quiet, &nb));
	CHECK(!nb.lifted);
	CHECK_EQ_INT(nb.wbps, p.floor_bps);
	CHECK_EQ_INT(nb.concurrency, p.concurrency_floor);

	/* quiet, but others use the disk (a probe's small writes): the ceiling is the top */
	coredam_budget_init(&p, &up);
	for (i = 0; i < 40; i++)
		coredam_budget_step(&p, &up, &quiet, &up);
	CHECK(!up.lifted);
	CHECK_EQ_INT(up.wbps, p.ceiling_bps);
	CHECK_EQ_INT(up.concurrency, p.concurrency_ceiling);
	/* from there, with the disk left to the dumps: lifted, and back */
	b = up;
	coredam_budget_step(&p, &b, &busy, &b);		/* one slot fewer first */
	for (i = 0; i < 40 && !b.lifted; i++)
		coredam_budget_step(&p, &b, &idle, &b);
	CHECK(b.lifted);
	CHECK(coredam_budget_step(&p, &b, &quiet, &nb));
	CHECK(!nb.lifted);
	CHECK_EQ_INT(nb.wbps, b.lifted_from_wbps);
	CHECK_EQ_INT(nb.concurrency, b.lifted_from_concurrency);
	/* pressure while lifted: below the budget from before, one slot fewer */
	CHECK(coredam_budget_step(&p, &b, &busy, &nb));
	CHECK(!nb.lifted);
	CHECK_EQ_INT(nb.wbps, MAX((uint64_t)(b.lifted_from_wbps * p.backoff), p.floor_bps));
	CHECK_EQ_INT(nb.concurrency, b.lifted_from_concurrency - 1);
	/* LiftWhenIdle= turned off while lifted: the budget from before, too */
	c.lift_when_idle = false;
	coredam_budget_params_from_config(&c, 0, &p);
	coredam_budget_step(&p, &b, &idle, &nb);
	CHECK(!nb.lifted);
	CHECK(nb.wbps >= b.lifted_from_wbps && nb.wbps > 0);

	/* idle in every other sample only: never hold_intervals in a row */
	c.lift_when_idle = true;
	coredam_budget_params_from_config(&c, 0, &p);
	coredam_budget_init(&p, &b);
	for (i = 0; i < 40; i++)
		coredam_budget_step(&p, &b, i % 2 ? &idle : &quiet, &b);
	CHECK(!b.lifted);

	/* without LiftWhenIdle= the ceiling stays the top */
	c.lift_when_idle = false;
	coredam_budget_params_from_config(&c, 0, &p);
	coredam_budget_init(&p, &b);
	for (i = 0; i < 40; i++)
		coredam_budget_step(&p, &b, &idle, &b);
	CHECK(!b.lifted);
	CHECK_EQ_INT(b.wbps, p.ceiling_bps);
}

TEST(budget_busy_disk_caps_at_ceiling_when_busy)
{
	struct coredam_config c;
	struct coredam_budget_params p;
	struct coredam_budget b, nb;
	struct coredam_pressure_sample idle = { .foreground = 0.0, .others_idle = true },
				       unknown = { .foreground = 0.0 },
				       busy = { .foreground = 0.0, .others_busy = true },
				       stalled = { .foreground = 0.5, .others_busy = true };
	size_t i;

	adaptive_cfg(&c);
	coredam_budget_params_from_config(&c, 0, &p);
	/* auto: the floor, within floor..ceiling whatever it is set to */
	CHECK_EQ_INT(p.busy_ceiling_bps, p.floor_bps);
	c.busy_ceiling_bps = 50000000;
	coredam_budget_params_from_config(&c, 0, &p);
	CHECK_EQ_INT(p.busy_ceiling_bps, p.ceiling_bps);
	c.busy_ceiling_bps = 20000000;
	coredam_budget_params_from_config(&c, 0, &p);
	CHECK_EQ_INT(p.busy_ceiling_bps, 20000000);

	/* quiet, but others make requests: it climbs to CeilingWhenBusy= and no higher */
	coredam_budget_init(&p, &b);
	for (i = 0; i < 40; i++)
		coredam_budget_step(&p, &b, &busy, &b);
	CHECK(!b.lifted);
	CHECK_EQ_INT(b.wbps, 20000000);
	CHECK_EQ_INT(b.concurrency, p.concurrency_ceiling);
	/* nobody can tell: the ceiling is the top, as before */
	for (i = 0; i < 40; i++)
		coredam_budget_step(&p, &b, &unknown, &b);
	CHECK_EQ_INT(b.wbps, p.ceiling_bps);
	/* the first interval with requests brings it down at once, without pressure */
	CHECK(coredam_budget_step(&p, &b, &busy, &nb));
	CHECK_EQ_INT(nb.wbps, 20000000);
	CHECK_EQ_INT(nb.concurrency, b.concurrency);
	/* pressure on top: below it, as ever */
	b = nb;
	CHECK(coredam_budget_step(&p, &b, &stalled, &nb));
	CHECK_EQ_INT(nb.wbps, MAX((uint64_t)(20000000 * p.backoff), p.floor_bps));

	/* lifted, then a request: the budget from before, within CeilingWhenBusy= */
	b = nb;
	b.wbps = p.ceiling_bps;
	for (i = 0; i < 40 && !b.lifted; i++)
		coredam_budget_step(&p, &b, &idle, &b);
	CHECK(b.lifted);
	CHECK_EQ_INT(b.lifted_from_wbps, p.ceiling_bps);
	CHECK(coredam_budget_step(&p, &b, &busy, &nb));
	CHECK(!nb.lifted);
	CHECK_EQ_INT(nb.wbps, 20000000);

	/* the default: a busy disk holds the budget at the floor */
	c.busy_ceiling_bps = 0;
	coredam_budget_params_from_config(&c, 0, &p);
	coredam_budget_init(&p, &b);
	for (i = 0; i < 40; i++)
		coredam_budget_step(&p, &b, &busy, &b);
	CHECK_EQ_INT(b.wbps, p.floor_bps);
}
