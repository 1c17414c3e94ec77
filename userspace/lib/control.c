// SPDX-License-Identifier: LGPL-2.1-or-later
#define _GNU_SOURCE 1
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>

#include "config.h"
#include "control.h"
#include "error.h"
#include "macro.h"
#include "time-util.h"

static const struct {
	const char *name, *section, *key;
} set_keys[] = {
	{ "bandwidth", "Limits", "WriteBandwidth" },
	{ "read-bandwidth", "Limits", "ReadBandwidth" },
	{ "concurrency", "Limits", "Concurrency" },
	{ "mode", "Agent", "Mode" },
	{ "floor", "Adaptive", "Floor" },
	{ "ceiling", "Adaptive", "Ceiling" },
	{ "ceiling-when-busy", "Adaptive", "CeilingWhenBusy" },
	{ "concurrency-floor", "Adaptive", "ConcurrencyFloor" },
	{ "concurrency-ceiling", "Adaptive", "ConcurrencyCeiling" },
};

int coredam_ctl_set_key(const char *name, const char **ret_section, const char **ret_key)
{
	for (size_t i = 0; i < ELEMENTSOF(set_keys); i++)
		if (strcmp(name, set_keys[i].name) == 0) {
			*ret_section = set_keys[i].section;
			*ret_key = set_keys[i].key;
			return 0;
		}
	return -ENOENT;
}

/*
 * The settings one budget mode reads and the other ignores, and what
 * governs in the other mode instead (see coredam_budget_params_from_config()).
 */
static const struct {
	const char *name;
	enum coredam_mode mode;	/* the mode whose budget reads it */
	const char *instead;	/* what governs in the other mode */
	const char *set;	/* what to set there */
} mode_settings[] = {
	{ "bandwidth", COREDAM_MODE_FIXED, "floor, ceiling and ceiling-when-busy bound the write bandwidth",
	  "floor or ceiling" },
	{ "concurrency", COREDAM_MODE_FIXED, "concurrency-floor and concurrency-ceiling bound it",
	  "concurrency-floor or concurrency-ceiling" },
	{ "floor", COREDAM_MODE_ADAPTIVE, "bandwidth is the write bandwidth", "bandwidth" },
	{ "ceiling", COREDAM_MODE_ADAPTIVE, "bandwidth is the write bandwidth", "bandwidth" },
	{ "ceiling-when-busy", COREDAM_MODE_ADAPTIVE, "bandwidth is the write bandwidth", "bandwidth" },
	{ "concurrency-floor", COREDAM_MODE_ADAPTIVE, "concurrency is the dumps at once", "concurrency" },
	{ "concurrency-ceiling", COREDAM_MODE_ADAPTIVE, "concurrency is the dumps at once", "concurrency" },
};

int coredam_ctl_apply_set(struct coredam_config *cfg, const char *name, const char *value,
			  struct coredam_error *reterr)
{
	struct coredam_config c = *cfg;
	const char *section, *key;
	int r;

	r = coredam_ctl_set_key(name, &section, &key);
	if (r < 0)
		return coredam_error_set(reterr, r, "unknown setting \"%s\"", name);
	r = coredam_config_set(&c, section, key, value, reterr);
	if (r < 0)
		return r;
	/* accepted, it would do nothing until the mode changes: say what governs now */
	for (size_t i = 0; i < ELEMENTSOF(mode_settings); i++)
		if (strcmp(mode_settings[i].name, name) == 0 && mode_settings[i].mode != c.mode)
			return coredam_error_set(reterr, -EINVAL,
						 "%s does nothing in %s mode, where %s; set %s instead, or mode %s first",
						 name, coredam_mode_str(c.mode), mode_settings[i].instead,
						 mode_settings[i].set, coredam_mode_str(mode_settings[i].mode));
	if (c.ceiling_bps && c.floor_bps > c.ceiling_bps)
		return coredam_error_set(reterr, -EINVAL, "floor (%" PRIu64 ") would be above ceiling (%" PRIu64 ")",
					 c.floor_bps, c.ceiling_bps);
	if (c.busy_ceiling_bps && c.floor_bps > c.busy_ceiling_bps)
		return coredam_error_set(reterr, -EINVAL,
					 "floor (%" PRIu64 ") would be above ceiling-when-busy (%" PRIu64 ")",
					 c.floor_bps, c.busy_ceiling_bps);
	if (c.concurrency_floor > c.concurrency_ceiling)
		return coredam_error_set(reterr, -EINVAL,
					 "concurrency floor (%u) would be above concurrency ceiling (%u)",
					 c.concurrency_floor, c.concurrency_ceiling);
	*cfg = c;
	return 0;
}

int coredam_ctl_reload_config(const char *main_file, const char *const *dropin_dirs,
			      const struct coredam_config *running, struct coredam_config *ret,
			      struct coredam_error *reterr)
{
	struct coredam_config c;
	int r;

	r = coredam_config_load(main_file, dropin_dirs, &c, reterr);
	if (r < 0)
		return r;
	if (strcmp(c.control_socket, running->control_socket) != 0)
		return coredam_error_set(reterr, -EINVAL,
					 "ControlSocket=%s: coredamd listens on %s until it restarts; a reload "
					 "cannot move it (restart coredamd, or put it back)",
					 c.control_socket, running->control_socket);
	*ret = c;
	return 0;
}

int coredam_ctl_parse(const char *line, struct coredam_ctl_request *ret)
{
	struct coredam_ctl_request q = { 0 };
	char cmd[16], extra[2];
	int n;

	if (strlen(line) >= COREDAM_CTL_REQ_MAX)
		return -E2BIG;
	n = sscanf(line, "%15s %31s %127s %1s", cmd, q.name, q.value, extra);
	if (n < 1)
		return -EINVAL;
	if (strcmp(cmd, "PING") == 0 && n == 1)
		q.cmd = COREDAM_CTL_PING;
	else if (strcmp(cmd, "STATUS") == 0 && n == 1)
		q.cmd = COREDAM_CTL_STATUS;
	else if (strcmp(cmd, "RELOAD") == 0 && n == 1)
		q.cmd = COREDAM_CTL_RELOAD;
	else if (strcmp(cmd, "SET") == 0 && n == 3) {
		const char *s, *k;

		if (coredam_ctl_set_key(q.name, &s, &k) < 0)
			return -ENOENT;
		q.cmd = COREDAM_CTL_SET;
	} else
		return -EINVAL;
	*ret = q;
	return 0;
}

static int make_addr(const char *path, struct sockaddr_un *sa, socklen_t *len)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1);
	return 0;
}

int coredam_ctl_listen(const char *path, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_un sa;
	socklen_t len;
	mode_t old;
	int r;

	r = make_addr(path, &sa, &len);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	old = umask(0077);
	r = bind(fd, (struct sockaddr *)&sa, len);
	umask(old);
	if (r < 0)
		return -errno;
	if (chmod(path, 0600) < 0 || listen(fd, 16) < 0)
		return -errno;
	*ret_fd = take_fd(&fd);
	return 0;
}

int coredam_ctl_send(int fd, const char *text)
{
	size_t len = strlen(text);

	while (len > 0) {
		ssize_t n = send(fd, text, len, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				struct pollfd p = { .fd = fd, .events = POLLOUT };

				if (poll(&p, 1, 1000) <= 0)
					return -ETIMEDOUT;
				continue;
			}
			return -errno;
		}
		text += n;
		len -= n;
	}
	return 0;
}

/*
 * Before closing a connection whose request was refused: read what the
 * client already sent (bounded, without waiting). A Unix socket closed with
 * unread data resets its peer, and the client would lose our answer.
 */
static void discard_input(int fd)
{
	char buf[4096];

	for (size_t total = 0; total < 65536;) {
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

		if (n <= 0)
			break;
		total += (size_t)n;
	}
}

int coredam_ctl_accept(int listen_fd, int *ret_fd, uid_t *ret_uid)
{
	_cleanup_close_ int fd = -1;
	struct ucred cred;
	socklen_t len = sizeof(cred);

	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
		return -errno;
	if (cred.uid != 0 && cred.uid != geteuid()) {
		coredam_ctl_send(fd, "ERR permission denied: root only\n");
		discard_input(fd);
		*ret_uid = cred.uid;
		return -EPERM;
	}
	*ret_uid = cred.uid;
	*ret_fd = take_fd(&fd);
	return 0;
}

int coredam_ctl_read_request(int fd, int timeout_ms, char *buf, size_t size)
{
	uint64_t deadline = now_usec(CLOCK_MONOTONIC) + (uint64_t)MAX(timeout_ms, 0) * 1000;
	size_t o = 0;

	if (size < 2)
		return -ENOBUFS;
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		uint64_t now = now_usec(CLOCK_MONOTONIC);
		int wait = -1;
		ssize_t n;
		char *nl;

		/* one deadline for the whole line: a trickling client does not extend it */
		if (timeout_ms >= 0)
			wait = now < deadline ? (int)((deadline - now + 999) / 1000) : 0;
		n = poll(&p, 1, wait);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ETIMEDOUT;
		n = recv(fd, buf + o, size - 1 - o, 0);
		if (n < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			return -errno;
		}
		if (n == 0)
			return o ? -EPROTO : -ECONNRESET;	/* cut off before its newline */
		o += n;
		buf[o] = '\0';
		nl = memchr(buf, '\n', o);
		if (nl) {
			if (memchr(buf, '\0', nl - buf))
				return -EBADMSG;
			*nl = '\0';
			return 0;
		}
		if (o >= size - 1)
			return -E2BIG;
	}
}

/* The answer to a request that never reaches the caller. */
static const char *refusal(int r)
{
	switch (r) {
	case -E2BIG:
		return "ERR request too long\n";
	case -EPROTO:
		return "ERR truncated request: no newline\n";
	case -ENOENT:
		return "ERR unknown setting (bandwidth read-bandwidth concurrency mode floor ceiling ceiling-when-busy concurrency-floor concurrency-ceiling)\n";
	case -ETIMEDOUT:
	case -ECONNRESET:
		return "ERR no request\n";
	default:
		return "ERR bad request (PING, STATUS, RELOAD, SET <name> <value>)\n";
	}
}

int coredam_ctl_next_request(int listen_fd, int timeout_ms, int *ret_fd, struct coredam_ctl_request *ret,
			     uid_t *ret_uid)
{
	char line[COREDAM_CTL_REQ_MAX + 2];
	struct coredam_ctl_request q;
	_cleanup_close_ int fd = -1;
	int r;

	r = coredam_ctl_accept(listen_fd, &fd, ret_uid);
	if (r < 0)
		return r;	/* -EPERM is answered by coredam_ctl_accept() */
	r = coredam_ctl_read_request(fd, timeout_ms, line, sizeof(line));
	if (r >= 0)
		r = coredam_ctl_parse(line, &q);
	if (r < 0) {
		coredam_ctl_send(fd, refusal(r));
		discard_input(fd);
		return r;
	}
	*ret = q;
	*ret_fd = take_fd(&fd);
	return 0;
}

/* The handler of @q: its result, with what it wrote in @body. */
static int dispatch(const struct coredam_ctl_request *q, const struct coredam_ctl_handlers *h, void *userdata,
		    char *body, size_t size)
{
	switch (q->cmd) {
	case COREDAM_CTL_PING:
		return 0;
	case COREDAM_CTL_STATUS:
		return h->status(userdata, body, size);
	case COREDAM_CTL_SET:
		return h->set(userdata, q->name, q->value, body, size);
	case COREDAM_CTL_RELOAD:
		return h->reload(userdata, body, size);
	}
	return -EINVAL;
}

int coredam_ctl_serve(int listen_fd, int timeout_ms, const struct coredam_ctl_handlers *h, void *userdata,
		      uid_t *ret_uid)
{
	/* "OK\n" or "ERR " goes in front of what the handler writes, a newline after it */
	static const size_t head = 4;
	_cleanup_free_ char *answer = NULL;
	struct coredam_ctl_request q;
	_cleanup_close_ int fd = -1;
	char *body;
	size_t len;
	int r;

	r = coredam_ctl_next_request(listen_fd, timeout_ms, &fd, &q, ret_uid);
	if (r < 0)
		return r;
	answer = malloc(COREDAM_CTL_RESP_MAX);
	if (!answer) {
		coredam_ctl_send(fd, "ERR out of memory\n");
		return 0;
	}
	body = answer + head;
	body[0] = '\0';
	r = dispatch(&q, h, userdata, body, COREDAM_CTL_RESP_MAX - head - 1);
	if (r >= 0) {
		memcpy(body - 3, "OK\n", 3);
		coredam_ctl_send(fd, body - 3);
		return 0;
	}
	if (!body[0])
		(void)snprintf(body, COREDAM_CTL_RESP_MAX - head - 1, "%s", strerror(-r));
	len = strlen(body);
	if (body[len - 1] != '\n')
		strcpy(body + len, "\n");
	memcpy(answer, "ERR ", head);
	coredam_ctl_send(fd, answer);
	return 0;
}

int coredam_ctl_call(const char *path, const char *request, char *buf, size_t size)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_un sa;
	struct timeval tv = { .tv_sec = 5 };
	socklen_t len;
	size_t o = 0;
	int r;

	r = make_addr(path, &sa, &len);
	if (r < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, len) < 0)
		return -errno;
	r = coredam_ctl_send(fd, request);
	if (r >= 0)
		r = coredam_ctl_send(fd, "\n");
	if (r < 0)
		return r;
	shutdown(fd, SHUT_WR);
	for (;;) {
		ssize_t n = recv(fd, buf + o, size - 1 - o, 0);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		}
		if (n == 0)
			break;
		o += n;
		if (o >= size - 1)
			return -E2BIG;
	}
	buf[o] = '\0';
	return (int)o;
}

enum coredam_ctl_reach coredam_ctl_reach(int r, const char *answer, const char *socket, const char *config_error,
					 char *buf, size_t size)
{
	bool absent = r == -ENOENT || r == -ECONNREFUSED || r == -ENOTDIR || r == -ENOTSOCK;

	if (size)
		buf[0] = '\0';
	/* the socket's mode refuses connect(), the agent's peer check answers this */
	if (r == -EACCES || r == -EPERM || (r >= 0 && strncmp(answer, "ERR permission denied", 21) == 0)) {
		/* what said no: connect(), or the agent's own answer */
		(void)snprintf(buf, size,
			       "permission denied: coredamd on %s answers root only (only root may ask it: %.*s); "
			       "run as root", socket, r < 0 ? INT_MAX : (int)MIN(strcspn(answer, "\n"), (size_t)80),
			       r < 0 ? strerror(-r) : answer);
		return COREDAM_CTL_DENIED;
	}
	if (absent && config_error) {
		(void)snprintf(buf, size,
			       "cannot tell whether coredamd runs: the configuration does not load (%s), and nothing "
			       "listens on %s, the socket it names with that left out (%s); fix it, or name the socket "
			       "with --socket=PATH", config_error, socket, strerror(-r));
		return COREDAM_CTL_UNREACHABLE;
	}
	if (absent) {
		(void)snprintf(buf, size, "agent not reachable at %s: %s: coredamd is not running", socket,
			       strerror(-r));
		return COREDAM_CTL_NOT_RUNNING;
	}
	if (r < 0) {
		(void)snprintf(buf, size, "no answer from coredamd on %s: %s", socket, strerror(-r));
		return COREDAM_CTL_UNREACHABLE;
	}
	if (strncmp(answer, "OK\n", 3) != 0 && strncmp(answer, "ERR ", 4) != 0) {
		(void)snprintf(buf, size, "no answer from coredamd on %s: it sent \"%.*s\", neither OK nor ERR", socket,
			       (int)MIN(strcspn(answer, "\n"), (size_t)40), answer);
		return COREDAM_CTL_UNREACHABLE;
	}
	return COREDAM_CTL_REACHED;
}
