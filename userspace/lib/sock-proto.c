// SPDX-License-Identifier: LGPL-2.1-or-later
/* The coredump socket's protocol (see sock-proto.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

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

int coredam_sock_peer_proc(const char *proc_root, const struct coredam_sock_peer *p, const char *name, char *buf,
			   size_t size)
{
	char path[PATH_MAX];
	ssize_t n;

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
	/* not reaped yet: the PID was not reused, so what was read is the peer's */
	if (syscall(SYS_pidfd_send_signal, p->pidfd, 0, NULL, 0) < 0) {
		int r = -errno;

		buf[0] = '\0';
		return r;
	}
	return 0;
}
