/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_METRICS_H
#define COREDAM_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "budget.h"
#include "pipe-state.h"
#include "sysctl.h"

struct coredam_metrics {
	bool kernel_full;		/* every knob of the patched kernel present */
	bool have_stats;
	struct coredam_stats stats;
	enum coredam_mode mode;
	struct coredam_budget budget;
	double foreground_pressure;	/* last sample, fraction */
	bool space_below;
	uint64_t free_bytes, floor_bytes;
	uint64_t budget_changes;
	uint64_t unit_calls;		/* SetUnitProperties calls: the slice's limits through systemd */
	uint64_t pressure_triggers;
	uint64_t reloads, reload_failures;
	uint64_t space_low_episodes;
	uint64_t incomplete_marked;
	uint64_t slow_loops;		/* busy stretches of the loop of 250 ms or more */
	uint32_t dumps_writing, dumps_waiting;
	uint32_t waiting_places;	/* core_max_waiting or the helper's/socket's queue cap; 0 = no cap */
	uint64_t pin_bytes;		/* what one dumper holds, as WaitingMemoryMax= counts it; 0 none seen */
	bool have_pipe;			/* stock kernel: coredam-pipe's own counters besides */
	struct coredam_pipe_stats pipe;
};

/* Prometheus text exposition format, version 0.0.4. */
int coredam_metrics_format(const struct coredam_metrics *m, char *buf, size_t size);
/* Write @text to @path atomically (temporary file + rename in the same directory). */
int coredam_metrics_write(const char *path, const char *text);

#endif
