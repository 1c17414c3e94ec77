/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_CONTROL_H
#define COREDAM_CONTROL_H

#include <stddef.h>
#include <sys/types.h>

#include "config.h"

/*
 * The control socket: a Unix stream socket, mode 0600, owned by root. One
 * request per connection: a single line of less than COREDAM_CTL_REQ_MAX
 * bytes ending in a newline, no NUL bytes; the answer is "OK" or
 * "ERR <message>" on the first line, then "key=value" lines, at most
 * COREDAM_CTL_RESP_MAX bytes, then EOF.
 *
 *   PING
 *   STATUS
 *   SET <name> <value>      name: bandwidth read-bandwidth concurrency mode floor ceiling
 *                           ceiling-when-busy concurrency-floor concurrency-ceiling
 *   RELOAD
 *
 * The server checks the peer with SO_PEERCRED: uid 0 (or the server's own
 * uid, for unprivileged test runs) only.
 */
#define COREDAM_CTL_REQ_MAX 256
#define COREDAM_CTL_RESP_MAX 16384

enum coredam_ctl_cmd {
	COREDAM_CTL_PING,
	COREDAM_CTL_STATUS,
	COREDAM_CTL_SET,
	COREDAM_CTL_RELOAD,
};

struct coredam_ctl_request {
	enum coredam_ctl_cmd cmd;
	char name[32];
	char value[128];
};

int coredam_ctl_parse(const char *line, struct coredam_ctl_request *ret);

/* SET names -> coredam.conf section and key */
int coredam_ctl_set_key(const char *name, const char **ret_section, const char **ret_key);

/*
 * What SET NAME VALUE does to a configuration: the key's value, checked
 * against the rest (floor not above ceiling, ...). A setting the mode's
 * budget does not read is refused, and the message says what governs in
 * that mode: the fixed mode's bandwidth and concurrency in adaptive mode,
 * the adaptive mode's bounds in fixed mode. On failure *cfg is untouched
 * and @reterr says why.
 */
int coredam_ctl_apply_set(struct coredam_config *cfg, const char *name, const char *value,
			  struct coredam_error *reterr);

/*
 * What RELOAD (and SIGHUP) does before anything is put in force: the
 * files @main_file and @dropin_dirs read again, strictly (one bad line
 * refuses the reload, named by file and line), and refused what a reload
 * cannot change in the @running configuration: the control socket
 * (clients reading the new files would look for the agent where it does
 * not listen). *ret is the new configuration; untouched on failure.
 */
int coredam_ctl_reload_config(const char *main_file, const char *const *dropin_dirs,
			      const struct coredam_config *running, struct coredam_config *ret,
			      struct coredam_error *reterr);

int coredam_ctl_listen(const char *path, int *ret_fd);
/* accept() one client; -EPERM (after answering "ERR") if the peer is not allowed */
int coredam_ctl_accept(int listen_fd, int *ret_fd, uid_t *ret_uid);
/*
 * Read one request line, newline stripped, within @timeout_ms (one deadline
 * for the whole line; < 0: none). -E2BIG: no newline within @size - 1
 * bytes; -EPROTO: EOF before the newline (a truncated request); -EBADMSG:
 * a NUL byte in the line; -ECONNRESET: EOF before any byte; -ETIMEDOUT.
 */
int coredam_ctl_read_request(int fd, int timeout_ms, char *buf, size_t size);
int coredam_ctl_send(int fd, const char *text);

/*
 * The server's side of a connection up to a valid request: accept() a
 * client on @listen_fd, check its peer credentials, read one request line
 * within @timeout_ms and parse it. Whatever fails is answered with
 * "ERR <why>" here and the connection closed, so that the caller only ever
 * sees well-formed requests from allowed peers: *ret_fd is then the
 * connection to answer and *ret the request. *ret_uid is set whenever the
 * peer is known, -EPERM included. -EAGAIN: no client was waiting.
 */
int coredam_ctl_next_request(int listen_fd, int timeout_ms, int *ret_fd, struct coredam_ctl_request *ret,
			     uid_t *ret_uid);

/*
 * What a server does with each valid request (PING needs none). A handler
 * writes its "key=value" lines into @buf, or returns a negative errno and
 * may write why into @buf (else the errno's text is sent).
 */
struct coredam_ctl_handlers {
	int (*status)(void *userdata, char *buf, size_t size);
	int (*set)(void *userdata, const char *name, const char *value, char *buf, size_t size);
	int (*reload)(void *userdata, char *buf, size_t size);
};

/*
 * Serve one client: coredam_ctl_next_request(), then the request's handler,
 * and the answer: "OK" and the handler's lines, or "ERR <why>". 0 once a
 * request reached its handler, whatever it answered; else what
 * coredam_ctl_next_request() returned (the client refused and answered).
 */
int coredam_ctl_serve(int listen_fd, int timeout_ms, const struct coredam_ctl_handlers *h, void *userdata,
		      uid_t *ret_uid);

/* Client: send @request, read the answer into @buf. */
int coredam_ctl_call(const char *path, const char *request, char *buf, size_t size);

/*
 * What a client makes of a coredam_ctl_call(), valued as systemctl
 * status's exit codes (the LSB's), so that every command that asks the
 * agent exits the same way for the same cause.
 */
enum coredam_ctl_reach {
	COREDAM_CTL_REACHED = 0,	/* it answered: "OK", or an "ERR" of its own */
	COREDAM_CTL_UNREACHABLE = 1,	/* no usable answer, or no telling where the agent listens */
	COREDAM_CTL_NOT_RUNNING = 3,	/* nothing at the socket's path, or nothing listening there */
	COREDAM_CTL_DENIED = 4,		/* the socket's mode or the agent's SO_PEERCRED check refused us */
};

/*
 * The verdict on @r and @answer, what coredam_ctl_call(@socket, ...)
 * returned and read. @config_error: NULL, or why the configuration that
 * named @socket did not load whole; then nothing listening at @socket says
 * nothing about the agent, which may listen where the line left out says,
 * and the verdict is COREDAM_CTL_UNREACHABLE naming the error. Anything
 * but COREDAM_CTL_REACHED comes with a sentence for people in @buf.
 */
enum coredam_ctl_reach coredam_ctl_reach(int r, const char *answer, const char *socket, const char *config_error,
					 char *buf, size_t size);

#endif
