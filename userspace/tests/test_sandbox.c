// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The pipe helper's sandbox, tried from the inside as a compromised helper
 * would: in a child that enters it, with a destination opened before.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "meta.h"
#include "sandbox.h"
#include "test.h"
#include "macro.h"
#include "fileio.h"

/* errno of open(@path, @flags), 0 when it opened */
static int open_errno(int dirfd, const char *path, int flags)
{
	int fd = openat(dirfd, path, flags | O_CLOEXEC, 0600);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

/* The value of a "Name:\tvalue" line of /proc/self/status, or "" */
static void status_field(const char *name, char *buf, size_t size)
{
	_cleanup_free_ char *text = NULL;
	size_t n = strlen(name);
	char *p;

	buf[0] = '\0';
	if (read_file_at(AT_FDCWD, "/proc/self/status", 65536, &text) < 0)
		return;
	for (p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, name, n) == 0 && p[n] == ':') {
			p += n + 1;
			p += strspn(p, " \t");
			snprintf(buf, size, "%.*s", (int)strcspn(p, "\n"), p);
			return;
		}
	}
}

static void inside(int dest, const char *state, const char *outside)
{
	static const char *const want[][2] = {
		{ "CapEff", "0000000000000000" }, { "CapPrm", "0000000000000000" },
		{ "CapBnd", "0000000000000000" }, { "NoNewPrivs", "1" }, { "Seccomp", "2" },
	};
	struct coredam_error e = { 0 };
	char v[64], path[PATH_MAX];
	char *const argv[] = { "true", NULL };

	CHECK_OK(coredam_sandbox_enter(state, &e));
	if (test_failed_checks) {
		fprintf(stderr, "  sandbox: %s\n", e.msg);
		return;
	}
	/* what the helper must still do */
	CHECK_EQ_INT(open_errno(dest, "core", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW), 0);
	CHECK_EQ_INT(renameat2(dest, "core", dest, "core.1", RENAME_NOREPLACE), 0);
	snprintf(path, sizeof(path), "%s/stats", state);
	CHECK_EQ_INT(open_errno(AT_FDCWD, path, O_RDWR | O_CREAT), 0);
	CHECK_OK(write_file_atomic_at(dest, "core.1.json", "{}\n", 3, 0640));
	/* the metadata, through jansson, as the helper writes it once confined */
	{
		struct coredam_core_meta m = { .core = "core.2", .comm = "x\xff", .compression = "none",
					       .rlimit = UINT64_MAX, .cgroup = "/coredump.slice" };
		char text[1024];

		CHECK(coredam_meta_format(&m, text, sizeof(text)) > 0);
		CHECK_OK(coredam_meta_write_at(dest, "core.2.json", text, 0640));
	}

	/* the journal record, on the socket log_open() connected before */
	{
		const struct log_field f[] = { { "MESSAGE", "confined" } };

		CHECK_OK(log_journal_send(LOG_INFO, f, ELEMENTSOF(f)));
	}

	/* what a compromised helper must not */
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		struct iovec iov = { (char *)"X=1\n", 4 };
		struct msghdr mh = { .msg_name = &sa, .msg_namelen = sizeof(sa), .msg_iov = &iov, .msg_iovlen = 1 };

		/* no sendmsg(), which could send through an open socket to another peer */
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", outside);
		errno = 0;
		CHECK(sendmsg(-1, &mh, 0) < 0 && errno == EPERM);
	}
	CHECK_EQ_INT(open_errno(AT_FDCWD, outside, O_WRONLY | O_CREAT), EROFS);
	CHECK_EQ_INT(open_errno(AT_FDCWD, "/proc/sys/kernel/core_pattern", O_WRONLY), EROFS);
	CHECK_EQ_INT(open_errno(AT_FDCWD, "/etc/passwd", O_WRONLY), EROFS);
	CHECK_EQ_INT(open_errno(AT_FDCWD, "/dev/kmsg", O_WRONLY), EACCES);	/* nodev */
	errno = 0;
	CHECK(execve("/bin/true", argv, argv + 1) < 0 && errno == EPERM);
	errno = 0;
	CHECK(socket(AF_UNIX, SOCK_STREAM, 0) < 0 && errno == EPERM);
	errno = 0;
	CHECK(ptrace(PTRACE_ATTACH, 1, NULL, NULL) < 0 && errno == EPERM);
	errno = 0;
	CHECK(unshare(CLONE_NEWNS) < 0 && errno == EPERM);
	errno = 0;
	CHECK(mount(NULL, "/", NULL, MS_REMOUNT | MS_BIND, NULL) < 0 && errno == EPERM);
	errno = 0;
	CHECK(kill(1, 0) < 0 && errno == EPERM);
	errno = 0;
	CHECK(syscall(SYS_tgkill, 1, 1, 0) < 0 && errno == EPERM);
	CHECK(syscall(SYS_tgkill, getpid(), gettid(), 0) == 0);	/* abort()'s own signal */
	errno = 0;
	CHECK(fork() < 0 && errno == EPERM);
	for (size_t i = 0; i < ELEMENTSOF(want); i++) {
		status_field(want[i][0], v, sizeof(v));
		CHECK_STREQ(v, want[i][1]);
	}
}

TEST(sandbox_confines_a_compromised_helper)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[256];
	int dest, status, jfd;
	ssize_t n;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "  skipped: the helper's sandbox needs root, as the helper has\n");
		return;
	}
	mkdirs("dest");
	mkdirs("state");
	dest = open(tpath("dest"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(dest >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tpath("journal.sock"));
	jfd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(jfd >= 0 && bind(jfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	pid = fork();
	if (pid == 0) {
		test_failed_checks = 0;	/* the child's own count */
		log_journal_socket = tkeep("journal.sock");
		log_close();
		log_setup("coredam-pipe", LOG_TARGET_STDERR);
		log_open();	/* as the helper does before it confines itself */
		inside(dest, tkeep("state"), tpath("outside"));
		/*
		 * exit_group() itself: the sanitizers' exit paths call what the
		 * filter refuses (sigaltstack, ptrace for the leak check)
		 */
		syscall(SYS_exit_group, test_failed_checks ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* the confined child's record arrived */
	n = recv(jfd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(n > 0 && strstr(buf, "MESSAGE=confined\n") == buf);
	close(jfd);
	/* and outside the child nothing changed: its mounts were its own */
	CHECK_EQ_INT(open_errno(AT_FDCWD, tpath("outside"), O_WRONLY | O_CREAT), 0);
	CHECK_EQ_INT(open_errno(dest, "core.1", O_RDONLY), 0);
	CHECK_EQ_INT(open_errno(dest, "core.1.json", O_RDONLY), 0);
	close(dest);
}

TEST(cap_drop_gives_up_one_capability)
{
	int status;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "  skipped: needs root's capabilities to drop one\n");
		return;
	}
	pid = fork();
	if (pid == 0) {
		char v[64];
		unsigned long long eff = 0, bnd = 0;

		test_failed_checks = 0;

		CHECK_OK(coredam_cap_drop(CAP_SYS_ADMIN));
		status_field("CapEff", v, sizeof(v));
		sscanf(v, "%llx", &eff);
		status_field("CapBnd", v, sizeof(v));
		sscanf(v, "%llx", &bnd);
		CHECK(!(eff & (1ULL << CAP_SYS_ADMIN)) && !(bnd & (1ULL << CAP_SYS_ADMIN)));
		/* the others stay */
		CHECK(eff & (1ULL << CAP_DAC_OVERRIDE) && eff & (1ULL << CAP_SYS_PTRACE));
		errno = 0;
		CHECK(unshare(CLONE_NEWNS) < 0 && errno == EPERM);
		CHECK_ERRNO(coredam_cap_drop(1000), -EINVAL);
		syscall(SYS_exit_group, test_failed_checks ? 1 : 0);
	}
	CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
