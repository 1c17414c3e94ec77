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
#include "control.h"
#include "log.h"
#include "metrics.h"
#include "pipe-state.h"
#include "macro.h"
#include "log.h"
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

void track_dumps(struct agent *a)
{
	struct coredam_dump *v = NULL;
	uint64_t now = now_usec(CLOCK_MONOTONIC);
	size_t n = 0, ended = 0;
	uint32_t writing = 0, waiting = 0;
	struct coredam_stats st;
	bool have_st = a->kern.core_dump_stats && coredam_stats_read(&a->roots, &st) == 0;
	const char *outcome = "ended";

	/* stock kernel: coredam-pipe's counters, in the same layout */
	a->stats_from_pipe = false;
	if (!a->kern.core_dump_stats && coredam_pipe_stats_as_kernel(a->roots.state, &st) == 0)
		have_st = a->stats_from_pipe = true;

	if (coredam_dumps_list(&a->roots, a->kern.core_cgroup ? a->kernel_path : "", &v, &n) < 0)
		return;
	for (size_t i = 0; i < a->n_dumps; i++)
		a->dumps[i].seen = false;
	a->n_held = 0;
	for (size_t i = 0; i < n; i++) {
		struct tracked_dump *t = find_dump(a, v[i].pid);
		struct coredam_dump_seen before = { 0 };

		if (v[i].cgroup[0])
			add_held(a, v[i].cgroup);

		if (t)
			before = (struct coredam_dump_seen){ true, t->state, t->syscw };
		v[i].state = coredam_dump_classify(&v[i], &before, have_st && a->kern.core_max_concurrency,
						   have_st ? st.v[COREDAM_STAT_WAITING] : 0);
		if (v[i].state == COREDAM_DUMP_WRITING || v[i].state == COREDAM_DUMP_DUMPING)
			writing++;
		else if (v[i].state == COREDAM_DUMP_WAITING)
			waiting++;
		if (!t) {
			if (a->n_dumps >= MAX_TRACKED)
				continue;
			t = &a->dumps[a->n_dumps++];
			memset(t, 0, sizeof(*t));
			t->pid = v[i].pid;
			t->state = v[i].state;
			t->first_usec = now;
			/* the crashed process chose these: not a newline, not a space, not "outcome=" of its own */
			coredam_dump_name(&v[i], COREDAM_ESCAPE_WORD, t->exe, sizeof(t->exe));
			log_info("dump started event=dump-start pid=%d exe=%s state=%s", t->pid, t->exe,
				 coredam_dump_state_str(t->state));
			if (t->state != COREDAM_DUMP_WAITING)
				t->admitted_usec = now;
		} else if (t->state == COREDAM_DUMP_WAITING && v[i].state == COREDAM_DUMP_WRITING) {
			t->admitted_usec = now;
			log_info("dump admitted event=dump-admitted pid=%d exe=%s waited_ms=%" PRIu64, t->pid, t->exe,
				 (now - t->first_usec) / 1000);
		}
		t->state = v[i].state;
		t->bytes = v[i].write_bytes;
		t->syscw = v[i].syscw;
		t->seen = true;
	}
	free(v);
	for (size_t i = 0; i < a->n_dumps; i++)
		ended += !a->dumps[i].seen;
	/* exactly one dump ended since the last look: the counters tell how */
	if (have_st && a->have_last_stats && ended == 1)
		outcome = dump_outcome(&st, &a->last_stats);
	for (size_t i = 0; i < a->n_dumps;) {
		struct tracked_dump *t = &a->dumps[i];

		if (t->seen) {
			i++;
			continue;
		}
		log_info("dump ended event=dump-end pid=%d exe=%s bytes=%" PRIu64 " duration_ms=%" PRIu64
			 " waited_ms=%" PRIu64 " outcome=%s",
			 t->pid, t->exe, t->bytes, (now - t->first_usec) / 1000,
			 t->admitted_usec ? (t->admitted_usec - t->first_usec) / 1000 : (now - t->first_usec) / 1000,
			 t->admitted_usec || t->state != COREDAM_DUMP_WAITING ? outcome : "skipped");
		a->dumps[i] = a->dumps[--a->n_dumps];
	}
	if (have_st) {
		a->last_stats = st;
		a->have_last_stats = true;
	}
	a->m.dumps_writing = writing;
	a->m.dumps_waiting = waiting;
}

/* Highest write rate seen on the first device: the base of Ceiling=auto. */
static void measure_disk(struct agent *a, uint64_t now)
{
	char rel[PATH_MAX], buf[512];
	uint64_t f[11] = { 0 };
	int r;

	if (a->n_devs == 0)
		return;
	r = xsnprintf(rel, sizeof(rel), "%s/dev/block/%u:%u/stat", a->roots.sys, a->devs[0].major,
		      a->devs[0].minor);
	if (r < 0 || read_line_at(AT_FDCWD, rel, buf, sizeof(buf)) < 0)
		return;
	if (sscanf(buf, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64,
		   &f[0], &f[1], &f[2], &f[3], &f[4], &f[5], &f[6]) != 7)
		return;
	if (a->disk_last_usec && now > a->disk_last_usec && f[6] >= a->disk_last_sectors) {
		uint64_t bps = (f[6] - a->disk_last_sectors) * 512 * 1000000 / (now - a->disk_last_usec);

		if (bps > a->peak_write_bps * 11 / 10 && a->cfg.ceiling_bps == 0 &&
		    bps / 4 * 3 > COREDAM_AUTO_CEILING_BPS) {
			a->peak_write_bps = bps;
			coredam_budget_params_from_config(&a->cfg, a->peak_write_bps, &a->params);
			log_info("measured %s at %" PRIu64 " B/s: auto ceiling now %" PRIu64 " B/s", a->devs[0].name,
				 bps, a->params.ceiling_bps);
		}
	}
	a->disk_last_sectors = f[6];
	a->disk_last_usec = now;
}

static void space_guard(struct agent *a)
{
	struct coredam_space sp;
	bool was = a->space_valid && a->space.below;
	int r;

	if (!a->dest_known)
		return;
	r = coredam_space_check(&a->cfg, a->dest, &sp);
	if (r < 0) {
		if (a->space_valid)
			log_warning("statvfs(%s): %s", a->dest, strerror(-r));
		a->space_valid = false;
		return;
	}
	a->space = sp;
	a->space_valid = true;
	a->m.free_bytes = sp.free_bytes;
	a->m.floor_bytes = sp.floor_bytes;
	a->m.space_below = sp.below;
	if (sp.below == was)
		return;
	if (sp.below) {
		a->m.space_low_episodes++;
		log_warning("destination %s below its free-space floor (%" PRIu64 " < %" PRIu64
			    " bytes) event=space-low: %s",
			    a->dest, sp.free_bytes, sp.floor_bytes,
			    a->kern.core_max_concurrency ? "admission squeezed (1 writing, none waiting); further dumps are skipped and counted"
							 : "this kernel cannot pause dumps: warning only");
	} else {
		log_info("destination %s back above its free-space floor event=space-ok", a->dest);
	}
	agent_apply_admission(a);
}

static void mark_incomplete(struct agent *a)
{
	uint64_t ended;
	int r;

	if (!a->cfg.mark_incomplete || !a->dest_known || !a->have_last_stats)
		return;
	/*
	 * Every dump that ended, not only those counted failed: the ELF
	 * writer reports success once its notes are collected, and a kernel
	 * without the series' "count a core cut short as failed" counts a
	 * core cut short by ENOSPC or a write error as completed.
	 */
	ended = a->last_stats.v[COREDAM_STAT_FAILED] + a->last_stats.v[COREDAM_STAT_COMPLETED];
	if (ended > a->ended_seen)
		a->incomplete_pending = true;
	a->ended_seen = ended;
	/* only once nothing is writing: a core being written is short by design */
	if (!a->incomplete_pending || a->last_stats.v[COREDAM_STAT_ACTIVE] != 0)
		return;
	a->incomplete_pending = false;
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

static void write_metrics(struct agent *a)
{
	char buf[16384];
	int r;

	a->m.mode = a->cfg.mode;
	a->m.budget = a->budget;
	a->m.have_stats = a->have_last_stats;
	a->m.stats = a->last_stats;
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

/*
 * The dump cgroup removed under the agent: create it again at
 * its path with the budget, and point the kernel at it, so that the next
 * dumps are paced again instead of going uncharged. Retried every 5 s while
 * that fails.
 */
static void check_cgroup(struct agent *a, uint64_t now)
{
	if (!a->cg_lost) {
		if (!agent_cgroup_gone(a))
			return;
		a->cg_lost = true;
		a->cg_retry_usec = 0;
		log_warning("cgroup %s was removed: creating it again event=cgroup-lost", a->cg_path);
	}
	if (now < a->cg_retry_usec)
		return;
	a->cg_retry_usec = now + 5000000;
	if (agent_setup_cgroup(a) < 0 || agent_apply_io(a) < 0 || agent_apply_core_cgroup(a) < 0)
		return;
	a->cg_lost = false;
	log_info("cgroup %s set up again, dumps go to %s event=cgroup-recreated", a->cg_path, a->kernel_path);
}

static void tick(struct agent *a)
{
	uint64_t now = now_usec(CLOCK_MONOTONIC);
	char pat[sizeof(a->core_pattern)];
	struct coredam_pressure_sample s;

	check_cgroup(a, now);
	if (coredam_sysctl_read(&a->roots, "kernel.core_pattern", pat, sizeof(pat)) == 0 &&
	    strcmp(pat, a->core_pattern) != 0) {
		log_info("core_pattern changed to \"%s\": resolving devices again event=core-pattern-changed", pat);
		agent_resolve_devices(a);
		agent_apply_io(a);
	} else if (!agent_io_in_force(a)) {
		log_info("io.max of %s was changed by someone else: writing the budget again event=io-max-restored",
			 a->cg_path);
		agent_apply_io(a);
	}
	track_dumps(a);
	measure_disk(a, now);
	s.foreground = pressure_sample(a, now);
	s.triggered = a->triggered;
	a->triggered = false;
	a->last_tick_usec = now;
	a->m.foreground_pressure = s.foreground;
	if (a->cfg.mode == COREDAM_MODE_ADAPTIVE) {
		struct coredam_budget nb;

		if (coredam_budget_step(&a->params, &a->budget, &s, &nb)) {
			char w[24];

			if (nb.lifted)
				snprintf(w, sizeof(w), "max");
			else
				snprintf(w, sizeof(w), "%" PRIu64, nb.wbps);
			log_info("budget event=budget write_bps=%s concurrency=%u foreground_pressure=%.3f%s", w,
				 nb.concurrency, s.foreground, s.triggered ? " trigger=1" : "");
			a->budget = nb;
			a->m.budget_changes++;
			agent_apply_io(a);
			agent_apply_admission(a);
		} else {
			a->budget = nb;
		}
	}
	space_guard(a);
	mark_incomplete(a);
	write_metrics(a);
	sd_notifyf(0, "STATUS=%s mode, %" PRIu64 " B/s, %u at once; %u writing, %u waiting%s",
		   coredam_mode_str(a->cfg.mode), a->budget.wbps, a->budget.concurrency, a->m.dumps_writing,
		   a->m.dumps_waiting, a->m.space_below ? "; destination below free-space floor" : "");
}

int status_format(struct agent *a, char *buf, size_t size)
{
	size_t o = 0;
	int r;

#define ADD(...)                                                        \
	do {                                                            \
		r = xsnprintf(buf + o, size - o, __VA_ARGS__);          \
		if (r < 0)                                              \
			return r;                                       \
		o += r;                                                 \
	} while (0)

	ADD("OK\nagent_pid=%d\nconfig=%s\nlast_reload=%s\nmode=%s\ncgroup=%s\n", (int)getpid(),
	    a->config_file, a->last_reload[0] ? a->last_reload : "none", coredam_mode_str(a->cfg.mode), a->cg_path);
	ADD("write_bps=%" PRIu64 "\nread_bps=%" PRIu64 "\nconcurrency=%u\nqueue_cap=%u\nwait_timeout_ms=%u\n",
	    a->budget.wbps, a->cfg.read_bps, a->adm.concurrency, a->adm.waiting, a->adm.timeout_ms);
	ADD("floor_bps=%" PRIu64 "\nceiling_bps=%" PRIu64 "\nforeground_pressure=%.4f\n", a->params.floor_bps,
	    a->params.ceiling_bps, a->m.foreground_pressure);
	ADD("core_pattern=%s\ndestination=%s\n", a->core_pattern, a->dest_known ? a->dest : "");
	ADD("pipe_helper=%s\nstats_source=%s\n", a->pipe_active ? "active" : "inactive",
	    a->kern.core_dump_stats ? "kernel" : a->stats_from_pipe ? "coredam-pipe" : "none");
	ADD("space_below=%d\nfree_bytes=%" PRIu64 "\nfloor_bytes=%" PRIu64 "\n", a->m.space_below,
	    a->m.free_bytes, a->m.floor_bytes);
	for (size_t i = 0; i < a->n_devs; i++)
		ADD("device=%u:%u %s %s\n", a->devs[i].major, a->devs[i].minor, a->devs[i].name,
		    coredam_dev_kind_str(a->devs[i].kind));
	ADD("budget_changes=%" PRIu64 "\nreloads=%" PRIu64 "\nreload_failures=%" PRIu64 "\n", a->m.budget_changes,
	    a->m.reloads, a->m.reload_failures);
#undef ADD
	return (int)o;
}

static void handle_client(struct agent *a)
{
	char resp[COREDAM_CTL_RESP_MAX], err[400];
	struct coredam_ctl_request q;
	_cleanup_close_ int fd = -1;
	uid_t uid = 0;
	int r;

	/* refused and malformed requests are answered there and never reach us */
	r = coredam_ctl_next_request(a->ctl_fd, 1000, &fd, &q, &uid);
	if (r == -EPERM)
		log_warning("control request from uid %u refused: root only", (unsigned)uid);
	if (r < 0)
		return;
	switch (q.cmd) {
	case COREDAM_CTL_PING:
		coredam_ctl_send(fd, "OK\n");
		break;
	case COREDAM_CTL_STATUS:
		if (status_format(a, resp, sizeof(resp)) < 0)
			coredam_ctl_send(fd, "ERR status too large\n");
		else
			coredam_ctl_send(fd, resp);
		break;
	case COREDAM_CTL_RELOAD:
		r = agent_reload(a);
		snprintf(resp, sizeof(resp), r < 0 ? "ERR %s\n" : "OK\n", a->last_reload);
		coredam_ctl_send(fd, resp);
		break;
	case COREDAM_CTL_SET:
		r = agent_set(a, q.name, q.value, err, sizeof(err));
		if (r < 0)
			snprintf(resp, sizeof(resp), "ERR %s\n", err);
		else
			snprintf(resp, sizeof(resp), "OK\nmode=%s\nwrite_bps=%" PRIu64 "\nconcurrency=%u\n",
				 coredam_mode_str(a->cfg.mode), a->budget.wbps, a->adm.concurrency);
		coredam_ctl_send(fd, resp);
		write_metrics(a);
		break;
	}
}

int agent_loop(struct agent *a)
{
	uint64_t next = now_usec(CLOCK_MONOTONIC);

	while (!a->quit) {
		struct pollfd p[3 + MAX_PSI];
		uint64_t now = now_usec(CLOCK_MONOTONIC);
		int timeout, n = 0, psi0;

		if (now >= next) {
			tick(a);
			next = now + a->cfg.interval_usec;
		} else if (a->n_dumps) {
			/* dumps in flight: follow them closely for the per-dump records */
			track_dumps(a);
		}
		now = now_usec(CLOCK_MONOTONIC);
		timeout = next > now ? (int)((next - now + 999) / 1000) : 0;
		if (a->n_dumps && timeout > 250)
			timeout = 250;

		p[n++] = (struct pollfd){ .fd = a->sig_fd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = a->ctl_fd, .events = POLLIN };
		p[n++] = (struct pollfd){ .fd = a->events_fd, .events = POLLPRI };
		psi0 = n;
		for (size_t i = 0; i < a->n_psi; i++)
			p[n++] = (struct pollfd){ .fd = a->psi[i].trigger_fd, .events = POLLPRI };

		if (poll(p, n, timeout) < 0) {
			if (errno == EINTR)
				continue;
			log_error("poll: %m");
			return -errno;
		}
		if (p[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(a->sig_fd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo == SIGHUP) {
					sd_notify(0, "RELOADING=1");
					log_info("SIGHUP: reloading %s and %s", a->config_file, a->dropin_dir);
					agent_reload(a);
					sd_notify(0, "READY=1");
				} else {
					log_info("signal %d: shutting down", (int)si.ssi_signo);
					a->quit = true;
				}
			}
		}
		if (p[1].revents & POLLIN)
			handle_client(a);
		if (p[2].revents & POLLPRI) {
			char ev[256];

			/* read it, or kernfs keeps reporting the same change and poll() spins */
			if (pread(a->events_fd, ev, sizeof(ev), 0) < 0)
				log_debug("reading cgroup.events: %m");
			track_dumps(a); /* the dump cgroup became (un)populated */
		}
		for (int i = psi0, looked = 0; i < n; i++) {
			struct psi_source *ps = &a->psi[i - psi0];

			if (p[i].revents & POLLERR) {
				log_warning("PSI trigger on %s stopped working; sampling only", ps->path);
				close(ps->trigger_fd);
				ps->trigger_fd = -1;
			} else if (p[i].revents & POLLPRI) {
				/*
				 * A source holding a dumper fires for the dumper's
				 * stalls; a dump may have begun since the last look.
				 */
				if (!ps->held && !looked++)
					track_dumps(a);
				if (!ps->held && pressure_holds_dumper(a, ps->cgroup))
					pressure_set_held(ps, true);
				if (!ps->held) {
					a->triggered = true;
					a->m.pressure_triggers++;
				}
			}
		}
		if (a->triggered && a->cfg.mode == COREDAM_MODE_ADAPTIVE)
			next = now_usec(CLOCK_MONOTONIC); /* act on a trigger at once */
	}
	return 0;
}
