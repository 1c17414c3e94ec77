// SPDX-License-Identifier: LGPL-2.1-or-later
/* What status and watch show: the kernel, the cgroup, the agent, the dumps. */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>

#include "control.h"
#include "ctl.h"
#include "log.h"
#include "macro.h"
#include "fileio.h"
#include "string-util.h"
#include "path-util.h"

/* Ask the agent for its STATUS; s->agent_reach and s->agent_error say why there is no answer. */
static void ask_agent(struct ctl *c, struct ctl_status *s)
{
	char answer[COREDAM_CTL_RESP_MAX];

	s->agent_reach = ctl_ask(c, "STATUS", answer, sizeof(answer), s->agent_error, sizeof(s->agent_error));
	if (s->agent_reach != COREDAM_CTL_REACHED)
		return;
	if (strncmp(answer, "OK\n", 3) != 0) {
		/* it runs, but would not say how */
		s->agent_reach = COREDAM_CTL_UNREACHABLE;
		snprintf(s->agent_error, sizeof(s->agent_error), "coredamd on %s answered: %.*s", c->socket,
			 (int)strcspn(answer, "\n"), answer);
		return;
	}
	coredam_status_parse(answer + 3, &s->agent);
	s->agent_running = true;
}

const char *ctl_agent_field(const struct ctl_status *s, enum coredam_status_field f, const char *none, char *buf,
			    size_t size)
{
	return coredam_status_value(&s->agent, f, buf, size) >= 0 ? buf : none;
}

static int by_skipped(const void *a, const void *b)
{
	const struct coredam_repeat_entry *x = a, *y = b;

	if (x->skipped != y->skipped)
		return x->skipped < y->skipped ? 1 : -1;
	return x->kept < y->kept ? 1 : x->kept > y->kept ? -1 : 0;
}

/* coredam-pipe's crash signatures (root's file), most skipped first */
static void read_repeats(struct ctl *c, struct ctl_status *s)
{
	s->repeats = calloc(1, sizeof(*s->repeats));
	if (!s->repeats) {
		s->repeats_error = -ENOMEM;
		return;
	}
	s->repeats_error = coredam_repeats_read(c->roots.state, s->repeats);
	if (s->repeats_error < 0) {
		free(s->repeats);
		s->repeats = NULL;
		return;
	}
	qsort(s->repeats->e, s->repeats->n, sizeof(s->repeats->e[0]), by_skipped);
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
	/* a socket core_pattern: coredamd serves it and counts in coredam-pipe's file */
	s->stats_from_socket = s->stats_from_pipe && s->core_pattern[0] == '@';
	read_repeats(c, s);
	if (s->kern.core_cgroup)
		coredam_sysctl_read(&c->roots, "kernel.core_cgroup", s->core_cgroup, sizeof(s->core_cgroup));

	ask_agent(c, s);
	if (coredam_status_has(&s->agent, COREDAM_STATUS_CGROUP))
		snprintf(s->cgroup, sizeof(s->cgroup), "%s", s->agent.cgroup);
	else
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
	free(s->repeats);
	s->dumps = NULL;
	s->rates = NULL;
	s->repeats = NULL;
}
