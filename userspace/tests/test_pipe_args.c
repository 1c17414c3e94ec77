// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe's library: the kernel's arguments, names, modes, read ACL, RLIMIT_CORE. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/inotify.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <grp.h>
#include <time.h>
#include <unistd.h>

#include "meta.h"
#include "pipe-args.h"
#include "test.h"
#include "macro.h"

TEST(pipe_args)
{
	char *full[] = { "/var/lib/coredam/cores", "4242", "1000", "100", "11", "1700000000",
			 "18446744073709551615", "2", "my", "prog" };
	char *min[] = { "/d", "7", "0", "0", "6", "1" };
	char *bad_pid[] = { "/d", "0", "0", "0", "6", "1" };
	char *rel[] = { "d", "7", "0", "0", "6", "1" };
	char *bad_dump[] = { "/d", "7", "0", "0", "6", "1", "0", "3" };
	struct coredam_pipe_args a;

	CHECK_OK(coredam_pipe_args_parse(ELEMENTSOF(full), full, &a));
	CHECK_STREQ(a.dir, "/var/lib/coredam/cores");
	CHECK_EQ_INT(a.pid, 4242);
	CHECK_EQ_INT(a.uid, 1000);
	CHECK_EQ_INT(a.gid, 100);
	CHECK_EQ_INT(a.signal, 11);
	CHECK(a.time == 1700000000);
	CHECK(a.have_rlimit && a.rlimit == UINT64_MAX);
	CHECK_EQ_INT(a.dumpable, 2);
	CHECK_STREQ(a.comm, "my prog");	/* split %e joined back */

	CHECK_OK(coredam_pipe_args_parse(ELEMENTSOF(min), min, &a));
	CHECK(!a.have_rlimit && a.dumpable == COREDAM_DUMPABLE_UNKNOWN && a.comm[0] == '\0');
	CHECK_ERRNO(coredam_pipe_args_parse(ELEMENTSOF(bad_pid), bad_pid, &a), -EINVAL);
	CHECK_ERRNO(coredam_pipe_args_parse(ELEMENTSOF(rel), rel, &a), -EINVAL);
	CHECK_ERRNO(coredam_pipe_args_parse(ELEMENTSOF(bad_dump), bad_dump, &a), -EINVAL);
	CHECK_ERRNO(coredam_pipe_args_parse(3, full, &a), -EINVAL);
}

/* @in as coredam_pipe_sanitize() makes it part of a name, in @size bytes */
static const char *sanitized(const char *in, size_t size)
{
	static char out[64];

	coredam_pipe_sanitize(in, out, MIN(size, sizeof(out)));
	return out;
}

TEST(pipe_names_never_trust_comm)
{
	struct coredam_pipe_args a = { .pid = 12, .time = 99 };
	char name[256];

	CHECK_STREQ(sanitized("../../etc/x", 64), "_._.._etc_x");
	CHECK_STREQ(sanitized("a\nb\tc d", 64), "a_b_c_d");
	CHECK_STREQ(sanitized(".hidden", 64), "_hidden");
	CHECK_STREQ(sanitized("", 64), "_");
	CHECK_STREQ(sanitized("abcdefghijklmnopqrstuvwxyz", 64), "abcdefghijklmno");
	CHECK_STREQ(sanitized("\xc3\xa9t\xc3\xa9", 64), "__t__");
	CHECK_STREQ(sanitized("abc", 3), "ab");

	snprintf(a.comm, sizeof(a.comm), "../x");
	CHECK(coredam_pipe_core_name(&a, false, name, sizeof(name)) > 0);
	CHECK_STREQ(name, "core._._x.12.99");
	CHECK(!strchr(name, '/'));
	CHECK(coredam_pipe_core_name(&a, true, name, sizeof(name)) > 0);
	CHECK_STREQ(name, "core._._x.12.99.zst");
}

TEST(pipe_rlimit_from_proc)
{
	uint64_t v = 7;

	mkfile("proc/10/limits", "Limit                     Soft Limit           Hard Limit           Units     \n"
				 "Max cpu time              unlimited            unlimited            seconds   \n"
				 "Max core file size        0                    unlimited            bytes     \n");
	mkfile("proc/11/limits", "Limit  Soft Hard Units\nMax core file size        unlimited            unlimited            bytes     \n");
	mkfile("proc/12/limits", "Limit  Soft Hard Units\nMax core file size        1048576              unlimited            bytes     \n");
	CHECK(coredam_pipe_read_rlimit(tpath("proc"), 10, &v) == 0 && v == 0);
	CHECK(coredam_pipe_read_rlimit(tpath("proc"), 11, &v) == 0 && v == UINT64_MAX);
	CHECK(coredam_pipe_read_rlimit(tpath("proc"), 12, &v) == 0 && v == 1048576);
	CHECK_ERRNO(coredam_pipe_read_rlimit(tpath("proc"), 13, &v), -ENOENT);
}

/*
 * A core_pattern without %d made the helper assume dumpable=1: the core of
 * a setuid program (suid_dumpable=2) went to the user who crashed it, with
 * the program's secrets (the CVE-2022-4415 class). Unknown is now root's.
 */
TEST(pipe_no_dumpable_is_not_the_users)
{
	char *no_d[] = { "/d", "7", "1000", "100", "6", "1", "0" };
	char *one[] = { "/d", "7", "1000", "100", "6", "1", "0", "1" };
	struct coredam_pipe_args a;
	struct coredam_pipe_files f;
	struct coredam_core_meta m = { .core = "c", .comm = "x", .compression = "none" };
	char buf[2048];

	CHECK_OK(coredam_pipe_args_parse(ELEMENTSOF(no_d), no_d, &a));
	CHECK_EQ_INT(a.dumpable, COREDAM_DUMPABLE_UNKNOWN);
	coredam_pipe_files(&a, &f);
	CHECK_EQ_INT(f.core_mode, 0400);
	CHECK_EQ_INT(f.meta_mode, 0600);
	m.dumpable = a.dumpable;
	CHECK(coredam_meta_format(&m, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "\"dumpable\": null") != NULL);

	CHECK_OK(coredam_pipe_args_parse(ELEMENTSOF(one), one, &a));
	CHECK_EQ_INT(a.dumpable, 1);
	coredam_pipe_files(&a, &f);
	CHECK_EQ_INT(f.core_mode, 0640);
	a.dumpable = 0;	/* not dumpable to the user either */
	coredam_pipe_files(&a, &f);
	CHECK_EQ_INT(f.core_mode, 0400);
}

/*
 * The helper gave the core to %u, the real uid: a root process that had
 * changed only its real uid (or a setuid program under suid_dumpable=1)
 * handed its memory to that user, who then owned the file. Now the core
 * stays root's and the user may read it only when the core's notes say
 * the process ran as that user from exec to dump, with no setuid bit.
 */
TEST(pipe_user_may_read_by_the_notes)
{
	struct coredam_pipe_args a = { .pid = 1, .uid = 1000, .gid = 100, .dumpable = 1 };
	const struct coredam_core_creds ok = { 1000, 100, 1000, 1000, 100, 100, 0 };
	struct coredam_core_creds c = ok;

	CHECK(coredam_pipe_user_may_read(&a, &c));
	/* root that set only its real uid to 1000: exec'd as root */
	c.at_uid = c.at_euid = 0;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	/* a setuid or setgid program, by its ids or by AT_SECURE alone */
	c = ok, c.at_euid = 0;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	c = ok, c.at_egid = 0;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	c = ok, c.at_secure = 1;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	/* another uid or gid at the dump than %u:%g says (another user namespace) */
	c = ok, c.uid = 0;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	c = ok, c.gid = 0;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	/* notes not read */
	c = ok, c.at_secure = COREDAM_ELF_NO_ID;
	CHECK(!coredam_pipe_user_may_read(&a, &c));
	/* %d other than 1, or unknown */
	c = ok;
	for (int d = -1; d <= 2; d++) {
		a.dumpable = d;
		CHECK(coredam_pipe_user_may_read(&a, &c) == (d == 1));
	}
	/* root, system accounts, nobody */
	const uid_t never[] = { 0, 1, 999, 65534, 65535, (uid_t)-1 };

	for (size_t i = 0; i < ELEMENTSOF(never); i++) {
		a = (struct coredam_pipe_args){ .pid = 1, .uid = never[i], .gid = 100, .dumpable = 1 };
		c = ok, c.uid = c.at_uid = c.at_euid = never[i];
		CHECK(!coredam_pipe_user_may_read(&a, &c));
	}
}

/* open(@name) in @dirfd as @uid:@gid: 0 if it opened, else errno. */
static int open_as(int dirfd, const char *name, uid_t uid, gid_t gid)
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		int fd;

		if (fchdir(dirfd) < 0 || setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			_exit(255);
		fd = open(name, O_RDONLY);
		_exit(fd >= 0 ? 0 : errno);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* The ACL gives the user read access and nothing more, and no one else anything. */
TEST(pipe_acl_user_read)
{
	unsigned char acl[COREDAM_ACL_USER_READ_SIZE], got[COREDAM_ACL_USER_READ_SIZE + 8];
	const unsigned char want[] = {
		2, 0, 0, 0,
		0x01, 0, 6, 0, 0xff, 0xff, 0xff, 0xff,	/* user::rw- */
		0x02, 0, 4, 0, 0xe9, 0x03, 0, 0,	/* user:1001:r-- */
		0x04, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,	/* group::r-- */
		0x10, 0, 4, 0, 0xff, 0xff, 0xff, 0xff,	/* mask::r-- */
		0x20, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,	/* other::--- */
	};
	size_t n = coredam_acl_user_read(1001, acl);
	int dirfd, fd;
	ssize_t g;

	CHECK_EQ_INT(n, sizeof(want));
	CHECK(memcmp(acl, want, sizeof(want)) == 0);
	if (geteuid() != 0)
		return;	/* the rest needs root, as the helper has */
	mkdirs("acl");
	CHECK(chmod(tpath("acl"), 0755) == 0);
	dirfd = open(tpath("acl"), O_RDONLY | O_DIRECTORY);
	fd = openat(dirfd, "core", O_WRONLY | O_CREAT | O_EXCL, 0600);
	CHECK(fd >= 0);
	CHECK(fchmod(fd, 0640) == 0);
	CHECK(fsetxattr(fd, "system.posix_acl_access", acl, n, 0) == 0);
	g = fgetxattr(fd, "system.posix_acl_access", got, sizeof(got));
	CHECK_EQ_INT(g, (ssize_t)n);
	close(fd);
	CHECK_EQ_INT(open_as(dirfd, "core", 1001, 1001), 0);
	CHECK_EQ_INT(open_as(dirfd, "core", 1002, 1002), EACCES);
	CHECK_EQ_INT(open_as(dirfd, "core", 1002, 0), 0);	/* group root, as 0640 says */
	close(dirfd);
}
