// SPDX-License-Identifier: LGPL-2.1-or-later
/* What status and watch show: the kernel, the cgroup, the agent, the dumps. */
#include <fcntl.h>
#include <time.h>

#include "control.h"
#include "ctl.h"
#include "log.h"
#include "macro.h"
#include "fileio.h"
#include "string-util.h"
#include "path-util.h"

const char *ctl_agent_get(const struct ctl_status *s, const char *key, char *buf, size_t size)
{
	size_t kl = strlen(key);

	for (const char *p = s->agent; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && p[kl] == '=') {
			size_t len = strcspn(p + kl + 1, "\n");

			if (len >= size)
				len = size - 1;
			memcpy(buf, p + kl + 1, len);
			buf[len] = '\0';
			return buf;
		}
	}
	return NULL;
}

static int collect(struct ctl *c, struct ctl_status *s, int rate_ms)
{
	char buf[PATH_MAX];
	int r, cgfd;

	memset(s, 0, sizeof(*s));
	r = coredam_kernel_probe(&c->roots, &s->kern);
	if (r < 0)
		return r;
	if (s->kern.core_dump_stats) {
		s->stats_error = coredam_stats_read(&c->roots, &s->stats);
		s->have_stats = s->stats_error == 0;
	}
	if (!s->kern.core_dump_stats && coredam_pipe_stats_read(c->roots.state, &s->pipe) == 0 &&
	    coredam_pipe_stats_as_kernel(c->roots.state, &s->stats) == 0)
		s->have_stats = s->stats_from_pipe = true;
	coredam_sysctl_read(&c->roots, "kernel.core_pattern", s->core_pattern, sizeof(s->core_pattern));
	if (s->kern.core_cgroup)
		coredam_sysctl_read(&c->roots, "kernel.core_cgroup", s->core_cgroup, sizeof(s->core_cgroup));

	r = coredam_ctl_call(c->socket, "STATUS", s->agent, sizeof(s->agent));
	s->agent_errno = r < 0 ? r : 0;
	if (r < 0) {
		snprintf(s->agent_error, sizeof(s->agent_error), "%s: %s", c->socket, strerror(-r));
		s->agent[0] = '\0';
	} else if (strncmp(s->agent, "OK\n", 3) != 0) {
		/* the agent answers "ERR permission denied" to a peer that is not root */
		s->agent_errno = strncmp(s->agent, "ERR permission denied", 21) == 0 ? -EACCES : -EPROTO;
		snprintf(s->agent_error, sizeof(s->agent_error), "%s: %.*s", c->socket,
			 (int)strcspn(s->agent, "\n"), s->agent);
		s->agent[0] = '\0';
	}
	if (!ctl_agent_get(s, "cgroup", s->cgroup, sizeof(s->cgroup)))
		snprintf(s->cgroup, sizeof(s->cgroup), "%s", s->core_cgroup[0] ? s->core_cgroup : c->cfg.cgroup);

	r = xsnprintf(buf, sizeof(buf), "%s%s", c->roots.cgroup, s->cgroup);
	if (r >= 0 && open_dir_at(AT_FDCWD, buf, &cgfd) == 0) {
		_cleanup_free_ char *io = NULL;

		if (read_file_at(cgfd, "io.max", sizeof(s->io_max) - 1, &io) >= 0)
			snprintf(s->io_max, sizeof(s->io_max), "%s", io);
		read_line_at(cgfd, "memory.high", s->memory_high, sizeof(s->memory_high));
		close(cgfd);
	}

	r = coredam_dumps_list(&c->roots, s->kern.core_cgroup && s->core_cgroup[0] ? s->core_cgroup : "", &s->dumps,
			       &s->n_dumps);
	if (r < 0)
		return r;
	s->rates = calloc(s->n_dumps ? s->n_dumps : 1, sizeof(double));
	if (!s->rates)
		return -ENOMEM;
	if (s->n_dumps && rate_ms > 0) {
		struct coredam_dump *again = NULL;
		size_t n2 = 0;
		struct timespec ts = { .tv_sec = rate_ms / 1000, .tv_nsec = (long)(rate_ms % 1000) * 1000000 };

		nanosleep(&ts, NULL);
		if (coredam_dumps_list(&c->roots, "", &again, &n2) == 0) {
			for (size_t i = 0; i < s->n_dumps; i++)
				for (size_t j = 0; j < n2; j++)
					if (again[j].pid == s->dumps[i].pid && again[j].write_bytes >= s->dumps[i].write_bytes) {
						s->rates[i] = (double)(again[j].write_bytes - s->dumps[i].write_bytes) * 1000.0 / rate_ms;
						s->dumps[i].write_bytes = again[j].write_bytes;
					}
			free(again);
		}
	}
	return 0;
}

int ctl_collect(struct ctl *c, struct ctl_status *s, int rate_ms)
{
	int r;

	r = collect(c, s, rate_ms);
	if (r < 0) {
		log_error("cannot read %s: %s", c->roots.proc, strerror(-r));
		ctl_status_free(s);
	}
	return r;
}

void ctl_status_free(struct ctl_status *s)
{
	free(s->dumps);
	free(s->rates);
	s->dumps = NULL;
	s->rates = NULL;
}
