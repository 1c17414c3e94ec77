// SPDX-License-Identifier: LGPL-2.1-or-later
/* Retention of the kept cores: oldest first, within MaxUse= and KeepFree=, only what is ours. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "meta.h"
#include "path-util.h"
#include "retention.h"
#include "test.h"
#include "macro.h"

/* A file of @size bytes (not sparse: every block written) under the test's "kept". */
static void put_bytes(const char *name, size_t size)
{
	char rel[PATH_MAX];
	_cleanup_free_ char *buf = malloc(size ? size : 1);
	FILE *f;

	snprintf(rel, sizeof(rel), "kept/%s", name);
	f = fopen(tpath(rel), "w");
	CHECK(f != NULL && buf != NULL);
	if (!f || !buf) {
		if (f)
			fclose(f);
		return;
	}
	memset(buf, 'c', size);
	CHECK(fwrite(buf, 1, size, f) == size);
	CHECK(fflush(f) == 0 && fsync(fileno(f)) == 0);
	fclose(f);
}

/* The store's metadata for @core (crash time @time), and the core of @size bytes when @size. */
static void keep_core(const char *core, pid_t pid, uint64_t time, size_t size)
{
	struct coredam_core_meta m = { .core = core, .pid = pid, .uid = 1000, .gid = 1000, .signal = 11,
				       .time = time, .comm = "crasher", .size = size, .disk_size = size,
				       .compression = "none", .rlimit = UINT64_MAX, .dumpable = 1 };
	char buf[4096], name[NAME_MAX + 1], rel[PATH_MAX];

	CHECK(coredam_meta_format(&m, buf, sizeof(buf)) > 0);
	snprintf(name, sizeof(name), "%s.json", core);
	snprintf(rel, sizeof(rel), "kept/%s", name);
	mkfile(rel, buf);
	if (size)
		put_bytes(core, size);
}

static bool there(const char *name)
{
	char rel[PATH_MAX];
	struct stat st;

	snprintf(rel, sizeof(rel), "kept/%s", name);
	return fstatat(AT_FDCWD, tpath(rel), &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Disk use of a kept core as retention counts it: the core's blocks and its metadata's. */
static uint64_t use_of(const char *core)
{
	char rel[PATH_MAX];
	struct stat st;
	uint64_t u = 0;

	snprintf(rel, sizeof(rel), "kept/%s", core);
	if (stat(tpath(rel), &st) == 0)
		u += (uint64_t)st.st_blocks * 512;
	snprintf(rel, sizeof(rel), "kept/%s.json", core);
	if (stat(tpath(rel), &st) == 0)
		u += (uint64_t)st.st_blocks * 512;
	return u;
}

/*
 * Four kept cores, oldest (by the metadata's time, not the files' mtime:
 * written newest first) to newest, and what is not ours around them.
 */
static const char *const CORES[] = { "core.a.10.100", "core.b.20.200", "core.c.30.300.zst", "core.d.40.400" };

static void setup(void)
{
	mkdirs("kept");
	mkdirs("outside");
	keep_core(CORES[3], 40, 400, 96 << 10);
	keep_core(CORES[2], 30, 300, 64 << 10);
	keep_core(CORES[1], 20, 200, 128 << 10);
	keep_core(CORES[0], 10, 100, 32 << 10);
	/* not ours: a writer's temporary, a user's file, a core without metadata, metadata of another name */
	put_bytes(".core.e.50.500.777.tmp", 256 << 10);
	put_bytes("notes.txt", 256 << 10);
	put_bytes("core.nometa.60.50", 256 << 10);
	keep_core("dump.f.70", 70, 50, 64 << 10);
	/* a metadata file that is a symbolic link, and a "core" that is one, to a file elsewhere */
	mkfile("outside/precious", "do not remove");
	CHECK_OK(symlink(tpath("kept/core.a.10.100.json"), tpath("kept/core.l.80.60.json")));
	keep_core("core.s.90.70", 90, 70, 0);
	CHECK_OK(symlink(tpath("outside/precious"), tpath("kept/core.s.90.70")));
}

static bool foreign_intact(void)
{
	return there(".core.e.50.500.777.tmp") && there("notes.txt") && there("core.nometa.60.50") &&
	       there("dump.f.70") && there("dump.f.70.json") && there("core.l.80.60.json") && there("core.s.90.70") &&
	       access(tpath("outside/precious"), F_OK) == 0;
}

static int vacuum(uint64_t max_use, uint64_t keep_free, uint64_t free_bytes, const char *keep, unsigned int flags,
		  struct coredam_retention_result *res)
{
	struct coredam_retention_limits lim = { .max_use = max_use, .keep_free = keep_free };
	int dfd, r;

	r = open_dir_at(AT_FDCWD, tpath("kept"), &dfd);
	CHECK_OK(r);
	if (r < 0)
		return r;
	r = coredam_retention_vacuum_limits(dfd, &lim, free_bytes, keep, flags, NULL, NULL, res);
	close(dfd);
	return r;
}

/* Used by everything that is ours: the four cores and core.s's metadata (its "core" is a link: missing). */
static uint64_t ours_total(void)
{
	uint64_t u = use_of("core.s.90.70.json");

	for (size_t i = 0; i < ELEMENTSOF(CORES); i++)
		u += use_of(CORES[i]);
	return u;
}

TEST(retention_oldest_first_to_max_use)
{
	struct coredam_retention_result res;
	uint64_t total, a, s, b;

	setup();
	total = ours_total();
	a = use_of(CORES[0]);
	s = use_of("core.s.90.70.json");
	b = use_of(CORES[1]);
	/* room for all but the three oldest: core.s's metadata (time 70), a (100), b (200) */
	CHECK_OK(vacuum(total - a - s - b, 0, 0, CORES[3], 0, &res));
	CHECK_EQ_INT(res.removed, 3);
	CHECK_EQ_INT(res.removed_bytes, a + s + b);
	CHECK_EQ_INT(res.use_before, total);
	CHECK_EQ_INT(res.use_after, total - a - s - b);
	CHECK_EQ_INT(res.kept, 2);
	CHECK(res.within);
	CHECK(!there(CORES[0]) && !there("core.a.10.100.json"));
	CHECK(!there(CORES[1]) && !there("core.b.20.200.json"));
	CHECK(!there("core.s.90.70.json"));
	CHECK(there(CORES[2]) && there("core.c.30.300.zst.json"));
	CHECK(there(CORES[3]) && there("core.d.40.400.json"));
	/* never followed, never touched */
	CHECK(foreign_intact());

	/* within now: a second run removes nothing */
	CHECK_OK(vacuum(total - a - s - b, 0, 0, CORES[3], 0, &res));
	CHECK_EQ_INT(res.removed, 0);
}

TEST(retention_keep_free)
{
	struct coredam_retention_result res;
	uint64_t s, a;

	setup();
	s = use_of("core.s.90.70.json");
	a = use_of(CORES[0]);
	/* 1 GiB free, KeepFree= one byte more than the two oldest free: the third goes too */
	CHECK_OK(vacuum(UINT64_MAX, (1ULL << 30) + s + a + 1, 1ULL << 30, NULL, 0, &res));
	CHECK_EQ_INT(res.removed, 3);
	CHECK_EQ_INT(res.free_after, (1ULL << 30) + res.removed_bytes);
	CHECK(!there(CORES[0]) && !there(CORES[1]));
	CHECK(there(CORES[2]) && there(CORES[3]));
	CHECK(foreign_intact());
}

TEST(retention_keeps_the_core_just_stored)
{
	struct coredam_retention_result res;

	setup();
	/* far over: everything ours goes but the one just stored, even the oldest of all */
	CHECK_OK(vacuum(1, 0, 0, CORES[0], 0, &res));
	CHECK_EQ_INT(res.removed, 4);
	CHECK_EQ_INT(res.kept, 1);
	CHECK(!res.within);
	CHECK(there(CORES[0]) && there("core.a.10.100.json"));
	for (size_t i = 1; i < ELEMENTSOF(CORES); i++)
		CHECK(!there(CORES[i]));
	CHECK(foreign_intact());

	/* renamed .incomplete by the agent after it was stored: still the one just stored */
	CHECK_OK(renameat(AT_FDCWD, tpath("kept/core.a.10.100"), AT_FDCWD, tpath("kept/core.a.10.100.incomplete")));
	CHECK_OK(vacuum(1, 0, 0, CORES[0], 0, &res));
	CHECK_EQ_INT(res.removed, 0);
	CHECK(there("core.a.10.100.incomplete"));
}

TEST(retention_dry_run_removes_nothing)
{
	struct coredam_retention_result res;
	uint64_t total;

	setup();
	total = ours_total();
	CHECK_OK(vacuum(1, 0, 0, CORES[3], COREDAM_RETENTION_DRY_RUN, &res));
	CHECK_EQ_INT(res.removed, 4);
	CHECK_EQ_INT(res.use_before, total);
	for (size_t i = 0; i < ELEMENTSOF(CORES); i++)
		CHECK(there(CORES[i]));
	CHECK(there("core.s.90.70.json"));
	CHECK(foreign_intact());
}

TEST(retention_keep_newest)
{
	struct coredam_retention_result res;

	setup();
	/* coredamctl vacuum: nothing just stored, the newest by time stays (d, written first) */
	CHECK_OK(vacuum(1, 0, 0, NULL, COREDAM_RETENTION_KEEP_NEWEST, &res));
	CHECK_EQ_INT(res.removed, 4);
	CHECK_EQ_INT(res.kept, 1);
	CHECK(there(CORES[3]) && there("core.d.40.400.json"));
	CHECK(!there(CORES[0]) && !there(CORES[1]) && !there(CORES[2]));
	CHECK(foreign_intact());
}

TEST(retention_no_limits_reads_nothing)
{
	struct coredam_retention_result res;

	setup();
	CHECK_OK(vacuum(UINT64_MAX, 0, 0, NULL, 0, &res));
	CHECK_EQ_INT(res.removed, 0);
	CHECK_EQ_INT(res.use_before, 0);
	CHECK(res.within);
	for (size_t i = 0; i < ELEMENTSOF(CORES); i++)
		CHECK(there(CORES[i]));
}

TEST(retention_leaves_another_users_files)
{
	struct coredam_retention_result res;

	if (geteuid() != 0)
		return;	/* cannot give a file away */
	setup();
	CHECK_OK(chown(tpath("kept/core.b.20.200"), 1234, 1234));
	CHECK_OK(vacuum(1, 0, 0, CORES[3], 0, &res));
	CHECK(there(CORES[1]) && there("core.b.20.200.json"));
	CHECK(!there(CORES[0]) && !there(CORES[2]));
}

/*
 * MaxAge=: every core that crashed before the cut goes, oldest first,
 * whatever room is left; the one just stored stays however old.
 */
TEST(retention_max_age)
{
	struct coredam_retention_result res;
	struct coredam_retention_limits lim = { .max_use = UINT64_MAX, .older_than = 250 };
	int dfd;

	setup();
	CHECK_OK(open_dir_at(AT_FDCWD, tpath("kept"), &dfd));
	/* crashed at 70 (core.s's metadata), 100 and 200: gone; 300 and 400 stay */
	CHECK_OK(coredam_retention_vacuum_limits(dfd, &lim, 1ULL << 40, NULL, 0, NULL, NULL, &res));
	CHECK_EQ_INT(res.removed, 3);
	CHECK(!there(CORES[0]) && !there(CORES[1]) && !there("core.s.90.70.json"));
	CHECK(there(CORES[2]) && there(CORES[3]));
	CHECK(res.within && res.kept == 2);
	CHECK(foreign_intact());
	/* the core just stored is kept past the cut */
	lim.older_than = 1000;
	CHECK_OK(coredam_retention_vacuum_limits(dfd, &lim, 1ULL << 40, CORES[3], 0, NULL, NULL, &res));
	CHECK_EQ_INT(res.removed, 1);
	CHECK(!there(CORES[2]) && there(CORES[3]));
	close(dfd);
}

TEST(retention_limits_from_the_config)
{
	struct coredam_config c;
	struct coredam_retention_limits lim;
	struct coredam_error e;

	coredam_config_init(&c);
	/* defaults: MaxUse= 10% capped at 4G, KeepFree= twice the floor (1G) */
	coredam_retention_limits(&c, 10ULL << 30, 1000000, &lim);
	CHECK_EQ_INT(lim.max_use, (10ULL << 30) / 100 * 10);
	CHECK_EQ_INT(lim.keep_free, 2ULL << 30);
	coredam_retention_limits(&c, 1ULL << 40, 1000000, &lim);
	CHECK_EQ_INT(lim.max_use, 4ULL << 30);
	CHECK_OK(coredam_config_set(&c, "Space", "FreeSpaceFloor", "100M 5%", &e));
	coredam_retention_limits(&c, 10ULL << 30, 1000000, &lim);
	CHECK_EQ_INT(lim.keep_free, 2 * ((10ULL << 30) / 100 * 5));
	CHECK_OK(coredam_config_set(&c, "Space", "MaxUse", "infinity", &e));
	CHECK_OK(coredam_config_set(&c, "Space", "KeepFree", "0", &e));
	coredam_retention_limits(&c, 10ULL << 30, 1000000, &lim);
	CHECK(lim.max_use == UINT64_MAX);
	CHECK_EQ_INT(lim.keep_free, 0);
	CHECK_OK(coredam_config_set(&c, "Space", "MaxUse", "1G", &e));
	CHECK_OK(coredam_config_set(&c, "Space", "KeepFree", "3G 10%", &e));
	coredam_retention_limits(&c, 100ULL << 30, 1000000, &lim);
	CHECK_EQ_INT(lim.max_use, 1ULL << 30);
	CHECK_EQ_INT(lim.keep_free, (100ULL << 30) / 100 * 10);
	/* MaxAge=: none by default (above), else counted back from now */
	CHECK_EQ_INT(lim.older_than, 0);
	CHECK_OK(coredam_config_set(&c, "Space", "MaxAge", "3d", &e));
	coredam_retention_limits(&c, 100ULL << 30, 1000000, &lim);
	CHECK_EQ_INT(lim.older_than, 1000000 - 3 * 86400);
	CHECK_OK(coredam_config_set(&c, "Space", "MaxAge", "infinity", &e));
	coredam_retention_limits(&c, 100ULL << 30, 1000000, &lim);
	CHECK_EQ_INT(lim.older_than, 0);
}
