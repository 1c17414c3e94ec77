// SPDX-License-Identifier: LGPL-2.1-or-later
/* Admission and the space guard, and the ELF completeness check that marks cores cut short. */
#include <elf.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "meta.h"
#include "space.h"
#include "test.h"
#include "macro.h"

TEST(admission_and_space_guard)
{
	struct coredam_config c;
	struct coredam_budget b = { .wbps = 1, .concurrency = 3 };
	struct coredam_admission a;
	struct coredam_space sp;

	coredam_config_init(&c);
	c.wait_timeout_usec = 500; /* under a millisecond: still a timeout */
	coredam_admission_eval(&c, &b, false, 0, 0, &a);
	CHECK(a.concurrency == 3 && a.waiting == 64 && a.timeout_ms == 1 && !a.memory_bound);
	coredam_admission_eval(&c, &b, true, 0, 0, &a);
	CHECK(a.concurrency == 1 && a.waiting == 1 && a.timeout_ms == 1);

	/* 1 GiB for waiters that hold 200 MiB each: 5 places, not 64 */
	coredam_admission_eval(&c, &b, false, 1ULL << 30, 200ULL << 20, &a);
	CHECK(a.waiting == 5 && a.memory_bound);
	/* 64 places of 1 MiB fit in 1 GiB: the count cap stays */
	coredam_admission_eval(&c, &b, false, 1ULL << 30, 1ULL << 20, &a);
	CHECK(a.waiting == 64 && !a.memory_bound);
	/* one dumper larger than the bound: still one place */
	coredam_admission_eval(&c, &b, false, 1ULL << 30, 2ULL << 30, &a);
	CHECK(a.waiting == 1 && a.memory_bound);
	/* no dumper seen yet, or no bound: the count cap */
	coredam_admission_eval(&c, &b, false, 1ULL << 30, 0, &a);
	CHECK(a.waiting == 64 && !a.memory_bound);
	/* QueueCap=infinity: the memory is the only cap */
	c.queue_cap = 0;
	coredam_admission_eval(&c, &b, false, 1ULL << 30, 100ULL << 20, &a);
	CHECK(a.waiting == 10 && a.memory_bound);
	coredam_admission_eval(&c, &b, false, 0, 100ULL << 20, &a);
	CHECK(a.waiting == 0 && !a.memory_bound);
	/* below the space floor the squeeze wins */
	coredam_admission_eval(&c, &b, true, 1ULL << 30, 100ULL << 20, &a);
	CHECK(a.waiting == 1 && a.concurrency == 1 && !a.memory_bound);
	c.queue_cap = 64;

	/* the estimate: the present dumpers', else the last ones' for ten minutes */
	{
		uint64_t seen = 0, est;

		est = coredam_pin_estimate(0, &seen, 300, 1000);
		CHECK(est == 300 && seen == 1000);
		est = coredam_pin_estimate(est, &seen, 100, 2000);	/* smaller ones now: theirs */
		CHECK(est == 100 && seen == 2000);
		est = coredam_pin_estimate(est, &seen, 0, 2000 + COREDAM_PIN_FORGET_USEC);
		CHECK(est == 100 && seen == 2000);
		est = coredam_pin_estimate(est, &seen, 0, 2001 + COREDAM_PIN_FORGET_USEC);
		CHECK(est == 0);
	}

	coredam_space_eval(&c, 2ULL << 30, 100ULL << 30, &sp);
	CHECK(!sp.below && sp.floor_bytes == 1ULL << 30);
	coredam_space_eval(&c, 512ULL << 20, 100ULL << 30, &sp);
	CHECK(sp.below);
	c.free_floor_percent = 5;
	coredam_space_eval(&c, 2ULL << 30, 100ULL << 30, &sp);
	CHECK(sp.below && sp.floor_bytes == 5ULL << 30);
	c.free_floor_bytes = 0;
	c.free_floor_percent = 0;
	coredam_space_eval(&c, 0, 100ULL << 30, &sp);
	CHECK(!sp.below); /* floor off */

	/* by path and by an open directory: the same file system, the same figures */
	{
		struct coredam_space by_fd;
		int fd = open(tmp_root(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		c.free_floor_bytes = UINT64_MAX / 2;	/* no file system has that much free */
		CHECK(coredam_space_check(&c, tmp_root(), &sp) == 0 && sp.below && sp.total_bytes > 0);
		CHECK(fd >= 0 && coredam_space_check_fd(&c, fd, &by_fd) == 0);
		CHECK(by_fd.below && by_fd.total_bytes == sp.total_bytes && by_fd.floor_bytes == sp.floor_bytes);
		CHECK_ERRNO(coredam_space_check_fd(&c, -1, &by_fd), -EBADF);
		if (fd >= 0)
			close(fd);
	}
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
