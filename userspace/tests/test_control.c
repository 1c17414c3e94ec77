// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The control protocol: a request parsed, one round trip over a real
 * socket. Then the socket against hostile clients: whatever is malformed, cut
 * off, too long, too slow or from another user is answered with "ERR" and
 * never reaches the caller of coredam_ctl_next_request(), so it changes
 * nothing; many clients at once are all served.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "config.h"
#include "control.h"
#include "test.h"
#include "macro.h"
#include "fileio.h"
#include "time-util.h"

#define NOBODY 65534
#define DIRS(dir) ((const char *const[]){ (dir), NULL })

TEST(control_parse)
{
	struct coredam_ctl_request q;
	const char *s, *k;
	char big[400];

	CHECK(coredam_ctl_parse("STATUS", &q) == 0 && q.cmd == COREDAM_CTL_STATUS);
	CHECK(coredam_ctl_parse("SET bandwidth 20M", &q) == 0 && q.cmd == COREDAM_CTL_SET);
	CHECK_STREQ(q.name, "bandwidth");
	CHECK_STREQ(q.value, "20M");
	CHECK_ERRNO(coredam_ctl_parse("SET colour blue", &q), -ENOENT);
	CHECK_ERRNO(coredam_ctl_parse("SET bandwidth", &q), -EINVAL);
	CHECK_ERRNO(coredam_ctl_parse("SET bandwidth 1 2", &q), -EINVAL);
	CHECK_ERRNO(coredam_ctl_parse("STATUS now", &q), -EINVAL);
	CHECK_ERRNO(coredam_ctl_parse("", &q), -EINVAL);
	memset(big, 'A', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_ERRNO(coredam_ctl_parse(big, &q), -E2BIG);
	CHECK_OK(coredam_ctl_set_key("concurrency", &s, &k));
	CHECK_STREQ(k, "Concurrency");
}

TEST(control_roundtrip)
{
	char path[200], buf[256], req[COREDAM_CTL_REQ_MAX];
	int lfd = -1, cfd = -1;
	uid_t uid;
	pid_t pid;
	int status;

	snprintf(path, sizeof(path), "%s", tpath("ctl.sock"));
	CHECK_OK(coredam_ctl_listen(path, &lfd));
	pid = fork();
	if (pid == 0) {
		int r = coredam_ctl_call(path, "PING", buf, sizeof(buf));

		_exit(r > 0 && strcmp(buf, "OK\npong=1\n") == 0 ? 0 : 1);
	}
	for (int i = 0; i < 500 && cfd < 0; i++) {
		if (coredam_ctl_accept(lfd, &cfd, &uid) < 0)
			usleep(10000);
	}
	CHECK(cfd >= 0);
	CHECK_OK(coredam_ctl_read_request(cfd, 2000, req, sizeof(req)));
	CHECK_STREQ(req, "PING");
	CHECK_OK(coredam_ctl_send(cfd, "OK\npong=1\n"));
	close(cfd);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(lfd);
	{
		struct stat st;

		CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	}
	CHECK_ERRNO(coredam_ctl_call(tpath("nope.sock"), "PING", buf, sizeof(buf)), -ENOENT);
}

/*
 * The server side of the tests: coredam_ctl_serve(), as coredamd calls it,
 * with handlers that work on a configuration of their own.
 */
struct server {
	char path[200];
	int fd;
	struct coredam_config cfg;
	unsigned int served, refused, reloads;
	const struct coredam_ctl_handlers *handlers;	/* NULL: test_handlers */
};

static int test_status(void *userdata, char *buf, size_t size)
{
	struct server *s = userdata;

	(void)snprintf(buf, size, "served=%u\nwrite_bps=%" PRIu64 "\n", s->served, s->cfg.write_bps);
	return 0;
}

static int test_set(void *userdata, const char *name, const char *value, char *buf, size_t size)
{
	struct server *s = userdata;
	int r;

	r = coredam_ctl_apply_set(&s->cfg, name, value, NULL);
	if (r < 0)
		(void)snprintf(buf, size, "bad value");
	return r;
}

/* Every reload fails, with a message of two lines, as a config error can have. */
static int test_reload(void *userdata, char *buf, size_t size)
{
	struct server *s = userdata;

	s->reloads++;
	(void)snprintf(buf, size, "coredam.conf:3: bad value\nkept the running configuration");
	return -EINVAL;
}

static const struct coredam_ctl_handlers test_handlers = {
	.status = test_status,
	.set = test_set,
	.reload = test_reload,
};

static void server_start(struct server *s)
{
	memset(s, 0, sizeof(*s));
	snprintf(s->path, sizeof(s->path), "%s", tpath("ctl.sock"));
	s->fd = -1;
	CHECK_OK(coredam_ctl_listen(s->path, &s->fd));
	coredam_config_init(&s->cfg);
}

/* Serve one client; the result of coredam_ctl_serve(). */
static int server_step(struct server *s, int timeout_ms, uid_t *ret_uid)
{
	uid_t uid = 0;
	int r;

	r = coredam_ctl_serve(s->fd, timeout_ms, s->handlers ?: &test_handlers, s, &uid);
	if (ret_uid)
		*ret_uid = uid;
	if (r < 0) {
		if (r != -EAGAIN)
			s->refused++;
		return r;
	}
	s->served++;
	return 0;
}

/* Wait for a client to queue up, then serve it. */
static int server_serve(struct server *s, int timeout_ms, uid_t *ret_uid)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	if (poll(&p, 1, 5000) != 1)
		return -ETIMEDOUT;
	return server_step(s, timeout_ms, ret_uid);
}

/* The configuration as text, to see that nothing changed. */
static void format_config(const struct coredam_config *c, char *buf, size_t size)
{
	CHECK(coredam_config_format(c, buf, size) > 0);
}

static int client_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int r = -errno;

		close(fd);
		return r;
	}
	return fd;
}

/* Send @len bytes raw (no newline added) and half-close; the connected fd. */
static int client_raw(const char *path, const void *req, size_t len)
{
	int fd = client_connect(path);

	if (fd < 0)
		return fd;
	if (len && send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return -EIO;
	}
	shutdown(fd, SHUT_WR);
	return fd;
}

/* Read what the server answered on @fd (after it closed its side) and close @fd. */
static void client_answer(int fd, char *buf, size_t size)
{
	ssize_t n = read_full(fd, buf, size - 1);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

static void expect_refused(struct server *s, const void *req, size_t len, int want, const char *answer)
{
	char buf[256];
	int fd, r;

	fd = client_raw(s->path, req, len);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	r = server_serve(s, 500, NULL);
	client_answer(fd, buf, sizeof(buf));
	if (r != want || strncmp(buf, answer, strlen(answer)) != 0) {
		fprintf(stderr, "  request \"%.40s\": %d \"%s\", expected %d \"%s...\"\n", (const char *)req, r, buf,
			want, answer);
		test_failed_checks++;
	}
}

TEST(control_refuses_malformed_requests)
{
	struct server s;
	char before[8192], after[8192], big[1000];
	static const char nul[] = "SET bandwidth 1\0M\n";

	server_start(&s);
	format_config(&s.cfg, before, sizeof(before));

	memset(big, '9', sizeof(big));
	memcpy(big, "SET bandwidth ", 14);
	/* oversized: with a newline after 300 bytes, and none at all */
	big[300] = '\n';
	expect_refused(&s, big, 301, -E2BIG, "ERR request too long");
	expect_refused(&s, big, sizeof(big) - 1, -E2BIG, "ERR request too long");
	big[300] = '9';
	/* truncated: "SET bandwidth 2" of "SET bandwidth 20M\n" must not set 2 bytes/s */
	expect_refused(&s, "SET bandwidth 2", 15, -EPROTO, "ERR truncated request");
	expect_refused(&s, "", 0, -ECONNRESET, "ERR no request");
	/* malformed */
	expect_refused(&s, nul, sizeof(nul) - 1, -EBADMSG, "ERR bad request");
	expect_refused(&s, "SET colour blue\n", 16, -ENOENT, "ERR unknown setting");
	expect_refused(&s, "SET bandwidth\n", 14, -EINVAL, "ERR bad request");
	expect_refused(&s, "SET bandwidth 1 2\n", 18, -EINVAL, "ERR bad request");
	expect_refused(&s, "STATUS now\n", 11, -EINVAL, "ERR bad request");
	expect_refused(&s, "\n", 1, -EINVAL, "ERR bad request");
	expect_refused(&s, "\xff\xfe\x01\n", 4, -EINVAL, "ERR bad request");

	CHECK_EQ_INT(s.served, 0);
	CHECK_EQ_INT(s.refused, 11);
	format_config(&s.cfg, after, sizeof(after));
	CHECK_STREQ(after, before);

	/* and a good request still goes through */
	{
		char buf[64];
		int fd = client_raw(s.path, "SET bandwidth 20M\n", 18);

		CHECK(server_serve(&s, 500, NULL) == 0);
		client_answer(fd, buf, sizeof(buf));
		CHECK_STREQ(buf, "OK\n");
		CHECK_EQ_INT(s.cfg.write_bps, 20000000);
	}
	close(s.fd);
}

/* A client that sends nothing, or trickles bytes, gets one deadline in all. */
TEST(control_slow_clients_time_out)
{
	struct server s;
	char buf[64];
	uint64_t t0;
	pid_t pid;
	int fd, status;

	server_start(&s);
	fd = client_connect(s.path);
	CHECK(fd >= 0);
	t0 = now_usec(CLOCK_MONOTONIC);
	CHECK_ERRNO(server_serve(&s, 200, NULL), -ETIMEDOUT);
	CHECK(now_usec(CLOCK_MONOTONIC) - t0 < 2000000);
	shutdown(fd, SHUT_WR);
	client_answer(fd, buf, sizeof(buf));
	CHECK_STREQ(buf, "ERR no request\n");

	/* one byte every 50ms, never a newline: refused after the 300ms deadline, not later */
	pid = fork();
	if (pid == 0) {
		int c = client_connect(s.path);

		for (int i = 0; c >= 0 && i < 100; i++) {
			if (send(c, "P", 1, MSG_NOSIGNAL) != 1)
				break;
			usleep(50000);
		}
		_exit(0);
	}
	t0 = now_usec(CLOCK_MONOTONIC);
	CHECK_ERRNO(server_serve(&s, 300, NULL), -ETIMEDOUT);
	CHECK(now_usec(CLOCK_MONOTONIC) - t0 < 2000000);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	CHECK_EQ_INT(s.served, 0);
	close(s.fd);
}

/* A child that becomes nobody and sends @req: exit 0 if the answer starts with @want. */
static pid_t spawn_nobody(const char *path, const char *req, const char *want)
{
	pid_t pid = fork();
	char buf[128];
	int fd;

	if (pid != 0)
		return pid;
	if (setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0)
		_exit(3);
	fd = client_connect(path);
	if (fd < 0)
		_exit(fd == -EACCES ? 2 : 4);
	/* the server may have answered and closed already: the answer is still there to read */
	send(fd, req, strlen(req), MSG_NOSIGNAL);
	shutdown(fd, SHUT_WR);
	client_answer(fd, buf, sizeof(buf));
	_exit(strncmp(buf, want, strlen(want)) == 0 ? 0 : 1);
}

static int exit_code(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(control_refuses_other_users)
{
	struct server s;
	char before[8192], after[8192];
	uid_t uid = 0;
	pid_t pid;

	if (geteuid() != 0) {
		fprintf(stderr, "  skipped: needs root to become uid %d\n", NOBODY);
		return;
	}
	server_start(&s);
	format_config(&s.cfg, before, sizeof(before));

	/* the socket's mode 0600 keeps others out before the server sees them */
	CHECK(chmod(tmp_root(), 0711) == 0);
	CHECK_EQ_INT(exit_code(spawn_nobody(s.path, "SET bandwidth 1\n", "ERR")), 2);

	/* with the mode opened up, SO_PEERCRED still refuses them */
	CHECK(chmod(s.path, 0666) == 0);
	pid = spawn_nobody(s.path, "SET bandwidth 1\n", "ERR permission denied");
	CHECK_ERRNO(server_serve(&s, 1000, &uid), -EPERM);
	CHECK_EQ_INT(uid, NOBODY);
	CHECK_EQ_INT(exit_code(pid), 0);

	CHECK_EQ_INT(s.served, 0);
	format_config(&s.cfg, after, sizeof(after));
	CHECK_STREQ(after, before);
	close(s.fd);
}

#define N_CLIENTS 48

/* Every fourth client is hostile; the others set concurrency or ping. */
static int many_client(const char *path, int i)
{
	char req[64], buf[256];
	int r;

	if (i % 4 == 3) {
		char big[600];
		int fd;

		memset(big, 'A', sizeof(big));
		fd = client_raw(path, big, sizeof(big));
		if (fd < 0)
			return 1;
		client_answer(fd, buf, sizeof(buf));
		return strcmp(buf, "ERR request too long\n") == 0 ? 0 : 1;
	}
	if (i % 2)
		snprintf(req, sizeof(req), "PING");
	else
		snprintf(req, sizeof(req), "SET concurrency %d", 100 + i);
	r = coredam_ctl_call(path, req, buf, sizeof(buf));
	return r > 0 && strcmp(buf, "OK\n") == 0 ? 0 : 1;
}

TEST(control_many_clients_at_once)
{
	struct server s;
	pid_t pids[N_CLIENTS];
	uint64_t deadline;
	int failed = 0;

	server_start(&s);
	for (int i = 0; i < N_CLIENTS; i++) {
		pids[i] = fork();
		if (pids[i] == 0)
			_exit(many_client(s.path, i));
		CHECK(pids[i] > 0);
	}
	deadline = now_usec(CLOCK_MONOTONIC) + 20000000;
	while (s.served + s.refused < N_CLIENTS && now_usec(CLOCK_MONOTONIC) < deadline)
		server_serve(&s, 1000, NULL);
	for (int i = 0; i < N_CLIENTS; i++)
		failed += exit_code(pids[i]) != 0;
	CHECK_EQ_INT(failed, 0);
	CHECK_EQ_INT(s.served, N_CLIENTS - N_CLIENTS / 4);
	CHECK_EQ_INT(s.refused, N_CLIENTS / 4);
	/* the SETs were applied one at a time, each whole */
	CHECK(s.cfg.concurrency >= 100 && s.cfg.concurrency < 100 + N_CLIENTS && s.cfg.concurrency % 2 == 0);
	close(s.fd);
}

/* Send @req, serve it, and read the answer. */
static void ask(struct server *s, const char *req, char *buf, size_t size)
{
	int fd = client_raw(s->path, req, strlen(req));

	CHECK(fd >= 0);
	CHECK(server_serve(s, 500, NULL) == 0);
	client_answer(fd, buf, size);
}

/* What the handlers write comes back after "OK", or after "ERR" when they fail. */
TEST(control_answers_from_the_handlers)
{
	struct server s;
	char buf[512];

	server_start(&s);
	ask(&s, "PING\n", buf, sizeof(buf));
	CHECK_STREQ(buf, "OK\n");
	ask(&s, "SET bandwidth 5M\n", buf, sizeof(buf));
	CHECK_STREQ(buf, "OK\n");
	ask(&s, "STATUS\n", buf, sizeof(buf));
	CHECK_STREQ(buf, "OK\nserved=2\nwrite_bps=5000000\n");
	ask(&s, "SET bandwidth fast\n", buf, sizeof(buf));
	CHECK_STREQ(buf, "ERR bad value\n");
	CHECK_EQ_INT(s.cfg.write_bps, 5000000);
	ask(&s, "RELOAD\n", buf, sizeof(buf));
	CHECK_STREQ(buf, "ERR coredam.conf:3: bad value\nkept the running configuration\n");
	CHECK_EQ_INT(s.reloads, 1);
	CHECK_EQ_INT(s.served, 5);
	CHECK_EQ_INT(s.refused, 0);
	close(s.fd);
}

/* SET against the configuration: the value, then the rules between keys and modes. */
TEST(control_set_checks_against_the_configuration)
{
	struct coredam_config c;
	struct coredam_error err;

	coredam_config_init(&c);
	CHECK_OK(coredam_ctl_apply_set(&c, "bandwidth", "25M", &err));
	CHECK_EQ_INT(c.write_bps, 25000000);
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "colour", "blue", &err), -ENOENT);
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "bandwidth", "0", &err), -ERANGE);
	CHECK_EQ_INT(c.write_bps, 25000000);
	/* fixed: the adaptive mode's bounds would do nothing, and the message says what governs */
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "floor", "20M", &err), -EINVAL);
	CHECK_STREQ(err.msg, "floor does nothing in fixed mode, where bandwidth is the write bandwidth; "
			     "set bandwidth instead, or mode adaptive first");
	CHECK_EQ_INT(c.floor_bps, 10000000);
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "ceiling", "40M", &err), -EINVAL);
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "ceiling-when-busy", "40M", &err), -EINVAL);
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "concurrency-floor", "2", &err), -EINVAL);
	CHECK(strstr(err.msg, "where concurrency is the dumps at once") != NULL);
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "concurrency-ceiling", "8", &err), -EINVAL);
	/* what both modes read is taken in either */
	CHECK_OK(coredam_ctl_apply_set(&c, "read-bandwidth", "50M", &err));
	/* adaptive: the fixed mode's knobs would do nothing */
	CHECK_OK(coredam_ctl_apply_set(&c, "mode", "adaptive", &err));
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "bandwidth", "15M", &err), -EINVAL);
	CHECK_STREQ(err.msg, "bandwidth does nothing in adaptive mode, where floor, ceiling and ceiling-when-busy "
			     "bound the write bandwidth; set floor or ceiling instead, or mode fixed first");
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "concurrency", "3", &err), -EINVAL);
	CHECK(strstr(err.msg, "concurrency-floor and concurrency-ceiling") != NULL);
	CHECK_EQ_INT(c.write_bps, 25000000);
	CHECK_OK(coredam_ctl_apply_set(&c, "read-bandwidth", "infinity", &err));
	/* the bounds keep their order */
	CHECK_OK(coredam_ctl_apply_set(&c, "ceiling", "20M", &err));
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "floor", "30M", &err), -EINVAL);
	CHECK(strstr(err.msg, "above ceiling") != NULL);
	CHECK_EQ_INT(c.floor_bps, 10000000);
	CHECK_OK(coredam_ctl_apply_set(&c, "ceiling-when-busy", "15M", &err));
	CHECK_EQ_INT(c.busy_ceiling_bps, 15000000);
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "floor", "16M", &err), -EINVAL);
	CHECK(strstr(err.msg, "above ceiling-when-busy") != NULL);
	CHECK_OK(coredam_ctl_apply_set(&c, "ceiling-when-busy", "auto", &err));
	CHECK_EQ_INT(c.busy_ceiling_bps, 0);
	CHECK_ERRNO(coredam_ctl_apply_set(&c, "concurrency-floor", "9", &err), -EINVAL);
	CHECK_OK(coredam_ctl_apply_set(&c, "mode", "fixed", &err));
	CHECK_OK(coredam_ctl_apply_set(&c, "concurrency", "3", &err));
	CHECK_EQ_INT(c.concurrency, 3);
}

/* The client's verdict on a call, with systemctl status's exit codes: each cause and what it says. */
TEST(control_reach_says_why_the_agent_did_not_answer)
{
	const char *sock = "/run/coredam/control.sock", *bad = "/etc/coredam/coredam.conf.d/x.conf:3: Foo=bar: nope";
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[512], buf[64];
	int fd;

	/* answered: OK, or an ERR of its own, which the command reads */
	CHECK_EQ_INT(coredam_ctl_reach(3, "OK\n", sock, NULL, msg, sizeof(msg)), COREDAM_CTL_REACHED);
	CHECK_STREQ(msg, "");
	CHECK_EQ_INT(coredam_ctl_reach(20, "ERR bad value\n", sock, bad, msg, sizeof(msg)), COREDAM_CTL_REACHED);

	/* nothing there, or nothing listening: not running, 3 */
	CHECK_EQ_INT(coredam_ctl_reach(-ENOENT, NULL, sock, NULL, msg, sizeof(msg)), COREDAM_CTL_NOT_RUNNING);
	CHECK_STREQ(msg, "agent not reachable at /run/coredam/control.sock: No such file or directory: "
			 "coredamd is not running");
	CHECK_EQ_INT(coredam_ctl_reach(-ECONNREFUSED, NULL, sock, NULL, msg, sizeof(msg)), COREDAM_CTL_NOT_RUNNING);

	/* refused by the socket's mode or by the agent: denied, 4, and never "not running" */
	CHECK_EQ_INT(coredam_ctl_reach(-EACCES, NULL, sock, NULL, msg, sizeof(msg)), COREDAM_CTL_DENIED);
	CHECK_STREQ(msg, "permission denied: coredamd on /run/coredam/control.sock answers root only (only root may ask "
			 "it: Permission denied); run as root");
	CHECK_EQ_INT(coredam_ctl_reach(-EPERM, NULL, sock, NULL, msg, sizeof(msg)), COREDAM_CTL_DENIED);
	CHECK_EQ_INT(coredam_ctl_reach(33, "ERR permission denied: root only\n", sock, NULL, msg, sizeof(msg)),
		     COREDAM_CTL_DENIED);
	CHECK(strstr(msg, "(only root may ask it: ERR permission denied: root only); run as root") != NULL);
	CHECK(!strstr(msg, "not running"));
	/* a socket found and refusing us is the agent's, whatever the configuration says */
	CHECK_EQ_INT(coredam_ctl_reach(-EACCES, NULL, sock, bad, msg, sizeof(msg)), COREDAM_CTL_DENIED);

	/* a broken configuration may have named another socket: no verdict but the error, 1 */
	CHECK_EQ_INT(coredam_ctl_reach(-ENOENT, NULL, sock, bad, msg, sizeof(msg)), COREDAM_CTL_UNREACHABLE);
	CHECK(strstr(msg, "cannot tell whether coredamd runs") && strstr(msg, bad) && strstr(msg, "--socket="));
	CHECK(!strstr(msg, "not running"));

	/* there but not answering, or answering nonsense: 1 */
	CHECK_EQ_INT(coredam_ctl_reach(-ETIMEDOUT, NULL, sock, NULL, msg, sizeof(msg)), COREDAM_CTL_UNREACHABLE);
	CHECK(strstr(msg, "no answer from coredamd") && strstr(msg, strerror(ETIMEDOUT)));
	CHECK_EQ_INT(coredam_ctl_reach(0, "", sock, NULL, msg, sizeof(msg)), COREDAM_CTL_UNREACHABLE);
	CHECK_EQ_INT(coredam_ctl_reach(5, "HELLO\n", sock, NULL, msg, sizeof(msg)), COREDAM_CTL_UNREACHABLE);
	CHECK(strstr(msg, "\"HELLO\"") != NULL);

	/* what coredam_ctl_call() really returns: a missing socket, and one nobody listens on */
	CHECK_EQ_INT(coredam_ctl_reach(coredam_ctl_call(tpath("gone.sock"), "STATUS", buf, sizeof(buf)), buf,
				       "gone.sock", NULL, msg, sizeof(msg)),
		     COREDAM_CTL_NOT_RUNNING);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tpath("deaf.sock"));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	CHECK_EQ_INT(coredam_ctl_reach(coredam_ctl_call(sa.sun_path, "STATUS", buf, sizeof(buf)), buf, "deaf.sock",
				       NULL, msg, sizeof(msg)),
		     COREDAM_CTL_NOT_RUNNING);
	close(fd);
}

/* RELOAD as coredamd's handler does it: the files read again, or the running configuration kept and why. */
static int file_reload(void *userdata, char *buf, size_t size)
{
	struct server *s = userdata;
	struct coredam_config c;
	struct coredam_error e = { 0 };
	int r;

	r = coredam_ctl_reload_config(tpath("c/coredam.conf"), DIRS(tpath("c/coredam.conf.d")), &s->cfg, &c, &e);
	if (r < 0) {
		(void)coredam_error_str(&e, buf, size);
		return r;
	}
	s->cfg = c;
	s->reloads++;
	return 0;
}

TEST(control_reload_reads_the_files_or_keeps_the_running_configuration)
{
	static const struct coredam_ctl_handlers h = { .status = test_status, .reload = file_reload };
	struct coredam_config running, c;
	struct coredam_error e = { 0 };
	struct server s;
	char buf[1024], want[1024];

	mkfile("c/coredam.conf", "[Limits]\nWriteBandwidth=20M\n");
	coredam_config_init(&running);
	CHECK_OK(coredam_ctl_reload_config(tpath("c/coredam.conf"), DIRS(tpath("c/coredam.conf.d")), &running, &c,
					   &e));
	CHECK_EQ_INT(c.write_bps, 20000000);

	/* a bad line anywhere refuses the whole reload, named by file and line */
	mkfile("c/coredam.conf.d/20-bad.conf", "[Limits]\nConcurrency=3\nWriteBandwidth=0\n");
	c = running;
	CHECK_ERRNO(coredam_ctl_reload_config(tpath("c/coredam.conf"), DIRS(tpath("c/coredam.conf.d")), &running,
					      &c, &e),
		    -EINVAL);
	CHECK_STREQ(e.where, tpath("c/coredam.conf.d/20-bad.conf"));
	CHECK_EQ_INT(e.line, 3);
	CHECK_EQ_INT(c.concurrency, running.concurrency);

	/* the socket it listens on does not move under its clients */
	mkfile("c/coredam.conf.d/20-bad.conf", "[Agent]\nControlSocket=/run/elsewhere.sock\n");
	CHECK_ERRNO(coredam_ctl_reload_config(tpath("c/coredam.conf"), DIRS(tpath("c/coredam.conf.d")), &running,
					      &c, &e),
		    -EINVAL);
	CHECK_STREQ(e.msg, "ControlSocket=/run/elsewhere.sock: coredamd listens on /run/coredam/control.sock until "
			   "it restarts; a reload cannot move it (restart coredamd, or put it back)");
	/* written out, the same path is no move */
	mkfile("c/coredam.conf.d/20-bad.conf", "[Agent]\nControlSocket=/run/coredam/control.sock\n");
	CHECK_OK(coredam_ctl_reload_config(tpath("c/coredam.conf"), DIRS(tpath("c/coredam.conf.d")), &running, &c,
					   &e));

	/* over the socket: OK once in force, else ERR with the file and line, and nothing changed */
	server_start(&s);
	s.handlers = &h;
	ask(&s, "RELOAD\n", buf, sizeof(buf));
	CHECK_STREQ(buf, "OK\n");
	CHECK_EQ_INT(s.cfg.write_bps, 20000000);
	mkfile("c/coredam.conf.d/30-typo.conf", "[Limits]\nWriteBandwith=30M\n");
	ask(&s, "RELOAD\n", buf, sizeof(buf));
	snprintf(want, sizeof(want), "ERR %s:2: unknown key WriteBandwith= in [Limits]\n",
		 tpath("c/coredam.conf.d/30-typo.conf"));
	CHECK_STREQ(buf, want);
	CHECK_EQ_INT(s.reloads, 1);
	CHECK_EQ_INT(s.cfg.write_bps, 20000000);
	close(s.fd);
}
