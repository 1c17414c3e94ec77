// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The coredump socket's protocol, against a socketpair whose other end
 * plays the kernel: as fs/coredump.c of 7.3 sends and reads, and as a
 * hostile or broken peer would.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "macro.h"
#include "sandbox.h"
#include "sock-proto.h"
#include "test.h"

#define KERNEL_MASK (COREDUMP_KERNEL | COREDUMP_USERSPACE | COREDUMP_REJECT | COREDUMP_WAIT)

/* [0] the server's end (non-blocking, as accept4() gives it), [1] the kernel's */
static void pair(int sv[2])
{
	CHECK_OK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv));
	CHECK_OK(fcntl(sv[0], F_SETFL, O_NONBLOCK));
}

static void kernel_send(int fd, const void *buf, size_t n)
{
	CHECK_EQ_INT(send(fd, buf, n, MSG_NOSIGNAL), (long long)n);
}

static void send_req(int fd, uint32_t size, uint32_t size_ack, uint64_t mask)
{
	unsigned char buf[64] = { 0 };
	struct coredump_req req = { .size = size, .size_ack = size_ack, .mask = mask };

	memcpy(buf, &req, sizeof(req));
	kernel_send(fd, buf, MIN((size_t)size, sizeof(buf)));
}

TEST(sock_req_read_ver0)
{
	struct coredam_sock_req r = { 0 };
	int sv[2];

	pair(sv);
	/* nothing sent yet: wait, never block */
	CHECK_ERRNO(coredam_sock_req_read(sv[0], &r), -EAGAIN);
	send_req(sv[1], 16, 16, KERNEL_MASK);
	CHECK_OK(coredam_sock_req_read(sv[0], &r));
	CHECK_EQ_INT(r.size, 16);
	CHECK_EQ_INT(r.size_ack, 16);
	CHECK_EQ_INT(r.mask, KERNEL_MASK);
	close(sv[0]);
	close(sv[1]);
}

TEST(sock_req_read_in_pieces)
{
	unsigned char buf[16];
	struct coredump_req req = { .size = 16, .size_ack = 16, .mask = KERNEL_MASK };
	struct coredam_sock_req r = { 0 };
	int sv[2];

	pair(sv);
	memcpy(buf, &req, sizeof(req));
	kernel_send(sv[1], buf, 2);
	CHECK_ERRNO(coredam_sock_req_read(sv[0], &r), -EAGAIN);
	kernel_send(sv[1], buf + 2, 10);
	CHECK_ERRNO(coredam_sock_req_read(sv[0], &r), -EAGAIN);
	/* nothing consumed while waiting: the whole request still reads */
	kernel_send(sv[1], buf + 12, 4);
	CHECK_OK(coredam_sock_req_read(sv[0], &r));
	CHECK_EQ_INT(r.mask, KERNEL_MASK);
	close(sv[0]);
	close(sv[1]);
}

TEST(sock_req_read_larger)
{
	struct coredam_sock_req r = { 0 };
	uint32_t next = 0;
	int sv[2];

	/* a later kernel's larger request: consumed whole, the rest discarded */
	pair(sv);
	send_req(sv[1], 40, 24, KERNEL_MASK | (1ULL << 40));
	kernel_send(sv[1], &(uint32_t){ 0xabcdef01 }, 4);
	CHECK_OK(coredam_sock_req_read(sv[0], &r));
	CHECK_EQ_INT(r.size, 40);
	CHECK_EQ_INT(r.size_ack, 24);
	CHECK_EQ_INT(recv(sv[0], &next, sizeof(next), 0), 4);
	CHECK_EQ_INT(next, 0xabcdef01);
	close(sv[0]);
	close(sv[1]);
}

TEST(sock_req_read_hostile)
{
	struct coredam_sock_req r = { .size = 7 };
	int sv[2];

	/* a size below VER0 */
	pair(sv);
	send_req(sv[1], 8, 16, KERNEL_MASK);
	CHECK_ERRNO(coredam_sock_req_read(sv[0], &r), -EBADMSG);
	CHECK_EQ_INT(r.size, 7);	/* untouched on failure */
	close(sv[0]);
	close(sv[1]);

	/* a huge size: refused at once, not waited for */
	pair(sv);
	send_req(sv[1], 16, 16, KERNEL_MASK);
	{
		uint32_t huge = 1U << 30;
		int s2[2];

		pair(s2);
		kernel_send(s2[1], &huge, sizeof(huge));
		CHECK_ERRNO(coredam_sock_req_read(s2[0], &r), -EBADMSG);
		huge = COREDAM_SOCK_REQ_MAX + 1;
		close(s2[0]);
		close(s2[1]);
		pair(s2);
		kernel_send(s2[1], &huge, sizeof(huge));
		CHECK_ERRNO(coredam_sock_req_read(s2[0], &r), -EBADMSG);
		close(s2[0]);
		close(s2[1]);
	}
	close(sv[0]);
	close(sv[1]);

	/* an ack size no ack fits in */
	pair(sv);
	send_req(sv[1], 16, 8, KERNEL_MASK);
	CHECK_ERRNO(coredam_sock_req_read(sv[0], &r), -EBADMSG);
	close(sv[0]);
	close(sv[1]);

	/* garbage masks: without the two answers this server gives, refused */
	pair(sv);
	send_req(sv[1], 16, 16, COREDUMP_KERNEL | (1ULL << 63));
	CHECK_ERRNO(coredam_sock_req_read(sv[0], &r), -EOPNOTSUPP);
	close(sv[0]);
	close(sv[1]);
	pair(sv);
	send_req(sv[1], 16, 16, 0);
	CHECK_ERRNO(coredam_sock_req_read(sv[0], &r), -EOPNOTSUPP);
	close(sv[0]);
	close(sv[1]);

	/* the peer gone before a byte, and inside the request */
	pair(sv);
	close(sv[1]);
	CHECK_ERRNO(coredam_sock_req_read(sv[0], &r), -ECONNRESET);
	close(sv[0]);
	pair(sv);
	kernel_send(sv[1], "\x10\0", 2);
	close(sv[1]);
	CHECK_ERRNO(coredam_sock_req_read(sv[0], &r), -ECONNRESET);
	close(sv[0]);
	pair(sv);
	kernel_send(sv[1], "\x10\0\0\0\x10\0\0\0", 8);
	shutdown(sv[1], SHUT_WR);
	CHECK_ERRNO(coredam_sock_req_read(sv[0], &r), -ECONNRESET);
	close(sv[0]);
	close(sv[1]);
}

TEST(sock_ack_send)
{
	struct coredam_sock_req req = { .size = 16, .size_ack = 16, .mask = KERNEL_MASK };
	struct coredump_ack ack;
	unsigned char buf[64];
	int sv[2];

	pair(sv);
	CHECK_OK(coredam_sock_ack_send(sv[0], &req, COREDUMP_KERNEL));
	CHECK_EQ_INT(recv(sv[1], &ack, sizeof(ack), MSG_DONTWAIT), 16);
	CHECK_EQ_INT(ack.size, 16);
	CHECK_EQ_INT(ack.spare, 0);
	CHECK_EQ_INT(ack.mask, COREDUMP_KERNEL);
	CHECK_OK(coredam_sock_ack_send(sv[0], &req, COREDUMP_REJECT));
	CHECK_EQ_INT(recv(sv[1], &ack, sizeof(ack), MSG_DONTWAIT), 16);
	CHECK_EQ_INT(ack.mask, COREDUMP_REJECT);

	/* a kernel that reads larger acks gets the one both know */
	req.size_ack = 64;
	CHECK_OK(coredam_sock_ack_send(sv[0], &req, COREDUMP_KERNEL | COREDUMP_WAIT));
	CHECK_EQ_INT(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), 16);
	memcpy(&ack, buf, sizeof(ack));
	CHECK_EQ_INT(ack.size, 16);
	CHECK_EQ_INT(ack.mask, COREDUMP_KERNEL | COREDUMP_WAIT);

	/* what the kernel would answer with a mark of its own is never sent */
	req.mask = COREDUMP_KERNEL | COREDUMP_REJECT;
	CHECK_ERRNO(coredam_sock_ack_send(sv[0], &req, COREDUMP_KERNEL | COREDUMP_WAIT), -EOPNOTSUPP);
	CHECK_ERRNO(coredam_sock_ack_send(sv[0], &req, COREDUMP_KERNEL | COREDUMP_REJECT), -EINVAL);
	CHECK_ERRNO(coredam_sock_ack_send(sv[0], &req, 0), -EINVAL);
	CHECK_EQ_INT(recv(sv[1], buf, sizeof(buf), MSG_DONTWAIT), -1);

	/* the peer gone: an error, no SIGPIPE */
	close(sv[1]);
	CHECK(coredam_sock_ack_send(sv[0], &req, COREDUMP_REJECT) < 0);
	close(sv[0]);
}

TEST(sock_mark_read)
{
	uint32_t mark = 99;
	int sv[2];

	pair(sv);
	kernel_send(sv[1], &(uint32_t){ COREDUMP_MARK_REQACK }, 4);
	CHECK_OK(coredam_sock_mark_read(sv[0], 1000, &mark));
	CHECK_EQ_INT(mark, COREDUMP_MARK_REQACK);
	kernel_send(sv[1], &(uint32_t){ COREDUMP_MARK_UNSUPPORTED }, 4);
	CHECK_ERRNO(coredam_sock_mark_read(sv[0], 1000, &mark), -EPROTO);
	CHECK_EQ_INT(mark, COREDUMP_MARK_UNSUPPORTED);
	/* nothing comes */
	CHECK_ERRNO(coredam_sock_mark_read(sv[0], 20, &mark), -ETIMEDOUT);
	/* cut inside the mark, and closed before it */
	kernel_send(sv[1], "\0\0", 2);
	close(sv[1]);
	CHECK_ERRNO(coredam_sock_mark_read(sv[0], 1000, &mark), -EBADMSG);
	close(sv[0]);
	pair(sv);
	close(sv[1]);
	CHECK_ERRNO(coredam_sock_mark_read(sv[0], 1000, &mark), -ECONNRESET);
	close(sv[0]);
}

TEST(sock_peer)
{
	struct coredam_sock_peer p = { .pidfd = -1 };
	char comm[64], self[64];
	int sv[2];

	/* an ordinary client (this test) is no dumping task: the agent tells them apart */
	pair(sv);
	CHECK_OK(coredam_sock_peer_get(sv[0], &p));
	CHECK_EQ_INT(p.pid, getpid());
	CHECK_EQ_INT(p.uid, getuid());
	CHECK_EQ_INT(p.gid, getgid());
	CHECK(!p.coredumping);
	CHECK(p.pidfd >= 0);
	CHECK_OK(coredam_sock_peer_proc("/proc", &p, "comm", comm, sizeof(comm)));
	CHECK_OK(coredam_sock_peer_proc("/proc", &p, "exe", self, sizeof(self)) >= 0 ? 0 : -1);
	{
		char want[64] = "";
		int fd = open("/proc/self/comm", O_RDONLY);
		ssize_t n = read(fd, want, sizeof(want) - 1);

		close(fd);
		if (n > 0 && want[n - 1] == '\n')
			want[n - 1] = '\0';
		CHECK_STREQ(comm, want);
	}
	close(p.pidfd);
	close(sv[0]);
	close(sv[1]);
}

TEST(sock_peer_gone)
{
	struct coredam_sock_peer p = { .pidfd = -1 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int lfd = -1, cfd = -1;
	char buf[64], rel[64];
	pid_t child;
	int st;

	/* a peer of its own: a child that connects, then is killed and reaped */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tpath("s"));
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK_OK(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)));
	CHECK_OK(listen(lfd, 4));
	child = fork();
	if (child == 0) {
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			_exit(1);
		pause();
		_exit(0);
	}
	cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	CHECK(cfd >= 0);
	CHECK_OK(coredam_sock_peer_get(cfd, &p));
	CHECK_EQ_INT(p.pid, child);
	kill(child, SIGKILL);
	waitpid(child, &st, 0);

	/*
	 * A process with its PID now (a fake /proc holds one): what is read
	 * there is not the peer's, and is not returned as its.
	 */
	snprintf(rel, sizeof(rel), "proc/%d/comm", (int)child);
	mkfile(rel, "imposter\n");
	snprintf(buf, sizeof(buf), "untouched");
	CHECK_ERRNO(coredam_sock_peer_proc(tpath("proc"), &p, "comm", buf, sizeof(buf)), -ESRCH);
	CHECK_STREQ(buf, "");
	close(p.pidfd);
}

TEST(sock_peer_of_another_user)
{
	struct coredam_sock_peer p = { .pidfd = -1 };
	struct coredam_core_site site;
	char comm[64];
	pid_t peer, reader;
	int st;

	if (geteuid() != 0) {
		fprintf(stderr, "  skipped: needs root to make a peer of another user\n");
		return;
	}
	/*
	 * coredamd's unit leaves CAP_KILL out: signal 0 to another user's
	 * task fails with EPERM, which says it is still there, not that it
	 * is gone. Apache's workers crash as www-data.
	 */
	peer = fork();
	if (peer == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setresgid(65534, 65534, 65534) < 0 || setresuid(65534, 65534, 65534) < 0)
			_exit(1);
		for (;;)
			pause();
	}
	CHECK(peer > 0);
	p.pid = peer;
	p.uid = 65534;
	p.pidfd = (int)syscall(SYS_pidfd_open, peer, 0);
	CHECK(p.pidfd >= 0);
	/* until the peer has become nobody: its status says so */
	for (int i = 0; i < 1000; i++) {
		char status[4096];

		if (coredam_sock_peer_proc("/proc", &p, "status", status, sizeof(status)) == 0 &&
		    strstr(status, "\nUid:\t65534\t"))
			break;
		usleep(1000);
	}
	reader = fork();
	if (reader == 0) {
		if (coredam_cap_drop(CAP_KILL) < 0 || syscall(SYS_pidfd_send_signal, p.pidfd, 0, NULL, 0) == 0 ||
		    errno != EPERM)
			_exit(2);	/* not the unit's conditions */
		if (coredam_sock_peer_proc("/proc", &p, "comm", comm, sizeof(comm)) < 0 || comm[0] == '\0')
			_exit(3);
		if (coredam_sock_peer_site("/proc", &p, &site) < 0 || site.exe[0] != '/')
			_exit(4);
		_exit(0);
	}
	CHECK(reader > 0);
	CHECK(waitpid(reader, &st, 0) == reader);
	CHECK(WIFEXITED(st));
	CHECK_EQ_INT(WEXITSTATUS(st), 0);
	/* once reaped, nothing is read under its PID (ENOENT here; ESRCH where the PID was reused) */
	kill(peer, SIGKILL);
	CHECK(waitpid(peer, &st, 0) == peer);
	CHECK(coredam_sock_peer_proc("/proc", &p, "comm", comm, sizeof(comm)) < 0);
	close(p.pidfd);
}

/* /proc/PID/task/TID/stat as 6.x writes it; @comm may hold ") (" and spaces */
static void stat_line(char *buf, size_t size, const char *comm, unsigned long flags, unsigned long long pc)
{
	snprintf(buf, size,
		 "77 (%s) t 1 77 77 0 -1 %lu 10 0 0 0 5 3 0 0 20 0 2 0 1234 8000000 300 18446744073709551615 "
		 "94000000000000 94000000100000 140000000000000 140000000000100 %llu 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n",
		 comm, flags, pc);
}

TEST(proc_stat_dump_pc)
{
	char line[512];
	bool dumping;
	uint64_t pc;

	stat_line(line, sizeof(line), "crasher", 0x400240, 0x7f0000002345ULL);
	CHECK_OK(coredam_proc_stat_dump_pc(line, &dumping, &pc));
	CHECK(dumping && pc == 0x7f0000002345ULL);
	/* a comm that looks like the end of itself and more fields */
	stat_line(line, sizeof(line), "a) R 1 2 3 4 5 6 512 (", 0x400040, 4096);
	CHECK_OK(coredam_proc_stat_dump_pc(line, &dumping, &pc));
	CHECK(!dumping && pc == 4096);
	CHECK_ERRNO(coredam_proc_stat_dump_pc("77 (x) S 1 2\n", &dumping, &pc), -EINVAL);
	CHECK_ERRNO(coredam_proc_stat_dump_pc("no comm at all", &dumping, &pc), -EINVAL);
}

TEST(proc_maps_file_of)
{
	static const char maps[] =
		"555500000000-555500001000 r--p 00000000 fe:01 131 /usr/sbin/apache2\n"
		"555500001000-555500005000 r-xp 00001000 fe:01 131 /usr/sbin/apache2\n"
		"7f0000000000-7f0000100000 r-xp 00010000 fe:01 200 /usr/lib/with space\\012and newline.so\n"
		"7ffc00000000-7ffc00021000 rw-p 00000000 00:00 0                          [stack]\n"
		"7ffd00000000-7ffd00001000 rw-p 00000000 00:00 0 \n";
	char file[64];
	uint64_t off = 0;

	CHECK(coredam_proc_maps_file_of(maps, 0x555500001040ULL, file, sizeof(file), &off));
	CHECK_STREQ(file, "/usr/sbin/apache2");
	CHECK_EQ_INT(off, 0x1040);
	CHECK(coredam_proc_maps_file_of(maps, 0x7f0000002345ULL, file, sizeof(file), &off));
	CHECK_STREQ(file, "/usr/lib/with space\\012and newline.so");
	CHECK_EQ_INT(off, 0x12345);
	/* cut to the buffer */
	CHECK(coredam_proc_maps_file_of(maps, 0x7f0000000000ULL, file, 8, &off));
	CHECK_STREQ(file, "/usr/li");
	CHECK(!coredam_proc_maps_file_of(maps, 0x7ffc00000010ULL, file, sizeof(file), &off));	/* [stack] */
	CHECK(!coredam_proc_maps_file_of(maps, 0x7ffd00000010ULL, file, sizeof(file), &off));	/* anonymous */
	CHECK(!coredam_proc_maps_file_of(maps, 0x1000, file, sizeof(file), &off));
	CHECK(!coredam_proc_maps_file_of("garbage\n\n", 0x1000, file, sizeof(file), &off));
}

TEST(sock_peer_site)
{
	struct coredam_sock_peer p = { .pid = getpid() };
	struct coredam_core_site s;
	char rel[128], line[512];

	/* a process of two threads, the second dumping: this process's pidfd, /proc faked */
	p.pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	CHECK(p.pidfd >= 0);
	snprintf(rel, sizeof(rel), "sproc/%d/task/%d/stat", (int)p.pid, (int)p.pid);
	stat_line(line, sizeof(line), "crasher", 0x400040, 0x555500001000ULL);
	mkfile(rel, line);
	snprintf(rel, sizeof(rel), "sproc/%d/task/%d/stat", (int)p.pid, (int)p.pid + 1);
	stat_line(line, sizeof(line), "crasher", 0x400240, 0x7f0000002345ULL);
	mkfile(rel, line);
	snprintf(rel, sizeof(rel), "sproc/%d/maps", (int)p.pid);
	mkfile(rel, "7f0000000000-7f0000100000 r-xp 00010000 fe:01 200 /usr/lib/libc.so.6\n");
	snprintf(rel, sizeof(rel), "sproc/%d/exe", (int)p.pid);
	mklink(rel, "/usr/bin/crasher");
	CHECK_OK(coredam_sock_peer_site(tpath("sproc"), &p, &s));
	CHECK(s.have_pc && s.pc == 0x7f0000002345ULL && s.offset == 0x12345);
	CHECK_STREQ(s.file, "/usr/lib/libc.so.6");
	CHECK_STREQ(s.exe, "/usr/bin/crasher");

	/* no thread dumps: the executable alone */
	snprintf(rel, sizeof(rel), "sproc/%d/task/%d/stat", (int)p.pid, (int)p.pid + 1);
	stat_line(line, sizeof(line), "crasher", 0x400040, 0x7f0000002345ULL);
	mkfile(rel, line);
	CHECK_OK(coredam_sock_peer_site(tpath("sproc"), &p, &s));
	CHECK(!s.have_pc && s.file[0] == '\0');
	CHECK_STREQ(s.exe, "/usr/bin/crasher");
	CHECK_ERRNO(coredam_sock_peer_site(tpath("nothing"), &p, &s), -ENOENT);
	close(p.pidfd);
}
