// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredamctl watch: a live view, one progress line per dump. */
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <unistd.h>

#include "ctl.h"
#include "escape.h"
#include "macro.h"
#include "parse-util.h"

static void bar(char *buf, size_t width, double frac)
{
	size_t fill = (size_t)(frac * width);

	for (size_t i = 0; i < width; i++)
		buf[i] = i < fill ? '#' : '.';
	buf[width] = '\0';
}

int cmd_watch(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = { { "interval", required_argument, NULL, 'i' },
					      { "help", no_argument, NULL, 'h' }, {} };
	uint64_t interval = 1000000;
	bool tty = isatty(STDOUT_FILENO);
	int o;

	optind = 0;
	while ((o = getopt_long(argc, argv, "+i:h", opts, NULL)) >= 0) {
		if (o == 'i') {
			if (parse_duration(optarg, &interval) < 0 || interval < 100000)
				return ctl_usage_error("watch", "--interval=%s: expected a duration of at least 100ms",
						       optarg);
		} else {
			return ctl_option_exit("watch", o);
		}
	}
	if (optind < argc)
		return ctl_unexpected_arg("watch", argv[optind]);
	for (;;) {
		struct ctl_status s;
		char v[64], b1[16], b2[16], pb[41], e[COREDAM_ESCAPE_SIZE(sizeof(s.dumps[0].exe))];
		uint64_t largest = 1;

		/* the rate sample is the refresh interval */
		if (ctl_collect(c, &s, (int)(interval / 1000)) < 0)
			return CTL_EXIT_FAIL;
		if (tty)
			fputs("\033[H\033[2J", stdout);
		printf("coredam  mode %s  budget %s x %s  pressure %s\n",
		       ctl_agent_field(&s, COREDAM_STATUS_MODE,
				       s.agent_reach == COREDAM_CTL_NOT_RUNNING ? "(agent not running)" :
				       s.agent_reach == COREDAM_CTL_DENIED	 ? "(permission denied)" :
										   "(agent unknown)",
				       v, sizeof(v)),
		       s.agent.write_bps ? format_rate(b1, sizeof(b1), s.agent.write_bps) : "unlimited",
		       ctl_agent_field(&s, COREDAM_STATUS_CONCURRENCY, "?", b2, sizeof(b2)),
		       ctl_agent_field(&s, COREDAM_STATUS_FOREGROUND_PRESSURE, "-", pb, sizeof(pb)));
		if (!s.agent_running)
			printf("%s\n", s.agent_error);
		if (s.have_stats)
			printf("writing %" PRIu64 "  waiting %" PRIu64 "  completed %" PRIu64 "  failed %" PRIu64
			       "  skipped %" PRIu64 "\n",
			       s.stats.v[COREDAM_STAT_ACTIVE], s.stats.v[COREDAM_STAT_WAITING],
			       s.stats.v[COREDAM_STAT_COMPLETED], s.stats.v[COREDAM_STAT_FAILED],
			       s.stats.v[COREDAM_STAT_SKIPPED_FULL] + s.stats.v[COREDAM_STAT_SKIPPED_TIMEOUT] +
				       s.stats.v[COREDAM_STAT_SKIPPED_KILLED] + s.stats.v[COREDAM_STAT_SKIPPED_PIPE_LIMIT]);
		/* the bar is relative to the largest dump on screen: the final size is not known in advance */
		for (size_t i = 0; i < s.n_dumps; i++)
			largest = MAX(largest, s.dumps[i].write_bytes);
		for (size_t i = 0; i < s.n_dumps; i++) {
			bar(pb, 30, (double)s.dumps[i].write_bytes / (double)largest);
			printf("%7d %-8s [%s] %9s %11s %s\n", (int)s.dumps[i].pid,
			       coredam_dump_state_str(s.dumps[i].state), pb,
			       format_size(b1, sizeof(b1), s.dumps[i].write_bytes),
			       format_rate(b2, sizeof(b2), (uint64_t)s.rates[i]),
			       coredam_dump_name(&s.dumps[i], 0, e, sizeof(e)));
		}
		if (!s.n_dumps)
			printf("no dump in progress\n");
		if (!tty)
			printf("\n");
		fflush(stdout);
		if (!s.n_dumps)
			poll(NULL, 0, (int)(interval / 1000)); /* nothing to sample: wait one interval */
		ctl_status_free(&s);
	}
}
