// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredamd serving the coredump socket: core_pattern "@@<Listen>" (Linux
 * 6.17 and later). The kernel connects from each dumping task, sends a
 * request and waits for the ack with no timeout; the agent accepts every
 * pending connection at once from its loop, holds the ack of a dump that
 * has no slot (FIFO, the agent's budget: Concurrency=, QueueCap=,
 * WaitTimeout=), answers COREDUMP_REJECT to one over the cap, past the
 * timeout or below the free-space floor, and hands an admitted one to a
 * writer process of its own in the dump cgroup, which streams the core to
 * disk with the pipe helper's writer. Counted in the pipe helper's
 * counters (<state>/pipe/stats), as the helper counts: every connection
 * started; admitted; completed or failed by its writer (or by the agent
 * when the writer was killed); a rejection skipped by cause (full,
 * timeout, space, error for a peer that is no dumping task or breaks the
 * protocol, killed for a dump whose task died waiting or that was held
 * when the agent stopped). A crash the kernel could not connect (the
 * backlog full, no one listening) never reaches the agent: the kernel log
 * says it, and the agent reads that (lost_connect).
 */
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "agent.h"
#include "cgroup.h"
#include "core-journal.h"
#include "core-store.h"
#include "escape.h"
#include "fileio.h"
#include "kmsg.h"
#include "log.h"
#include "macro.h"
#include "path-util.h"
#include "pipe-args.h"
#include "pipe-dest.h"
#include "pipe-outcome.h"
#include "pipe-queue.h"
#include "pipe-state.h"
#include "repeats.h"
#include "retention.h"
#include "sandbox.h"
#include "sched-util.h"
#include "sock-admit.h"
#include "string-util.h"
#include "time-util.h"

/* How long a connection may take to send its request: the kernel sends it at once. */
#define SOCK_REQ_TIMEOUT_USEC (5ULL * 1000 * 1000)
/* How long a writer waits for the kernel's mark after the ack. */
#define SOCK_MARK_TIMEOUT_MS 5000

static void stats_add(struct agent *a, const struct coredam_pipe_stats *d)
{
	int r = coredam_pipe_stats_add(a->roots.state, d);

	if (r < 0)
		log_warning("cannot update the counters in %s/pipe/stats: %s", a->roots.state, strerror(-r));
}

/* What happened to a dump no longer held (a failure after its admission). */
static void count(struct agent *a, int what)
{
	struct coredam_pipe_stats d = { 0 };

	d.v[what] = 1;
	stats_add(a, &d);
}

/*
 * A dump's arrival and its answer move the counters and the held gauge in
 * one update of the file, so that after a server killed while it held
 * dumps, the next one finds exactly how many it held (count_lost()).
 */
static void count_arrived(struct agent *a)
{
	struct coredam_pipe_stats d = { 0 };

	d.v[COREDAM_PIPE_STARTED] = 1;
	d.v[COREDAM_PIPE_HELD] = 1;
	stats_add(a, &d);
}

static void count_decided(struct agent *a, int what)
{
	struct coredam_pipe_stats d = { 0 };

	d.v[what] = 1;
	d.v[COREDAM_PIPE_HELD] = (uint64_t)-1;
	stats_add(a, &d);
}

/* The listen backlog: net.core.somaxconn, which caps what listen() takes anyway. */
static int backlog(struct agent *a)
{
	char buf[32];
	unsigned long v;

	if (coredam_sysctl_read(&a->roots, "net.core.somaxconn", buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%lu", &v) != 1 || v < 128)
		return 4096;
	return v > INT32_MAX ? INT32_MAX : (int)v;
}

/*
 * The socket's directory: root's, 0700 (only root may connect, as only
 * the kernel should), every component checked as the helper's destination
 * is; at @ret_dfd.
 */
static int sock_dir_open(struct agent *a, int *ret_dfd)
{
	const char *path = a->cfg.sock_listen;
	char dir[PATH_MAX];
	_cleanup_close_ int dfd = -1;
	struct coredam_error e;
	int r;

	snprintf(dir, sizeof(dir), "%.*s", (int)(path_basename(path) - path), path);
	r = mkdir_p(dir, 0700);
	if (r < 0)
		return log_error_errno(r, "cannot create %s: %m", dir);
	r = coredam_pipe_open_dest(dir, 0, &dfd, &e);
	if (r < 0) {
		log_error("[Socket] Listen=%s refused: %s", path, e.msg);
		return r;
	}
	if (fchmod(dfd, 0700) < 0)
		return log_error_errno(-errno, "cannot make %s root's only: %m", dir);
	*ret_dfd = take_fd(&dfd);
	return 0;
}

/*
 * The socket systemd passed (coredamd.socket), when it listens on [Socket]
 * Listen=: systemd holds it, so that it outlives this process and dumps
 * that connect while coredamd restarts wait in its backlog for the next
 * one instead of being lost. Other passed fds are closed. -1: none.
 */
static int sock_inherit(struct agent *a)
{
	int n = sd_listen_fds(1), found = -1;

	for (int fd = SD_LISTEN_FDS_START; n > 0 && fd < SD_LISTEN_FDS_START + n; fd++) {
		if (found < 0 && sd_is_socket_unix(fd, SOCK_STREAM, 1, a->cfg.sock_listen, 0) > 0) {
			found = fd;
			continue;
		}
		log_warning("fd %d passed by systemd is no stream socket listening on [Socket] Listen=%s: closed "
			    "(coredamd.socket's ListenStream= and Listen= must name one path)", fd, a->cfg.sock_listen);
		close(fd);
	}
	return found;
}

/*
 * Listen on [Socket] Listen=: on the socket systemd holds, if it passed
 * one, else on a socket of our own, a stale one there replaced (anything
 * else of that name is left and refused). Either way nonblocking, with a
 * backlog of somaxconn.
 */
static int sock_bind(struct agent *a, int *ret_fd)
{
	const char *path = a->cfg.sock_listen;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	_cleanup_close_ int dfd = -1, fd = sock_inherit(a);
	struct stat st;
	int r;

	r = sock_dir_open(a, &dfd);
	if (r < 0)
		return r;
	a->sock.inherited = fd >= 0;
	if (fd >= 0) {
		if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0)
			return log_error_errno(-errno, "cannot make the socket systemd passed nonblocking: %m");
		log_info("serving %s, the socket systemd holds (coredamd.socket): dumps that arrive while coredamd "
			 "restarts wait in its backlog", path);
	} else {
		if (fstatat(dfd, path_basename(path), &st, AT_SYMLINK_NOFOLLOW) == 0) {
			if (!S_ISSOCK(st.st_mode)) {
				log_error("[Socket] Listen=%s exists and is no socket: left as it is", path);
				return -EEXIST;
			}
			if (unlinkat(dfd, path_basename(path), 0) < 0)
				return log_error_errno(-errno, "cannot remove the stale socket %s: %m", path);
		}
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (fd < 0)
			return log_error_errno(-errno, "socket: %m");
		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			return log_error_errno(-errno, "cannot bind %s: %m", path);
	}
	/* the directory, root's and 0700, is what keeps others out: the
	 * socket's own mode is a second fence, its failure only logged (and
	 * checked, as glibc's _FORTIFY_SOURCE has fchmodat() demand) */
	if (fchmodat(dfd, path_basename(path), 0600, 0) < 0)
		log_warning_errno(-errno, "cannot make the socket %s 0600: %m", path);
	/* again on systemd's: its Backlog= may be less */
	a->sock.backlog = backlog(a);
	if (listen(fd, a->sock.backlog) < 0)
		return log_error_errno(-errno, "cannot listen on %s: %m", path);
	*ret_fd = take_fd(&fd);
	return 1;
}

int sock_pattern(const struct agent *a, char *buf, size_t size)
{
	return xsnprintf(buf, size, "@@%s", a->cfg.sock_listen);
}

/*
 * Dumps the last server held when it ended without answering them (it was
 * killed, or died): the kernel ended each without a core when its
 * connection closed. The held gauge moves with every arrival and answer
 * (count_arrived(), count_decided()), so what it says now is exactly
 * those; they are counted skipped_killed, as the ones a stopping server
 * rejects, and said once. The listening socket is not there yet: nothing
 * else changes the gauge meanwhile.
 */
static void count_lost(struct agent *a)
{
	struct coredam_pipe_stats p, d = { 0 };
	uint64_t n;

	if (coredam_pipe_stats_read(a->roots.state, &p) < 0 || p.v[COREDAM_PIPE_HELD] == 0)
		return;
	n = p.v[COREDAM_PIPE_HELD];
	d.v[COREDAM_PIPE_SKIPPED_KILLED] = n;
	d.v[COREDAM_PIPE_HELD] = -n;
	stats_add(a, &d);
	log_warning("%" PRIu64 " dump%s held by the coredump socket's last server when it ended lost %s core "
		    "(counted skipped_killed) event=socket-lost count=%" PRIu64, n, n == 1 ? "" : "s",
		    n == 1 ? "its" : "their", n);
}

void sock_pattern_check(struct agent *a)
{
	char esc[COREDAM_ESCAPE_SIZE(sizeof(a->core_pattern))];
	int r;

	if (!a->sock.active || a->sock.stopping || strcmp(a->core_pattern, a->sock.pattern) == 0)
		return;
	coredam_escape(a->core_pattern, COREDAM_ESCAPE_WORD, esc, sizeof(esc));
	/*
	 * Under the units the daemon's sandbox cannot write it, and "@@" is
	 * taken from the initial mount namespace only: coredam-socket.service
	 * writes it, if it is active (its own stop puts the old one back)
	 */
	r = a->pattern_external ? unit_reload_active(a, "coredam-socket.service") : sock_install_pattern(a);
	if (r == 0 && a->pattern_external)
		return;
	if (r < 0)
		log_warning("core_pattern was set to %s while coredamd serves %s ([Socket] SetCorePattern=yes), and "
			    "putting its own back failed: %s; crashes go there event=socket-pattern-taken core_pattern=%s",
			    esc, a->cfg.sock_listen, strerror(-r), esc);
	else
		log_warning("core_pattern was set to %s while coredamd serves %s ([Socket] SetCorePattern=yes): "
			    "putting its own back event=socket-pattern-taken core_pattern=%s", esc, a->cfg.sock_listen, esc);
}

/* Close *@fd and mark it closed: a number kept after close() is another file's after the next open. */
static void fd_close(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

/*
 * Crashes the kernel could not connect to the socket: its log is the only
 * trace (kmsg.h). Counted lost_connect in the same update of the counters
 * that moves kmsg_seq, the log's position, past them: a server started
 * after this one goes on from there, so what was lost while none ran is
 * counted by the next, and nothing twice.
 */
struct kmsg_batch {
	uint64_t by[COREDAM_KMSG_SUPPRESSED + 1];
	uint64_t total, first_seq, last_seq;
	bool any;
};

static void kmsg_batch_read(struct agent *a, uint64_t from, struct kmsg_batch *b)
{
	struct sock_server *s = &a->sock;
	char rec[8192];

	memset(b, 0, sizeof(*b));
	while (s->kmsg_fd >= 0) {
		struct coredam_kmsg_record r;
		ssize_t l = read(s->kmsg_fd, rec, sizeof(rec));

		if (l < 0 && errno == EINTR)
			continue;
		if (l < 0 && errno == EPIPE) {
			/* the ring overwrote records before they were read: it goes on at the oldest left */
			if (!s->kmsg_overrun_said)
				log_warning("the kernel log ran over before coredamd read it: crashes it said the coredump "
					    "socket lost then are not counted");
			s->kmsg_overrun_said = true;
			continue;
		}
		if (l < 0 && errno == EAGAIN)
			break;
		if (l < 0) {
			log_warning_errno(-errno, "cannot read /dev/kmsg: %m (crashes the coredump socket loses "
						  "are no longer counted)");
			fd_close(&s->kmsg_fd);
			break;
		}
		if (coredam_kmsg_parse(rec, (size_t)l, a->cfg.sock_listen, &r) < 0)
			continue;
		if (!b->any)
			b->first_seq = r.seq;
		b->any = true;
		b->last_seq = r.seq;
		if (r.seq < from || !r.count)
			continue;
		b->by[r.loss] += r.count;
		b->total += r.count;
	}
}

/* Keep the log's position in the counters, for the next server. */
static void kmsg_save(struct agent *a)
{
	struct coredam_pipe_stats d = { 0 };

	d.v[COREDAM_PIPE_KMSG_SEQ] = a->sock.kmsg_next;
	if (d.v[COREDAM_PIPE_KMSG_SEQ])
		stats_add(a, &d);
}

/* Count what the batch says was lost; true when that saved the position too. */
static bool kmsg_count(struct agent *a, const struct kmsg_batch *b)
{
	struct coredam_pipe_stats d = { 0 };

	if (b->any)
		a->sock.kmsg_next = b->last_seq + 1;
	if (!b->total)
		return false;
	d.v[COREDAM_PIPE_LOST_CONNECT] = b->total;
	d.v[COREDAM_PIPE_KMSG_SEQ] = a->sock.kmsg_next;
	stats_add(a, &d);
	log_warning("%" PRIu64 " crash%s lost without a core: the kernel could not connect to the coredump socket %s "
		    "(its log: backlog full %" PRIu64 ", connection failed %" PRIu64 ", lines its rate limit left out "
		    "%" PRIu64 "; counted lost_connect) event=socket-refused count=%" PRIu64 " backlog=%" PRIu64
		    " connect=%" PRIu64 " suppressed=%" PRIu64, b->total, b->total == 1 ? "" : "es", a->cfg.sock_listen,
		    b->by[COREDAM_KMSG_BACKLOG], b->by[COREDAM_KMSG_CONNECT], b->by[COREDAM_KMSG_SUPPRESSED], b->total,
		    b->by[COREDAM_KMSG_BACKLOG], b->by[COREDAM_KMSG_CONNECT], b->by[COREDAM_KMSG_SUPPRESSED]);
	return true;
}

static void kmsg_read(struct agent *a)
{
	struct kmsg_batch b;

	kmsg_batch_read(a, a->sock.kmsg_next, &b);
	(void)kmsg_count(a, &b);
}

/*
 * Read the kernel log from where the last server left it (kmsg_seq), or
 * from its end when none ran since boot (state under /run) or the position
 * is not this boot's (beyond the log's last record), and keep the position
 * reached at once: a server killed later leaves it for the next. Only the
 * real /dev/kmsg: a test's fake /proc has no kernel behind it.
 */
static void kmsg_open(struct agent *a)
{
	struct sock_server *s = &a->sock;
	struct coredam_pipe_stats p = { 0 };
	struct kmsg_batch b;
	uint64_t from;

	s->kmsg_fd = -1;
	s->kmsg_next = 0;
	if (strcmp(a->roots.proc, "/proc") != 0)
		return;
	s->kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (s->kmsg_fd < 0) {
		log_warning_errno(-errno, "cannot read /dev/kmsg: %m (crashes the kernel cannot connect to the coredump "
					  "socket will not be counted; coredamd needs CAP_SYSLOG where "
					  "kernel.dmesg_restrict=1)");
		return;
	}
	(void)coredam_pipe_stats_read(a->roots.state, &p);
	from = p.v[COREDAM_PIPE_KMSG_SEQ];
	/* none before: the log so far is read only for its position */
	kmsg_batch_read(a, from ? from : UINT64_MAX, &b);
	if (from && b.any && b.last_seq + 1 < from) {
		log_info("the kernel log position %" PRIu64 " saved in %s/pipe/stats is not this boot's: counting "
			 "from now on", from, a->roots.state);
		b.total = 0;
	} else if (from && b.any && b.first_seq > from) {
		log_warning("the kernel log no longer holds its records %" PRIu64 " to %" PRIu64 ": crashes it said the "
			    "coredump socket lost then are not counted", from, b.first_seq - 1);
	}
	if (!kmsg_count(a, &b))
		kmsg_save(a);
}

int sock_check_directory(const struct agent *a, struct coredam_error *reterr)
{
	int r;

	/* the writers store where coredam-pipe would, and create nothing on the way */
	r = mkdir_p(a->cfg.pipe_directory, 0755);
	if (r == -EROFS || (r >= 0 && access(a->cfg.pipe_directory, W_OK) < 0 && errno == EROFS))
		return coredam_error_set(reterr, -EROFS,
					 "[Pipe] Directory=%s is read-only to coredamd: the coredump socket's writers "
					 "could not store a core there (under systemd, name it in ReadWritePaths= of a "
					 "drop-in for coredamd.service)", a->cfg.pipe_directory);
	if (r < 0)
		log_warning("cannot create %s: %s (the socket's writers refuse to store there until it exists)",
			    a->cfg.pipe_directory, strerror(-r));
	return 0;
}

int sock_setup(struct agent *a)
{
	struct coredam_error e = {};
	int r;

	a->sock.listen_fd = -1;
	a->sock.kmsg_fd = -1;
	if (!a->cfg.sock_set_core_pattern || a->kern.core_cgroup) {
		int fd = sock_inherit(a);

		if (fd >= 0) {
			log_info("coredamd.socket passed %s: not served (%s)", a->cfg.sock_listen,
				 a->kern.core_cgroup ? "the kernel queues dumps itself" : "[Socket] SetCorePattern=no");
			close(fd);
		}
		return 0;
	}
	/*
	 * Before 6.16 "@@/path" would be taken for a file name relative to
	 * each crashed process's directory; 6.16 refuses "@@" when written.
	 */
	if (!a->kern.core_socket) {
		log_error("[Socket] SetCorePattern=yes: this kernel has no coredump socket (%s/sys/kernel/core_modes "
			  "lacks \"socket\"; @@ needs Linux 6.17 or later)", a->roots.proc);
		return -EOPNOTSUPP;
	}
	r = sock_check_directory(a, &e);
	if (r < 0) {
		log_error("%s; core_pattern left as it was", e.msg);
		return r;
	}
	count_lost(a);
	r = sock_pattern(a, a->sock.pattern, sizeof(a->sock.pattern));
	if (r >= 0)
		r = sock_bind(a, &a->sock.listen_fd);
	if (r < 0)
		return r;
	kmsg_open(a);
	a->sock.active = true;
	return 1;
}

int sock_install_pattern(struct agent *a)
{
	int r;

	r = coredam_sysctl_write(&a->roots, "kernel.core_pattern", a->sock.pattern);
	if (r < 0)
		return log_error_errno(r, "cannot write %s/sys/kernel/core_pattern: %m (the kernel serves @@ from 6.17 on)",
				       a->roots.proc);
	log_info("core_pattern set to the coredump socket event=socket core_pattern=\"%s\" backlog=%d",
		 a->sock.pattern, a->sock.backlog);
	return 0;
}

static void conn_free(struct sock_conn *c)
{
	fd_close(&c->fd);
	fd_close(&c->peer.pidfd);
	fd_close(&c->writer_pidfd);
}

/* Forget conns[i], keeping the others' arrival order. */
static void conn_remove(struct agent *a, size_t i)
{
	struct sock_server *s = &a->sock;

	conn_free(&s->conns[i]);
	memmove(&s->conns[i], &s->conns[i + 1], (s->n - i - 1) * sizeof(s->conns[0]));
	s->n--;
}

static uint64_t waited_ms(const struct sock_conn *c, uint64_t now)
{
	return (now - c->arrived_usec) / 1000;
}

/* Answer COREDUMP_REJECT, count it as @what and forget the connection. */
static void reject(struct agent *a, size_t i, int what, const char *reason)
{
	struct sock_conn *c = &a->sock.conns[i];
	int r;

	r = coredam_sock_ack_send(c->fd, &c->req, COREDUMP_REJECT);
	log_warning("core of pid %d (uid %u, signal %d) rejected event=socket-reject pid=%d exe=%s reason=%s waited_ms=%" PRIu64 "%s",
		    (int)c->peer.pid, (unsigned)c->peer.uid, c->peer.signal, (int)c->peer.pid, c->exe, reason,
		    waited_ms(c, now_usec(CLOCK_MONOTONIC)), r < 0 ? " (the kernel had gone)" : "");
	if (c->state == SOCK_CONN_WAITING)
		a->sock.waiting--;
	count_decided(a, what);
	conn_remove(a, i);
}

/*
 * A connection that is no dump, or that broke the protocol: closed
 * without an answer. Only root can connect, but a program of root's that
 * connects in a loop should not write a line each time: the 1st, 2nd,
 * 4th, ... are logged.
 */
static void drop(struct agent *a, size_t i, const char *why)
{
	struct sock_conn *c = &a->sock.conns[i];

	if (coredam_repeat_log_this(++a->sock.dropped))
		log_warning("coredump socket: connection from pid %d dropped: %s event=socket-reject reason=error "
			    "dropped=%" PRIu64, (int)c->peer.pid, why, a->sock.dropped);
	count_decided(a, COREDAM_PIPE_SKIPPED_ERROR);
	conn_remove(a, i);
}

/* The crash of conns[i] as coredam-pipe's arguments would name it: what the pidfd and /proc said. */
static void conn_args(const struct agent *a, const struct sock_conn *c, struct coredam_pipe_args *ret)
{
	*ret = (struct coredam_pipe_args){
		.pid = c->peer.pid, .uid = c->peer.uid, .gid = c->peer.gid, .signal = c->peer.signal,
		.time = c->time, .rlimit = c->rlimit, .have_rlimit = true, .dumpable = c->peer.dumpable,
	};
	snprintf(ret->dir, sizeof(ret->dir), "%s", a->cfg.pipe_directory);
	snprintf(ret->comm, sizeof(ret->comm), "%s", c->comm);
}

/*
 * Become background work, as the helper does, and an ordinary process
 * for the OOM killer (not the agent it was forked from: its read-ahead
 * may hold hundreds of MB).
 */
static void writer_background(struct agent *a, const struct sock_conn *c)
{
	_cleanup_close_ int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	char cg[PATH_MAX];

	if (fd < 0 || write(fd, "0", 1) != 1)
		log_warning("core of pid %d: its writer keeps the agent's oom_score_adj: %s", (int)c->peer.pid,
			    strerror(fd < 0 ? errno : EIO));
	if (a->cfg.dump_nice == COREDAM_NICE_KEEP)
		return;
	(void)coredam_sched_background(a->roots.proc, c->peer.pid, NULL, a->cfg.dump_nice);
	/* the writer is no dumping task: it is told by the cgroup it is in, still the agent's */
	if (coredam_cg_of_pid(a->roots.proc, getpid(), cg, sizeof(cg)) >= 0)
		(void)coredam_sched_background(a->roots.proc, getpid(), cg, a->cfg.dump_nice);
}

/*
 * Join the dump cgroup's leaf (where the kernel path's dumps go: under
 * systemd Path has children and may hold no process): the core's page
 * cache and writeback are charged there from now on. False when not
 * charged.
 */
static bool writer_settle(struct agent *a, char *cg, size_t cgsize)
{
	_cleanup_close_ int leaf = -1;
	bool charged = coredam_cg_open(a->cgroot_fd, a->kernel_path, false, &leaf) >= 0 &&
		       coredam_cg_attach(leaf, getpid()) >= 0;

	if (coredam_cg_of_pid(a->roots.proc, getpid(), cg, cgsize) < 0)
		snprintf(cg, cgsize, "?");
	return charged;
}

/*
 * Read up to [Socket] ReadAhead= of the core (at most an eighth of
 * MemAvailable now, and no more than the core may be) into memory as
 * fast as the kernel sends it: a core that fits is all read, and its
 * process gone, before the first paced write. Its memory is charged
 * where the writer still is, the agent's cgroup, not the dump cgroup
 * whose memory.high bounds the cores' page cache.
 */
static void writer_read_ahead(struct agent *a, const struct sock_conn *c, uint64_t deadline,
			      struct coredam_spool *ret)
{
	uint64_t avail = 0, max = MIN(a->cfg.sock_read_ahead, c->rlimit);
	uint64_t t0 = now_usec(CLOCK_MONOTONIC);
	int r;

	if (a->cfg.pipe_size_max)
		max = MIN(max, a->cfg.pipe_size_max);
	if (max && coredam_mem_available(&a->roots, &avail) >= 0)
		max = MIN(max, avail / 8);
	*ret = (struct coredam_spool){ 0 };
	if (max == 0)
		return;
	r = coredam_pipe_spool(c->fd, (size_t)MIN(max, (uint64_t)SIZE_MAX), deadline, ret);
	if (r < 0) {
		log_warning("core of pid %d: no read-ahead (%s): streamed at the disk's pace", (int)c->peer.pid,
			    strerror(-r));
		return;
	}
	log_info("core of pid %d: %zu bytes read ahead in %" PRIu64 " ms%s", (int)c->peer.pid, ret->len,
		 (now_usec(CLOCK_MONOTONIC) - t0) / 1000,
		 ret->ended ? ", all of it: the process is free to go" : ", the rest at the disk's pace");
}

/*
 * The writer, in a process of its own so that the dump cgroup's io.max
 * and memory limits pace it: read the kernel's mark, confine itself,
 * store the core, count what became of it. Never returns.
 */
static void __attribute__((noreturn)) writer(struct agent *a, size_t i)
{
	struct sock_conn *c = &a->sock.conns[i];
	struct coredam_pipe_outcome out = { 0 };
	struct coredam_pipe_stats d;
	struct coredam_core_stored st;
	struct coredam_pipe_args args;
	char cg[PATH_MAX];
	struct coredam_core_meta m = {
		.pid = c->peer.pid, .uid = c->peer.uid, .gid = c->peer.gid, .signal = c->peer.signal,
		.time = c->time, .comm = c->comm, .dumpable = c->peer.dumpable, .rlimit = c->rlimit,
		.ticket = c->serial, .arrived_usec = c->arrived_usec, .admitted_usec = c->admitted_usec,
		.waited_ms = (c->admitted_usec - c->arrived_usec) / 1000, .cgroup = cg,
		.compression = a->cfg.pipe_compress ? "zstd" : "none",
	};
	struct coredam_error e = {};
	struct coredam_config cfg = a->cfg;
	struct coredam_spool spool = { 0 };
	sigset_t none;
	_cleanup_close_ int dirfd = -1;
	uint64_t deadline = 0;
	uint32_t mark = 0;
	int r, status = COREDAM_PIPE_EXIT_FAILED;

	/* nothing of the agent's but this connection: above all not the listening socket */
	for (size_t j = 0; j < a->sock.n; j++) {
		if (j != i)
			conn_free(&a->sock.conns[j]);
	}
	fd_close(&a->sock.listen_fd);
	fd_close(&a->ctl_fd);
	fd_close(&a->sig_fd);
	fd_close(&a->events_fd);
	for (size_t j = 0; j < a->n_psi; j++)
		fd_close(&a->psi[j].trigger_fd);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);

	conn_args(a, c, &args);
	writer_background(a, c);
	snprintf(cg, sizeof(cg), "?");

	/* the writer blocks on the stream; its deadline is CoreTimeMax=, from here */
	if (cfg.pipe_time_max_usec)
		deadline = now_usec(CLOCK_MONOTONIC) + cfg.pipe_time_max_usec;
	r = fcntl(c->fd, F_SETFL, 0) < 0 ? -errno : 0;
	if (r < 0) {
		log_error("core of pid %d not stored: fcntl(%d): %s", (int)c->peer.pid, c->fd, strerror(-r));
		coredam_pipe_outcome_add(&out, COREDAM_PIPE_FAILED);
		goto out;
	}
	r = coredam_sock_mark_read(c->fd, SOCK_MARK_TIMEOUT_MS, &mark);
	if (r < 0) {
		log_error("core of pid %d not stored: the kernel's mark after the ack: %s (mark %u)", (int)c->peer.pid,
			  strerror(-r), mark);
		coredam_pipe_outcome_add(&out, COREDAM_PIPE_FAILED);
		goto out;
	}
	writer_read_ahead(a, c, deadline, &spool);
	if (!writer_settle(a, cg, sizeof(cg)))
		coredam_pipe_outcome_add(&out, COREDAM_PIPE_UNCHARGED);
	fd_close(&a->cg_fd);
	fd_close(&a->cgroot_fd);
	/* what is left of CoreTimeMax= after the read-ahead (the store counts it from its start) */
	if (deadline) {
		uint64_t now = now_usec(CLOCK_MONOTONIC);

		cfg.pipe_time_max_usec = deadline > now ? deadline - now : 1;
	}
	r = coredam_pipe_open_dest(args.dir, 0, &dirfd, &e);
	if (r < 0) {
		log_error("core of pid %d not stored: destination %s refused: %s", (int)c->peer.pid, args.dir, e.msg);
		coredam_pipe_outcome_add(&out, COREDAM_PIPE_FAILED);
		goto out;
	}
	if (a->cfg.pipe_sandbox) {
		log_open();
		/*
		 * Under coredamd.service (external) the unit's sandbox has
		 * made the file system read-only but for the agent's own
		 * paths, and forbids a namespace of the writer's own.
		 */
		r = coredam_sandbox_enter(a->pattern_external ? NULL : a->roots.state, &e);
		if (r < 0) {
			log_error("core of pid %d not stored: cannot confine the writer: %s ([Pipe] Sandbox=no stores cores unconfined)",
				  (int)c->peer.pid, e.msg);
			coredam_pipe_outcome_add(&out, COREDAM_PIPE_FAILED);
			goto out;
		}
	}
	r = coredam_core_store(c->fd, spool.buf, spool.len, &cfg, &args, dirfd, a->m.floor_bytes, &m, &st, &e);
	coredam_spool_free(&spool);
	if (r >= 0)
		(void)coredam_core_journal_stored(&a->cfg, &args, &m, &st, NULL);
	if (r < 0)
		log_error("core of pid %d: %s", (int)c->peer.pid, e.msg);
	if (st.warn[0])
		log_warning("core of pid %d: %s", (int)c->peer.pid, st.warn);
	status = coredam_pipe_outcome_stored(&out, r, &st.res, st.expected);
	if (r >= 0 && status != COREDAM_PIPE_EXIT_STORED)
		log_error("core of pid %d (uid %u, signal %d) cut short: the kernel sent %" PRIu64 " of the %" PRIu64
			  " bytes its ELF headers declare (process killed while dumping?); kept as %s/%s",
			  (int)c->peer.pid, (unsigned)c->peer.uid, c->peer.signal, st.res.in_bytes, st.expected, args.dir,
			  st.final);
	else if (r >= 0)
		log_info("core of pid %d (uid %u, signal %d) stored as %s/%s: %" PRIu64 " bytes%s, %" PRIu64
			 " on disk, waited %" PRIu64 " ms, wrote in %" PRIu64 " ms",
			 (int)c->peer.pid, (unsigned)c->peer.uid, c->peer.signal, args.dir, st.final, st.res.in_bytes,
			 coredam_pipe_cut_reason(&st.res, c->rlimit), st.res.out_bytes, m.waited_ms, m.write_ms);
	/* the oldest kept cores past [Space] MaxUse=, KeepFree=, as the helper does */
	if (r >= 0)
		out.removed = coredam_retention_after_store(dirfd, args.dir, &a->cfg, st.final);
out:
	coredam_pipe_outcome_delta(&out, &d);
	r = coredam_pipe_stats_add(a->roots.state, &d);
	if (r < 0)
		log_warning("cannot update the counters in %s/pipe/stats: %s", a->roots.state, strerror(-r));
	_exit(status);
}

/* Ack COREDUMP_KERNEL and start the writer; on failure the dump is counted failed. */
static void admit(struct agent *a, size_t i, uint64_t now)
{
	struct sock_conn *c = &a->sock.conns[i];
	int r, pidfd = -1;
	pid_t pid;

	if (c->state == SOCK_CONN_WAITING)
		a->sock.waiting--;
	c->admitted_usec = now;
	coredam_sock_granted(&a->sock.grants, (uint32_t)c->peer.uid);
	count_decided(a, COREDAM_PIPE_ADMITTED);
	agent_lap(a, "socket: answers");
	/* the writer exists before the kernel starts to send: nothing is lost to a failed fork */
	pid = fork();
	if (pid == 0)
		writer(a, i);
	if (pid > 0) {
		/* the child cannot be reaped before this: only writer_done() waits for it */
		pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
		if (pidfd < 0) {
			r = -errno;
			kill(pid, SIGKILL);
			(void)waitpid(pid, NULL, 0);
			errno = -r;
			pid = -1;
		}
	}
	if (pid < 0) {
		r = -errno;
		log_error("core of pid %d not stored: cannot start its writer: %s", (int)c->peer.pid, strerror(-r));
		(void)coredam_sock_ack_send(c->fd, &c->req, COREDUMP_REJECT);
		count(a, COREDAM_PIPE_FAILED);
		conn_remove(a, i);
		return;
	}
	agent_lap(a, "socket: writer fork");
	c->writer = pid;
	c->writer_pidfd = pidfd;
	c->state = SOCK_CONN_WRITING;
	a->sock.writing++;
	r = coredam_sock_ack_send(c->fd, &c->req, COREDUMP_KERNEL);
	if (r < 0)
		log_warning("core of pid %d: the ack was not sent (%s): its writer will find the kernel gone",
			    (int)c->peer.pid, strerror(-r));
	log_info("dump admitted event=dump-admitted pid=%d exe=%s waited_ms=%" PRIu64 " writer=%d", (int)c->peer.pid,
		 c->exe, waited_ms(c, now), (int)pid);
	/* the writer has its own copy: the agent's would keep the stream open past a killed writer */
	fd_close(&c->fd);
}

/* The writer of conns[i] ended: a writer killed never counted its dump, so it is failed here. */
static void writer_done(struct agent *a, size_t i)
{
	struct sock_conn *c = &a->sock.conns[i];
	uint64_t now = now_usec(CLOCK_MONOTONIC);
	siginfo_t si = { 0 };
	const char *outcome;

	if (waitid(P_PIDFD, (id_t)c->writer_pidfd, &si, WEXITED | WNOHANG) < 0 || si.si_pid == 0)
		return;
	if (si.si_code == CLD_EXITED && si.si_status == COREDAM_PIPE_EXIT_STORED) {
		outcome = "completed";
	} else if (si.si_code == CLD_EXITED) {
		outcome = "failed";
	} else {
		outcome = "failed";
		count(a, COREDAM_PIPE_FAILED);
		log_error("core of pid %d: its writer %d was killed by signal %d: counted failed", (int)c->peer.pid,
			  (int)c->writer, si.si_status);
	}
	log_info("dump ended event=dump-end pid=%d exe=%s duration_ms=%" PRIu64 " waited_ms=%" PRIu64 " outcome=%s",
		 (int)c->peer.pid, c->exe, (now - c->arrived_usec) / 1000, (c->admitted_usec - c->arrived_usec) / 1000,
		 outcome);
	a->sock.writing--;
	conn_remove(a, i);
}

/* Who the crashed process is: its pidfd, its comm and exe through /proc checked against it. */
static void peer_names(struct agent *a, struct sock_conn *c)
{
	char exe[PATH_MAX], limits[4096], text[4096];

	if (coredam_sock_peer_proc(a->roots.proc, &c->peer, "comm", c->comm, sizeof(c->comm)) < 0)
		snprintf(c->comm, sizeof(c->comm), "unknown");
	if (coredam_sock_peer_proc(a->roots.proc, &c->peer, "exe", exe, sizeof(exe)) < 0)
		snprintf(exe, sizeof(exe), "%s", c->comm);
	coredam_escape(exe, COREDAM_ESCAPE_WORD, c->exe, sizeof(c->exe));
	/* unknown: no limit, as coredam-pipe does */
	if (coredam_sock_peer_proc(a->roots.proc, &c->peer, "limits", limits, sizeof(limits)) < 0 ||
	    coredam_pipe_parse_rlimit(limits, &c->rlimit) < 0)
		c->rlimit = UINT64_MAX;
	/* what it pins while held (WaitingMemoryMax=), and whose stalls are its own (pressure) */
	if (coredam_sock_peer_proc(a->roots.proc, &c->peer, "status", text, sizeof(text)) < 0 ||
	    coredam_kb_field(text, "RssAnon", &c->anon_bytes) < 0)
		c->anon_bytes = 0;
	if (coredam_sock_peer_proc(a->roots.proc, &c->peer, "cgroup", text, sizeof(text)) < 0 ||
	    coredam_proc_cgroup_parse(text, true, c->cgroup, sizeof(c->cgroup)) < 0)
		c->cgroup[0] = '\0';
}

/*
 * A repeat ([Repeats])? The crash's signature from /proc while the kernel
 * holds the task (sock-proto.h), as coredam-pipe reads it from the core:
 * the first Keep= of a signature in every Interval= go on, the rest are
 * answered COREDUMP_REJECT before a byte is sent, counted skipped_repeat
 * and logged on the 1st, 2nd, 4th ... skip. Anything that fails here keeps
 * the core. true when the connection was answered.
 */
static bool reject_repeat(struct agent *a, size_t i)
{
	struct sock_conn *c = &a->sock.conns[i];
	char label[COREDAM_ESCAPE_SIZE(COREDAM_REPEAT_LABEL_MAX)];
	struct coredam_core_site site;
	struct coredam_repeat_key key;
	struct coredam_repeat_entry e;
	int r;

	if (a->cfg.repeat_keep == 0)
		return false;
	r = coredam_sock_peer_site(a->roots.proc, &c->peer, &site);
	if (r < 0) {
		log_warning("core of pid %d: where it crashed cannot be read (%s): not checked for repeats",
			    (int)c->peer.pid, strerror(-r));
		return false;
	}
	coredam_repeat_key(&site, c->peer.signal, c->comm, &key);
	r = coredam_repeats_check(a->roots.state, &key, a->cfg.repeat_keep, a->cfg.repeat_interval_usec, &e);
	if (r < 0) {
		log_warning("core of pid %d: repeat table in %s/pipe unusable (%s): not checked for repeats",
			    (int)c->peer.pid, a->roots.state, strerror(-r));
		return false;
	}
	if (r > 0)
		return false;
	coredam_escape(key.label, 0, label, sizeof(label));
	(void)coredam_sock_ack_send(c->fd, &c->req, COREDUMP_REJECT);
	if (coredam_repeat_log_this(e.skipped)) {
		struct coredam_pipe_args args;
		struct coredam_core_meta m = { .rlimit = c->rlimit };

		log_notice("core of pid %d (uid %u, signal %d) rejected: a repeat of %s; %" PRIu64 " kept, %" PRIu64
			   " skipped as repeats so far ([Repeats] Keep=%" PRIu32 ") event=socket-reject pid=%d exe=%s reason=repeat",
			   (int)c->peer.pid, (unsigned)c->peer.uid, c->peer.signal, label, e.kept, e.skipped,
			   a->cfg.repeat_keep, (int)c->peer.pid, c->exe);
		/* for coredumpctl, the crash with no core, as often as the line (as coredam-pipe does) */
		conn_args(a, c, &args);
		(void)coredam_core_journal_repeat(&a->cfg, &args, &m, &site, &key, &e);
	}
	count_decided(a, COREDAM_PIPE_SKIPPED_REPEAT);
	conn_remove(a, i);
	return true;
}

/* A connection's poll events, by its number. */
struct sock_event {
	uint64_t serial;
	short ev;
};

/* The index of the connection numbered @serial (conns[] moves as connections end); a->sock.n if gone. */
static size_t conn_index(const struct agent *a, uint64_t serial)
{
	size_t i;

	for (i = 0; i < a->sock.n && a->sock.conns[i].serial != serial; i++)
		;
	return i;
}

/*
 * The waiting places are all taken as a dump of source @uid arrives: the
 * newest waiter of the source holding the most of them goes instead, when
 * that is more than @uid's would (coredam_pipe_pick_pushed_out(), as the
 * pipe helper's queue). true when one was rejected (counted full).
 */
static bool push_out(struct agent *a, uint32_t uid)
{
	struct sock_server *s = &a->sock;
	_cleanup_free_ struct coredam_pipe_entry *v = NULL;
	const struct coredam_pipe_entry *out;
	size_t n = 0;

	if (s->waiting == 0)
		return false;
	v = calloc(s->waiting, sizeof(*v));
	if (!v)
		return false;
	for (size_t i = 0; i < s->n && n < s->waiting; i++)
		if (s->conns[i].state == SOCK_CONN_WAITING)
			v[n++] = (struct coredam_pipe_entry){ .ticket = s->conns[i].serial,
							      .uid = (uint32_t)s->conns[i].peer.uid, .state = 'Q' };
	out = coredam_pipe_pick_pushed_out(v, n, uid);
	if (!out)
		return false;
	reject(a, conn_index(a, out->ticket), COREDAM_PIPE_SKIPPED_FULL, "full");
	return true;
}

/* The request of conns[i] is readable: read it, then admit, hold or reject the dump. */
static void request(struct agent *a, size_t i, uint64_t now)
{
	struct sock_conn *c = &a->sock.conns[i];
	struct coredam_pipe_budget b = { a->adm.concurrency, a->adm.waiting, a->adm.timeout_ms };
	int r = coredam_sock_req_read(c->fd, &c->req);
	uint64_t serial;

	agent_lap(a, "socket: requests read");
	if (r == -EAGAIN)
		return;
	if (r < 0) {
		char why[64];

		snprintf(why, sizeof(why), "bad request: %s", strerror(-r));
		drop(a, i, why);
		return;
	}
	peer_names(a, c);
	agent_lap(a, "socket: peer names");
	if (a->sock.stopping) {
		reject(a, i, COREDAM_PIPE_SKIPPED_KILLED, "stopped");
		return;
	}
	/* what the kernel does for a file core_pattern and coredam-pipe for a pipe */
	if (coredam_pipe_rlimit_disables(c->rlimit)) {
		reject(a, i, COREDAM_PIPE_SKIPPED_RLIMIT, "rlimit");
		return;
	}
	if (a->m.space_below) {
		reject(a, i, COREDAM_PIPE_SKIPPED_SPACE, "space");
		return;
	}
	if (reject_repeat(a, i))
		return;
	switch (coredam_sock_arrive(&b, a->sock.writing, a->sock.waiting)) {
	case COREDAM_SOCK_ADMIT:
		log_info("dump starts event=dump-start pid=%d exe=%s state=dumping", (int)c->peer.pid, c->exe);
		admit(a, i, now);
		break;
	case COREDAM_SOCK_WAIT:
		c->state = SOCK_CONN_WAITING;
		a->sock.waiting++;
		log_info("dump waits event=dump-start pid=%d exe=%s state=waiting ahead=%u", (int)c->peer.pid, c->exe,
			 a->sock.waiting - 1 + a->sock.writing);
		break;
	default:
		/* one user's storm holding the places: its newest waiter goes instead */
		serial = c->serial;
		if (push_out(a, (uint32_t)c->peer.uid)) {
			/* conns[] moved when the other one went */
			c = &a->sock.conns[conn_index(a, serial)];
			c->state = SOCK_CONN_WAITING;
			a->sock.waiting++;
			log_info("dump waits event=dump-start pid=%d exe=%s state=waiting ahead=%u", (int)c->peer.pid,
				 c->exe, a->sock.waiting - 1 + a->sock.writing);
			break;
		}
		reject(a, i, COREDAM_PIPE_SKIPPED_FULL, "full");
		break;
	}
}

/* Every pending connection at once; the peer named before anything is read from it. */
static void accept_all(struct agent *a)
{
	struct sock_server *s = &a->sock;

	for (;;) {
		struct sock_conn *c;
		uint64_t now;
		int fd, r;

		fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		agent_lap(a, "socket: accept");
		if (fd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
				log_warning("coredump socket: accept: %m");
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			return;
		}
		/* a dump's wait counts from here, not from when this round of the loop began */
		now = now_usec(CLOCK_MONOTONIC);
		if (s->n == s->cap) {
			size_t cap = s->cap ? 2 * s->cap : 64;
			struct sock_conn *v = realloc(s->conns, cap * sizeof(*v));

			if (!v) {
				struct coredam_pipe_stats d = { 0 };

				log_error("coredump socket: out of memory: connection closed, its core lost");
				close(fd);
				d.v[COREDAM_PIPE_STARTED] = d.v[COREDAM_PIPE_SKIPPED_ERROR] = 1;
				stats_add(a, &d);
				continue;
			}
			s->conns = v;
			s->cap = cap;
		}
		c = &s->conns[s->n++];
		*c = (struct sock_conn){
			.state = SOCK_CONN_REQ, .fd = fd, .peer.pidfd = -1, .writer_pidfd = -1,
			.serial = ++s->serial, .arrived_usec = now, .time = (uint64_t)time(NULL),
		};
		snprintf(c->exe, sizeof(c->exe), "?");
		count_arrived(a);
		r = coredam_sock_peer_get(fd, &c->peer);
		agent_lap(a, "socket: peer pidfd");
		if (r < 0 || !c->peer.coredumping) {
			if (r >= 0)
				fd_close(&c->peer.pidfd);
			drop(a, s->n - 1, r < 0 ? "no pidfd for the peer" : "the peer is no dumping task");
			continue;
		}
		request(a, s->n - 1, now);
		agent_lap(a, "socket: answers");
	}
}

/* The waiters, oldest first: free slots to the oldest, the timed out rejected. */
static void admit_waiters(struct agent *a, uint64_t now)
{
	struct sock_server *s = &a->sock;
	struct coredam_pipe_budget b = { a->adm.concurrency, a->adm.waiting, a->adm.timeout_ms };
	_cleanup_free_ uint64_t *arrived = NULL;
	_cleanup_free_ enum coredam_sock_verdict *v = NULL;
	_cleanup_free_ uint64_t *serial = NULL;
	_cleanup_free_ uint32_t *uid = NULL;
	size_t n = 0;

	if (s->waiting == 0)
		return;
	arrived = calloc(s->waiting, sizeof(*arrived));
	serial = calloc(s->waiting, sizeof(*serial));
	uid = calloc(s->waiting, sizeof(*uid));
	v = calloc(s->waiting, sizeof(*v));
	if (!arrived || !serial || !uid || !v)
		return;	/* tried again at the next event */
	for (size_t i = 0; i < s->n && n < s->waiting; i++)
		if (s->conns[i].state == SOCK_CONN_WAITING) {
			arrived[n] = s->conns[i].arrived_usec;
			uid[n] = (uint32_t)s->conns[i].peer.uid;
			serial[n++] = s->conns[i].serial;
		}
	coredam_sock_admit(&b, s->writing, arrived, uid, n, &s->grants, now, v);
	for (size_t k = 0; k < n; k++) {
		size_t i;

		if (v[k] == COREDAM_SOCK_WAIT)
			continue;
		for (i = 0; i < s->n && s->conns[i].serial != serial[k]; i++)
			;
		if (i == s->n)
			continue;
		if (v[k] == COREDAM_SOCK_ADMIT)
			admit(a, i, now);
		else
			reject(a, i, COREDAM_PIPE_SKIPPED_TIMEOUT, "timeout");
	}
}

int sock_dumps_list(const struct agent *a, struct coredam_dump **ret, size_t *ret_n)
{
	const struct sock_server *s = &a->sock;
	struct coredam_dump *v = calloc(s->n ? s->n : 1, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		const struct sock_conn *c = &s->conns[i];

		v[i] = (struct coredam_dump){
			.pid = c->peer.pid,
			.state = c->state == SOCK_CONN_WRITING ? COREDAM_DUMP_WRITING : COREDAM_DUMP_WAITING,
			.anon_bytes = c->anon_bytes,
		};
		snprintf(v[i].comm, sizeof(v[i].comm), "%s", c->comm);
		snprintf(v[i].cgroup, sizeof(v[i].cgroup), "%s", c->cgroup);
	}
	*ret = v;
	*ret_n = s->n;
	return 0;
}

size_t sock_poll_max(const struct agent *a)
{
	return a->sock.active ? 2 + a->sock.n : 0;
}

size_t sock_poll_fill(struct agent *a, struct pollfd *p, uint64_t *deadline_usec)
{
	struct sock_server *s = &a->sock;
	struct coredam_pipe_budget b = { a->adm.concurrency, a->adm.waiting, a->adm.timeout_ms };
	bool oldest = true;

	if (!s->active)
		return 0;
	p[0] = (struct pollfd){ .fd = s->listen_fd, .events = POLLIN };
	for (size_t i = 0; i < s->n; i++) {
		struct sock_conn *c = &s->conns[i];

		switch (c->state) {
		case SOCK_CONN_REQ:
			p[1 + i] = (struct pollfd){ .fd = c->fd, .events = POLLIN | POLLRDHUP };
			*deadline_usec = MIN(*deadline_usec, c->arrived_usec + SOCK_REQ_TIMEOUT_USEC);
			break;
		case SOCK_CONN_WAITING:
			/* the task killed while it waits closes the kernel's end */
			p[1 + i] = (struct pollfd){ .fd = c->fd, .events = POLLRDHUP };
			if (oldest)
				*deadline_usec = MIN(*deadline_usec, coredam_sock_deadline(&b, c->arrived_usec));
			oldest = false;
			break;
		case SOCK_CONN_WRITING:
			p[1 + i] = (struct pollfd){ .fd = c->writer_pidfd, .events = POLLIN };
			break;
		}
	}
	s->kmsg_polled = s->kmsg_fd >= 0;
	if (s->kmsg_polled)
		p[1 + s->n] = (struct pollfd){ .fd = s->kmsg_fd, .events = POLLIN };
	return 1 + s->n + s->kmsg_polled;
}

void sock_poll_handle(struct agent *a, const struct pollfd *p, size_t n)
{
	struct sock_server *s = &a->sock;
	uint64_t now = now_usec(CLOCK_MONOTONIC);
	_cleanup_free_ struct sock_event *evs = NULL;
	size_t n_evs;

	if (!s->active || n == 0)
		return;
	if (s->kmsg_polled) {
		if (p[--n].revents)
			kmsg_read(a);
		agent_lap(a, "socket: kernel log");
	}
	/*
	 * Each connection's events by its number, taken first: handling one
	 * may remove others (a waiter pushed out), which moves conns[] under
	 * the poll results.
	 */
	n_evs = MIN(s->n, n - 1);
	evs = calloc(n_evs ? n_evs : 1, sizeof(*evs));
	if (!evs)
		return;	/* poll() says the same again */
	for (size_t i = 0; i < n_evs; i++)
		evs[i] = (struct sock_event){ s->conns[i].serial, p[1 + i].revents };
	for (size_t k = n_evs; k-- > 0;) {
		size_t i = conn_index(a, evs[k].serial);
		struct sock_conn *c;
		short ev = evs[k].ev;

		if (i == s->n)
			continue;	/* removed meanwhile */
		c = &s->conns[i];

		if (c->state == SOCK_CONN_WRITING) {
			if (ev)
				writer_done(a, i);
			agent_lap(a, "socket: writers done");
		} else if (c->state == SOCK_CONN_REQ) {
			if (ev)
				request(a, i, now);
			else if (now >= c->arrived_usec + SOCK_REQ_TIMEOUT_USEC)
				drop(a, i, "no request within 5 s");
		} else if (ev & (POLLRDHUP | POLLHUP | POLLERR)) {
			log_warning("core of pid %d lost event=socket-reject pid=%d exe=%s reason=killed waited_ms=%" PRIu64
				    ": the task died while it waited", (int)c->peer.pid, (int)c->peer.pid, c->exe,
				    waited_ms(c, now));
			s->waiting--;
			count_decided(a, COREDAM_PIPE_SKIPPED_KILLED);
			conn_remove(a, i);
		}
		agent_lap(a, "socket: answers");
	}
	if (p[0].revents & POLLIN)
		accept_all(a);
	admit_waiters(a, now_usec(CLOCK_MONOTONIC));
	agent_lap(a, "socket: answers");
}

void sock_close(struct agent *a)
{
	struct sock_server *s = &a->sock;

	if (!s->active)
		return;
	/* core_pattern no longer names the socket: what connected before is answered, not cut off */
	s->stopping = true;
	accept_all(a);
	for (size_t i = s->n; i-- > 0;) {
		if (s->conns[i].state == SOCK_CONN_WAITING)
			reject(a, i, COREDAM_PIPE_SKIPPED_KILLED, "stopped");
		else if (s->conns[i].state == SOCK_CONN_REQ)
			drop(a, i, "the agent stops");
		else
			conn_remove(a, i);	/* its writer goes on and counts it */
	}
	free(s->conns);
	s->conns = NULL;
	s->n = s->cap = 0;
	fd_close(&s->listen_fd);
	kmsg_read(a);
	kmsg_save(a);
	fd_close(&s->kmsg_fd);
	/* systemd's stays, listening, for the next coredamd */
	if (!s->inherited && unlink(a->cfg.sock_listen) < 0 && errno != ENOENT)
		log_warning("cannot remove %s, ignoring: %m", a->cfg.sock_listen);
	s->active = false;
}
