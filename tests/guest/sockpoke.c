// SPDX-License-Identifier: GPL-2.0
/*
 * sockpoke: a client of the coredump socket that is not the kernel, for
 * the tests: what a confused or hostile local program might send.
 *
 *   sockpoke [-u UID] [-n N] [-m MODE] [-t SECONDS] PATH
 *
 * Opens N connections to the UNIX socket PATH at once (default 1), as
 * UID if given, each sending MODE's bytes: silent (nothing), garbage
 * (4 KiB of 0xff), request (a coredump_req as the kernel sends one),
 * half (the first 4 bytes of one). Then reads each until the server
 * closes it or SECONDS pass (default 10) and prints one line:
 *
 *   connected N closed C open O answered B
 *
 * (B: bytes the server sent back, over all connections), or
 * "connect: ERROR" and exit 1 when the first connection is refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MAX_CONNS 1024

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	static struct pollfd p[MAX_CONNS];
	static char buf[4096];
	/* struct coredump_req of Linux 6.17: size, size_ack, mask (COREDUMP_KERNEL|REJECT|WAIT) */
	const uint32_t req[4] = { 16, 24, 7, 0 };
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *mode = "silent";
	const void *msg = NULL;
	size_t len = 0;
	long n = 1, secs = 10, answered = 0;
	int uid = -1, opt, closed = 0, open_ = 0;
	int64_t end;

	while ((opt = getopt(argc, argv, "u:n:m:t:")) != -1) {
		switch (opt) {
		case 'u': uid = atoi(optarg); break;
		case 'n': n = strtol(optarg, NULL, 0); break;
		case 'm': mode = optarg; break;
		case 't': secs = strtol(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || n < 1 || n > MAX_CONNS || strlen(argv[optind]) >= sizeof(sa.sun_path))
		goto usage;
	strcpy(sa.sun_path, argv[optind]);
	if (!strcmp(mode, "garbage")) {
		memset(buf, 0xff, sizeof(buf));
		msg = buf;
		len = sizeof(buf);
	} else if (!strcmp(mode, "request")) {
		msg = req;
		len = 16;
	} else if (!strcmp(mode, "half")) {
		msg = req;
		len = 4;
	} else if (strcmp(mode, "silent")) {
		goto usage;
	}
	if (uid >= 0 && (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid))) {
		perror("sockpoke: -u");
		return 2;
	}
	for (long i = 0; i < n; i++) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			printf("connect: %s\n", strerror(errno));
			return 1;
		}
		/* the server may have closed it already: a failed send is no failure here */
		if (len && send(fd, msg, len, MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET) {
			printf("send: %s\n", strerror(errno));
			return 1;
		}
		p[i] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	end = now_ms() + secs * 1000;
	for (;;) {
		int64_t left = end - now_ms();
		int r;

		open_ = 0;
		for (long i = 0; i < n; i++)
			open_ += p[i].fd >= 0;
		if (!open_ || left <= 0)
			break;
		r = poll(p, (nfds_t)n, (int)left);
		if (r < 0 && errno != EINTR) {
			perror("sockpoke: poll");
			return 1;
		}
		for (long i = 0; r > 0 && i < n; i++) {
			ssize_t got;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			got = recv(p[i].fd, buf, sizeof(buf), MSG_DONTWAIT);
			if (got > 0) {
				answered += got;
				continue;
			}
			if (got < 0 && (errno == EAGAIN || errno == EINTR))
				continue;
			close(p[i].fd);
			p[i].fd = -1;
			closed++;
		}
	}
	printf("connected %ld closed %d open %d answered %ld\n", n, closed, open_, answered);
	return 0;
usage:
	fprintf(stderr, "usage: sockpoke [-u UID] [-n N] [-m silent|garbage|request|half] [-t SECONDS] PATH\n");
	return 2;
}
