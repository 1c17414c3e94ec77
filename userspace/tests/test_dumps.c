// SPDX-License-Identifier: LGPL-2.1-or-later
/* Dumps in progress from /proc, and what each is doing. */
#include <stdlib.h>

#include "dumps.h"
#include "test.h"
#include "macro.h"

TEST(dumps_from_proc)
{
	struct coredam_roots r = { .proc = tkeep("proc"), .cgroup = tkeep("cg") };
	struct coredam_dump *d = NULL;
	size_t n = 0;

	mkfile("proc/100/status", "Name:\tcrasher\nState:\tD\nRssAnon:\t  65536 kB\nCoreDumping:\t1\n");
	mkfile("proc/100/cgroup", "0::/coredump.slice\n");
	mkfile("proc/100/io", "rchar: 1\nwchar: 2\nwrite_bytes: 65536\n");
	mklink("proc/100/exe", "/usr/bin/crasher");
	mkfile("proc/101/status", "Name:\tcrasher\nCoreDumping:\t1\n");
	mkfile("proc/101/cgroup", "0::/user.slice\n");
	mkfile("proc/102/status", "Name:\tbash\nCoreDumping:\t0\n");
	mkfile("proc/102/cgroup", "0::/user.slice\n");
	mkfile("proc/103/status", "Name:\tcoredam-pipe\nCoreDumping:\t0\n");
	mkfile("proc/103/cgroup", "0::/coredump.slice\n");
	/* listed in the dump cgroup, but moved out since: its own file says */
	mkfile("proc/1103/status", "Name:\tcoredam-pipe\nCoreDumping:\t0\n");
	mkfile("proc/1103/cgroup", "0::/system.slice\n");
	/* in the dump cgroup, its process not read here: nobody else's pid matches */
	mkfile("cg/coredump.slice/cgroup.procs", "100\n1103\n103\n10300\n");
	mkfile("proc/self/status", "Name:\tx\n");
	CHECK_OK(coredam_dumps_list(&r, "/coredump.slice", &d, &n));
	CHECK_EQ_INT(n, 3);
	for (size_t i = 0; i < n; i++) {
		if (d[i].pid == 100) {
			CHECK(d[i].state == COREDAM_DUMP_WRITING);
			CHECK_EQ_INT(d[i].write_bytes, 65536);
			CHECK_STREQ(d[i].exe, "/usr/bin/crasher");
			CHECK_STREQ(d[i].comm, "crasher");
			CHECK_STREQ(d[i].cgroup, "/coredump.slice");
			CHECK(d[i].anon_bytes == 64ULL << 20);
		} else if (d[i].pid == 101) {
			CHECK(d[i].state == COREDAM_DUMP_DUMPING);
			CHECK_EQ_INT(d[i].anon_bytes, 0);	/* a kernel thread's status has none */
			CHECK_STREQ(d[i].cgroup, "/user.slice");
		} else {
			CHECK(d[i].pid == 103 && d[i].state == COREDAM_DUMP_HELPER);
		}
	}
	free(d);
	d = NULL;
	CHECK(coredam_dumps_list(&r, "", &d, &n) == 0 && n == 2);
	free(d);
}

TEST(dumps_look)
{
	struct coredam_stats last = { 0 }, now;

	last.v[COREDAM_STAT_STARTED] = last.v[COREDAM_STAT_ADMITTED] = last.v[COREDAM_STAT_COMPLETED] = 3;
	now = last;
	/* no counters, or none from before: every process */
	CHECK(coredam_dumps_look(NULL, &now, 0, true, false) == COREDAM_LOOK_ALL);
	CHECK(coredam_dumps_look(&last, NULL, 0, true, false) == COREDAM_LOOK_ALL);
	/* at rest, even at the tick or with a helper's counters */
	CHECK(coredam_dumps_look(&last, &now, 0, true, false) == COREDAM_LOOK_NONE);
	CHECK(coredam_dumps_look(&last, &now, 0, false, true) == COREDAM_LOOK_NONE);
	/* a dump started since: every process */
	now.v[COREDAM_STAT_STARTED]++;
	now.v[COREDAM_STAT_ACTIVE]++;
	CHECK(coredam_dumps_look(&last, &now, 0, true, false) == COREDAM_LOOK_ALL);
	/* seen; it goes on writing: the known dumps do between ticks */
	last = now;
	now.v[COREDAM_STAT_BYTES] += 1 << 20;
	CHECK(coredam_dumps_look(&last, &now, 1, true, false) == COREDAM_LOOK_KNOWN);
	CHECK(coredam_dumps_look(&last, &now, 1, true, true) == COREDAM_LOOK_ALL);
	CHECK(coredam_dumps_look(&last, &now, 1, false, false) == COREDAM_LOOK_ALL);
	/* it ended (tracked still, counters moved): every process */
	now.v[COREDAM_STAT_ACTIVE]--;
	now.v[COREDAM_STAT_COMPLETED]++;
	CHECK(coredam_dumps_look(&last, &now, 1, true, false) == COREDAM_LOOK_ALL);
	/* a dump over its lease with nothing tracked is still a dump to find */
	last = now;
	now.v[COREDAM_STAT_OVERTIME] = 1;
	CHECK(coredam_dumps_look(&last, &now, 0, true, false) == COREDAM_LOOK_KNOWN);
	CHECK(coredam_dumps_look(&last, &now, 0, true, true) == COREDAM_LOOK_ALL);
}

TEST(proc_io)
{
	struct coredam_roots r = { .proc = tkeep("proc") };
	uint64_t wb = 7, cw = 7;

	/* cancelled_write_bytes is not write_bytes, whichever comes first */
	coredam_proc_io_parse("rchar: 1\ncancelled_write_bytes: 9\nsyscw: 12\nwrite_bytes: 4096\n", &wb, &cw);
	CHECK_EQ_INT(wb, 4096);
	CHECK_EQ_INT(cw, 12);
	coredam_proc_io_parse("write_bytes: 5\n", &wb, &cw);
	CHECK_EQ_INT(wb, 5);
	CHECK_EQ_INT(cw, 0);
	mkfile("proc/200/io", "rchar: 1\nsyscw: 3\nwrite_bytes: 65536\ncancelled_write_bytes: 0\n");
	CHECK_OK(coredam_proc_io_read(&r, 200, &wb, &cw));
	CHECK_EQ_INT(wb, 65536);
	CHECK_EQ_INT(cw, 3);
	/* gone: nothing written back */
	CHECK_ERRNO(coredam_proc_io_read(&r, 201, &wb, &cw), -ENOENT);
	CHECK_EQ_INT(wb, 65536);
}

TEST(kb_fields_and_mem_total)
{
	struct coredam_roots r = { .proc = tkeep("mproc") };
	uint64_t v = 0;

	CHECK_OK(coredam_kb_field("MemTotal:        3012345 kB\nMemFree: 1 kB\n", "MemTotal", &v));
	CHECK(v == 3012345ULL * 1024);
	CHECK_ERRNO(coredam_kb_field("MemTotal: 3 MB\n", "MemTotal", &v), -EINVAL);
	CHECK_ERRNO(coredam_kb_field("MemTotal: 3 kB x\n", "MemTotal", &v), -EINVAL);
	CHECK_ERRNO(coredam_kb_field("MemTotal: 99999999999999999999 kB\n", "MemTotal", &v), -EINVAL);
	CHECK_ERRNO(coredam_kb_field("MemTotalX: 3 kB\n", "MemTotal", &v), -ENOENT);
	mkfile("mproc/meminfo", "MemTotal:        2000 kB\nMemAvailable:    1000 kB\n");
	CHECK_OK(coredam_mem_total(&r, &v));
	CHECK_EQ_INT(v, 2048000);
}

TEST(status_field)
{
	const char *st = "Name:\tbad name\nUmask:\t0022\nCoreDumpingX:\t1\nCoreDumping:\t0\nThreads:  12\n";
	char v[8];

	CHECK(coredam_status_field(st, "Name", v, sizeof(v)) && strcmp(v, "bad nam") == 0);
	/* a key that only starts another's name is not that key */
	CHECK(coredam_status_field(st, "CoreDumping", v, sizeof(v)) && strcmp(v, "0") == 0);
	CHECK(coredam_status_field(st, "Threads", v, sizeof(v)) && strcmp(v, "12") == 0);
	CHECK(!coredam_status_field(st, "Core", v, sizeof(v)));
	CHECK(!coredam_status_field(st, "Tgid", v, sizeof(v)));
}

TEST(dump_classify)
{
	struct coredam_dump now = { .state = COREDAM_DUMP_DUMPING, .syscw = 10 };
	struct coredam_dump_seen none = { 0 }, same = { true, COREDAM_DUMP_WAITING, 10 },
				 fewer = { true, COREDAM_DUMP_WAITING, 9 }, wrote = { true, COREDAM_DUMP_WRITING, 10 };
	struct coredam_dump helper = { .state = COREDAM_DUMP_HELPER }, v1 = { .state = COREDAM_DUMP_WRITING };

	/* no queue: nothing to tell */
	CHECK(coredam_dump_classify(&now, &none, false, 3) == COREDAM_DUMP_DUMPING);
	/* nobody waits: every dumper writes */
	CHECK(coredam_dump_classify(&now, &none, true, 0) == COREDAM_DUMP_WRITING);
	/* someone waits: new and idle dumpers wait, one that wrote writes */
	CHECK(coredam_dump_classify(&now, &none, true, 1) == COREDAM_DUMP_WAITING);
	CHECK(coredam_dump_classify(&now, &same, true, 1) == COREDAM_DUMP_WAITING);
	CHECK(coredam_dump_classify(&now, &fewer, true, 1) == COREDAM_DUMP_WRITING);
	CHECK(coredam_dump_classify(&now, &wrote, true, 1) == COREDAM_DUMP_WRITING);
	/* what the listing knows stays */
	CHECK(coredam_dump_classify(&helper, &none, true, 1) == COREDAM_DUMP_HELPER);
	CHECK(coredam_dump_classify(&v1, &none, true, 1) == COREDAM_DUMP_WRITING);
}
