// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The control socket as coredamd serves it: a client connects, sends the
 * input and shuts its side down; coredam_ctl_next_request() accepts, checks
 * the peer, reads and parses. A valid SET is then applied to a
 * configuration as coredamd's agent_set() does.
 *
 * Properties: a request is either handed over, well-formed (PING, STATUS,
 * RELOAD take no argument; SET names a known setting and a value without
 * white space), ended by a newline, with nothing sent to the client yet,
 * or refused with a single "ERR ...\n" line that reaches the client
 * whole (no reset), and never handed over.
 */
#include <ctype.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "control.h"
#include "fuzz.h"
#include "macro.h"

static int listen_fd = -1;

static int connect_client(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	FUZZ_CHECK(fd >= 0);
	FUZZ_CHECK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	return fd;
}

static void check_request(const struct coredam_ctl_request *q)
{
	const char *section, *key;
	struct coredam_config c;
	struct coredam_error err;

	switch (q->cmd) {
	case COREDAM_CTL_PING:
	case COREDAM_CTL_STATUS:
	case COREDAM_CTL_RELOAD:
		return;
	case COREDAM_CTL_SET:
		FUZZ_CHECK(coredam_ctl_set_key(q->name, &section, &key) == 0);
		FUZZ_CHECK(q->value[0]);
		for (const char *p = q->value; *p; p++)
			FUZZ_CHECK(!isspace((unsigned char)*p));
		coredam_config_init(&c);
		err.msg[0] = '\0';
		if (coredam_config_set(&c, section, key, q->value, &err) < 0)
			FUZZ_CHECK(err.msg[0]);
		return;
	}
	FUZZ_CHECK(!"unknown command");
}

/* Read the answer to EOF as coredam_ctl_call() does: its length, -1 on a reset. */
static ssize_t read_answer(int fd, char *buf, size_t size)
{
	size_t o = 0;

	for (;;) {
		ssize_t n = recv(fd, buf + o, size - 1 - o, 0);

		if (n < 0)
			return -1;
		if (n == 0)
			break;
		o += (size_t)n;
		if (o == size - 1)
			break;
	}
	buf[o] = '\0';
	return (ssize_t)o;
}

/* Was a whole line sent: a newline, and no NUL before it? */
static int has_line(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);

	return nl && !memchr(data, '\0', (size_t)(nl - data));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[PATH_MAX];
	struct coredam_ctl_request q;
	char answer[256];
	int cfd, sfd = -1, r;
	uid_t uid;
	ssize_t n;

	if (listen_fd < 0) {
		snprintf(path, sizeof(path), "%s", fuzz_path("ctl.sock"));
		FUZZ_CHECK(coredam_ctl_listen(path, &listen_fd) == 0);
	}
	cfd = connect_client(path);
	/* more than a socket buffer is not needed: the server reads a few hundred bytes */
	send(cfd, data, MIN(size, (size_t)65536), MSG_DONTWAIT | MSG_NOSIGNAL);
	shutdown(cfd, SHUT_WR);

	r = coredam_ctl_next_request(listen_fd, 1000, &sfd, &q, &uid);
	FUZZ_CHECK(r != -EAGAIN);
	if (r == 0) {
		FUZZ_CHECK(sfd >= 0);
		FUZZ_CHECK(has_line(data, size));
		check_request(&q);
		close(sfd);
		/* nothing answered on our behalf (a reset: the client sent more than a line) */
		n = read_answer(cfd, answer, sizeof(answer));
		FUZZ_CHECK(n <= 0);
	} else {
		n = read_answer(cfd, answer, sizeof(answer));
		FUZZ_CHECK(n > 5);
		if (n > 5) {
			FUZZ_CHECK(strncmp(answer, "ERR ", 4) == 0);
			FUZZ_CHECK(strchr(answer, '\n') == answer + n - 1);
		}
	}
	close(cfd);
	return 0;
}
