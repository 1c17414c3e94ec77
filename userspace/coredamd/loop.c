// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredamd's event loop: signals, control socket, PSI triggers, the tick. */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "agent.h"
#include "sched-util.h"
#include "control.h"
#include "log.h"
#include "metrics.h"
#include "parse-util.h"
#include "pipe-state.h"
#include "status.h"
#include "macro.h"
#include "fileio.h"
#include "string-util.h"
#include "time-util.h"

static struct tracked_dump *find_dump(struct agent *a, pid_t pid)
{
	for (size_t i = 0; i < a->n_dumps; i++)
		if (a->dumps[i].pid == pid)
			return &a->dumps[i];
	return NULL;
}

/*
 * Remember the cgroup of a dumper or a helper: its stalls are the dumps'
 * own, not foreground work. When there are too many, their top-level
 * cgroups stand for them; more than that, none are set apart (their stalls
 * count, which holds the budget down rather than letting it run).
 */
static void add_held(struct agent *a, const char *cg)
{
	for (size_t i = 0; i < a->n_held; i++)
		if (strcmp(a->held[i], cg) == 0)
			return;
	if (a->n_held == MAX_HELD) {
		size_t n = 0;

		for (size_t i = 0; i < a->n_held; i++) {
			bool dup = false;

			a->held[i][strcspn(a->held[i] + 1, "/") + 1] = '\0';
			for (size_t j = 0; j < n && !dup; j++)
				dup = strcmp(a->held[j], a->held[i]) == 0;
			if (!dup)
				memmove(a->held[n++], a->held[i], sizeof(a->held[i]));
		}
		a->n_held = n;
		if (n == MAX_HELD) {
			log_debug("dumpers in more than %d top-level cgroups: counting all of their stalls", MAX_HELD);
			a->n_held = 0;
			return;
		}
		snprintf(a->held[a->n_held], sizeof(a->held[0]), "%.*s", (int)strcspn(cg + 1, "/") + 1, cg);
		for (size_t i = 0; i < a->n_held; i++)
			if (strcmp(a->held[i], a->held[a->n_held]) == 0)
				return;
		a->n_held++;
		return;
	}
	snprintf(a->held[a->n_held++], sizeof(a->held[0]), "%s", cg);
}

/*
 * How the one dump that ended between @before and @now ended: the name of
 * the kernel counter that moved (a failure by its reason, "failed_write"),
 * or "ended" when none did.
 */
static const char *dump_outcome(const struct coredam_stats *now, const struct coredam_stats *before)
{
	static const int outcomes[] = {
		COREDAM_STAT_COMPLETED,
		COREDAM_STAT_FAILED_OPEN, COREDAM_STAT_FAILED_SETUP, COREDAM_STAT_FAILED_LIMIT,
		COREDAM_STAT_FAILED_KILLED, COREDAM_STAT_FAILED_WRITE, COREDAM_STAT_FAILED_IO,
		COREDAM_STAT_FAILED,	/* a reason this agent does not know yet */
		COREDAM_STAT_SKIPPED_PIPE_LIMIT, COREDAM_STAT_SKIPPED_TIMEOUT, COREDAM_STAT_SKIPPED_KILLED,
	};

	for (size_t i = 0; i < ELEMENTSOF(outcomes); i++)
		if (now->v[outcomes[i]] > before->v[outcomes[i]])
			return coredam_stat_names[outcomes[i]];
	return "ended";
}

/*
 * A dump is background work: its CPU time must not come out of the
 * foreground's (DumpNice=). The crashed process, or the pipe helper,
 * writes the core in its own context.
 */
static void deprioritize(struct agent *a, const struct coredam_dump *d)
{
	int r;

	if (a->cfg.dump_nice == COREDAM_NICE_KEEP)
		return;
	r = coredam_sched_background(a->roots.proc, d->pid, d->state == COREDAM_DUMP_HELPER ? d->cgroup : NULL,
				     a->cfg.dump_nice);
	if (r < 0 && r != a->nice_err)
		log_warning("cannot make dump %d background work (SCHED_BATCH, nice %d): %s%s", (int)d->pid,
			    a->cfg.dump_nice, strerror(-r), r == -EPERM ? " (CAP_SYS_NICE missing?)" : "");
	if (r < 0)
		a->nice_err = r;
}

/* One dump seen in /proc: classify it, start tracking it, log its arrival and admission. */
static enum coredam_dump_state track_one(struct agent *a, struct coredam_dump *d, bool have_st,
					 const struct coredam_stats *st, uint64_t now)
{
	struct tracked_dump *t = find_dump(a, d->pid);
	struct coredam_dump_seen before = { 0 };

	if (d->cgroup[0])
		add_held(a, d->cgroup);
	if (t)
		before = (struct coredam_dump_seen){ true, t->state, t->syscw };
	d->state = coredam_dump_classify(d, &before, have_st && a->kern.core_max_concurrency,
					 have_st ? st->v[COREDAM_STAT_WAITING] : 0);
	if (!t) {
		if (a->n_dumps >= MAX_TRACKED)
			return d->state;
		t = &a->dumps[a->n_dumps++];
		memset(t, 0, sizeof(*t));
		t->pid = d->pid;
		t->state = d->state;
		t->first_usec = now;
		/* the crashed process chose these: not a newline, not a space, not "outcome=" of its own */
		coredam_dump_name(d, COREDAM_ESCAPE_WORD, t->exe, sizeof(t->exe));
		/*
		 * Served on the socket, the server logs each dump's start,
		 * admission and end itself: from /proc a task held before
		 * the ack looks like one dumping.
		 */
		if (!a->sock.active)
			log_info("dump started event=dump-start pid=%d exe=%s state=%s", t->pid, t->exe,
				 coredam_dump_state_str(t->state));
		/*
		 * The same server makes a dump background work as it admits
		 * it: until its answer a task needs the CPU to send its
		 * request, and once refused to exit and give back its memory.
		 */
		if (!a->sock.active)
			deprioritize(a, d);
		if (t->state != COREDAM_DUMP_WAITING)
			t->admitted_usec = now;
	} else if (t->state == COREDAM_DUMP_WAITING && d->state == COREDAM_DUMP_WRITING) {
		t->admitted_usec = now;
		if (!a->sock.active)
			log_info("dump admitted event=dump-admitted pid=%d exe=%s waited_ms=%" PRIu64, t->pid,
				 t->exe, (now - t->first_usec) / 1000);
	}
	t->state = d->state;
	t->bytes = d->write_bytes;
	t->syscw = d->syscw;
	t->seen = true;
	return d->state;
}

/* Log and forget the tracked dumps that were not seen this time. */
static void forget_ended(struct agent *a, bool have_st, const struct coredam_stats *st, uint64_t now)
{
	const char *outcome = "ended";
	size_t ended = 0;

	for (size_t i = 0; i < a->n_dumps; i++)
		ended += !a->dumps[i].seen;
	/* exactly one dump ended since the last look: the counters tell how */
	if (have_st && a->have_last_stats && ended == 1)
		outcome = dump_outcome(st, &a->last_stats);
	for (size_t i = 0; i < a->n_dumps;) {
		struct tracked_dump *t = &a->dumps[i];

		if (t->seen) {
			i++;
			continue;
		}
		if (!a->sock.active)
			log_info("dump ended event=dump-end pid=%d exe=%s bytes=%" PRIu64 " duration_ms=%" PRIu64
				 " waited_ms=%" PRIu64 " outcome=%s",
				 t->pid, t->exe, t->bytes, (now - t->first_usec) / 1000,
				 t->admitted_usec ? (t->admitted_usec - t->first_usec) / 1000
						  : (now - t->first_usec) / 1000,
				 t->admitted_usec || t->state != COREDAM_DUMP_WAITING ? outcome : "skipped");
		a->dumps[i] = a->dumps[--a->n_dumps];
	}
}

/*
 * Do the counters move whenever a dump starts, gets its slot or ends?
 * The kernel's do, unless a pipe helper dumps (its dump is counted only
 * once the helper runs); coredam-pipe's do not (the same, for every
 * dump); the socket server's do: it counts each dump when it accepts the
 * connection and again when it answers, before the dump writes a byte.
 */
static bool counters_exact(const struct agent *a)
{
	if (a->sock.active)
		return true;
	if (a->stats_from_pipe)
		return false;
	for (size_t i = 0; i < a->n_dumps; i++)
		if (a->dumps[i].state == COREDAM_DUMP_HELPER)
			return false;
	return true;
}

/* WaitingMemoryMax= counts waiters by what one holds: a changed estimate changes the places at once. */
static void track_pinned(struct agent *a, uint64_t pin, uint64_t now)
{
	uint64_t est = coredam_pin_estimate(a->pin_bytes, &a->pin_seen_usec, pin, now);

	if (est == a->pin_bytes)
		return;
	a->pin_bytes = est;
	a->m.pin_bytes = est;
	(void)agent_apply_admission(a);
}

/*
 * The dumps in progress: as far as coredam_dumps_look() says to look. The
 * full look (@full) at the tick and on the dump cgroup's events; between
 * ticks, at a dump's pace, a look that finds the dumps known as they were
 * reads only the writing ones' /proc/PID/io again, for their end records'
 * bytes.
 */
void track_dumps(struct agent *a, bool full)
{
	struct coredam_dump *v = NULL;
	uint64_t now = now_usec(CLOCK_MONOTONIC), pin = 0;
	uint32_t writing = 0, waiting = 0;
	size_t n = 0;
	struct coredam_stats st;
	bool have_st = a->kern.core_dump_stats && coredam_stats_read(&a->roots, &st) == 0;
	enum coredam_dumps_look look;

	/* stock kernel: coredam-pipe's counters, in the same layout */
	a->stats_from_pipe = false;
	if (!a->kern.core_dump_stats && coredam_pipe_stats_as_kernel(a->roots.state, &st) == 0)
		have_st = a->stats_from_pipe = true;

	/* served on the socket: the counters are the pipe helper's, the gauges the agent's own */
	if (have_st && a->sock.active) {
		st.v[COREDAM_STAT_ACTIVE] = a->sock.writing;
		st.v[COREDAM_STAT_WAITING] = a->sock.waiting;
	}

	look = coredam_dumps_look(a->have_last_stats ? &a->last_stats : NULL, have_st ? &st : NULL, a->n_dumps,
				  counters_exact(a), full);
	/* the server logs its dumps' ends, bytes and all: nothing to read for them */
	if (look == COREDAM_LOOK_KNOWN && a->sock.active)
		return;
	if (look == COREDAM_LOOK_KNOWN) {
		for (size_t i = 0; i < a->n_dumps; i++) {
			struct tracked_dump *t = &a->dumps[i];

			/* one gone meanwhile: the counters say so at the next look */
			if (t->state != COREDAM_DUMP_WAITING)
				(void)coredam_proc_io_read(&a->roots, t->pid, &t->bytes, &t->syscw);
		}
		return;
	}
	if (look == COREDAM_LOOK_ALL &&
	    (a->sock.active ? sock_dumps_list(a, &v, &n)
			    : coredam_dumps_list(&a->roots, a->kern.core_cgroup ? a->kernel_path : "", &v, &n)) < 0)
		return;
	for (size_t i = 0; i < a->n_dumps; i++)
		a->dumps[i].seen = false;
	a->n_held = 0;
	for (size_t i = 0; i < n; i++) {
		enum coredam_dump_state state;

		if (v[i].state != COREDAM_DUMP_HELPER)
			pin = MAX(pin, v[i].anon_bytes);
		state = track_one(a, &v[i], have_st, &st, now);

		if (state == COREDAM_DUMP_WRITING || state == COREDAM_DUMP_DUMPING)
			writing++;
		else if (state == COREDAM_DUMP_WAITING)
			waiting++;
	}
	free(v);
	forget_ended(a, have_st, &st, now);
	if (have_st) {
		a->last_stats = st;
		a->have_last_stats = true;
	}
	a->m.dumps_writing = writing;
	a->m.dumps_waiting = waiting;
	track_pinned(a, pin, now);
}

static void write_metrics(struct agent *a)
{
	char buf[16384];
	int r;

	a->m.mode = a->cfg.mode;
	a->m.budget = a->budget;
	a->m.unit_calls = a->unit.calls;
	a->m.have_stats = a->have_last_stats;
	a->m.stats = a->last_stats;
	a->m.have_pipe = a->stats_from_pipe && coredam_pipe_stats_read(a->roots.state, &a->m.pipe) == 0;
	r = coredam_metrics_format(&a->m, buf, sizeof(buf));
	if (r >= 0)
		r = coredam_metrics_write(a->cfg.metrics_file, buf);
	if (r < 0) {
		static int last_err;

		if (r != last_err)
			log_warning("cannot write metrics to %s: %s", a->cfg.metrics_file, strerror(-r));
		last_err = r;
	}
}

/* Sectors written to the first device, from /sys/dev/block/M:N/stat. */
static bool read_disk_sectors(struct agent *a, uint64_t *ret)
{
	char rel[PATH_MAX], buf[512];
	uint64_t f[7];

	if (a->n_devs == 0)
		return false;
	if (xsnprintf(rel, sizeof(rel), "%s/dev/block/%u:%u/stat", a->roots.sys, a->devs[0].major,
		      a->devs[0].minor) < 0 ||
	    read_line_at(AT_FDCWD, rel, buf, sizeof(buf)) < 0)
		return false;
	if (sscanf(buf, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
		   &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6]) != 7)
		return false;
	*ret = f[6];
	return true;
}

/*
 * Observe: everything the tick decides on. Following the dumps (and their
 * log lines) and sampling pressure happen here too.
 */
static void observe(struct agent *a, struct coredam_tick_in *in)
{
	char pat[sizeof(a->core_pattern)], new_dest[sizeof(a->dest)];
	const char *dest = a->dest;

	memset(in, 0, sizeof(*in));
	in->now_usec = now_usec(CLOCK_MONOTONIC);
	in->cgroup_gone = !a->tick.cg_lost && agent_cgroup_gone(a);
	in->pattern_changed = coredam_sysctl_read(&a->roots, "kernel.core_pattern", pat, sizeof(pat)) == 0 &&
			      strcmp(pat, a->core_pattern) != 0;
	agent_lap(a, "cgroup and core_pattern");
	/*
	 * A slice of systemd's: systemd writes io.max from the properties
	 * the agent set, on daemon-reload too; what it writes is not
	 * fought over.
	 */
	in->io_in_force = in->pattern_changed || a->unit.active || agent_io_in_force(a);
	agent_lap(a, "io.max read");
	track_dumps(a, true);
	agent_lap(a, "dumps");
	in->have_disk = read_disk_sectors(a, &in->disk_sectors);
	agent_lap(a, "disk stat");
	pressure_sample(a, in->now_usec, &in->pressure);
	in->pressure.triggered = a->triggered;
	a->triggered = false;
	a->last_tick_usec = in->now_usec;
	/*
	 * The free space where cores go from now on: after a new core_pattern,
	 * its directory's, so that the guard lets go (or holds) in this tick,
	 * not a tick after the first dumps there were skipped.
	 */
	if (in->pattern_changed) {
		struct coredam_core_pattern cp;

		in->dest_known = agent_pattern_dest(a, pat, &cp, new_dest, sizeof(new_dest));
		dest = new_dest;
	} else {
		in->dest_known = a->dest_known;
	}
	if (in->dest_known)
		in->space_err = coredam_space_check(&a->cfg, dest, &in->space);
	agent_lap(a, "free space");
	in->have_stats = a->have_last_stats;
	if (a->have_last_stats) {
		in->ended = a->last_stats.v[COREDAM_STAT_FAILED] + a->last_stats.v[COREDAM_STAT_COMPLETED];
		in->active = a->last_stats.v[COREDAM_STAT_ACTIVE];
	}
}

static void apply_cgroup(struct agent *a, const struct coredam_tick_out *out)
{
	if (out->cgroup_lost)
		log_warning("cgroup %s was removed: creating it again event=cgroup-lost", a->cg_path);
	if (!out->setup_cgroup)
		return;
	if (agent_setup_cgroup(a) < 0 || agent_apply_io(a) < 0 || agent_apply_core_cgroup(a) < 0)
		return;
	a->tick.cg_lost = false;
	log_info("cgroup %s set up again, dumps go to %s event=cgroup-recreated", a->cg_path, a->kernel_path);
}

static void apply_space(struct agent *a, const struct coredam_tick_in *in, const struct coredam_tick_out *out)
{
	if (out->space_error)
		log_warning("statvfs(%s): %s", a->dest, strerror(-in->space_err));
	if (in->dest_known && in->space_err == 0) {
		a->m.free_bytes = in->space.free_bytes;
		a->m.floor_bytes = in->space.floor_bytes;
		a->m.space_below = in->space.below;
	}
	if (out->space == COREDAM_SPACE_LOW) {
		a->m.space_low_episodes++;
		log_warning("destination %s below its free-space floor (%" PRIu64 " < %" PRIu64
			    " bytes), %s event=space-low",
			    a->dest, in->space.free_bytes, in->space.floor_bytes,
			    a->kern.core_max_concurrency ? "admission squeezed (1 writing, none waiting): further dumps are skipped and counted"
							 : "this kernel cannot pause dumps: warning only");
	} else if (out->space == COREDAM_SPACE_OK) {
		log_info("destination %s back above its free-space floor event=space-ok", a->dest);
	}
}

static void mark_incomplete(struct agent *a)
{
	int r;

	r = coredam_mark_incomplete(a->dest, a->incomplete_since);
	if (r > 0) {
		a->m.incomplete_marked += r;
		log_warning("renamed %d incomplete core(s) in %s to *.incomplete event=incomplete-marked", r,
			    a->dest);
	} else if (r < 0) {
		log_warning("checking %s for incomplete cores: %s", a->dest, strerror(-r));
	}
	a->incomplete_since = time(NULL) - 1;
}

/* Apply: do what coredam_tick_decide() said, and say so. */
static void apply(struct agent *a, const struct coredam_tick_in *in, const struct coredam_tick_out *out)
{
	char w[24];

	apply_cgroup(a, out);
	if (out->resolve_devices) {
		agent_resolve_devices(a);
		log_info("core_pattern changed to \"%s\": devices resolved again event=core-pattern-changed",
			 a->core_pattern);
		sock_pattern_check(a);
	}
	if (out->io_restored)
		log_info("io.max of %s was changed by someone else: writing the budget again event=io-max-restored",
			 a->cg_path);
	if (out->new_peak_bps) {
		char m[24], c[24];

		log_info("measured %s at %s: auto ceiling now %s", a->devs[0].name,
			 format_rate(m, sizeof(m), out->new_peak_bps), format_rate(c, sizeof(c), a->params.ceiling_bps));
	}
	a->m.foreground_pressure = in->pressure.foreground;
	if (out->budget_changed) {
		if (a->budget.lifted)
			snprintf(w, sizeof(w), "max");
		else
			snprintf(w, sizeof(w), "%" PRIu64, a->budget.wbps);
		log_info("budget event=budget write_bps=%s concurrency=%u foreground_pressure=%.3f%s%s", w,
			 a->budget.concurrency, in->pressure.foreground, in->pressure.triggered ? " trigger=1" : "",
			 in->pressure.others_busy ? " foreground_requests=1" : "");
		a->m.budget_changes++;
	}
	agent_lap(a, "tick");
	if (out->apply_io)
		(void)agent_apply_io(a);
	agent_lap(a, "io.max write");
	apply_space(a, in, out);
	if (out->apply_admission)
		(void)agent_apply_admission(a);
	if (out->mark_incomplete)
		mark_incomplete(a);
	agent_lap(a, "tick");
	write_metrics(a);
	agent_lap(a, "metrics");
	/* systemctl status shows it: for people, in the base the configuration reads rates in */
	sd_notifyf(0, "STATUS=%s mode, %s, %u at once; %u writing, %u waiting%s", coredam_mode_str(a->cfg.mode),
		   a->budget.wbps ? format_rate(w, sizeof(w), a->budget.wbps) : "unlimited", a->budget.concurrency,
		   a->m.dumps_writing, a->m.dumps_waiting, a->m.space_below ? "; destination below free-space floor" : "");
}

static void tick(struct agent *a)
{
	struct coredam_tick_in in;
	struct coredam_tick_out out;

	observe(a, &in);
	coredam_tick_decide(&a->cfg, &in, &a->tick, &a->params, &a->budget, &out);
	apply(a, &in, &out);
}

/* What the agent is set to: the first half of the STATUS answer. */
static void status_settings(const struct agent *a, struct coredam_status *st)
{
	st->agent_pid = (int)getpid();
	snprintf(st->config, sizeof(st->config), "%s", a->config_file);
	snprintf(st->last_reload, sizeof(st->last_reload), "%s", a->last_reload[0] ? a->last_reload : "none");
	snprintf(st->mode, sizeof(st->mode), "%s", coredam_mode_str(a->cfg.mode));
	snprintf(st->cgroup, sizeof(st->cgroup), "%s", a->cg_path);
	st->write_bps = a->budget.wbps;
	st->read_bps = a->cfg.read_bps;
	st->concurrency = a->adm.concurrency;
	st->queue_cap = a->adm.waiting;
	st->waiting_memory = coredam_share_bytes(&a->cfg.waiting_memory, a->mem_total);
	st->dumper_memory = a->pin_bytes;
	st->wait_timeout_ms = a->adm.timeout_ms;
	st->floor_bps = a->params.floor_bps;
	st->ceiling_bps = a->params.ceiling_bps;
	st->busy_ceiling_bps = a->params.busy_ceiling_bps;
}

/* What it sees: pressure, destination, space, devices, counts. */
static void status_state(const struct agent *a, struct coredam_status *st)
{
	st->foreground_pressure = a->m.foreground_pressure;
	snprintf(st->core_pattern, sizeof(st->core_pattern), "%s", a->core_pattern);
	snprintf(st->destination, sizeof(st->destination), "%s", a->dest_known ? a->dest : "");
	snprintf(st->pipe_helper, sizeof(st->pipe_helper), "%s", a->pipe_active ? "active" : "inactive");
	snprintf(st->stats_source, sizeof(st->stats_source), "%s",
		 a->kern.core_dump_stats ? "kernel" : a->sock.active ? "socket" : a->stats_from_pipe ? "coredam-pipe" : "none");
	st->space_below = a->m.space_below;
	st->free_bytes = a->m.free_bytes;
	st->floor_bytes = a->m.floor_bytes;
	for (size_t i = 0; i < a->n_devs && i < ELEMENTSOF(st->devices); i++) {
		st->devices[i].major = a->devs[i].major;
		st->devices[i].minor = a->devs[i].minor;
		snprintf(st->devices[i].name, sizeof(st->devices[i].name), "%s", a->devs[i].name);
		snprintf(st->devices[i].kind, sizeof(st->devices[i].kind), "%s",
			 coredam_dev_kind_str(a->devs[i].kind));
		st->n_devices++;
	}
	st->budget_changes = a->m.budget_changes;
	st->reloads = a->m.reloads;
	st->reload_failures = a->m.reload_failures;
	if (a->unit.active)
		snprintf(st->limits_through, sizeof(st->limits_through), "systemd %s", a->unit.name);
	else
		snprintf(st->limits_through, sizeof(st->limits_through), "cgroupfs");
	st->unit_calls = a->unit.calls;
}

/* The STATUS answer: every field of struct coredam_status, one line each. */
static int status_format(const struct agent *a, char *buf, size_t size)
{
	struct coredam_status st = { .have = COREDAM_STATUS_ALL };
	struct strbuf sb = STRBUF_INIT(buf, size);

	status_settings(a, &st);
	status_state(a, &st);
	coredam_status_format(&st, &sb);
	return strbuf_done(&sb);
}

static int ctl_status(void *userdata, char *buf, size_t size)
{
	int r;

	r = status_format(userdata, buf, size);
	if (r < 0) {
		(void)snprintf(buf, size, "status too large");
		return r;
	}
	return 0;
}

static int ctl_set(void *userdata, const char *name, const char *value, char *buf, size_t size)
{
	struct agent *a = userdata;
	struct coredam_error e = { 0 };
	int r;

	r = agent_set(a, name, value, &e);
	write_metrics(a);
	if (r < 0) {
		(void)coredam_error_str(&e, buf, size);
		return r;
	}
	(void)snprintf(buf, size, "mode=%s\nwrite_bps=%" PRIu64 "\nconcurrency=%u\n", coredam_mode_str(a->cfg.mode),
		       a->budget.wbps, a->adm.concurrency);
	return 0;
}

static int ctl_reload(void *userdata, char *buf, size_t size)
{
	struct agent *a = userdata;
	int r;

	(void)sd_notify(0, "RELOADING=1");
	log_info("reload requested on the control socket: reloading %s and its drop-ins", a->config_file);
	r = agent_reload(a);
	(void)sd_notify(0, "READY=1");
	if (r < 0)
		(void)snprintf(buf, size, "%s", a->last_reload);
	return r;
}

static const struct coredam_ctl_handlers ctl_handlers = {
	.status = ctl_status,
	.set = ctl_set,
	.reload = ctl_reload,
};

static void handle_client(struct agent *a)
{
	uid_t uid = 0;

	/* refused and malformed requests are answered there and never reach the handlers */
	if (coredam_ctl_serve(a->ctl_fd, 1000, &ctl_handlers, a, &uid) == -EPERM)
		log_warning("control request from uid %u refused: root only", (unsigned)uid);
}

static void handle_signal(struct agent *a)
{
	struct signalfd_siginfo si;

	if (read(a->sig_fd, &si, sizeof(si)) != sizeof(si))
		return;
	if (si.ssi_signo == SIGHUP) {
		(void)sd_notify(0, "RELOADING=1");
		log_info("SIGHUP: reloading %s and its drop-ins", a->config_file);
		(void)agent_reload(a);	/* it logs a failure and keeps the configuration it had */
		(void)sd_notify(0, "READY=1");
	} else {
		log_info("signal %d: shutting down", (int)si.ssi_signo);
		a->quit = true;
	}
}

/* The PSI triggers' events, @p[i] that of a->psi[i]. */
static void handle_psi(struct agent *a, const struct pollfd *p, size_t n)
{
	bool looked = false;

	for (size_t i = 0; i < n; i++) {
		struct psi_source *ps = &a->psi[i];

		if (p[i].revents & POLLERR) {
			log_warning("PSI trigger on %s stopped working; sampling only", ps->path);
			close(ps->trigger_fd);
			ps->trigger_fd = -1;
		} else if (p[i].revents & POLLPRI) {
			/*
			 * A source holding a dumper fires for the dumper's
			 * stalls; a dump may have begun since the last look.
			 */
			if (!ps->held && !looked) {
				track_dumps(a, false);
				looked = true;
			}
			if (!ps->held && pressure_holds_dumper(a, ps->cgroup))
				pressure_set_held(ps, true);
			if (!ps->held) {
				a->triggered = true;
				a->m.pressure_triggers++;
			}
		}
	}
}

/*
 * A busy stretch of the loop longer than this is logged with its laps: the
 * loop looks at dumps in flight every 250 ms, and while it is busy the
 * crashes that connect to the socket wait in its listen backlog.
 */
#define SLOW_STRETCH_USEC (250 * 1000)

static void stretch_end(struct agent *a)
{
	char buf[1024];

	if (coredam_laps_end(&a->laps, now_usec(CLOCK_MONOTONIC)) < SLOW_STRETCH_USEC)
		return;
	a->m.slow_loops++;
	if (coredam_laps_format(&a->laps, buf, sizeof(buf)) >= 0)
		log_info("the loop was busy for %s event=slow-loop", buf);
}

int agent_loop(struct agent *a)
{
	uint64_t next = now_usec(CLOCK_MONOTONIC), watchdog_usec = 0, ping = 0;

	/* WatchdogSec= of the unit: a loop that stops turning gets the agent restarted */
	if (sd_watchdog_enabled(0, &watchdog_usec) <= 0)
		watchdog_usec = 0;
	_cleanup_free_ struct pollfd *p = NULL;
	size_t p_size = 0;

	coredam_laps_start(&a->laps, next);
	while (!a->quit) {
		uint64_t now = now_usec(CLOCK_MONOTONIC), wake = UINT64_MAX;
		size_t want = 3 + MAX_PSI + sock_poll_max(a), n_sock;
		int timeout, n = 0, psi0, sock0, r;

		if (want > p_size) {
			struct pollfd *v = realloc(p, want * sizeof(*p));

			if (!v) {
				log_error("out of memory for poll()");
				return -ENOMEM;
			}
			p = v;
			p_size = want;
		}

		if (now >= next) {
			tick(a);
			next = now + a->cfg.interval_usec;
		} else if (a->n_dumps) {
			/* dumps in flight: follow them closely for the per-dump records */
			track_dumps(a, false);
			agent_lap(a, "dumps");
		}
		now = now_usec(CLOCK_MONOTONIC);
		if (watchdog_usec && now >= ping) {
			(void)sd_notify(0, "WATCHDOG=1");
			ping = now + MIN(watchdog_usec / 4, a->cfg.interval_usec);
		}
		timeout = next > now ? (int)((next - now + 999) / 1000) : 0;
		if (watchdog_usec)
			timeout = MIN(timeout, (int)((ping - now + 999) / 1000));
		if (a->n_dumps && timeout > 250)
			timeout = 250;

		p[n++] = (struct pollfd){ .fd = a->sig_fd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = a->ctl_fd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = a->events_fd, .events = POLLPRI };
		psi0 = n;
		for (size_t i = 0; i < a->n_psi; i++)
			p[n++] = (struct pollfd){ .fd = a->psi[i].trigger_fd, .events = POLLPRI };
		sock0 = n;
		n_sock = sock_poll_fill(a, p + sock0, &wake);
		n += (int)n_sock;
		if (wake != UINT64_MAX) {
			uint64_t t = now_usec(CLOCK_MONOTONIC);

			timeout = MIN(timeout, wake > t ? (int)MIN((wake - t + 999) / 1000, (uint64_t)INT32_MAX) : 0);
		}

		stretch_end(a);
		r = poll(p, (nfds_t)n, timeout) < 0 ? -errno : 0;
		/* the next stretch begins as poll() returns, interrupted or not */
		coredam_laps_start(&a->laps, now_usec(CLOCK_MONOTONIC));
		if (r == -EINTR)
			continue;
		if (r < 0)
			return log_error_errno(r, "poll: %m");
		if (p[0].revents & POLLIN)
			handle_signal(a);
		if (p[1].revents & POLLIN)
			handle_client(a);
		agent_lap(a, "signals and control");
		if (p[2].revents & POLLPRI) {
			char ev[256];

			/* read it, or kernfs keeps reporting the same change and poll() spins */
			if (pread(a->events_fd, ev, sizeof(ev), 0) < 0)
				log_debug("reading cgroup.events: %m");
			track_dumps(a, true); /* the dump cgroup became (un)populated */
			agent_lap(a, "dumps");
		}
		handle_psi(a, p + psi0, (size_t)(sock0 - psi0));
		agent_lap(a, "pressure trigger");
		sock_poll_handle(a, p + sock0, n_sock);
		if (a->triggered && a->cfg.mode == COREDAM_MODE_ADAPTIVE)
			next = now_usec(CLOCK_MONOTONIC); /* act on a trigger at once */
	}
	return 0;
}
