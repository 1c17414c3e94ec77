// SPDX-License-Identifier: LGPL-2.1-or-later
#include "sysctl.h"
#include "test.h"
#include "util.h"

TEST(core_pattern_file)
{
	struct coredam_core_pattern p;

	CHECK(coredam_core_pattern_parse("/var/crash/core.%e.%p", &p) == 0);
	CHECK(p.kind == COREDAM_CORE_FILE && p.dir_known);
	CHECK_STREQ(p.dir, "/var/crash");
	CHECK(coredam_core_pattern_parse("/scratch/core.%p", &p) == 0);
	CHECK_STREQ(p.dir, "/scratch");
	CHECK(coredam_core_pattern_parse("/core", &p) == 0);
	CHECK_STREQ(p.dir, "/");
	CHECK(coredam_core_pattern_parse("/var/crash/%u/core.%p", &p) == 0);
	CHECK_STREQ(p.dir, "/var/crash");
	CHECK(strstr(p.note, "specifier") != NULL);
	CHECK(coredam_core_pattern_parse("core", &p) == 0);
	CHECK(p.kind == COREDAM_CORE_FILE && !p.dir_known);
	CHECK(strstr(p.note, "working directory") != NULL);
}

TEST(core_pattern_pipe_socket)
{
	struct coredam_core_pattern p;

	CHECK(coredam_core_pattern_parse("|/usr/lib/systemd/systemd-coredump %P %u %g %s %t %c %h", &p) == 0);
	CHECK(p.kind == COREDAM_CORE_PIPE && p.dir_known);
	CHECK_STREQ(p.dir, "/var/lib/systemd/coredump");
	CHECK_STREQ(p.helper, "/usr/lib/systemd/systemd-coredump");
	CHECK(coredam_core_pattern_parse("|/usr/share/apport/apport -p%p -s%s", &p) == 0);
	CHECK_STREQ(p.dir, "/var/crash");
	CHECK(coredam_core_pattern_parse("|/usr/sbin/coredam-pipe /scratch %p", &p) == 0);
	CHECK(p.dir_known);
	CHECK_STREQ(p.dir, "/scratch");
	CHECK(coredam_core_pattern_parse("|/bin/mystery %p", &p) == 0);
	CHECK(!p.dir_known && strstr(p.note, "Destination=") != NULL);
	CHECK(coredam_core_pattern_parse("@/run/coredump.socket", &p) == 0);
	CHECK(p.kind == COREDAM_CORE_SOCKET && !p.dir_known);
}

TEST(stats_parse)
{
	struct coredam_stats s, keep;

	CHECK(coredam_stats_parse("1 2 20 15 10 4 1 1 1 0 0 123456789\n", &s) == 0);
	CHECK_EQ_INT(s.v[COREDAM_STAT_ACTIVE], 1);
	CHECK_EQ_INT(s.v[COREDAM_STAT_WAITING], 2);
	CHECK_EQ_INT(s.v[COREDAM_STAT_STARTED], 20);
	CHECK_EQ_INT(s.v[COREDAM_STAT_BYTES], 123456789);
	CHECK(coredam_stats_consistent(&s));
	s.v[COREDAM_STAT_COMPLETED]++;
	CHECK(!coredam_stats_consistent(&s));
	/* the lease's fields; a line without them reads them as 0 */
	CHECK(coredam_stats_parse("0 0 3 3 1 0 0 0 0 0 0 9 2 2\n", &s) == 0);
	CHECK_EQ_INT(s.v[COREDAM_STAT_OVERTIME], 2);
	CHECK_EQ_INT(s.v[COREDAM_STAT_LEASES_ENDED], 2);
	CHECK(coredam_stats_consistent(&s));
	CHECK(coredam_stats_parse("0 0 0 0 0 0 0 0 0 0 0 0", &s) == 0);
	CHECK_EQ_INT(s.v[COREDAM_STAT_OVERTIME], 0);
	/* fields appended by a newer kernel are ignored */
	CHECK(coredam_stats_parse("0 0 0 0 0 0 0 0 0 0 0 0 7 8 9", &s) == 0);
	memset(&keep, 0x33, sizeof(keep));
	s = keep;
	CHECK(coredam_stats_parse("0 0 0 0 0 0 0 0 0 0 0", &s) == -EBADMSG); /* 11 fields */
	CHECK(coredam_stats_parse("0 0 0 0 0 0 0 0 0 0 0 x", &s) == -EBADMSG);
	CHECK(coredam_stats_parse("0  0 0 0 0 0 0 0 0 0 0 0", &s) == -EBADMSG);
	CHECK(coredam_stats_parse("-1 0 0 0 0 0 0 0 0 0 0 0", &s) == -EBADMSG);
	CHECK(coredam_stats_parse("", &s) == -EBADMSG);
	CHECK(memcmp(&s, &keep, sizeof(s)) == 0);
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
	mkfile("proc/sys/kernel/core_dump_stats", "0 0 3 3 3 0 0 0 0 0 0 4096\n");
}

TEST(kernel_probe)
{
	struct coredam_roots r = { .proc = tkeep("proc") };
	struct coredam_kernel_support k;
	struct coredam_stats s;
	char buf[64];

	fake_proc(false);
	CHECK(coredam_kernel_probe(&r, &k) == 0);
	CHECK(!k.core_cgroup && !coredam_kernel_full(&k));
	CHECK(coredam_stats_read(&r, &s) == -ENOENT);
	fake_proc(true);
	CHECK(coredam_kernel_probe(&r, &k) == 0);
	CHECK(coredam_kernel_full(&k));
	CHECK(coredam_stats_read(&r, &s) == 0 && s.v[COREDAM_STAT_BYTES] == 4096);
	CHECK(coredam_sysctl_read(&r, "kernel.core_pattern", buf, sizeof(buf)) == 0);
	CHECK_STREQ(buf, "/var/crash/core.%p");
	CHECK(coredam_sysctl_read(&r, "kernel/../x", buf, sizeof(buf)) == -EINVAL);
}

TEST(sysctl_save_restore_adopt)
{
	struct coredam_roots r = { .proc = tkeep("proc"), .state = tkeep("state") };
	static const char *const names[] = { "kernel.core_cgroup", "kernel.core_max_concurrency",
					     "kernel.no_such_knob" };
	char *s;

	fake_proc(true);
	mkdirs("state");
	CHECK(coredam_sysctl_save(&r, names, 3) == 0);
	CHECK(coredam_sysctl_write(&r, "kernel.core_cgroup", "/coredump.slice") == 0);
	CHECK(coredam_sysctl_write(&r, "kernel.core_max_concurrency", "2") == 0);
	/* a restarted agent saves again: the first originals are kept */
	CHECK(coredam_sysctl_save(&r, names, 3) == 0);
	s = slurp("state/sysctl.saved");
	CHECK(s && strcmp(s, "kernel.core_cgroup \nkernel.core_max_concurrency 0\n") == 0);
	free(s);
	CHECK(coredam_sysctl_restore(&r) == 0);
	/* fake sysctl files are not truncated by a write: compare the written prefix */
	s = slurp("proc/sys/kernel/core_max_concurrency");
	CHECK(s && strncmp(s, "0\n", 2) == 0);
	free(s);
	s = slurp("proc/sys/kernel/core_cgroup");
	CHECK(s && s[0] == '\n'); /* cleared with a newline */
	free(s);
	CHECK(coredam_sysctl_restore(&r) == -ENOENT);
}
