// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredamctl status [--json] */
#include <inttypes.h>
#include <math.h>

#include "ctl.h"
#include "escape.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"

/* @o, or NULL (and @o released) when building it failed */
static json_t *built(json_t *o, int r)
{
	if (r < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* "kernel": which of the kernel's coredump knobs there are */
static json_t *kernel_json(const struct coredam_kernel_support *k)
{
	const struct {
		const char *name;
		bool v;
	} knobs[] = {
		{ "supported", coredam_kernel_full(k) }, { "core_cgroup", k->core_cgroup },
		{ "core_max_concurrency", k->core_max_concurrency }, { "core_max_waiting", k->core_max_waiting },
		{ "core_wait_timeout_ms", k->core_wait_timeout_ms },
		{ "core_writeback_window", k->core_writeback_window }, { "core_dump_stats", k->core_dump_stats },
	};
	json_t *o = json_object();
	int r = o ? 0 : -1;

	for (size_t i = 0; i < ELEMENTSOF(knobs) && o; i++)
		r |= json_object_set_new(o, knobs[i].name, json_boolean(knobs[i].v));
	return built(o, r);
}

/* "agent": running, and what it said (numbers, then strings), or why it did not */
static json_t *agent_json(const struct ctl_status *s)
{
	static const enum coredam_status_field shown[] = {
		COREDAM_STATUS_AGENT_PID, COREDAM_STATUS_WRITE_BPS, COREDAM_STATUS_READ_BPS,
		COREDAM_STATUS_CONCURRENCY, COREDAM_STATUS_QUEUE_CAP, COREDAM_STATUS_WAIT_TIMEOUT_MS,
		COREDAM_STATUS_FLOOR_BPS, COREDAM_STATUS_CEILING_BPS, COREDAM_STATUS_BUSY_CEILING_BPS,
		COREDAM_STATUS_FOREGROUND_PRESSURE, COREDAM_STATUS_SPACE_BELOW, COREDAM_STATUS_FREE_BYTES,
		COREDAM_STATUS_FLOOR_BYTES, COREDAM_STATUS_BUDGET_CHANGES, COREDAM_STATUS_RELOADS,
		COREDAM_STATUS_RELOAD_FAILURES, COREDAM_STATUS_WAITING_MEMORY, COREDAM_STATUS_DUMPER_MEMORY,
		COREDAM_STATUS_UNIT_CALLS, COREDAM_STATUS_MODE, COREDAM_STATUS_CONFIG, COREDAM_STATUS_LIMITS_THROUGH,
		COREDAM_STATUS_LAST_RELOAD, COREDAM_STATUS_DESTINATION,
	};
	json_t *o = json_object();
	int r;

	if (!o)
		return NULL;
	r = json_object_set_new(o, "running", json_boolean(s->agent_running));
	if (!s->agent_running) {
		const char *why = s->agent_reach == COREDAM_CTL_NOT_RUNNING ? "not-running" :
				  s->agent_reach == COREDAM_CTL_DENIED	    ? "permission-denied" :
									      "unknown";

		r |= json_object_set_new(o, "reason", json_string(why));
		return built(o, r | json_object_set_new(o, "error", coredam_json_text(s->agent_error)));
	}
	for (size_t i = 0; i < ELEMENTSOF(shown); i++)
		if (coredam_status_has(&s->agent, shown[i]))
			r |= json_object_set_new(o, coredam_status_key(shown[i]),
						 coredam_status_json(&s->agent, shown[i]));
	return built(o, r);
}

/* the non-empty lines of @text, each a string */
static json_t *lines_json(const char *text)
{
	json_t *a = json_array();
	int r = a ? 0 : -1;

	for (const char *p = text; *p && a;) {
		size_t len = strcspn(p, "\n");
		_cleanup_free_ char *line = strndup(p, len);

		if (len)
			r |= json_array_append_new(a, line ? coredam_json_text(line) : NULL);
		p += len;
		if (*p)
			p++;
	}
	return built(a, r);
}

/* "counters": the kernel's or the pipe helper's, under the kernel's names; null when none */
static json_t *counters_json(const struct ctl_status *s)
{
	json_t *o;
	int r;

	if (!s->have_stats)
		return json_null();
	o = json_object();
	if (!o)
		return NULL;
	r = json_object_set_new(o, "source", json_string(s->stats_from_socket ? "socket" :
							 s->stats_from_pipe ? "coredam-pipe" : "kernel"));
	for (int i = 0; i < COREDAM_STATS_N; i++)
		r |= json_object_set_new(o, coredam_stat_names[i], coredam_json_u64(s->stats.v[i]));
	return built(o, r);
}

/* "pipe_helper": coredam-pipe's own counters; null when they are not the source */
static json_t *pipe_json(const struct ctl_status *s)
{
	json_t *o;
	int r = 0;

	if (!s->stats_from_pipe)
		return json_null();
	o = json_object();
	if (!o)
		return NULL;
	for (int i = 0; i < COREDAM_PIPE_STATS_N; i++) {
		if (i == COREDAM_PIPE_KMSG_SEQ)
			continue;	/* a position in the kernel log, not a count */
		r |= json_object_set_new(o, coredam_pipe_stat_names[i], coredam_json_u64(s->pipe.v[i]));
	}
	return built(o, r);
}

/* "repeats": coredam-pipe's crash signatures, most skipped first; null when unreadable */
static json_t *repeats_json(const struct ctl_status *s)
{
	json_t *a;
	int r = 0;

	if (!s->repeats)
		return json_null();
	a = json_array();
	for (size_t i = 0; i < s->repeats->n && a; i++) {
		const struct coredam_repeat_entry *e = &s->repeats->e[i];
		json_t *o = json_object();
		char hash[20];
		int ro = o ? 0 : -1;

		snprintf(hash, sizeof(hash), "%016" PRIx64, e->hash);
		if (o) {
			ro |= json_object_set_new(o, "signature", json_string(hash));
			ro |= json_object_set_new(o, "crash", coredam_json_text(e->label));
			ro |= json_object_set_new(o, "kept", coredam_json_u64(e->kept));
			ro |= json_object_set_new(o, "skipped", coredam_json_u64(e->skipped));
		}
		r |= json_array_append_new(a, built(o, ro));
	}
	return built(a, r);
}

/* "dumps": one object per dump in progress; the rate in whole bytes/s */
static json_t *dumps_json(const struct ctl_status *s)
{
	json_t *a = json_array();
	int r = a ? 0 : -1;

	for (size_t i = 0; i < s->n_dumps && a; i++) {
		const struct coredam_dump *d = &s->dumps[i];
		json_t *o = json_object();
		int ro = o ? 0 : -1;

		if (o) {
			ro |= json_object_set_new(o, "pid", json_integer(d->pid));
			ro |= json_object_set_new(o, "exe", coredam_json_text(d->exe[0] ? d->exe : d->comm));
			ro |= json_object_set_new(o, "state", json_string(coredam_dump_state_str(d->state)));
			ro |= json_object_set_new(o, "bytes", coredam_json_u64(d->write_bytes));
			ro |= json_object_set_new(o, "rate_bps", json_integer((json_int_t)nearbyint(s->rates[i])));
		}
		r |= json_array_append_new(a, built(o, ro));
	}
	return built(a, r);
}

/*
 * One JSON object: the keys, their nesting and their types are what scripts
 * read, and stay. Reals (the pressure) with 15 digits, so that the 4
 * decimals the agent sends read as they were sent.
 */
static int print_json(const struct ctl *c, struct ctl_status *s)
{
	json_auto_t *o = json_object();
	int r;

	if (!o)
		return -ENOMEM;
	r = json_object_set_new(o, "kernel", kernel_json(&s->kern));
	r |= json_object_set_new(o, "core_pattern", coredam_json_text(s->core_pattern));
	r |= json_object_set_new(o, "agent", agent_json(s));
	/* the line left out of the configuration, null when it loaded whole */
	r |= json_object_set_new(o, "config_error", c->cfg_ok ? json_null() : coredam_json_text(c->cfg_error));
	r |= json_object_set_new(o, "cgroup", coredam_json_text(s->cgroup));
	r |= json_object_set_new(o, "io_max", lines_json(s->io_max));
	r |= json_object_set_new(o, "memory_high", coredam_json_text(s->memory_high));
	r |= json_object_set_new(o, "counters", counters_json(s));
	r |= json_object_set_new(o, "pipe_helper", pipe_json(s));
	r |= json_object_set_new(o, "repeats", repeats_json(s));
	r |= json_object_set_new(o, "dumps", dumps_json(s));
	if (r < 0)
		return -ENOMEM;
	r = coredam_json_dumpf(o, JSON_INDENT(2) | JSON_REAL_PRECISION(15), stdout);
	if (r == 0 && putchar('\n') == EOF)
		r = -EIO;
	return r;
}

/* " (write 2, killed 1)": the reasons of the failed dumps that have any */
static void print_failed_reasons(const uint64_t *x)
{
	static const struct {
		int stat;
		const char *what;
	} reasons[] = {
		{ COREDAM_STAT_FAILED_OPEN, "open" },
		{ COREDAM_STAT_FAILED_SETUP, "setup" },
		{ COREDAM_STAT_FAILED_LIMIT, "RLIMIT_CORE" },
		{ COREDAM_STAT_FAILED_KILLED, "killed" },
		{ COREDAM_STAT_FAILED_WRITE, "write" },
		{ COREDAM_STAT_FAILED_IO, "writeback" },
	};
	const char *sep = " (";

	for (size_t i = 0; i < ELEMENTSOF(reasons); i++) {
		if (!x[reasons[i].stat])
			continue;
		printf("%s%s %" PRIu64, sep, reasons[i].what, x[reasons[i].stat]);
		sep = ", ";
	}
	if (sep[0] == ',')
		printf(")");
}

/* The agent's budget and pressure. */
static void print_agent_budget(struct ctl_status *s)
{
	const struct coredam_status *a = &s->agent;
	char v[32], b1[24], b2[24];

	printf("Mode:         %s\n", ctl_agent_field(s, COREDAM_STATUS_MODE, "?", v, sizeof(v)));
	printf("Budget:       write %s, ", a->write_bps ? format_rate(b1, sizeof(b1), a->write_bps) : "unlimited");
	printf("%s at once, queue cap %s, wait timeout %s ms\n",
	       ctl_agent_field(s, COREDAM_STATUS_CONCURRENCY, "?", v, sizeof(v)),
	       ctl_agent_field(s, COREDAM_STATUS_QUEUE_CAP, "?", b1, sizeof(b1)),
	       ctl_agent_field(s, COREDAM_STATUS_WAIT_TIMEOUT_MS, "?", b2, sizeof(b2)));
	if (coredam_status_has(a, COREDAM_STATUS_WAITING_MEMORY) && a->waiting_memory)
		printf("Waiters:      at most %s of memory held by waiting dumpers (WaitingMemoryMax=)%s%s%s\n",
		       format_size(b1, sizeof(b1), a->waiting_memory),
		       a->dumper_memory ? "; each holds up to " : "",
		       a->dumper_memory ? format_size(b2, sizeof(b2), a->dumper_memory) : "",
		       a->dumper_memory ? " (RssAnon)" : "");
	printf("Pressure:     foreground %s\n",
	       ctl_agent_field(s, COREDAM_STATUS_FOREGROUND_PRESSURE, "?", v, sizeof(v)));
}

/* What the agent says: its pid, mode, budget, pressure, destination, devices. */
static void print_agent(struct ctl_status *s)
{
	const struct coredam_status *a = &s->agent;
	char v[COREDAM_ESCAPE_SIZE(sizeof(a->core_pattern))];

	if (!s->agent_running) {
		/* "not running" only when nothing listens where it would */
		printf("Agent:        %s%s\n", s->agent_reach == COREDAM_CTL_NOT_RUNNING ? "" : "unknown: ",
		       s->agent_error);
		return;
	}
	printf("Agent:        running (pid %s)", ctl_agent_field(s, COREDAM_STATUS_AGENT_PID, "?", v, sizeof(v)));
	printf(", config %s", ctl_agent_field(s, COREDAM_STATUS_CONFIG, "?", v, sizeof(v)));
	if (coredam_status_has(a, COREDAM_STATUS_LAST_RELOAD) && strcmp(a->last_reload, "ok") != 0 &&
	    strcmp(a->last_reload, "none") != 0)
		printf("\n              last reload refused: %s",
		       ctl_agent_field(s, COREDAM_STATUS_LAST_RELOAD, "", v, sizeof(v)));
	printf("\n");
	print_agent_budget(s);
	printf("Destination:  %s", ctl_agent_field(s, COREDAM_STATUS_DESTINATION, "", v, sizeof(v)));
	if (coredam_status_has(a, COREDAM_STATUS_SPACE_BELOW) && a->space_below == 1)
		printf(" (BELOW FREE-SPACE FLOOR: new dumps skipped)");
	printf("\n");
	for (size_t i = 0; i < a->n_devices; i++) {
		char k[COREDAM_ESCAPE_SIZE(sizeof(a->devices[i].kind))];

		printf("Device:       %u:%u %s %s\n", a->devices[i].major, a->devices[i].minor,
		       coredam_escape(a->devices[i].name, COREDAM_ESCAPE_WORD, v, sizeof(v)),
		       coredam_escape(a->devices[i].kind, COREDAM_ESCAPE_WORD, k, sizeof(k)));
	}
}

/* The counters, the kernel's or the pipe helper's, and the dumps now. */
static void print_counters(struct ctl *c, struct ctl_status *s)
{
	char b1[16], b2[16];

	if (s->have_stats) {
		const uint64_t *x = s->stats.v;

		if (s->stats_from_socket)
			printf("Counters:     from coredamd's coredump socket (%s/pipe/stats; core_pattern @@)\n",
			       c->roots.state);
		else if (s->stats_from_pipe)
			printf("Counters:     from coredam-pipe (%s/pipe/stats; stock kernel)\n", c->roots.state);
		printf("%s started %" PRIu64 ", admitted %" PRIu64 ", completed %" PRIu64 ", failed %" PRIu64,
		       s->stats_from_pipe ? "             " : "Counters:    ",
		       x[COREDAM_STAT_STARTED], x[COREDAM_STAT_ADMITTED], x[COREDAM_STAT_COMPLETED], x[COREDAM_STAT_FAILED]);
		print_failed_reasons(x);
		printf("\n              skipped: full %" PRIu64 ", timeout %" PRIu64 ", killed %" PRIu64 ", pipe limit %" PRIu64
		       "; uncharged %" PRIu64 "; %s written\n",
		       x[COREDAM_STAT_SKIPPED_FULL], x[COREDAM_STAT_SKIPPED_TIMEOUT], x[COREDAM_STAT_SKIPPED_KILLED],
		       x[COREDAM_STAT_SKIPPED_PIPE_LIMIT], x[COREDAM_STAT_UNCHARGED],
		       format_size(b1, sizeof(b1), x[COREDAM_STAT_BYTES]));
		if (s->stats_from_pipe) {
			const uint64_t *p = s->pipe.v;

			printf("              %s: not stored: rlimit %" PRIu64 ", destination/state errors %" PRIu64
			       ", below the space floor %" PRIu64 ", repeats %" PRIu64 "; cut at RLIMIT_CORE or a cap %" PRIu64
			       "; %s read, %s on disk\n", s->stats_from_socket ? "server" : "helper",
			       p[COREDAM_PIPE_SKIPPED_RLIMIT], p[COREDAM_PIPE_SKIPPED_ERROR], p[COREDAM_PIPE_SKIPPED_SPACE],
			       p[COREDAM_PIPE_SKIPPED_REPEAT], p[COREDAM_PIPE_TRUNCATED],
			       format_size(b1, sizeof(b1), p[COREDAM_PIPE_BYTES]),
			       format_size(b2, sizeof(b2), p[COREDAM_PIPE_BYTES_DISK]));
			printf("              kept cores removed by retention ([Space] MaxUse=, KeepFree=): %" PRIu64 "\n",
			       p[COREDAM_PIPE_REMOVED_RETENTION]);
			if (s->stats_from_socket)
				printf("              lost before they connected (the kernel's log: backlog full, no one "
				       "listening): %" PRIu64 "\n", p[COREDAM_PIPE_LOST_CONNECT]);
		}
		printf("Now:          %" PRIu64 " writing, %" PRIu64 " waiting, %" PRIu64
		       " writing past their slot's lease (%" PRIu64 " leases ended)\n",
		       x[COREDAM_STAT_ACTIVE], x[COREDAM_STAT_WAITING], x[COREDAM_STAT_OVERTIME],
		       x[COREDAM_STAT_LEASES_ENDED]);
	} else if (s->stats_error == -EBADMSG) {
		printf("Counters:     unavailable (kernel.core_dump_stats is not the \"name value\" list this version reads)\n");
	} else if (s->stats_error < 0) {
		printf("Counters:     unavailable (kernel.core_dump_stats: %s)\n", strerror(-s->stats_error));
	} else {
		printf("Counters:     unavailable (no kernel.core_dump_stats, and coredam-pipe has not run)\n");
	}
}

/*
 * The crash signatures that had repeats skipped, most first, five at most:
 * "1 kept, 1187 skipped as repeats of /usr/sbin/apache2 SIGSEGV at ...".
 */
#define REPEATS_SHOWN 5
static void print_repeats(struct ctl_status *s)
{
	char e[COREDAM_ESCAPE_SIZE(COREDAM_REPEAT_LABEL_MAX)];
	size_t shown = 0, with = 0;

	if (!s->repeats) {
		if (s->repeats_error == -EACCES)
			printf("Repeats:      (root only)\n");
		return;
	}
	for (size_t i = 0; i < s->repeats->n; i++)
		with += s->repeats->e[i].skipped > 0;
	for (size_t i = 0; i < s->repeats->n && shown < REPEATS_SHOWN; i++) {
		const struct coredam_repeat_entry *r = &s->repeats->e[i];

		if (!r->skipped)
			continue;
		printf("%s%" PRIu64 " kept, %" PRIu64 " skipped as repeats of %s\n", shown ? "              " : "Repeats:      ",
		       r->kept, r->skipped, coredam_escape(r->label, 0, e, sizeof(e)));
		shown++;
	}
	if (with > shown)
		printf("              and %zu more crash signatures (coredamctl status --json)\n", with - shown);
}

/* The dumps in progress, one line each. */
static void print_dumps(struct ctl_status *s)
{
	char b1[16], b2[16], e[COREDAM_ESCAPE_SIZE(sizeof(s->core_pattern))];

	if (s->n_dumps) {
		printf("\n%8s  %-8s  %10s  %11s  %s\n", "PID", "STATE", "WRITTEN", "RATE", "EXECUTABLE");
		for (size_t i = 0; i < s->n_dumps; i++)
			printf("%8d  %-8s  %10s  %11s  %s\n", (int)s->dumps[i].pid,
			       coredam_dump_state_str(s->dumps[i].state),
			       format_size(b1, sizeof(b1), s->dumps[i].write_bytes),
			       format_rate(b2, sizeof(b2), (uint64_t)s->rates[i]),
			       coredam_dump_name(&s->dumps[i], 0, e, sizeof(e)));
	}
}

/* memory.high for people: bytes in IEC units as MemoryHigh= reads them ("256.0MiB"), or the file's word ("max"). */
static const char *memory_high_str(const struct ctl_status *s, char *buf, size_t size)
{
	uint64_t v;

	if (!s->memory_high[0])
		return "-";
	if (parse_u64(s->memory_high, &v) < 0)
		return s->memory_high;
	return format_size(buf, size, v);
}

static void print_human(struct ctl *c, struct ctl_status *s)
{
	char e[COREDAM_ESCAPE_SIZE(sizeof(s->core_pattern))], mh[24];

	printf("Kernel:       %s\n", coredam_kernel_full(&s->kern) ? "coredam support present"
				 : "stock (no core_cgroup/admission queue): limited to cgroup and io.max setup");
	printf("core_pattern: %s\n", coredam_escape(s->core_pattern, 0, e, sizeof(e)));
	print_agent(s);
	if (!c->cfg_ok)
		printf("Config:       %s\n", c->cfg_error);
	printf("Cgroup:       %s (memory.high %s)\n", s->cgroup, memory_high_str(s, mh, sizeof(mh)));
	if (s->agent_running && coredam_status_has(&s->agent, COREDAM_STATUS_LIMITS_THROUGH)) {
		char via[COREDAM_ESCAPE_SIZE(sizeof(s->agent.limits_through))];

		(void)coredam_escape(s->agent.limits_through, 0, via, sizeof(via));
		if (strcmp(s->agent.limits_through, "cgroupfs") == 0)
			printf("Limits set:   in cgroupfs\n");
		else
			printf("Limits set:   through %s (runtime properties, %" PRIu64 " calls)\n", via,
			       s->agent.unit_calls);
	}
	printf("io.max:       %s", s->io_max[0] ? "" : "(none)\n");
	for (const char *p = s->io_max; *p;) {
		size_t len = strcspn(p, "\n");

		if (len)
			printf("%s%.*s\n", p == s->io_max ? "" : "              ", (int)len, p);
		p += len;
		if (*p)
			p++;
	}
	print_counters(c, s);
	print_repeats(s);
	print_dumps(s);
}

int cmd_status(struct ctl *c, int argc, char **argv)
{
	struct ctl_status s;
	bool json = false;
	int r;

	r = ctl_flag_only("status", "json", 'j', argc, argv, &json);
	if (r >= 0)
		return r;
	r = 0;
	if (ctl_collect(c, &s, 300) < 0)
		return CTL_EXIT_FAIL;
	if (json)
		r = print_json(c, &s);
	else
		print_human(c, &s);
	ctl_status_free(&s);
	if (r < 0) {
		log_error("status --json: %s", strerror(-r));
		return CTL_EXIT_FAIL;
	}
	/* as systemctl status: 3 when the agent is not running, 4 when we may not ask it, 1 when there is no telling */
	return s.agent_running ? CTL_EXIT_OK : (int)s.agent_reach;
}
