// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe: the arrival-order, per-uid fair slot queue. */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>

#include "pipe-queue.h"
#include "pipe-state.h"
#include "macro.h"
#include "alloc-util.h"
#include "fileio.h"
#include "string-util.h"
#include "parse-util.h"
#include "path-util.h"
#include "time-util.h"

int coredam_pipe_queue_open(const char *state_dir, struct coredam_pipe_queue *q)
{
	int r;

	r = path_join(q->path, sizeof(q->path), state_dir, COREDAM_PIPE_DIR_NAME);
	if (r < 0)
		return r;
	return coredam_pipe_dir_open(state_dir, true, &q->dirfd);
}

static bool entry_name(const char *name, uint64_t *ret)
{
	return strncmp(name, "q.", 2) == 0 && parse_u64(name + 2, ret) == 0;
}

/*
 * Is the ticket file held by a live helper? Removes it if not (caller
 * holds the lock exclusively). Reads its state letter and source uid.
 */
static bool entry_alive(int dirfd, const char *name, bool reap, struct coredam_pipe_entry *e)
{
	_cleanup_close_ int fd = -1;
	char buf[64];
	unsigned int uid;
	ssize_t n;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		if (reap)
			unlinkat(dirfd, name, 0);
		return false;
	}
	e->state = '?';
	e->uid = COREDAM_PIPE_NO_UID;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n > 0) {
		buf[n] = '\0';
		e->state = buf[0];
		/* "S PID UID": an entry of an older helper has no uid, a source of its own */
		if (sscanf(buf + 1, "%*d %u", &uid) == 1)
			e->uid = uid;
	}
	return true;
}

/* The live tickets, in any order; with @reap dead ones are removed. */
static int collect(int dirfd, bool reap, struct coredam_pipe_entry **ret, size_t *ret_n)
{
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_free_ struct coredam_pipe_entry *v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	int r;

	r = opendir_at(dirfd, ".", &d);
	if (r < 0)
		return r;
	while ((de = readdir(d))) {
		struct coredam_pipe_entry e;

		if (!entry_name(de->d_name, &e.ticket) || !entry_alive(dirfd, de->d_name, reap, &e))
			continue;
		r = grow_array((void **)&v, &cap, n, sizeof(*v), 16);
		if (r < 0)
			return r;
		v[n++] = e;
	}
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

/*
 * @e's turn: the slots its source was granted among the last ones
 * (@recent), plus its source's waiters ahead of it in arrival order.
 */
static uint32_t turn_of(const struct coredam_pipe_entry *v, size_t n, const uint32_t *recent, size_t n_recent,
			const struct coredam_pipe_entry *e)
{
	uint32_t k = 0;

	for (size_t i = 0; i < n_recent; i++)
		k += recent[i] == e->uid;
	for (size_t i = 0; i < n; i++)
		if (v[i].state != 'W' && v[i].state != 'X' && v[i].uid == e->uid && v[i].ticket < e->ticket)
			k++;
	return k;
}

void coredam_pipe_rank(const struct coredam_pipe_entry *v, size_t n, const uint32_t *recent, size_t n_recent,
		       uint64_t ticket, uint32_t *ret_writing, uint32_t *ret_ahead)
{
	const struct coredam_pipe_entry *me = NULL;
	uint32_t writing = 0, ahead = 0, my_turn = 0;

	for (size_t i = 0; i < n; i++) {
		if (v[i].ticket == ticket)
			me = &v[i];
		else if (v[i].state == 'W')
			writing++;
	}
	if (me)
		my_turn = turn_of(v, n, recent, n_recent, me);
	for (size_t i = 0; i < n; i++) {
		uint32_t turn;

		if (&v[i] == me || v[i].state == 'W' || v[i].state == 'X')
			continue;
		if (!me) {
			ahead++;	/* no ticket: everything waiting is ahead */
			continue;
		}
		turn = turn_of(v, n, recent, n_recent, &v[i]);
		if (turn < my_turn || (turn == my_turn && v[i].ticket < ticket))
			ahead++;
	}
	*ret_writing = writing;
	*ret_ahead = writing + ahead;
}

const struct coredam_pipe_entry *coredam_pipe_pick_pushed_out(const struct coredam_pipe_entry *v, size_t n,
							      uint32_t uid)
{
	const struct coredam_pipe_entry *newest = NULL;
	uint32_t mine = 1, theirs = 0;	/* mine counts the dump that arrives */
	uint32_t cand = COREDAM_PIPE_NO_UID;

	/* the source with the most waiting places, found by a count for each */
	for (size_t i = 0; i < n; i++) {
		uint32_t c = 0;

		if (v[i].state != 'Q')
			continue;
		for (size_t j = 0; j < n; j++)
			c += v[j].state == 'Q' && v[j].uid == v[i].uid;
		if (c > theirs || (c == theirs && v[i].uid == cand)) {
			theirs = c;
			cand = v[i].uid;
		}
	}
	for (size_t i = 0; i < n; i++)
		mine += v[i].state == 'Q' && v[i].uid == uid;
	if (cand == uid || theirs <= mine)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (v[i].state == 'Q' && v[i].uid == cand && (!newest || v[i].ticket > newest->ticket))
			newest = &v[i];
	return newest;
}

/* Live tickets other than @ticket, those pushed out and leaving not counted. */
static uint32_t live_count(const struct coredam_pipe_entry *v, size_t n, uint64_t ticket)
{
	uint32_t live = 0;

	for (size_t i = 0; i < n; i++)
		live += v[i].ticket != ticket && v[i].state != 'X';
	return live;
}

/* The sources of the last COREDAM_PIPE_RECENT grants, oldest first; none when unreadable. */
static size_t recent_read(int dirfd, uint32_t recent[COREDAM_PIPE_RECENT])
{
	_cleanup_free_ char *s = NULL;
	size_t n = 0;

	if (read_file_at(dirfd, COREDAM_PIPE_GRANTS_FILE, 1024, &s) < 0)
		return 0;
	for (char *p = s, *tok; n < COREDAM_PIPE_RECENT && (tok = strsep(&p, " \n"));) {
		uint64_t v;

		if (*tok && parse_u64(tok, &v) == 0 && v <= UINT32_MAX)
			recent[n++] = (uint32_t)v;
	}
	return n;
}

/* Append @uid to the grants, keeping the last COREDAM_PIPE_RECENT. */
static int recent_add(int dirfd, uint32_t uid)
{
	uint32_t recent[COREDAM_PIPE_RECENT + 1];
	size_t n = recent_read(dirfd, recent), first;
	char buf[COREDAM_PIPE_RECENT * 11 + 2];
	size_t o = 0;

	recent[n++] = uid;
	first = n > COREDAM_PIPE_RECENT ? n - COREDAM_PIPE_RECENT : 0;
	for (size_t i = first; i < n; i++)
		o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s%" PRIu32, i > first ? " " : "", recent[i]);
	o += (size_t)snprintf(buf + o, sizeof(buf) - o, "\n");
	return write_file_atomic_at(dirfd, COREDAM_PIPE_GRANTS_FILE, buf, o, 0600);
}

/* Under the lock: writing, and writing plus waiting ahead of @ticket (UINT64_MAX: of a newcomer). */
static int scan(int dirfd, uint64_t ticket, bool reap, uint32_t *ret_writing, uint32_t *ret_ahead)
{
	_cleanup_free_ struct coredam_pipe_entry *v = NULL;
	uint32_t writing, ahead, recent[COREDAM_PIPE_RECENT];
	size_t n = 0, n_recent;
	int r;

	r = collect(dirfd, reap, &v, &n);
	if (r < 0)
		return r;
	n_recent = recent_read(dirfd, recent);
	coredam_pipe_rank(v, n, recent, n_recent, ticket, &writing, &ahead);
	if (ret_writing)
		*ret_writing = writing;
	if (ret_ahead)
		*ret_ahead = ahead;
	return 0;
}

/* Mark the entry @e (not ours) pushed out: its helper leaves at its next count. */
static int push_out(int dirfd, const struct coredam_pipe_entry *e)
{
	_cleanup_close_ int fd = -1;
	char name[32];
	int r;

	r = xsnprintf(name, sizeof(name), "q.%020" PRIu64, e->ticket);
	if (r < 0)
		return r;
	/* closed after writing: IN_CLOSE_WRITE wakes the waiters that watch */
	fd = openat(dirfd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (pwrite(fd, "X", 1, 0) != 1)
		return -EIO;
	return 0;
}

/* The budget in force: coredamd's when published and valid, else @fallback. */
static struct coredam_pipe_budget budget_now(int dirfd, const struct coredam_pipe_budget *fallback)
{
	struct coredam_pipe_budget b;

	if (coredam_pipe_budget_read_at(dirfd, &b) < 0)
		b = *fallback;
	return b;
}

/*
 * Room in the queue under budget @b for a dump of @uid: 1, or 0 when it
 * is full (*ret_live: the dumps in it). When another source holds more of
 * the waiting places than this dump's would (counting it), that source's
 * newest waiter leaves instead, so one user's storm cannot take every
 * place. Called under the directory lock.
 */
static int make_room(int dirfd, const struct coredam_pipe_budget *b, uid_t uid, uint32_t *ret_live)
{
	_cleanup_free_ struct coredam_pipe_entry *v = NULL;
	const struct coredam_pipe_entry *out;
	uint32_t live;
	size_t n = 0;
	int r;

	if (!b->concurrency || !b->waiting)
		return 1;
	r = collect(dirfd, true, &v, &n);
	if (r < 0)
		return r;
	live = live_count(v, n, UINT64_MAX);
	if ((uint64_t)live < (uint64_t)b->concurrency + b->waiting)
		return 1;
	out = coredam_pipe_pick_pushed_out(v, n, (uint32_t)uid);
	if (out && push_out(dirfd, out) >= 0)
		return 1;
	*ret_live = live;
	return 0;
}

int coredam_pipe_enqueue(struct coredam_pipe_queue *q, pid_t pid, uid_t uid,
			 const struct coredam_pipe_budget *fallback, uint32_t *ret_ahead)
{
	_cleanup_close_ int lfd = -1, efd = -1;
	_cleanup_free_ char *s = NULL;
	struct coredam_pipe_budget b;
	uint64_t t = 0;
	char buf[48], name[32];
	int r;

	r = coredam_pipe_dir_lock(q->dirfd, LOCK_EX, &lfd);
	if (r < 0)
		return r;
	/* the cap first, under the lock: a dump beyond it costs no ticket and no inotify instance */
	b = budget_now(q->dirfd, fallback);
	r = make_room(q->dirfd, &b, uid, ret_ahead);
	if (r <= 0)
		return r;
	r = read_file_at(q->dirfd, COREDAM_PIPE_TICKET_FILE, 64, &s);
	if (r >= 0) {
		if (parse_u64(strstrip(s), &t) < 0)
			t = 0;
	} else if (r != -ENOENT) {
		return r;
	}
	/* a ticket counter lost or reset must never reuse a live ticket */
	for (;; t++) {
		r = xsnprintf(name, sizeof(name), "q.%020" PRIu64, t);
		if (r < 0)
			return r;
		efd = openat(q->dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (efd >= 0)
			break;
		if (errno != EEXIST)
			return -errno;
	}
	if (flock(efd, LOCK_EX | LOCK_NB) < 0) {
		r = -errno;
		unlinkat(q->dirfd, name, 0);
		return r;
	}
	r = xsnprintf(buf, sizeof(buf), "Q %d %u\n", (int)pid, (unsigned int)uid);
	if (r < 0 || write(efd, buf, (size_t)r) != r) {
		unlinkat(q->dirfd, name, 0);
		return -EIO;
	}
	r = xsnprintf(buf, sizeof(buf), "%" PRIu64 "\n", t + 1);
	if (r >= 0)
		r = write_file_atomic_at(q->dirfd, COREDAM_PIPE_TICKET_FILE, buf, (size_t)r, 0600);
	if (r < 0) {
		unlinkat(q->dirfd, name, 0);
		return r;
	}
	q->ticket = t;
	q->uid = (uint32_t)uid;
	snprintf(q->entry, sizeof(q->entry), "%s", name);
	q->entry_fd = take_fd(&efd);
	r = scan(q->dirfd, t, true, NULL, ret_ahead);
	if (r < 0) {
		coredam_pipe_release(q);
		return r;
	}
	return 1;
}

/* Our state letter: 'X' once another dump pushed us out. */
static char own_state(const struct coredam_pipe_queue *q)
{
	char c = '?';

	if (q->entry_fd < 0 || pread(q->entry_fd, &c, 1, 0) != 1)
		return '?';
	return c;
}

/*
 * Count under the lock and, when admitted (@concurrency 0: always), mark
 * the ticket writing before the lock is let go: the next count sees the
 * slot taken. *ret_ahead: writing plus the waiters ranked before us.
 */
static int try_admit(struct coredam_pipe_queue *q, uint32_t concurrency, bool *ret_admitted, bool *ret_out,
		     uint32_t *ret_ahead)
{
	_cleanup_close_ int lfd = -1;
	int r;

	r = coredam_pipe_dir_lock(q->dirfd, LOCK_EX, &lfd);
	if (r < 0)
		return r;
	*ret_admitted = false;
	*ret_out = own_state(q) == 'X';
	if (*ret_out)
		return 0;
	r = scan(q->dirfd, q->ticket, true, NULL, ret_ahead);
	if (r < 0)
		return r;
	if (concurrency == 0 || *ret_ahead < concurrency) {
		r = coredam_pipe_mark_writing(q);
		if (r < 0)
			return r;
		*ret_admitted = true;
		/* a grant not remembered costs fairness, never the slot */
		(void)recent_add(q->dirfd, q->uid);
	}
	return 0;
}

int coredam_pipe_queue_count(const char *state_dir, uint32_t *ret_writing, uint32_t *ret_waiting)
{
	_cleanup_close_ int dfd = -1, lfd = -1;
	int r;

	r = coredam_pipe_dir_open(state_dir, false, &dfd);
	if (r < 0)
		return r;
	r = coredam_pipe_dir_lock(dfd, LOCK_SH, &lfd);
	if (r < 0)
		return r;
	{
		uint32_t writing, ahead;

		r = scan(dfd, UINT64_MAX, false, &writing, &ahead);
		if (r < 0)
			return r;
		*ret_writing = writing;
		*ret_waiting = ahead - writing;
		return 0;
	}
}

int coredam_pipe_mark_writing(struct coredam_pipe_queue *q)
{
	if (q->entry_fd < 0)
		return -EBADF;
	if (pwrite(q->entry_fd, "W", 1, 0) != 1)
		return -errno;
	return 0;
}

void coredam_pipe_release(struct coredam_pipe_queue *q)
{
	if (q->entry_fd >= 0) {
		/* unlink first: a waiter that counts now must not see us */
		unlinkat(q->dirfd, q->entry, 0);
		close(q->entry_fd);
		q->entry_fd = -1;
	}
}

/*
 * Read the pending events; true if one can change our place: a ticket file
 * removed or closed by its writer (a helper gone, dead or alive), or the
 * budget replaced. Counting opens files too, so any other event is ignored,
 * or every count would wake every waiter.
 */
static bool drain(int fd)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool relevant = false;
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const struct inotify_event *)p;

			if (ev->mask & IN_Q_OVERFLOW)
				relevant = true;
			else if (ev->len && strncmp(ev->name, "q.", 2) == 0 && (ev->mask & (IN_DELETE | IN_CLOSE_WRITE)))
				relevant = true;
			else if (ev->len && strcmp(ev->name, COREDAM_PIPE_BUDGET_FILE) == 0 && (ev->mask & IN_MOVED_TO))
				relevant = true;
			p += sizeof(*ev) + ev->len;
		}
	}
	return relevant;
}

int (*coredam_pipe_inotify_init1)(int flags) = inotify_init1;

/* Watch the queue directory for what drain() looks at. */
static int watch_open(const char *path, int *ret_fd)
{
	_cleanup_close_ int fd = -1;

	fd = coredam_pipe_inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (inotify_add_watch(fd, path, IN_DELETE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_ONLYDIR) < 0)
		return -errno;
	*ret_fd = take_fd(&fd);
	return 0;
}

static void set_result(enum coredam_pipe_wait_result w, uint64_t start, enum coredam_pipe_wait_result *ret,
		       uint64_t *ret_waited_usec)
{
	*ret = w;
	*ret_waited_usec = now_usec(CLOCK_MONOTONIC) - start;
}

/*
 * Only the first `concurrency` waiters, the ones a release can admit, hold
 * an inotify watch; a storm then holds a handful of root's inotify
 * instances (fs.inotify.max_user_instances), not one per dump. A waiter
 * further back, or one that cannot get a watch (EMFILE, ENOSPC, ENOMEM),
 * counts again every COREDAM_PIPE_POLL_MSEC: it cannot be admitted before
 * those ahead of it move, so the interval only delays its turn to watch.
 * No error of inotify lets a dump write without a slot.
 */
int coredam_pipe_wait(struct coredam_pipe_queue *q, const struct coredam_pipe_budget *fallback, int stop_fd,
		      enum coredam_pipe_wait_result *ret, uint64_t *ret_waited_usec)
{
	_cleanup_close_ int ifd = -1;
	uint64_t start = now_usec(CLOCK_MONOTONIC);
	int r;

	for (;;) {
		struct coredam_pipe_budget b = budget_now(q->dirfd, fallback);
		struct pollfd p[2];
		uint64_t waited, limit = UINT64_MAX;
		uint32_t ahead;
		int n = 0, timeout;

		bool admitted, out;

		r = try_admit(q, b.concurrency, &admitted, &out, &ahead);
		if (r < 0)
			return r;
		waited = now_usec(CLOCK_MONOTONIC) - start;
		if (out) {
			set_result(COREDAM_PIPE_PUSHED_OUT, start, ret, ret_waited_usec);
			return 0;
		}
		if (admitted) {
			set_result(COREDAM_PIPE_ADMIT, start, ret, ret_waited_usec);
			return 0;
		}
		if (b.timeout_ms) {
			limit = (uint64_t)b.timeout_ms * 1000;
			if (waited >= limit) {
				set_result(COREDAM_PIPE_TIMEOUT, start, ret, ret_waited_usec);
				return 0;
			}
		}
		if (ahead - b.concurrency < b.concurrency) {
			/* watch first, then count again: no release can fall between the two */
			if (ifd < 0 && watch_open(q->path, &ifd) == 0)
				continue;
		} else if (ifd >= 0) {
			close(ifd);	/* the budget shrank: leave the watch to those ahead */
			ifd = -1;
		}
		timeout = limit == UINT64_MAX ? -1 : (int)MIN((limit - waited + 999) / 1000, (uint64_t)INT32_MAX);
		if (ifd < 0 && (timeout < 0 || timeout > COREDAM_PIPE_POLL_MSEC))
			timeout = COREDAM_PIPE_POLL_MSEC;
		if (stop_fd >= 0)
			p[n++] = (struct pollfd){ .fd = stop_fd, .events = POLLIN };
		if (ifd >= 0)
			p[n++] = (struct pollfd){ .fd = ifd, .events = POLLIN };
		for (;;) {
			r = poll(p, n, timeout);
			if (r < 0 && errno != EINTR)
				return -errno;
			if (stop_fd >= 0 && (p[0].revents & POLLIN)) {
				set_result(COREDAM_PIPE_INTERRUPTED, start, ret, ret_waited_usec);
				return 0;
			}
			if (r <= 0 || ifd < 0 || drain(ifd))
				break;	/* timed out, or something that can change our place */
			if (limit != UINT64_MAX) {
				waited = now_usec(CLOCK_MONOTONIC) - start;
				if (waited >= limit)
					break;
				timeout = (int)MIN((limit - waited + 999) / 1000, (uint64_t)INT32_MAX);
			}
		}
	}
}
