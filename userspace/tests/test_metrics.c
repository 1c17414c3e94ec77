// SPDX-License-Identifier: LGPL-2.1-or-later
/* The Prometheus text file: every counter, its type and help, written atomically. */
#include <inttypes.h>
#include <stdlib.h>

#include "metrics.h"
#include "test.h"
#include "macro.h"

TEST(metrics_output)
{
	struct coredam_metrics m = { .kernel_full = true, .have_stats = true, .mode = COREDAM_MODE_ADAPTIVE,
				     .budget = { .wbps = 30000000, .concurrency = 2 },
				     .foreground_pressure = 0.25, .waiting_places = 5, .pin_bytes = 209715200 };
	char buf[16384], small[64];
	char *s;

	for (int i = 0; i < COREDAM_STATS_N; i++)
		m.stats.v[i] = 100 + i;
	m.stats.v[COREDAM_STAT_STARTED] = 3;
	m.stats.v[COREDAM_STAT_ACTIVE] = 1;
	m.stats.v[COREDAM_STAT_OVERTIME] = 13;
	m.stats.v[COREDAM_STAT_LEASES_ENDED] = 14;
	m.stats.v[COREDAM_STAT_SKIPPED_TIMEOUT] = 8;
	m.stats.v[COREDAM_STAT_UNCHARGED] = 11;
	m.stats.v[COREDAM_STAT_FAILED_WRITE] = 21;
	m.stats.v[COREDAM_STAT_BYTES] = 12;
	CHECK(coredam_metrics_format(&m, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "# TYPE coredam_dumps_started_total counter\ncoredam_dumps_started_total 3\n"));
	CHECK(strstr(buf, "# TYPE coredam_dumps_active gauge\ncoredam_dumps_active 1\n"));
	CHECK(strstr(buf, "# TYPE coredam_dumps_overtime gauge\ncoredam_dumps_overtime 13\n"));
	CHECK(strstr(buf, "coredam_dumps_leases_ended_total 14\n"));
	CHECK(strstr(buf, "# TYPE coredam_dumps_uncharged_total counter\ncoredam_dumps_uncharged_total 11\n"));
	CHECK(strstr(buf, "coredam_dump_bytes_total 12\n"));
	/* skips and failures: one family each, by reason; what no known reason covers is "other" */
	CHECK(strstr(buf, "# TYPE coredam_dumps_skipped_total counter\ncoredam_dumps_skipped_total{reason=\"full\"} 104\n"
			  "coredam_dumps_skipped_total{reason=\"timeout\"} 8\n"));
	CHECK(strstr(buf, "coredam_dumps_skipped_total{reason=\"pipe_limit\"} 107\n"));
	CHECK(strstr(buf, "coredam_dumps_failed_total{reason=\"write\"} 21\n"));
	/* failed 103 < open 113 + setup 114 + ...: no "other" below zero */
	CHECK(strstr(buf, "coredam_dumps_failed_total{reason=\"other\"} 0\n"));
	CHECK(!strstr(buf, "coredam_dumps_skipped_timeout_total") && !strstr(buf, "\ncoredam_dumps_failed_total "));
	CHECK(strstr(buf, "coredam_build_info{version=\"" COREDAM_VERSION "\"} 1\n"));
	/* every other kernel counter under its own name, with a help line */
	for (int i = 0; i < COREDAM_STATS_N; i++) {
		bool gauge = i == COREDAM_STAT_ACTIVE || i == COREDAM_STAT_WAITING || i == COREDAM_STAT_OVERTIME;
		char name[64], want[128];

		if (i == COREDAM_STAT_BYTES || i == COREDAM_STAT_FAILED || !strncmp(coredam_stat_names[i], "skipped_", 8) ||
		    !strncmp(coredam_stat_names[i], "failed_", 7))
			continue;
		snprintf(name, sizeof(name), "coredam_dumps_%s%s", coredam_stat_names[i], gauge ? "" : "_total");
		snprintf(want, sizeof(want), "\n%s %" PRIu64 "\n", name, m.stats.v[i]);
		CHECK(strstr(buf, want) != NULL);
		snprintf(want, sizeof(want), "# HELP %s ", name);
		CHECK(strstr(buf, want) != NULL);
	}
	CHECK(strstr(buf, "coredam_mode{mode=\"adaptive\"} 1\n"));
	CHECK(strstr(buf, "coredam_write_bandwidth_bytes_per_second 30000000\n"));
	CHECK(strstr(buf, "coredam_foreground_io_pressure_ratio 0.25\n"));
	CHECK(strstr(buf, "# TYPE coredam_waiting_places gauge\ncoredam_waiting_places 5\n"));
	CHECK(strstr(buf, "# TYPE coredam_dumper_memory_bytes gauge\ncoredam_dumper_memory_bytes 209715200\n"));
	CHECK(strstr(buf, "coredam_kernel_support 1\n"));
	CHECK_ERRNO(coredam_metrics_format(&m, small, sizeof(small)), -ENOBUFS);
	/* every sample line: name, space, number */
	for (char *l = buf; *l; l = strchr(l, '\n') + 1) {
		if (*l != '#')
			CHECK(strncmp(l, "coredam_", 8) == 0 && strchr(l, ' ') < strchr(l, '\n'));
	}
	/* an unknown reason (a newer kernel's): failed exceeds the known ones */
	for (int i = COREDAM_STAT_FAILED_OPEN; i <= COREDAM_STAT_FAILED_IO; i++)
		m.stats.v[i] = 1;
	m.stats.v[COREDAM_STAT_FAILED] = 9;
	CHECK(coredam_metrics_format(&m, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "coredam_dumps_failed_total{reason=\"other\"} 3\n"));
	mkdirs("run");
	CHECK_OK(coredam_metrics_write(tpath("run/metrics.prom"), buf));
	s = slurp("run/metrics.prom");
	CHECK(s && strcmp(s, buf) == 0);
	free(s);
	CHECK_ERRNO(coredam_metrics_write(tpath("nodir/metrics.prom"), buf), -ENOENT);
}

/* A stock kernel's coredam-pipe: what it skipped before the queue, by reason, besides the kernel's names. */
TEST(metrics_pipe_helper_counters)
{
	struct coredam_metrics m = { .have_stats = true };
	char buf[16384];

	CHECK(coredam_metrics_format(&m, buf, sizeof(buf)) > 0);
	CHECK(!strstr(buf, "coredam_pipe_"));
	m.have_pipe = true;
	m.pipe.v[COREDAM_PIPE_SKIPPED_RLIMIT] = 1;
	m.pipe.v[COREDAM_PIPE_SKIPPED_ERROR] = 2;
	m.pipe.v[COREDAM_PIPE_SKIPPED_SPACE] = 3;
	m.pipe.v[COREDAM_PIPE_SKIPPED_REPEAT] = 1187;
	m.pipe.v[COREDAM_PIPE_TRUNCATED] = 5;
	m.pipe.v[COREDAM_PIPE_BYTES] = 6;
	m.pipe.v[COREDAM_PIPE_REMOVED_RETENTION] = 7;
	CHECK(coredam_metrics_format(&m, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "# TYPE coredam_pipe_skipped_total counter\n"
			  "coredam_pipe_skipped_total{reason=\"rlimit\"} 1\n"
			  "coredam_pipe_skipped_total{reason=\"error\"} 2\n"
			  "coredam_pipe_skipped_total{reason=\"space\"} 3\n"
			  "coredam_pipe_skipped_total{reason=\"repeat\"} 1187\n"));
	CHECK(strstr(buf, "# TYPE coredam_pipe_truncated_total counter\ncoredam_pipe_truncated_total 5\n"));
	CHECK(strstr(buf, "coredam_pipe_read_bytes_total 6\n"));
	CHECK(strstr(buf, "# TYPE coredam_pipe_removed_retention_total counter\ncoredam_pipe_removed_retention_total 7\n"));
}
