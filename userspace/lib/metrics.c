// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>

#include "metrics.h"
#include "macro.h"
#include "fileio.h"
#include "string-util.h"
#include "path-util.h"

static void metric(struct strbuf *w, const char *name, const char *type, const char *help, double v)
{
	strbuf_printf(w, "# HELP coredam_%s %s\n# TYPE coredam_%s %s\ncoredam_%s %.17g\n", name, help, name, type,
		      name, v);
}

static void metric_u(struct strbuf *w, const char *name, const char *type, const char *help, uint64_t v)
{
	strbuf_printf(w, "# HELP coredam_%s %s\n# TYPE coredam_%s %s\ncoredam_%s %" PRIu64 "\n", name, help, name,
		      type, name, v);
}

/* The kernel's skip and failure reasons: one family each, a "reason" label a counter. */
static const struct reason {
	int stat;
	bool failed;
	const char *label;
} reasons[] = {
	{ COREDAM_STAT_SKIPPED_FULL, false, "full" },
	{ COREDAM_STAT_SKIPPED_TIMEOUT, false, "timeout" },
	{ COREDAM_STAT_SKIPPED_KILLED, false, "killed" },
	{ COREDAM_STAT_SKIPPED_PIPE_LIMIT, false, "pipe_limit" },
	{ COREDAM_STAT_FAILED_OPEN, true, "open" },
	{ COREDAM_STAT_FAILED_SETUP, true, "setup" },
	{ COREDAM_STAT_FAILED_LIMIT, true, "limit" },
	{ COREDAM_STAT_FAILED_KILLED, true, "killed" },
	{ COREDAM_STAT_FAILED_WRITE, true, "write" },
	{ COREDAM_STAT_FAILED_IO, true, "io" },
};

static bool by_reason(int stat)
{
	if (stat == COREDAM_STAT_FAILED)
		return true;	/* the sum of its reasons */
	for (size_t i = 0; i < ELEMENTSOF(reasons); i++)
		if (reasons[i].stat == stat)
			return true;
	return false;
}

static void reason_families(struct strbuf *w, const struct coredam_stats *st)
{
	uint64_t known = 0;

	strbuf_printf(w, "# HELP coredam_dumps_skipped_total Dumps skipped, by reason: full (core_max_waiting dumps "
		"waited), timeout (core_wait_timeout_ms), killed (while waiting), pipe_limit (admitted, over "
		"core_pipe_limit) (kernel).\n# TYPE coredam_dumps_skipped_total counter\n");
	for (size_t i = 0; i < ELEMENTSOF(reasons); i++)
		if (!reasons[i].failed)
			strbuf_printf(w, "coredam_dumps_skipped_total{reason=\"%s\"} %" PRIu64 "\n", reasons[i].label,
				      st->v[reasons[i].stat]);
	strbuf_printf(w, "# HELP coredam_dumps_failed_total Admitted dumps that ended without a complete core, by "
		"reason: open (the core file), setup (memory, helper, name), limit (RLIMIT_CORE), killed, write "
		"(disk full, helper gone), io (writeback), other (a reason this agent does not know) (kernel)."
		"\n# TYPE coredam_dumps_failed_total counter\n");
	for (size_t i = 0; i < ELEMENTSOF(reasons); i++)
		if (reasons[i].failed) {
			strbuf_printf(w, "coredam_dumps_failed_total{reason=\"%s\"} %" PRIu64 "\n", reasons[i].label,
				      st->v[reasons[i].stat]);
			known += st->v[reasons[i].stat];
		}
	strbuf_printf(w, "coredam_dumps_failed_total{reason=\"other\"} %" PRIu64 "\n",
		      st->v[COREDAM_STAT_FAILED] > known ? st->v[COREDAM_STAT_FAILED] - known : 0);
}

int coredam_metrics_format(const struct coredam_metrics *m, char *buf, size_t size)
{
	static const char *const help[COREDAM_STATS_N] = {
		[COREDAM_STAT_STARTED] = "Dumps that reached admission (kernel).",
		[COREDAM_STAT_ADMITTED] = "Dumps that got a slot (kernel).",
		[COREDAM_STAT_COMPLETED] = "Admitted dumps that wrote a complete core (kernel).",
		[COREDAM_STAT_FAILED] = "Admitted dumps that ended without a complete core, every reason (kernel).",
		[COREDAM_STAT_SKIPPED_FULL] = "Dumps skipped because the queue was full (kernel).",
		[COREDAM_STAT_SKIPPED_TIMEOUT] = "Dumps skipped because their wait timed out (kernel).",
		[COREDAM_STAT_SKIPPED_KILLED] = "Dumps killed while waiting (kernel).",
		[COREDAM_STAT_SKIPPED_PIPE_LIMIT] = "Admitted pipe dumps skipped by core_pipe_limit (kernel).",
		[COREDAM_STAT_ACTIVE] = "Dumps admitted and still writing (kernel).",
		[COREDAM_STAT_WAITING] = "Dumps waiting for a slot (kernel).",
		[COREDAM_STAT_OVERTIME] = "Dumps still writing after their slot's lease ended (kernel).",
		[COREDAM_STAT_LEASES_ENDED] = "Slots given back when their lease ended (kernel).",
		[COREDAM_STAT_UNCHARGED] =
			"Admitted dumps not charged to the dump cgroup, or whose pipe helper could not start in it (kernel).",
		[COREDAM_STAT_FAILED_OPEN] = "Failed dumps: the core file could not be created (kernel).",
		[COREDAM_STAT_FAILED_SETUP] = "Failed dumps: no memory, no helper or no name (kernel).",
		[COREDAM_STAT_FAILED_LIMIT] = "Failed dumps: cut short by RLIMIT_CORE (kernel).",
		[COREDAM_STAT_FAILED_KILLED] = "Failed dumps: cut short by a fatal signal (kernel).",
		[COREDAM_STAT_FAILED_WRITE] = "Failed dumps: a write failed, e.g. disk full or helper gone (kernel).",
		[COREDAM_STAT_FAILED_IO] = "Failed dumps: writeback of the core failed (kernel).",
		[COREDAM_STAT_BYTES] = "Bytes of core written by admitted dumps (kernel).",
	};
	struct strbuf w = STRBUF_INIT(buf, size);

	strbuf_printf(&w, "# HELP coredam_build_info The agent's version (label), value 1.\n"
		 "# TYPE coredam_build_info gauge\ncoredam_build_info{version=\"%s\"} 1\n", COREDAM_VERSION);
	metric_u(&w, "kernel_support", "gauge", "1 if the kernel has every coredam knob.", m->kernel_full);
	/* one metric per kernel counter, named after it; skips and failures by reason */
	if (m->have_stats)
		reason_families(&w, &m->stats);
	for (int i = 0; m->have_stats && i < COREDAM_STATS_N; i++) {
		bool gauge = i == COREDAM_STAT_ACTIVE || i == COREDAM_STAT_WAITING || i == COREDAM_STAT_OVERTIME;
		char name[64];

		if (by_reason(i))
			continue;
		if (i == COREDAM_STAT_BYTES)
			snprintf(name, sizeof(name), "dump_bytes_total");
		else
			snprintf(name, sizeof(name), "dumps_%s%s", coredam_stat_names[i], gauge ? "" : "_total");
		metric_u(&w, name, gauge ? "gauge" : "counter", help[i], m->stats.v[i]);
	}
	if (m->have_pipe) {
		static const struct { int stat; const char *label; } pipe_skips[] = {
			{ COREDAM_PIPE_SKIPPED_RLIMIT, "rlimit" }, { COREDAM_PIPE_SKIPPED_ERROR, "error" },
			{ COREDAM_PIPE_SKIPPED_SPACE, "space" }, { COREDAM_PIPE_SKIPPED_REPEAT, "repeat" },
			{ COREDAM_PIPE_LOST_CONNECT, "connect" },
		};

		strbuf_printf(&w, "# HELP coredam_pipe_skipped_total Crashes coredam-pipe did not store before "
			"they queued, by reason: rlimit (RLIMIT_CORE disables dumping), error (destination or state "
			"directory unusable), space (below the free-space floor), repeat (a repeat of a crash "
			"signature whose cores were kept), connect (the kernel could not connect to coredamd's "
			"coredump socket, as its log says: lost).\n# TYPE coredam_pipe_skipped_total counter\n");
		for (size_t i = 0; i < ELEMENTSOF(pipe_skips); i++)
			strbuf_printf(&w, "coredam_pipe_skipped_total{reason=\"%s\"} %" PRIu64 "\n", pipe_skips[i].label,
				      m->pipe.v[pipe_skips[i].stat]);
		metric_u(&w, "pipe_truncated_total", "counter",
			 "Cores coredam-pipe cut at RLIMIT_CORE, a [Pipe] cap or the free-space floor.",
			 m->pipe.v[COREDAM_PIPE_TRUNCATED]);
		metric_u(&w, "pipe_removed_retention_total", "counter",
			 "Kept cores removed, oldest first, to keep within [Space] MaxUse= and KeepFree=.",
			 m->pipe.v[COREDAM_PIPE_REMOVED_RETENTION]);
		metric_u(&w, "pipe_read_bytes_total", "counter", "Core bytes coredam-pipe read from the kernel.",
			 m->pipe.v[COREDAM_PIPE_BYTES]);
	}
	strbuf_printf(&w, "# HELP coredam_mode Budget mode (label), value 1.\n# TYPE coredam_mode gauge\n"
		 "coredam_mode{mode=\"%s\"} 1\n", coredam_mode_str(m->mode));
	metric_u(&w, "write_bandwidth_bytes_per_second", "gauge",
		 "Write bandwidth allowed to the dump cgroup, 0 = unlimited.", m->budget.wbps);
	metric_u(&w, "concurrency", "gauge", "Dumps allowed to write at once, 0 = unlimited.",
		 m->budget.concurrency);
	metric_u(&w, "waiting_places", "gauge",
		 "Dumps allowed to wait for a slot (QueueCap=, cut by WaitingMemoryMax=), 0 = no cap.",
		 m->waiting_places);
	metric_u(&w, "dumper_memory_bytes", "gauge",
		 "Private memory (RssAnon) one dumper holds, the most among the current or last dumpers; "
		 "WaitingMemoryMax= divides by it.", m->pin_bytes);
	metric(&w, "foreground_io_pressure_ratio", "gauge",
	       "Foreground I/O stall fraction over the last interval.", m->foreground_pressure);
	metric_u(&w, "budget_changes_total", "counter", "Budget changes made by the agent.",
		 m->budget_changes);
	metric_u(&w, "slice_property_calls_total", "counter",
		 "Limits set on the dump cgroup's slice through systemd (SetUnitProperties calls).", m->unit_calls);
	metric_u(&w, "pressure_triggers_total", "counter", "PSI trigger events received.",
		 m->pressure_triggers);
	metric_u(&w, "agent_slow_loops_total", "counter",
		 "Busy stretches of the agent's loop of 250 ms or more (logged with event=slow-loop).", m->slow_loops);
	metric_u(&w, "space_below_floor", "gauge", "1 while the destination is below its free-space floor.",
		 m->space_below);
	metric_u(&w, "space_free_bytes", "gauge", "Free bytes at the destination.", m->free_bytes);
	metric_u(&w, "space_floor_bytes", "gauge", "Free-space floor of the destination.", m->floor_bytes);
	metric_u(&w, "space_low_episodes_total", "counter", "Times the destination fell below the floor.",
		 m->space_low_episodes);
	metric_u(&w, "incomplete_cores_marked_total", "counter",
		 "Incomplete cores renamed to *.incomplete.", m->incomplete_marked);
	metric_u(&w, "config_reloads_total", "counter", "Configuration reloads that succeeded.", m->reloads);
	metric_u(&w, "config_reload_failures_total", "counter",
		 "Configuration reloads refused (the last good configuration stayed).", m->reload_failures);
	return strbuf_done(&w);
}

int coredam_metrics_write(const char *path, const char *text)
{
	return write_file_atomic(path, text, strlen(text), 0644);
}
