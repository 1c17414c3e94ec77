// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <limits.h>

#include "cgroup.h"
#include "test.h"
#include "macro.h"

TEST(io_max_format_parse)
{
	struct coredam_io_limit l = { .major = 8, .minor = 0, .wbps = 10000000 }, p;
	char buf[160];

	CHECK(coredam_io_limit_format(&l, buf, sizeof(buf)) > 0);
	CHECK_STREQ(buf, "8:0 rbps=max wbps=10000000 riops=max wiops=max");
	CHECK_OK(coredam_io_limit_parse(buf, &p));
	CHECK(memcmp(&l, &p, sizeof(l)) == 0);
	CHECK_OK(coredam_io_limit_parse("253:2 wiops=100", &p));
	CHECK(p.major == 253 && p.minor == 2 && p.wiops == 100 && p.wbps == 0);
	CHECK_ERRNO(coredam_io_limit_format(&l, buf, 10), -ENOBUFS);
	CHECK(coredam_io_limit_parse("8:0 wbps=fast", &p) < 0);
	CHECK(coredam_io_limit_parse("8 wbps=1", &p) < 0);
	CHECK(coredam_io_limit_parse("8:0 bogus=1", &p) < 0);
	CHECK(coredam_io_limit_parse("8:0 wbps=0", &p) < 0);
	CHECK(coredam_io_limit_parse("", &p) < 0);
}

TEST(io_max_file_parse)
{
	struct coredam_io_limit *v = NULL;
	size_t n = 0;

	CHECK_OK(coredam_io_max_parse("8:16 rbps=2097152 wbps=max riops=max wiops=120\n"
				      "253:0 rbps=max wbps=30000000 riops=max wiops=max\n", &v, &n));
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK(v[0].major == 8 && v[0].minor == 16 && v[0].rbps == 2097152 && v[0].wiops == 120);
		CHECK(v[1].major == 253 && v[1].wbps == 30000000);
	}
	free(v);
	v = NULL;
	CHECK(coredam_io_max_parse("", &v, &n) == 0 && n == 0 && v == NULL);
	CHECK(coredam_io_max_parse("garbage\n", &v, &n) < 0);
}

static void fake_cgroot(const char *ctrl_root, const char *ctrl_sys)
{
	mkfile("cg/cgroup.controllers", ctrl_root);
	mkfile("cg/cgroup.subtree_control", "");
	mkfile("cg/system.slice/cgroup.controllers", ctrl_sys);
	mkfile("cg/system.slice/cgroup.subtree_control", "");
}

TEST(cgroup_create_and_enable)
{
	struct coredam_error f = { 0 };
	int root, cg = -1;
	char *s;

	fake_cgroot("cpuset cpu io memory pids\n", "io memory pids\n");
	root = open(tpath("cg"), O_RDONLY | O_DIRECTORY);
	CHECK_ERRNO(coredam_cg_open(root, "/system.slice/coredump.slice", false, &cg), -ENOENT);
	CHECK_OK(coredam_cg_open(root, "/system.slice/coredump.slice", true, &cg));
	CHECK(cg >= 0);
	CHECK_OK(coredam_cg_enable_controllers(root, "/system.slice/coredump.slice", &f));
	/* a regular file takes the last write: the last rule written is "+memory" */
	s = slurp("cg/cgroup.subtree_control");
	CHECK(s && strcmp(s, "+memory") == 0);
	free(s);
	s = slurp("cg/system.slice/cgroup.subtree_control");
	CHECK(s && strcmp(s, "+memory") == 0);
	free(s);
	/* the dump cgroup's own subtree_control is never touched */
	CHECK(faccessat(cg, "cgroup.subtree_control", F_OK, 0) < 0);

	/* already enabled: nothing written */
	mkfile("cg/cgroup.subtree_control", "io memory\n");
	mkfile("cg/system.slice/cgroup.subtree_control", "memory io\n");
	CHECK_OK(coredam_cg_enable_controllers(root, "/system.slice/coredump.slice", &f));
	s = slurp("cg/system.slice/cgroup.subtree_control");
	CHECK(s && strcmp(s, "memory io\n") == 0);
	free(s);

	CHECK_ERRNO(coredam_cg_open(root, "/", true, &cg), -EINVAL);
	close(cg);
	close(root);
}

TEST(cgroup_enable_names_parent)
{
	struct coredam_error f = { 0 };
	int root;

	fake_cgroot("cpu io memory\n", "cpu memory\n"); /* io not delegated to system.slice's children */
	mkfile("cg/system.slice/cgroup.subtree_control", "memory\n");
	root = open(tpath("cg"), O_RDONLY | O_DIRECTORY);
	CHECK_ERRNO(coredam_cg_enable_controllers(root, "/system.slice/coredump.slice", &f), -ENOENT);
	CHECK_STREQ(f.where, "/system.slice/cgroup.subtree_control");
	CHECK(strstr(f.msg, "\"io\"") != NULL);
	/* missing io.max in the cgroup: name the parent lacking +io */
	mkfile("cg/system.slice/coredump.slice/memory.high", "max\n");
	memset(&f, 0, sizeof(f));
	CHECK_ERRNO(coredam_cg_check_files(root, "/system.slice/coredump.slice", &f), -ENOENT);
	CHECK_STREQ(f.where, "/system.slice/cgroup.subtree_control");
	CHECK(strstr(f.msg, "lacks +io") != NULL);
	mkfile("cg/system.slice/coredump.slice/io.max", "");
	CHECK(coredam_cg_check_files(root, "/system.slice/coredump.slice", &f) == 0);
	close(root);
}

TEST(cgroup_write_io_max_one_rule_per_write)
{
	struct coredam_io_limit nw[] = { { .major = 8, .minor = 0, .wbps = 20000000 } };
	struct coredam_io_limit old[] = { { .major = 8, .minor = 0, .wbps = 10000000 },
					  { .major = 259, .minor = 0, .wbps = 10000000 } };
	struct coredam_io_limit *v = NULL;
	size_t n = 0;
	int cg;
	char *s;

	/* a FIFO would show us every write; a regular file keeps them appended with O_APPEND-less
	 * writes at increasing offsets from one open: both rules end up in the file in order */
	mkfile("cg/dump/io.max", "");
	cg = open(tpath("cg/dump"), O_RDONLY | O_DIRECTORY);
	CHECK_OK(coredam_cg_write_io_max(cg, nw, 1, old, 2));
	s = slurp("cg/dump/io.max");
	CHECK(s && strcmp(s, "259:0 rbps=max wbps=max riops=max wiops=max"
			     "8:0 rbps=max wbps=20000000 riops=max wiops=max") == 0);
	free(s);
	mkfile("cg/dump/io.max", "8:0 rbps=max wbps=20000000 riops=max wiops=max\n");
	CHECK(coredam_cg_read_io_max(cg, &v, &n) == 0 && n == 1 && v[0].wbps == 20000000);
	free(v);
	CHECK_ERRNO(coredam_cg_write_memory_high(cg, 0), -ENOENT); /* no memory.high: not created */
	mkfile("cg/dump/memory.high", "");
	CHECK_OK(coredam_cg_write_memory_high(cg, 256ULL << 20));
	s = slurp("cg/dump/memory.high");
	CHECK(s && strcmp(s, "268435456") == 0);
	free(s);
	close(cg);
}

TEST(cgroup_procs_events)
{
	pid_t *p = NULL;
	size_t n = 0;
	bool pop = false;
	int cg;

	mkfile("cg/dump/cgroup.procs", "12\n345\n");
	mkfile("cg/dump/cgroup.events", "populated 1\nfrozen 0\n");
	cg = open(tpath("cg/dump"), O_RDONLY | O_DIRECTORY);
	CHECK(coredam_cg_read_procs(cg, &p, &n) == 0 && n == 2 && p[0] == 12 && p[1] == 345);
	free(p);
	CHECK(coredam_cg_populated(cg, &pop) == 0 && pop);
	close(cg);
}

TEST(proc_cgroup_parse)
{
	char buf[16], big[256];

	CHECK(coredam_proc_cgroup_parse("0::/a/b\n", false, big, sizeof(big)) == 0);
	CHECK_STREQ(big, "/a/b");
	/* a v1 hierarchy before it */
	CHECK(coredam_proc_cgroup_parse("12:pids:/x\n0::/user.slice\n", false, big, sizeof(big)) == 0);
	CHECK_STREQ(big, "/user.slice");
	/* a name holding a newline and a forged line: the whole rest is the path */
	CHECK(coredam_proc_cgroup_parse("0::/c/a\n0::/probe\n", false, big, sizeof(big)) == 0);
	CHECK_STREQ(big, "/c/a\n0::/probe");
	/* too long: refused, or its longest ancestor */
	CHECK_ERRNO(coredam_proc_cgroup_parse("0::/aaaa/bbbb/cccccccc\n", false, buf, sizeof(buf)), -ENOBUFS);
	CHECK(coredam_proc_cgroup_parse("0::/aaaa/bbbb/cccccccc\n", true, buf, sizeof(buf)) == 1);
	CHECK_STREQ(buf, "/aaaa/bbbb");
	CHECK(coredam_proc_cgroup_parse("0::/aaaaaaaaaaaaaaaaaaaa\n", true, buf, sizeof(buf)) == 1);
	CHECK_STREQ(buf, "/");
	CHECK_ERRNO(coredam_proc_cgroup_parse("1:name=systemd:/\n", false, big, sizeof(big)), -ENOENT);
	CHECK_ERRNO(coredam_proc_cgroup_parse("", false, big, sizeof(big)), -ENOENT);
	CHECK_ERRNO(coredam_proc_cgroup_parse("0::relative\n", false, big, sizeof(big)), -ENOENT);
}

TEST(cgroup_path_under)
{
	CHECK(coredam_cg_path_under("/a/b", "/a"));
	CHECK(coredam_cg_path_under("/a", "/a"));
	CHECK(!coredam_cg_path_under("/ab", "/a"));
	CHECK(!coredam_cg_path_under("/a", "/a/b"));
	CHECK(coredam_cg_path_under("/a", "/"));
}

static bool has_path(char (*v)[PATH_MAX], size_t n, const char *p)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], p) == 0)
			return true;
	return false;
}

TEST(cgroup_free_subtrees)
{
	static char v[8][PATH_MAX];
	const char *held[] = { "/system.slice/apache.service", "/crashers" };
	size_t n = 0;
	int root;

	mkdirs("fg/system.slice/apache.service/worker");
	mkdirs("fg/system.slice/sshd.service");
	mkdirs("fg/system.slice/db.service/sub");
	mkfile("fg/system.slice/io.pressure", "");
	mkdirs("fg/crashers/child");
	mkdirs("fg/probe");
	root = open(tpath("fg"), O_RDONLY | O_DIRECTORY);
	CHECK(root >= 0);
	/* nothing held below: the cgroup itself */
	CHECK_OK(coredam_cg_free_subtrees(root, "/probe", held, 2, v, 8, &n));
	CHECK(n == 1 && strcmp(v[0], "/probe") == 0);
	/* a service holds a dumper: its siblings, whole, and nothing of its own */
	CHECK_OK(coredam_cg_free_subtrees(root, "/system.slice", held, 2, v, 8, &n));
	CHECK_EQ_INT(n, 3);
	CHECK(has_path(v, n, "/system.slice/sshd.service"));
	CHECK(has_path(v, n, "/system.slice/db.service"));
	CHECK(has_path(v, n, "/system.slice/apache.service/worker"));
	/* the watched cgroup itself holds it: only what is below it */
	CHECK_OK(coredam_cg_free_subtrees(root, "/crashers", held, 2, v, 8, &n));
	CHECK(n == 1 && strcmp(v[0], "/crashers/child") == 0);
	/* no room for all: E2BIG, and what fitted */
	CHECK_ERRNO(coredam_cg_free_subtrees(root, "/system.slice", held, 2, v, 2, &n), -E2BIG);
	CHECK_EQ_INT(n, 2);
	/* a cgroup gone meanwhile: nothing to watch, no error */
	CHECK_OK(coredam_cg_free_subtrees(root, "/gone", (const char *[]){ "/gone/x" }, 1, v, 8, &n));
	CHECK_EQ_INT(n, 0);
	CHECK_ERRNO(coredam_cg_free_subtrees(root, "../up", held, 2, v, 8, &n), -EINVAL);
	close(root);
}

TEST(pipe_cgroup_helpers)
{
	char buf[256];

	mkfile("proc/self/mountinfo",
	       "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n"
	       "30 22 0:26 / /sys/fs/cg\\040two rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
	CHECK(coredam_cg2_mount(tpath("proc"), buf, sizeof(buf)) == 0);
	CHECK_STREQ(buf, "/sys/fs/cg two");
	mkfile("proc2/self/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n");
	CHECK_ERRNO(coredam_cg2_mount(tpath("proc2"), buf, sizeof(buf)), -ENOENT);

	mkfile("proc/55/cgroup", "0::/coredump.slice\n");
	CHECK(coredam_cg_of_pid(tpath("proc"), 55, buf, sizeof(buf)) == 0);
	CHECK_STREQ(buf, "/coredump.slice");

	mkfile("cg/coredump.slice/cgroup.procs", "");
	{
		int root = open(tpath("cg"), O_RDONLY | O_DIRECTORY), cg = -1;
		char *s;

		CHECK_OK(coredam_cg_open(root, "/coredump.slice", false, &cg));
		CHECK_OK(coredam_cg_attach(cg, 1234));
		s = slurp("cg/coredump.slice/cgroup.procs");
		CHECK(s && strcmp(s, "1234\n") == 0);
		free(s);
		close(cg);
		close(root);
	}
}

/* mountinfo lines as Debian 12 and Debian 11 with systemd's hybrid setting write them */
#define MI_ROOT "22 1 254:1 / / rw,relatime shared:1 - ext4 /dev/vda rw\n"
#define MI_V2 "30 24 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate\n"
#define MI_TMPFS "30 24 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec shared:4 - tmpfs tmpfs ro,mode=755\n"
#define MI_UNIFIED "31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:5 - cgroup2 cgroup2 rw\n"
#define MI_V1(n, c) "3" #n " 30 0:3" #n " / /sys/fs/cgroup/" c " rw,nosuid,nodev,noexec,relatime shared:1" #n " - cgroup cgroup rw," c "\n"

TEST(cgroup_layout_unified_hybrid_legacy)
{
	struct coredam_cg_layout l;
	char advice[2 * PATH_MAX + 400];

	coredam_cg_layout_parse(MI_ROOT MI_V2, "/sys/fs/cgroup", &l);
	CHECK_EQ_INT(l.mode, COREDAM_CG_UNIFIED);
	CHECK_STREQ(l.v2, "/sys/fs/cgroup");
	CHECK(coredam_cg_layout_advice(&l, "/sys/fs/cgroup", advice, sizeof(advice)) == NULL);

	coredam_cg_layout_parse(MI_ROOT MI_TMPFS MI_UNIFIED MI_V1(2, "memory") MI_V1(3, "blkio"), "/sys/fs/cgroup", &l);
	CHECK_EQ_INT(l.mode, COREDAM_CG_HYBRID);
	CHECK_EQ_INT(l.n_v1, 2);
	CHECK_STREQ(l.v2, "/sys/fs/cgroup/unified");
	CHECK(coredam_cg_layout_advice(&l, "/sys/fs/cgroup", advice, sizeof(advice)) != NULL);
	/* the advice is a reboot, never a mount over the v1 tree */
	CHECK(strstr(advice, "systemd.unified_cgroup_hierarchy=1") && !strstr(advice, "mount -t"));

	coredam_cg_layout_parse(MI_ROOT MI_TMPFS MI_V1(2, "memory"), "/sys/fs/cgroup", &l);
	CHECK_EQ_INT(l.mode, COREDAM_CG_LEGACY);
	CHECK(strstr(coredam_cg_layout_advice(&l, "/sys/fs/cgroup", advice, sizeof(advice)), "v1 only"));

	/* v2 alone, elsewhere (a space in the path comes escaped) */
	coredam_cg_layout_parse(MI_ROOT "40 22 0:40 / /mnt/cg\\0402 rw - cgroup2 none rw\n", "/sys/fs/cgroup", &l);
	CHECK_EQ_INT(l.mode, COREDAM_CG_ELSEWHERE);
	CHECK_STREQ(l.v2, "/mnt/cg 2");
	CHECK(strstr(coredam_cg_layout_advice(&l, "/sys/fs/cgroup", advice, sizeof(advice)), "--cgroup-root=/mnt/cg 2"));
	/* ... which is the root when it is pointed there */
	coredam_cg_layout_parse(MI_ROOT "40 22 0:40 / /mnt/cg\\0402 rw - cgroup2 none rw\n", "/mnt/cg 2", &l);
	CHECK_EQ_INT(l.mode, COREDAM_CG_UNIFIED);

	coredam_cg_layout_parse(MI_ROOT, "/sys/fs/cgroup", &l);
	CHECK_EQ_INT(l.mode, COREDAM_CG_NONE);
	CHECK(strstr(coredam_cg_layout_advice(&l, "/sys/fs/cgroup", advice, sizeof(advice)), "mount -t cgroup2"));
	/* garbage, a line without its separator, no newline at the end */
	coredam_cg_layout_parse("x\n\n1 2 3 4 /sys/fs/cgroup rw cgroup2\n" MI_V2 "junk", "/sys/fs/cgroup", &l);
	CHECK_EQ_INT(l.mode, COREDAM_CG_UNIFIED);
	coredam_cg_layout_parse("", "/sys/fs/cgroup", &l);
	CHECK_EQ_INT(l.mode, COREDAM_CG_NONE);
}

TEST(cgroup_leaf_path)
{
	char b[64];

	CHECK_OK(coredam_cg_leaf_path("/coredump.slice", "auto", true, b, sizeof(b)));
	CHECK_STREQ(b, "/coredump.slice/coredump-kernel.slice");
	CHECK_OK(coredam_cg_leaf_path("/system.slice/coredump.slice", "auto", true, b, sizeof(b)));
	CHECK_STREQ(b, "/system.slice/coredump.slice/coredump-kernel.slice");
	/* without systemd, or not a slice: Path itself */
	CHECK_OK(coredam_cg_leaf_path("/coredump.slice", "auto", false, b, sizeof(b)));
	CHECK_STREQ(b, "/coredump.slice");
	CHECK_OK(coredam_cg_leaf_path("/coredumps", "auto", true, b, sizeof(b)));
	CHECK_STREQ(b, "/coredumps");
	CHECK_OK(coredam_cg_leaf_path("/.slice", "auto", true, b, sizeof(b)));
	CHECK_STREQ(b, "/.slice");
	CHECK_OK(coredam_cg_leaf_path("/coredump.slice", "none", true, b, sizeof(b)));
	CHECK_STREQ(b, "/coredump.slice");
	CHECK_OK(coredam_cg_leaf_path("/coredump.slice", "dumps", false, b, sizeof(b)));
	CHECK_STREQ(b, "/coredump.slice/dumps");
	CHECK(coredam_cg_leaf_path("/coredump.slice", "a-very-long-leaf-name-that-does-not-fit-in-the-buffer", false,
				   b, sizeof(b)) < 0);
}
