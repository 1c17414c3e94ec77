// SPDX-License-Identifier: LGPL-2.1-or-later
/* PSI, io.stat, metrics, the ELF completeness check, dumps in /proc, the control protocol. */
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <zstd.h>

#include "control.h"
#include "dumps.h"
#include "iostat.h"
#include "meta.h"
#include "metrics.h"
#include "psi.h"
#include "space.h"
#include "test.h"
#include "macro.h"

TEST(psi_parse)
{
	struct coredam_psi p;

	CHECK_OK(coredam_psi_parse("some avg10=1.50 avg60=0.20 avg300=0.00 total=123456\n"
				   "full avg10=0.50 avg60=0.10 avg300=0.00 total=65432\n", &p));
	CHECK(p.some_avg10 > 1.49 && p.some_avg10 < 1.51);
	CHECK_EQ_INT(p.some_total, 123456);
	CHECK(p.has_full && p.full_total == 65432);
	CHECK_OK(coredam_psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", &p));
	CHECK(!p.has_full);
	CHECK_ERRNO(coredam_psi_parse("nonsense\n", &p), -EBADMSG);
	CHECK_ERRNO(coredam_psi_parse("", &p), -EBADMSG);
	CHECK(coredam_psi_fraction(1000, 251000, 1000000) > 0.249);
	CHECK(coredam_psi_fraction(1000, 251000, 1000000) < 0.251);
	CHECK(coredam_psi_fraction(5000, 1000, 1000000) == 0.0);
	CHECK(coredam_psi_fraction(0, 5000000, 1000000) == 1.0);
}

TEST(iostat_counts_requests_on_the_dump_devices)
{
	const struct coredam_devnum vda = { 254, 0 }, both[] = { { 254, 0 }, { 8, 16 } };
	uint64_t ios = 1;

	/* reads, writes and discards of the listed devices; other keys skipped */
	CHECK_OK(coredam_iostat_ios("8:16 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n"
				    "254:0 rbytes=0 wbytes=8192 rios=3 wios=2 dbytes=0 dios=1 "
				    "use_delay=0 delay_nsec=0 cost.vrate=100.00\n",
				    &vda, 1, &ios));
	CHECK_EQ_INT(ios, 6);
	CHECK_OK(coredam_iostat_ios("8:16 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n"
				    "254:0 rbytes=0 wbytes=8192 rios=3 wios=2 dbytes=0 dios=1\n",
				    both, 2, &ios));
	CHECK_EQ_INT(ios, 7);
	/* no line for the device: no request; an empty file: none at all */
	CHECK_OK(coredam_iostat_ios("8:16 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n", &vda, 1, &ios));
	CHECK_EQ_INT(ios, 0);
	CHECK(coredam_iostat_ios("", &vda, 1, &ios) == 0 && ios == 0);
	/* what is not io.stat is refused, the result untouched */
	ios = 42;
	CHECK_ERRNO(coredam_iostat_ios("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", &vda, 1, &ios), -EBADMSG);
	CHECK_ERRNO(coredam_iostat_ios("254:0 rios=x\n", &vda, 1, &ios), -EBADMSG);
	CHECK_ERRNO(coredam_iostat_ios("254:0 rios\n", &vda, 1, &ios), -EBADMSG);
	CHECK_ERRNO(coredam_iostat_ios("254:0x rios=1\n", &vda, 1, &ios), -EBADMSG);
	CHECK_ERRNO(coredam_iostat_ios("254:0 rios=18446744073709551615 wios=1\n", &vda, 1, &ios), -EBADMSG);
	CHECK_EQ_INT(ios, 42);
}

TEST(psi_trigger_validates)
{
	int fd = -1;

	mkfile("io.pressure", "");
	CHECK_ERRNO(coredam_psi_trigger_open(AT_FDCWD, tpath("io.pressure"), 100000, 100000, &fd), -EINVAL);
	CHECK_ERRNO(coredam_psi_trigger_open(AT_FDCWD, tpath("io.pressure"), 200000, 100000, &fd), -EINVAL);
	CHECK_OK(coredam_psi_trigger_open(AT_FDCWD, tpath("io.pressure"), 100000, 1000000, &fd));
	CHECK(fd >= 0);
	close(fd);
	{
		char *s = slurp("io.pressure");

		CHECK(s && strcmp(s, "some 100000 1000000") == 0);
		free(s);
	}
}

TEST(metrics_output)
{
	struct coredam_metrics m = { .kernel_full = true, .have_stats = true, .mode = COREDAM_MODE_ADAPTIVE,
				     .budget = { .wbps = 30000000, .concurrency = 2 },
				     .foreground_pressure = 0.25 };
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

static void write_core_at(const char *rel, uint64_t offset, uint64_t filesz, size_t truncate_to)
{
	unsigned char buf[4096] = { 0 };
	Elf64_Ehdr *eh = (Elf64_Ehdr *)buf;
	Elf64_Phdr *ph = (Elf64_Phdr *)(buf + sizeof(*eh));
	FILE *f;

	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_CORE;
	eh->e_phoff = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	ph->p_type = PT_LOAD;
	ph->p_offset = offset;
	ph->p_filesz = filesz;
	mkfile(rel, "");
	f = fopen(tpath(rel), "w");
	fwrite(buf, 1, MIN(truncate_to, sizeof(buf)), f);
	for (size_t i = sizeof(buf); i < truncate_to; i++)
		fputc(0, f);
	fclose(f);
}

static void write_core(const char *rel, size_t filesz, size_t truncate_to)
{
	write_core_at(rel, 4096, filesz, truncate_to);
}

TEST(incomplete_cores_marked)
{
	bool bad = true;
	int dfd;

	write_core("cores/core.1", 8192, 4096 + 8192);	/* whole */
	write_core("cores/core.2", 8192, 4096 + 100);	/* cut in the data */
	write_core("cores/core.3", 8192, 40);		/* cut in the headers */
	mkfile("cores/notes.txt", "not a core\n");
	dfd = open(tpath("cores"), O_RDONLY | O_DIRECTORY);
	CHECK(coredam_core_incomplete(dfd, "core.1", &bad) == 0 && !bad);
	CHECK(coredam_core_incomplete(dfd, "core.2", &bad) == 0 && bad);
	CHECK_ERRNO(coredam_core_incomplete(dfd, "notes.txt", &bad), -EMEDIUMTYPE);
	{
		int efd = openat(dfd, "core.empty", O_WRONLY | O_CREAT | O_TRUNC, 0600);

		CHECK(efd >= 0);
		close(efd);
		CHECK(coredam_core_incomplete(dfd, "core.empty", &bad) == 0 && bad);
		CHECK(unlinkat(dfd, "core.empty", 0) == 0);
	}
	close(dfd);
	CHECK_EQ_INT(coredam_mark_incomplete(tpath("cores"), 0), 1);
	CHECK(access(tpath("cores/core.2.incomplete"), F_OK) == 0);
	CHECK(access(tpath("cores/core.1"), F_OK) == 0);
	CHECK(access(tpath("cores/notes.txt"), F_OK) == 0);
	CHECK_EQ_INT(coredam_mark_incomplete(tpath("cores"), 0), 0); /* idempotent */
}

/*
 * A dump that starts just after the agent saw none writing: its core is
 * short because it is being written, and must keep its name until the
 * writer lets go of it.
 */
TEST(incomplete_marking_skips_a_core_being_written)
{
	int wfd;

	write_core("cores/core.7", 8192, 4096 + 100);
	wfd = open(tpath("cores/core.7"), O_WRONLY | O_APPEND);
	CHECK(wfd >= 0);
	CHECK_EQ_INT(coredam_mark_incomplete(tpath("cores"), 0), 0);
	CHECK(access(tpath("cores/core.7"), F_OK) == 0);
	close(wfd);
	CHECK_EQ_INT(coredam_mark_incomplete(tpath("cores"), 0), 1);
	CHECK(access(tpath("cores/core.7.incomplete"), F_OK) == 0);
}

/*
 * In a sticky, world-writable destination a user pre-creates the name the
 * agent renames a short core to: the agent (root) must not replace it,
 * which would delete that user's file, but pick the next name.
 */
TEST(incomplete_marking_never_replaces)
{
	char *s;

	write_core("cores/core.2", 8192, 4096 + 100);
	mkfile("cores/core.2.incomplete", "someone else's file\n");
	CHECK_EQ_INT(coredam_mark_incomplete(tpath("cores"), 0), 1);
	s = slurp("cores/core.2.incomplete");
	CHECK(s && strcmp(s, "someone else's file\n") == 0);
	free(s);
	CHECK(access(tpath("cores/core.2.1.incomplete"), F_OK) == 0);
	CHECK(access(tpath("cores/core.2"), F_OK) < 0);

	/* every name taken: the core stays, and the caller hears of it */
	write_core("cores/core.3", 8192, 4096 + 100);
	mkfile("cores/core.3.incomplete", "x");
	for (int i = 1; i < 10; i++) {
		char rel[64];

		snprintf(rel, sizeof(rel), "cores/core.3.%d.incomplete", i);
		mkfile(rel, "x");
	}
	CHECK_ERRNO(coredam_mark_incomplete(tpath("cores"), 0), -EEXIST);
	CHECK(access(tpath("cores/core.3"), F_OK) == 0);
	s = slurp("cores/core.3.incomplete");
	CHECK(s && strcmp(s, "x") == 0);
	free(s);
}

/* The file @rel compressed as one zstd frame into @out, less its last @cut bytes. */
static void zst_of(const char *rel, const char *out, size_t cut)
{
	struct stat st;
	void *in, *z;
	size_t zn;
	FILE *f;

	CHECK(stat(tpath(rel), &st) == 0);
	in = malloc((size_t)st.st_size);
	f = fopen(tpath(rel), "r");
	CHECK(f && fread(in, 1, (size_t)st.st_size, f) == (size_t)st.st_size);
	fclose(f);
	z = malloc(ZSTD_compressBound((size_t)st.st_size));
	zn = ZSTD_compress(z, ZSTD_compressBound((size_t)st.st_size), in, (size_t)st.st_size, 1);
	CHECK(!ZSTD_isError(zn) && zn > cut);
	mkfile(out, "");
	f = fopen(tpath(out), "w");
	fwrite(z, 1, zn - cut, f);
	fclose(f);
	free(in);
	free(z);
}

/*
 * Compressed cores (coredam-pipe's Compress=yes, systemd-coredump's store)
 * are checked too: read to their end, short when the stream stops inside
 * a frame or holds less than the headers declare.
 */
TEST(incomplete_zstd_cores_marked)
{
	bool bad;
	int dfd;

	write_core("raw/whole", 8192, 4096 + 8192);
	write_core("raw/short", 8192, 4096 + 100);
	mkfile("raw/text", "not a core, compressed\n");
	zst_of("raw/whole", "cores/core.1.zst", 0);
	zst_of("raw/short", "cores/core.2.zst", 0);
	zst_of("raw/whole", "cores/core.3.zst", 5);	/* the stream cut inside its frame */
	zst_of("raw/text", "cores/notes.zst", 0);
	dfd = open(tpath("cores"), O_RDONLY | O_DIRECTORY);
	bad = true;
	CHECK(coredam_core_incomplete(dfd, "core.1.zst", &bad) == 0 && !bad);
	bad = false;
	CHECK(coredam_core_incomplete(dfd, "core.2.zst", &bad) == 0 && bad);
	bad = false;
	CHECK(coredam_core_incomplete(dfd, "core.3.zst", &bad) == 0 && bad);
	CHECK_ERRNO(coredam_core_incomplete(dfd, "notes.zst", &bad), -EMEDIUMTYPE);
	close(dfd);
	CHECK_EQ_INT(coredam_mark_incomplete(tpath("cores"), 0), 2);
	CHECK(access(tpath("cores/core.1.zst"), F_OK) == 0);
	CHECK(access(tpath("cores/core.2.zst.incomplete"), F_OK) == 0);
	CHECK(access(tpath("cores/core.3.zst.incomplete"), F_OK) == 0);
	CHECK(access(tpath("cores/notes.zst"), F_OK) == 0);
}

/*
 * coredam-pipe's metadata beside a core the agent renames goes with it and
 * says so; a file of that name in another format is left alone.
 */
TEST(incomplete_marking_moves_the_metadata)
{
	struct coredam_core_meta m = { .core = "core.5", .comm = "crasher", .compression = "none",
				       .rlimit = UINT64_MAX, .dumpable = 1, .cgroup = "/coredump.slice" };
	char text[4096], *s;

	if (geteuid() != 0) {
		fprintf(stderr, "  skipped: only root's metadata is the helper's\n");
		return;
	}
	write_core("cores/core.5", 8192, 4096 + 100);
	CHECK(coredam_meta_format(&m, text, sizeof(text)) > 0);
	mkfile("cores/core.5.json", text);
	CHECK(chmod(tpath("cores/core.5.json"), 0640) == 0);
	write_core("cores/core.6", 8192, 4096 + 100);
	mkfile("cores/core.6.json", "{\"someone\": \"else\"}\n");
	CHECK_EQ_INT(coredam_mark_incomplete(tpath("cores"), 0), 2);
	CHECK(access(tpath("cores/core.5.json"), F_OK) < 0);
	s = slurp("cores/core.5.incomplete.json");
	CHECK(s && strncmp(s, "{\"core\": \"core.5.incomplete\", \"pid\"", 35) == 0);
	CHECK(s && strstr(s, "\"truncated\": true,") && !strstr(s, "\"truncated\": false"));
	CHECK(s && strstr(s, "\"comm\": \"crasher\"") && strstr(s, "\"cgroup\": \"/coredump.slice\"}"));
	free(s);
	{
		struct stat st;

		CHECK(stat(tpath("cores/core.5.incomplete.json"), &st) == 0 && (st.st_mode & 07777) == 0640);
	}
	s = slurp("cores/core.6.json");
	CHECK(s && strcmp(s, "{\"someone\": \"else\"}\n") == 0);
	free(s);
	CHECK(access(tpath("cores/core.6.incomplete"), F_OK) == 0);
}

/* Headers claiming data beyond 2^64 bytes: incomplete, not wrapped around to "short". Found by fuzz_core. */
TEST(incomplete_core_offsets_wrap)
{
	bool bad = false;
	int dfd;

	write_core_at("cores/core.1", UINT64_MAX - 255, 512, 4096);
	dfd = open(tpath("cores"), O_RDONLY | O_DIRECTORY);
	CHECK(coredam_core_incomplete(dfd, "core.1", &bad) == 0 && bad);
	close(dfd);
}

TEST(dumps_from_proc)
{
	struct coredam_roots r = { .proc = tkeep("proc"), .cgroup = tkeep("cg") };
	struct coredam_dump *d = NULL;
	size_t n = 0;

	mkfile("proc/100/status", "Name:\tcrasher\nState:\tD\nCoreDumping:\t1\n");
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
		} else if (d[i].pid == 101) {
			CHECK(d[i].state == COREDAM_DUMP_DUMPING);
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

TEST(control_parse)
{
	struct coredam_ctl_request q;
	const char *s, *k;
	char big[400];

	CHECK(coredam_ctl_parse("STATUS", &q) == 0 && q.cmd == COREDAM_CTL_STATUS);
	CHECK(coredam_ctl_parse("SET bandwidth 20M", &q) == 0 && q.cmd == COREDAM_CTL_SET);
	CHECK_STREQ(q.name, "bandwidth");
	CHECK_STREQ(q.value, "20M");
	CHECK_ERRNO(coredam_ctl_parse("SET colour blue", &q), -ENOENT);
	CHECK_ERRNO(coredam_ctl_parse("SET bandwidth", &q), -EINVAL);
	CHECK_ERRNO(coredam_ctl_parse("SET bandwidth 1 2", &q), -EINVAL);
	CHECK_ERRNO(coredam_ctl_parse("STATUS now", &q), -EINVAL);
	CHECK_ERRNO(coredam_ctl_parse("", &q), -EINVAL);
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_ERRNO(coredam_ctl_parse(big, &q), -E2BIG);
	CHECK_OK(coredam_ctl_set_key("concurrency", &s, &k));
	CHECK_STREQ(k, "Concurrency");
}

TEST(control_roundtrip)
{
	char path[200], buf[256], req[COREDAM_CTL_REQ_MAX];
	int lfd = -1, cfd = -1;
	uid_t uid;
	pid_t pid;
	int status;

	snprintf(path, sizeof(path), "%s", tpath("ctl.sock"));
	CHECK_OK(coredam_ctl_listen(path, &lfd));
	pid = fork();
	if (pid == 0) {
		int r = coredam_ctl_call(path, "PING", buf, sizeof(buf));

		_exit(r > 0 && strcmp(buf, "OK\npong=1\n") == 0 ? 0 : 1);
	}
	for (int i = 0; i < 500 && cfd < 0; i++) {
		if (coredam_ctl_accept(lfd, &cfd, &uid) < 0)
			usleep(10000);
	}
	CHECK(cfd >= 0);
	CHECK_OK(coredam_ctl_read_request(cfd, 2000, req, sizeof(req)));
	CHECK_STREQ(req, "PING");
	CHECK_OK(coredam_ctl_send(cfd, "OK\npong=1\n"));
	close(cfd);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(lfd);
	{
		struct stat st;

		CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	}
	CHECK_ERRNO(coredam_ctl_call(tpath("nope.sock"), "PING", buf, sizeof(buf)), -ENOENT);
}
