// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sysctl.h"
#include "test.h"
#include "macro.h"

TEST(core_pattern_file)
{
	struct coredam_core_pattern p;

	CHECK_OK(coredam_core_pattern_parse("/var/crash/core.%e.%p", &p));
	CHECK(p.kind == COREDAM_CORE_FILE && p.dir_known);
	CHECK_STREQ(p.dir, "/var/crash");
	CHECK_OK(coredam_core_pattern_parse("/scratch/core.%p", &p));
	CHECK_STREQ(p.dir, "/scratch");
	CHECK_OK(coredam_core_pattern_parse("/core", &p));
	CHECK_STREQ(p.dir, "/");
	CHECK_OK(coredam_core_pattern_parse("/var/crash/%u/core.%p", &p));
	CHECK_STREQ(p.dir, "/var/crash");
	CHECK(strstr(p.note, "specifier") != NULL);
	CHECK_OK(coredam_core_pattern_parse("core", &p));
	CHECK(p.kind == COREDAM_CORE_FILE && !p.dir_known);
	CHECK(strstr(p.note, "working directory") != NULL);
}

TEST(core_pattern_pipe_socket)
{
	struct coredam_core_pattern p;

	CHECK_OK(coredam_core_pattern_parse("|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h", &p));
	CHECK(p.kind == COREDAM_CORE_PIPE && p.dir_known);
	CHECK_STREQ(p.dir, "/var/lib/systemd/coredump");
	CHECK_STREQ(p.helper, "/usr/lib/systemd/systemd-coredump");
	CHECK_OK(coredam_core_pattern_parse("|/usr/share/apport/apport -p%p -s%s", &p));
	CHECK_STREQ(p.dir, "/var/crash");
	CHECK_OK(coredam_core_pattern_parse("|/usr/sbin/coredam-pipe /scratch %p", &p));
	CHECK(p.dir_known);
	CHECK_STREQ(p.dir, "/scratch");
	CHECK_OK(coredam_core_pattern_parse("|/bin/mystery %p", &p));
	CHECK(!p.dir_known && strstr(p.note, "Destination=") != NULL);
	CHECK_OK(coredam_core_pattern_parse("@/run/coredump.socket", &p));
	CHECK(p.kind == COREDAM_CORE_SOCKET && !p.dir_known);
}

/*
 * A snapshot that adds up: of 20 started, 15 admitted, 2 waiting, 3
 * skipped; of the 15, 8 completed, 3 failed (open, killed, write), 1 over
 * core_pipe_limit, 2 active, 1 over time.
 */
static const char stats_text[] =
	"started 20\n"
	"admitted 15\n"
	"completed 8\n"
	"failed 3\n"
	"skipped_full 1\n"
	"skipped_timeout 1\n"
	"skipped_killed 1\n"
	"skipped_pipe_limit 1\n"
	"active 2\n"
	"waiting 2\n"
	"overtime 1\n"
	"leases_ended 4\n"
	"uncharged 1\n"
	"failed_open 1\n"
	"failed_setup 0\n"
	"failed_limit 0\n"
	"failed_killed 1\n"
	"failed_write 1\n"
	"failed_io 0\n"
	"bytes 123456789\n";

/* stats_text with the line of counter @name replaced by @line ("" drops it) */
static void stats_text_with(const char *name, const char *line, char *buf, size_t size)
{
	const char *p = strstr(stats_text, name), *eol = strchr(p, '\n') + 1;

	snprintf(buf, size, "%.*s%s%s", (int)(p - stats_text), stats_text, line, eol);
}

TEST(stats_parse)
{
	struct coredam_stats s;

	CHECK_OK(coredam_stats_parse(stats_text, &s));
	CHECK_EQ_INT(s.v[COREDAM_STAT_STARTED], 20);
	CHECK_EQ_INT(s.v[COREDAM_STAT_ACTIVE], 2);
	CHECK_EQ_INT(s.v[COREDAM_STAT_WAITING], 2);
	CHECK_EQ_INT(s.v[COREDAM_STAT_SKIPPED_PIPE_LIMIT], 1);
	CHECK_EQ_INT(s.v[COREDAM_STAT_UNCHARGED], 1);
	CHECK_EQ_INT(s.v[COREDAM_STAT_FAILED_KILLED], 1);
	CHECK_EQ_INT(s.v[COREDAM_STAT_LEASES_ENDED], 4);
	CHECK_EQ_INT(s.v[COREDAM_STAT_BYTES], 123456789);
	CHECK(coredam_stats_consistent(&s));
	/* the names are the kernel's, each at the start of a line */
	for (int i = 0; i < COREDAM_STATS_N; i++) {
		char line[64];

		snprintf(line, sizeof(line), "\n%s ", coredam_stat_names[i]);
		CHECK(strstr(stats_text, line + (i == 0)) != NULL);
	}
}

TEST(stats_parse_by_name)
{
	struct coredam_stats a, b;
	char buf[2048];

	CHECK_OK(coredam_stats_parse(stats_text, &a));
	/* a newer kernel's names, before, among and after ours, are ignored */
	snprintf(buf, sizeof(buf), "zz_first 7\n%.*sfuture_gauge 18446744073709551615\n%snext_counter 9\n",
		 (int)(strstr(stats_text, "active") - stats_text), stats_text, strstr(stats_text, "active"));
	CHECK_OK(coredam_stats_parse(buf, &b));
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	/* the order does not matter, nor a newline after the last line */
	CHECK_OK(coredam_stats_parse("bytes 123456789\nfailed_io 0\nfailed_write 1\nfailed_killed 1\n"
				     "failed_limit 0\nfailed_setup 0\nfailed_open 1\nuncharged 1\nleases_ended 4\n"
				     "overtime 1\nwaiting 2\nactive 2\nskipped_pipe_limit 1\nskipped_killed 1\n"
				     "skipped_timeout 1\nskipped_full 1\nfailed 3\ncompleted 8\nadmitted 15\nstarted 20",
				     &b));
	CHECK(memcmp(&a, &b, sizeof(a)) == 0);
	/* the largest value fits */
	stats_text_with("bytes", "bytes 18446744073709551615\n", buf, sizeof(buf));
	CHECK(coredam_stats_parse(buf, &b) == 0 && b.v[COREDAM_STAT_BYTES] == UINT64_MAX);
}

TEST(stats_parse_refuses)
{
	static const struct {
		const char *name, *line;
	} bad[] = {
		{ "failed_io", "" },				/* a name missing */
		{ "started", "" },
		{ "bytes", "" },
		{ "waiting", "waiting 2\nwaiting 2\n" },	/* a name twice */
		{ "started", "started x\n" },
		{ "started", "started\n" },
		{ "started", "started \n" },
		{ "started", "started  20\n" },
		{ "started", "started\t20\n" },
		{ "started", "started -1\n" },
		{ "started", "started +20\n" },
		{ "started", "started 20 \n" },
		{ "started", "started 20 21\n" },
		{ "started", "started 0x14\n" },
		{ "started", "Started 20\n" },
		{ "started", " started 20\n" },
		{ "started", "\nstarted 20\n" },		/* an empty line */
		{ "bytes", "bytes 18446744073709551616\n" },	/* 2^64 */
		{ "bytes", "bytes 123456789123456789123456789\n" },
		{ "active", "active 2\n7 8\n" },		/* an unknown line that is not "name value" */
		{ "active", "active 2\nfuture x\n" },
	};
	static const char *const garbage[] = {
		"",
		"\n",
		/* the first series' positional line */
		"0 0 3 3 3 0 0 0 0 0 0 4096 0 0\n",
		"started 20",
	};
	struct coredam_stats s, keep;
	char buf[2048];

	memset(&keep, 0x33, sizeof(keep));
	s = keep;
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		int r;

		stats_text_with(bad[i].name, bad[i].line, buf, sizeof(buf));
		r = coredam_stats_parse(buf, &s);
		if (r != -EBADMSG)
			fprintf(stderr, "  %s -> \"%s\": %d\n", bad[i].name, bad[i].line, r);
		CHECK_EQ_INT(r, -EBADMSG);
	}
	for (size_t i = 0; i < ELEMENTSOF(garbage); i++)
		CHECK_ERRNO(coredam_stats_parse(garbage[i], &s), -EBADMSG);
	CHECK(memcmp(&s, &keep, sizeof(s)) == 0);
}

TEST(stats_invariants)
{
	struct coredam_stats s, ok;

	CHECK_OK(coredam_stats_parse(stats_text, &ok));
	CHECK(coredam_stats_consistent(&ok));
	/* at rest: nothing active, waiting or over time */
	memset(&s, 0, sizeof(s));
	CHECK(coredam_stats_consistent(&s));
	/* each equation on its own: one counter more on either side breaks it */
	for (int i = 0; i < COREDAM_STATS_N; i++) {
		bool counted = i != COREDAM_STAT_LEASES_ENDED && i != COREDAM_STAT_UNCHARGED &&
			       i != COREDAM_STAT_BYTES;

		s = ok;
		s.v[i]++;
		if (coredam_stats_consistent(&s) == counted)
			fprintf(stderr, "  %s + 1\n", coredam_stat_names[i]);
		CHECK(coredam_stats_consistent(&s) == !counted);
	}
	/* skipped_pipe_limit is a dump admitted first: it counts on the admitted side */
	s = ok;
	s.v[COREDAM_STAT_SKIPPED_PIPE_LIMIT]++;
	s.v[COREDAM_STAT_ADMITTED]++;
	s.v[COREDAM_STAT_STARTED]++;
	CHECK(coredam_stats_consistent(&s));
	/* a failure moved from one reason to another still adds up */
	s = ok;
	s.v[COREDAM_STAT_FAILED_WRITE]--;
	s.v[COREDAM_STAT_FAILED_IO]++;
	CHECK(coredam_stats_consistent(&s));
	/* a sum that wraps around is not a match */
	memset(&s, 0, sizeof(s));
	s.v[COREDAM_STAT_FAILED] = 1;
	s.v[COREDAM_STAT_FAILED_OPEN] = UINT64_MAX;
	s.v[COREDAM_STAT_FAILED_IO] = 2;
	s.v[COREDAM_STAT_ADMITTED] = 1;
	s.v[COREDAM_STAT_STARTED] = 1;
	CHECK(!coredam_stats_consistent(&s));
}

TEST(stats_dumps_moved)
{
	struct coredam_stats before, now;

	CHECK_OK(coredam_stats_parse(stats_text, &before));
	now = before;
	CHECK(!coredam_stats_dumps_moved(&before, &now));
	/* bytes written and the gauges move while the same dumps go on */
	now.v[COREDAM_STAT_BYTES] += 4096;
	now.v[COREDAM_STAT_OVERTIME]++;
	now.v[COREDAM_STAT_LEASES_ENDED]++;
	CHECK(!coredam_stats_dumps_moved(&before, &now));
	/* a start, a slot, an end of each kind: each alone is a move */
	for (int i = 0; i < COREDAM_STATS_N; i++) {
		bool move = i <= COREDAM_STAT_SKIPPED_PIPE_LIMIT;

		now = before;
		now.v[i]++;
		if (coredam_stats_dumps_moved(&before, &now) != move)
			fprintf(stderr, "  %s + 1\n", coredam_stat_names[i]);
		CHECK(coredam_stats_dumps_moved(&before, &now) == move);
	}
}

static void fake_proc(bool patched)
{
	mkfile("proc/sys/kernel/core_pattern", "/var/crash/core.%p\n");
	mkfile("proc/sys/kernel/core_pipe_limit", "0\n");
	if (!patched)
		return;
	mkfile("proc/sys/kernel/core_cgroup", "\n");
	mkfile("proc/sys/kernel/core_max_concurrency", "0\n");
	mkfile("proc/sys/kernel/core_max_waiting", "0\n");
	mkfile("proc/sys/kernel/core_wait_timeout_ms", "0\n");
	mkfile("proc/sys/kernel/core_writeback_window", "1024\n");
	mkfile("proc/sys/kernel/core_dump_stats", stats_text);
}

TEST(kernel_probe)
{
	struct coredam_roots r = { .proc = tkeep("proc") };
	struct coredam_kernel_support k;
	struct coredam_stats s;
	char buf[64];

	fake_proc(false);
	CHECK_OK(coredam_kernel_probe(&r, &k));
	CHECK(!k.core_cgroup && !coredam_kernel_full(&k));
	CHECK_ERRNO(coredam_stats_read(&r, &s), -ENOENT);
	CHECK(!k.core_socket);
	/* 6.17 and later, built with CONFIG_UNIX; "sockets" would be no such word */
	mkfile("proc/sys/kernel/core_modes", "file\npipe\nsockets\n");
	CHECK_OK(coredam_kernel_probe(&r, &k));
	CHECK(!k.core_socket);
	mkfile("proc/sys/kernel/core_modes", "file\npipe\nsocket\n");
	CHECK_OK(coredam_kernel_probe(&r, &k));
	CHECK(k.core_socket && !k.core_cgroup);
	fake_proc(true);
	CHECK_OK(coredam_kernel_probe(&r, &k));
	CHECK(coredam_kernel_full(&k));
	CHECK(coredam_stats_read(&r, &s) == 0 && s.v[COREDAM_STAT_BYTES] == 123456789);
	/* the whole file, however long a later kernel makes it */
	{
		char big[8192];
		size_t o = 0;

		for (int i = 0; o < 6000; i++)
			o += (size_t)snprintf(big + o, sizeof(big) - o, "future_counter_%d %d\n", i, i);
		snprintf(big + o, sizeof(big) - o, "%s", stats_text);
		mkfile("proc/sys/kernel/core_dump_stats", big);
		CHECK(coredam_stats_read(&r, &s) == 0 && s.v[COREDAM_STAT_BYTES] == 123456789);
		mkfile("proc/sys/kernel/core_dump_stats", "0 0 3 3 3 0 0 0 0 0 0 4096\n");
		CHECK_ERRNO(coredam_stats_read(&r, &s), -EBADMSG);
	}
	CHECK_OK(coredam_sysctl_read(&r, "kernel.core_pattern", buf, sizeof(buf)));
	CHECK_STREQ(buf, "/var/crash/core.%p");
	CHECK_ERRNO(coredam_sysctl_read(&r, "kernel/../x", buf, sizeof(buf)), -EINVAL);
}

TEST(sysctl_save_restore_adopt)
{
	struct coredam_roots r = { .proc = tkeep("proc"), .state = tkeep("state") };
	static const char *const names[] = { "kernel.core_cgroup", "kernel.core_max_concurrency",
					     "kernel.no_such_knob" };
	char *s;

	fake_proc(true);
	mkdirs("state");
	CHECK_OK(coredam_sysctl_save(&r, names, 3));
	CHECK_OK(coredam_sysctl_write(&r, "kernel.core_cgroup", "/coredump.slice"));
	CHECK_OK(coredam_sysctl_write(&r, "kernel.core_max_concurrency", "2"));
	/* a restarted agent saves again: the first originals are kept */
	CHECK_OK(coredam_sysctl_save(&r, names, 3));
	s = slurp("state/sysctl.saved");
	CHECK(s && strcmp(s, "kernel.core_cgroup \nkernel.core_max_concurrency 0\n") == 0);
	free(s);
	CHECK_OK(coredam_sysctl_restore(&r));
	/* fake sysctl files are not truncated by a write: compare the written prefix */
	s = slurp("proc/sys/kernel/core_max_concurrency");
	CHECK(s && strncmp(s, "0\n", 2) == 0);
	free(s);
	s = slurp("proc/sys/kernel/core_cgroup");
	CHECK(s && s[0] == '\n'); /* cleared with a newline */
	free(s);
	CHECK_ERRNO(coredam_sysctl_restore(&r), -ENOENT);
}

/* The core_pattern a unit's ExecStartPre= installs is saved apart from the daemon's knobs. */
TEST(sysctl_pattern_saved_apart)
{
	struct coredam_roots r = { .proc = tkeep("proc"), .state = tkeep("state") };
	static const char *const knobs[] = { "kernel.core_max_concurrency" };
	static const char *const pattern[] = { "kernel.core_pattern" };
	char buf[256], *s;

	fake_proc(true);
	mkdirs("state");
	CHECK_OK(coredam_sysctl_save_as(&r, COREDAM_PATTERN_SAVED, pattern, 1));
	CHECK_OK(coredam_sysctl_write(&r, "kernel.core_pattern", "|/usr/libexec/coredam/coredam-pipe"));
	CHECK_OK(coredam_sysctl_save(&r, knobs, 1));
	s = slurp("state/core_pattern.saved");
	CHECK(s && strcmp(s, "kernel.core_pattern /var/crash/core.%p\n") == 0);
	free(s);
	/* the daemon's restore leaves the pattern; ExecStopPost='s restores it */
	CHECK_OK(coredam_sysctl_restore(&r));
	CHECK_OK(coredam_sysctl_read(&r, "kernel.core_pattern", buf, sizeof(buf)));
	CHECK(strncmp(buf, "|/usr", 5) == 0);
	CHECK_OK(coredam_sysctl_restore_from(&r, COREDAM_PATTERN_SAVED));
	CHECK_OK(coredam_sysctl_read(&r, "kernel.core_pattern", buf, sizeof(buf)));
	CHECK(strncmp(buf, "/var/crash/core.%p", 18) == 0);
	CHECK_ERRNO(coredam_sysctl_restore_from(&r, COREDAM_PATTERN_SAVED), -ENOENT);
}
