// SPDX-License-Identifier: LGPL-2.1-or-later
/* The coredump socket's protocol (see sock-proto.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "alloc-util.h"
#include "fileio.h"
#include "macro.h"
#include "sock-proto.h"

_Static_assert(sizeof(struct coredump_req) == COREDUMP_REQ_SIZE_VER0, "struct coredump_req VER0");
_Static_assert(sizeof(struct coredump_ack) == COREDUMP_ACK_SIZE_VER0, "struct coredump_ack VER0");
_Static_assert(sizeof(struct coredam_pidfd_info) == 88, "struct pidfd_info VER3");

/* recv() of @len bytes, without waiting: how many came, 0 at the peer's end, -errno. */
static ssize_t recv_now(int fd, void *buf, size_t len, int flags)
{
	ssize_t n;

	do
		n = recv(fd, buf, len, flags | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* Part of the request is there and no more is coming: the peer shut its side down inside it. */
static int short_read(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };

	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR)))
		return -ECONNRESET;
	return -EAGAIN;
}

int coredam_sock_req_read(int fd, struct coredam_sock_req *ret)
{
	unsigned char buf[COREDAM_SOCK_REQ_MAX];
	struct coredump_req req;
	uint32_t size;
	ssize_t n;

	n = recv_now(fd, &size, sizeof(size), MSG_PEEK);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return n == -EAGAIN || n == -EWOULDBLOCK ? -EAGAIN : (int)n;
	if ((size_t)n < sizeof(size))
		return short_read(fd);
	if (size < COREDUMP_REQ_SIZE_VER0 || size > sizeof(buf))
		return -EBADMSG;
	/* all of it there before any of it is taken */
	n = recv_now(fd, buf, size, MSG_PEEK);
	if (n == 0)
		return -ECONNRESET;
	if (n < 0)
		return n == -EAGAIN || n == -EWOULDBLOCK ? -EAGAIN : (int)n;
	if ((size_t)n < size)
		return short_read(fd);
	n = recv_now(fd, buf, size, 0);
	if (n < 0)
		return (int)n;
	if ((size_t)n != size)
		return -EIO;	/* peeked, yet not there: someone else reads this socket */
	memcpy(&req, buf, sizeof(req));
	if (req.size_ack < COREDUMP_ACK_SIZE_VER0)
		return -EBADMSG;
	if (!(req.mask & COREDUMP_KERNEL) || !(req.mask & COREDUMP_REJECT))
		return -EOPNOTSUPP;
	*ret = (struct coredam_sock_req){ .size = req.size, .size_ack = req.size_ack, .mask = req.mask };
	return 0;
}

int coredam_sock_ack_send(int fd, const struct coredam_sock_req *req, uint64_t mask)
{
	struct coredump_ack ack = { .mask = mask };
	uint64_t answer = mask & (COREDUMP_KERNEL | COREDUMP_USERSPACE | COREDUMP_REJECT);
	ssize_t n;

	if (mask & ~req->mask)
		return -EOPNOTSUPP;
	if (answer == 0 || (answer & (answer - 1)))
		return -EINVAL;
	ack.size = MIN(req->size_ack, (uint32_t)sizeof(ack));
	do
		n = send(fd, &ack, ack.size, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return (size_t)n == ack.size ? 0 : -EIO;
}

int coredam_sock_mark_read(int fd, int timeout_ms, uint32_t *ret_mark)
{
	unsigned char buf[sizeof(uint32_t)];
	size_t got = 0;
	uint32_t mark;

	while (got < sizeof(buf)) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		int r;

		r = poll(&p, 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ETIMEDOUT;
		n = recv_now(fd, buf + got, sizeof(buf) - got, 0);
		if (n == -EAGAIN || n == -EWOULDBLOCK)
			continue;
		if (n < 0)
			return n == -ECONNRESET ? (got ? -EBADMSG : -ECONNRESET) : (int)n;
		if (n == 0)
			return got ? -EBADMSG : -ECONNRESET;
		got += (size_t)n;
	}
	memcpy(&mark, buf, sizeof(mark));
	if (mark != COREDUMP_MARK_REQACK) {
		*ret_mark = mark;
		return -EPROTO;
	}
	*ret_mark = mark;
	return 0;
}

int coredam_sock_peer_get(int fd, struct coredam_sock_peer *ret)
{
	struct coredam_pidfd_info info = {
		.mask = COREDAM_PIDFD_INFO_PID | COREDAM_PIDFD_INFO_CREDS | COREDAM_PIDFD_INFO_COREDUMP,
	};
	socklen_t len = sizeof(int);
	_cleanup_close_ int pidfd = -1;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
		return -errno;
	if (ioctl(pidfd, COREDAM_PIDFD_GET_INFO, &info) < 0)
		return -errno;
	if (!(info.mask & COREDAM_PIDFD_INFO_CREDS) || info.pid == 0)
		return -ESRCH;
	*ret = (struct coredam_sock_peer){
		.pid = (pid_t)info.pid,
		.uid = info.ruid,
		.gid = info.rgid,
		.signal = (info.mask & COREDAM_PIDFD_INFO_COREDUMP_SIGNAL) ? (int)info.coredump_signal : 0,
		.dumpable = (info.coredump_mask & COREDAM_PIDFD_COREDUMP_USER) ? 1 : 2,
		.coredumping = (info.mask & COREDAM_PIDFD_INFO_COREDUMP) &&
			       (info.coredump_mask & COREDAM_PIDFD_COREDUMPED),
	};
	ret->pidfd = take_fd(&pidfd);
	return 0;
}

/*
 * Is the peer not reaped yet, so that its PID was not reused and what was
 * read under it is its own? Signal 0 through its pidfd: ESRCH once the
 * task is gone; EPERM, for another user's task when CAP_KILL is not held
 * (the unit leaves it out), comes from the permission check on a task
 * that is still there.
 */
static int peer_unreaped(const struct coredam_sock_peer *p)
{
	if (syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) < 0 && errno != EPERM)
		return -errno;
	return 0;
}

int coredam_sock_peer_proc(const char *proc_root, const struct coredam_sock_peer *p, const char *name, char *buf,
			   size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int r;

	if (size == 0)
		return -ENOBUFS;
	if ((size_t)snprintf(path, sizeof(path), "%s/%d/%s", proc_root, (int)p->pid, name) >= sizeof(path))
		return -ENAMETOOLONG;
	if (strcmp(name, "exe") == 0) {
		n = readlink(path, buf, size - 1);
		if (n < 0)
			return -errno;
	} else {
		_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

		if (fd < 0)
			return -errno;
		n = read(fd, buf, size - 1);
		if (n < 0)
			return -errno;
		if (n > 0 && buf[n - 1] == '\n')
			n--;
	}
	buf[n] = '\0';
	r = peer_unreaped(p);
	if (r < 0)
		buf[0] = '\0';
	return r;
}

#define COREDAM_PF_DUMPCORE 0x00000200	/* include/linux/sched.h */

int coredam_proc_stat_dump_pc(const char *stat, bool *ret_dumping, uint64_t *ret_pc)
{
	/* after the comm's ")": state is field 3; flags field 9, kstkeip field 30 */
	const char *p = stat ? strrchr(stat, ')') : NULL;
	uint64_t flags = 0, pc = 0;
	int field = 2;

	if (!p)
		return -EINVAL;
	for (p++; field < 30;) {
		char *end;
		uint64_t v;

		p += strspn(p, " ");
		if (!*p || *p == '\n')
			return -EINVAL;
		field++;
		if (field == 3) {
			p += strcspn(p, " \n");	/* the state letter */
			continue;
		}
		errno = 0;
		v = strtoull(p, &end, 10);
		if (end == p || errno)
			v = 0;	/* a signed field (priority, nice) or one past 64 bits: not one read here */
		p = end + strcspn(end, " \n");
		if (field == 9)
			flags = v;
		else if (field == 30)
			pc = v;
	}
	*ret_dumping = flags & COREDAM_PF_DUMPCORE;
	*ret_pc = pc;
	return 0;
}

bool coredam_proc_maps_file_of(const char *maps, uint64_t addr, char *file, size_t size, uint64_t *ret_offset)
{
	for (const char *l = maps; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long long start, end, off;
		size_t len;
		int n = 0;

		/* start-end perms offset dev inode [path] */
		if (sscanf(l, "%llx-%llx %*s %llx %*s %*u %n", &start, &end, &off, &n) != 3 || n == 0)
			continue;
		if (addr < start || addr >= end)
			continue;
		l += n;
		len = strcspn(l, "\n");
		if (len == 0 || *l != '/' || size == 0)
			return false;	/* anonymous, or "[stack]", "[vdso]" */
		len = MIN(len, size - 1);
		memcpy(file, l, len);
		file[len] = '\0';
		*ret_offset = addr - start + off;
		return true;
	}
	return false;
}

int coredam_sock_peer_site(const char *proc_root, const struct coredam_sock_peer *p, struct coredam_core_site *ret)
{
	struct coredam_core_site s = { 0 };
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_free_ char *maps = NULL;
	char path[PATH_MAX];
	struct dirent *de;
	int r;

	memset(ret, 0, sizeof(*ret));
	r = coredam_sock_peer_proc(proc_root, p, "exe", s.exe, sizeof(s.exe));
	if (r == -ESRCH || r == -ENAMETOOLONG)
		return r;	/* another error (no exe left): the signature goes on without it */
	if ((size_t)snprintf(path, sizeof(path), "%s/%d/task", proc_root, (int)p->pid) >= sizeof(path))
		return -ENAMETOOLONG;
	d = opendir(path);
	if (!d)
		return -errno;
	while (!s.have_pc && (de = readdir(d))) {
		_cleanup_free_ char *stat = NULL;
		char rel[64];
		bool dumping;
		uint64_t pc;

		if (de->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "%s/stat", de->d_name);
		if (read_file_at(dirfd(d), rel, 4096, &stat) < 0)
			continue;	/* a thread gone meanwhile */
		if (coredam_proc_stat_dump_pc(stat, &dumping, &pc) == 0 && dumping && pc) {
			s.pc = pc;
			s.have_pc = true;
		}
	}
	if (s.have_pc) {
		snprintf(path, sizeof(path), "%s/%d/maps", proc_root, (int)p->pid);
		r = read_file_at(AT_FDCWD, path, 16 << 20, &maps);
		if (r < 0)
			return r;
		(void)coredam_proc_maps_file_of(maps, s.pc, s.file, sizeof(s.file), &s.offset);
	}
	r = peer_unreaped(p);
	if (r < 0)
		return r;
	*ret = s;
	return 0;
}
