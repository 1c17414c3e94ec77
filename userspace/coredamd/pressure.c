// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Foreground I/O pressure. The dumpers' own stalls must not count as
 * foreground pressure (a throttled dumper is stalled most of the time), so
 * by default ("auto") the agent watches the io.pressure of every top-level
 * cgroup except the one holding the dump cgroup; "system" watches
 * /proc/pressure/io (which includes the dumpers); a list names the
 * cgroups to watch.
 *
 * A dumping process stays in its own cgroup while the core is written, so
 * a watched cgroup may hold one. While it does, that cgroup's pressure and
 * its trigger are not counted; the agent watches, in its place, each
 * cgroup below it that holds no dumper and whose parent does (none when
 * the dumper is in the watched cgroup itself, as a service's processes
 * are: its other processes' stalls are then not seen until the dump ends).
 *
 * The same cgroups tell whether anybody else uses the disk: the requests
 * their io.stat counts on the dump devices. An interval in which none of
 * the counted ones made one leaves the disk to the dumps (LiftWhenIdle=).
 * /proc/pressure/io has no such count: with it the disk is never idle.
 */
#include <fcntl.h>
#include <inttypes.h>

#include "agent.h"
#include "cgroup.h"
#include "log.h"
#include "iostat.h"
#include "psi.h"
#include "macro.h"
#include "string-util.h"

static void add_source(struct agent *a, const char *path, const char *cgroup)
{
	struct psi_source *s;
	int r;

	if (a->n_psi >= MAX_PSI)
		return;
	if (access(path, R_OK) < 0)
		return;
	s = &a->psi[a->n_psi++];
	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(s->cgroup, sizeof(s->cgroup), "%s", cgroup);
	while (strlen(s->cgroup) > 1 && s->cgroup[strlen(s->cgroup) - 1] == '/')
		s->cgroup[strlen(s->cgroup) - 1] = '\0'; /* "/system.slice/" names /system.slice */
	s->trigger_fd = -1;
	if (a->cfg.mode != COREDAM_MODE_ADAPTIVE)
		return;
	r = coredam_psi_trigger_open(AT_FDCWD, path,
				     MAX((uint64_t)(a->cfg.pressure_target * a->cfg.pressure_window_usec), 1),
				     a->cfg.pressure_window_usec, &s->trigger_fd);
	if (r < 0)
		log_warning("PSI trigger on %s failed: %s; sampling it every interval instead", path, strerror(-r));
}

void pressure_setup(struct agent *a)
{
	char path[PATH_MAX], cg[PATH_MAX], list[sizeof(a->cfg.pressure_cgroups)], *tok, *save = NULL;

	a->n_psi = 0;
	a->n_watch = 0;
	if (strcmp(a->cfg.pressure_cgroups, "system") == 0) {
		snprintf(path, sizeof(path), "%s/pressure/io", a->roots.proc);
		add_source(a, path, "");
	} else if (strcmp(a->cfg.pressure_cgroups, "auto") == 0) {
		_cleanup_closedir_ DIR *d = opendir(a->roots.cgroup);
		const char *top = a->cfg.cgroup + strspn(a->cfg.cgroup, "/");
		size_t toplen = strcspn(top, "/");
		struct dirent *de;

		while (d && (de = readdir(d))) {
			if (de->d_name[0] == '.' || de->d_type != DT_DIR)
				continue;
			if (strlen(de->d_name) == toplen && strncmp(de->d_name, top, toplen) == 0)
				continue;
			if (xsnprintf(path, sizeof(path), "%s/%s/io.pressure", a->roots.cgroup, de->d_name) < 0 ||
			    xsnprintf(cg, sizeof(cg), "/%s", de->d_name) < 0)
				continue;
			add_source(a, path, cg);
		}
		if (a->n_psi == 0) {
			snprintf(path, sizeof(path), "%s/pressure/io", a->roots.proc);
			add_source(a, path, "");
			if (a->cfg.mode == COREDAM_MODE_ADAPTIVE)
				log_warning("no top-level cgroup besides the dump cgroup's: watching %s, which counts the dumpers' own stalls too",
					    path);
		}
	} else {
		snprintf(list, sizeof(list), "%s", a->cfg.pressure_cgroups);
		for (tok = strtok_r(list, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
			if (xsnprintf(path, sizeof(path), "%s%s/io.pressure", a->roots.cgroup, tok) < 0)
				continue;
			if (access(path, R_OK) < 0)
				log_warning("PressureCgroups=: %s: %m", path);
			add_source(a, path, tok);
		}
	}
	if (a->cfg.mode == COREDAM_MODE_ADAPTIVE) {
		for (size_t i = 0; i < a->n_psi; i++)
			log_info("watching foreground pressure %s%s", a->psi[i].path,
				 a->psi[i].trigger_fd >= 0 ? " (trigger armed)" : "");
		if (a->n_psi == 0)
			log_warning("no PSI source readable (kernel without CONFIG_PSI?): adaptive mode stays at the floor");
	}
}

void pressure_close(struct agent *a)
{
	for (size_t i = 0; i < a->n_psi; i++)
		if (a->psi[i].trigger_fd >= 0)
			close(a->psi[i].trigger_fd);
	a->n_psi = 0;
}

bool pressure_holds_dumper(const struct agent *a, const char *cgroup)
{
	if (!cgroup[0])
		return false;
	for (size_t i = 0; i < a->n_held; i++)
		if (coredam_cg_path_under(a->held[i], cgroup))
			return true;
	return false;
}

/* The stalled fraction of @s since its last reading; -1 without one. */
static double sample_one(struct psi_source *s, uint64_t elapsed)
{
	struct coredam_psi p;
	double f = -1.0;

	if (coredam_psi_read(AT_FDCWD, s->path, &p) < 0) {
		s->have_total = false;
		return f;
	}
	if (s->have_total && elapsed)
		f = coredam_psi_fraction(s->last_total, p.some_total, elapsed);
	s->last_total = p.some_total;
	s->have_total = true;
	return f;
}

/*
 * Whether @s made a request to the dump devices since its last reading:
 * 1 it made one, 0 it made none, -1 that cannot be told (no reading
 * before, no io.stat beside its io.pressure, no device known).
 */
static int sample_requests(const struct agent *a, struct psi_source *s)
{
	struct coredam_devnum devs[MAX_DEVS];
	static const char suffix[] = "/io.pressure";
	size_t len = strlen(s->path), n = 0;
	char path[PATH_MAX];
	uint64_t ios;
	int made;

	for (size_t i = 0; i < a->n_devs; i++)
		devs[n++] = (struct coredam_devnum){ a->devs[i].major, a->devs[i].minor };
	if (n == 0 || len < strlen(suffix) || strcmp(s->path + len - strlen(suffix), suffix) != 0 ||
	    xsnprintf(path, sizeof(path), "%.*s/io.stat", (int)(len - strlen(suffix)), s->path) < 0 ||
	    coredam_iostat_read_ios(AT_FDCWD, path, devs, n, &ios) < 0) {
		s->have_ios = false;
		return -1;
	}
	made = s->have_ios ? ios != s->last_ios : -1;
	s->last_ios = ios;
	s->have_ios = true;
	return made;
}

/* The cgroups to watch in place of the held source @s, added to @next. */
static void watch_below(struct agent *a, const struct psi_source *s, struct psi_source *next, size_t *n_next)
{
	static char paths[MAX_WATCH][PATH_MAX];
	const char *held[MAX_HELD];
	size_t n = 0;
	int r;

	for (size_t i = 0; i < a->n_held; i++)
		held[i] = a->held[i];
	r = coredam_cg_free_subtrees(a->cgroot_fd, s->cgroup, held, a->n_held, paths, MAX_WATCH - *n_next, &n);
	if (r == -E2BIG)
		log_debug("%s: more than %d cgroups beside its dumpers; watching the first", s->cgroup, MAX_WATCH);
	else if (r < 0)
		log_debug("%s: listing the cgroups beside its dumpers: %s", s->cgroup, strerror(-r));
	for (size_t i = 0; i < n; i++) {
		struct psi_source *w = &next[(*n_next)++];

		memset(w, 0, sizeof(*w));
		w->trigger_fd = -1;
		snprintf(w->cgroup, sizeof(w->cgroup), "%s", paths[i]);
		if (xsnprintf(w->path, sizeof(w->path), "%s%s/io.pressure", a->roots.cgroup, paths[i]) < 0)
			(*n_next)--;
	}
}

void pressure_set_held(struct psi_source *s, bool held)
{
	if (held != s->held)
		log_info("foreground pressure: %s %s event=pressure-source cgroup=%s held=%d", s->cgroup,
			 held ? "holds a dumper: not counted, the cgroups beside it are" : "holds no dumper: counted again",
			 s->cgroup, held);
	s->held = held;
}

/* Count one counted source's requests (sample_requests()) into @ret. */
static void add_requests(int made, struct coredam_pressure_sample *ret)
{
	ret->others_idle = ret->others_idle && made == 0;
	ret->others_busy = ret->others_busy || made == 1;
}

/*
 * Sample the counted sources since the last sample: the worst stalled
 * fraction among them, whether none of them made a request to the dump
 * devices, and whether one did. Leaves ret->triggered alone.
 */
void pressure_sample(struct agent *a, uint64_t now, struct coredam_pressure_sample *ret)
{
	static struct psi_source next[MAX_WATCH];
	uint64_t elapsed = a->last_tick_usec ? now - a->last_tick_usec : 0;
	size_t n_next = 0;

	ret->foreground = 0.0;
	ret->others_idle = a->n_psi > 0;
	ret->others_busy = false;
	for (size_t i = 0; i < a->n_psi; i++) {
		struct psi_source *s = &a->psi[i];
		bool held = pressure_holds_dumper(a, s->cgroup), was = s->held;
		double f;
		int made;

		agent_lap(a, "pressure: held");
		f = sample_one(s, elapsed);
		agent_lap(a, "pressure: PSI");
		made = sample_requests(a, s);
		agent_lap(a, "pressure: io.stat");
		pressure_set_held(s, held);
		/* an interval that had a dumper in it at either end is not counted */
		if (!held && !was) {
			ret->foreground = MAX(ret->foreground, f);
			add_requests(made, ret);
		}
		if (held)
			watch_below(a, s, next, &n_next);
		agent_lap(a, "pressure: watch");
	}
	for (size_t i = 0; i < n_next; i++) {
		struct psi_source *w = &next[i];

		for (size_t j = 0; j < a->n_watch; j++)
			if (strcmp(a->watch[j].cgroup, w->cgroup) == 0) {
				w->last_total = a->watch[j].last_total;
				w->have_total = a->watch[j].have_total;
				w->last_ios = a->watch[j].last_ios;
				w->have_ios = a->watch[j].have_ios;
				break;
			}
		ret->foreground = MAX(ret->foreground, sample_one(w, elapsed));
		agent_lap(a, "pressure: PSI");
		add_requests(sample_requests(a, w), ret);
		agent_lap(a, "pressure: io.stat");
	}
	memcpy(a->watch, next, n_next * sizeof(next[0]));
	a->n_watch = n_next;
}
