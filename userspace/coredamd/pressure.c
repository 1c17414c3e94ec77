// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Foreground I/O pressure. The dumpers' own stalls must not count as
 * foreground pressure (a throttled dumper is stalled most of the time), so
 * by default ("auto") the agent watches the io.pressure of every top-level
 * cgroup except the one holding the dump cgroup; "system" watches
 * /proc/pressure/io (which includes the dumpers); a list names the
 * cgroups to watch.
 */
#include <fcntl.h>
#include <inttypes.h>

#include "agent.h"
#include "log.h"
#include "psi.h"
#include "util.h"

static void add_source(struct agent *a, const char *path)
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
	char path[PATH_MAX], list[sizeof(a->cfg.pressure_cgroups)], *tok, *save = NULL;

	a->n_psi = 0;
	if (strcmp(a->cfg.pressure_cgroups, "system") == 0) {
		snprintf(path, sizeof(path), "%s/pressure/io", a->roots.proc);
		add_source(a, path);
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
			if (xsnprintf(path, sizeof(path), "%s/%s/io.pressure", a->roots.cgroup, de->d_name) < 0)
				continue;
			add_source(a, path);
		}
		if (a->n_psi == 0) {
			snprintf(path, sizeof(path), "%s/pressure/io", a->roots.proc);
			add_source(a, path);
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
			add_source(a, path);
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

double pressure_sample(struct agent *a, uint64_t now)
{
	uint64_t elapsed = a->last_tick_usec ? now - a->last_tick_usec : 0;
	double worst = 0.0;

	for (size_t i = 0; i < a->n_psi; i++) {
		struct psi_source *s = &a->psi[i];
		struct coredam_psi p;

		if (coredam_psi_read(AT_FDCWD, s->path, &p) < 0)
			continue;
		if (s->have_total && elapsed)
			worst = MAX(worst, coredam_psi_fraction(s->last_total, p.some_total, elapsed));
		s->last_total = p.some_total;
		s->have_total = true;
	}
	return worst;
}
