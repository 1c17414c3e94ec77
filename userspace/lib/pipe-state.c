// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe's state directory: its lock, the counters, the budget. */
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
#include "fileio.h"
#include "string-util.h"
#include "parse-util.h"
#include "path-util.h"
#include "sysctl.h"

int coredam_pipe_dir_open(const char *state_dir, bool create, int *ret_fd)
{
	_cleanup_close_ int sfd = -1;
	int r;

	if (create) {
		r = mkdir_p(state_dir, 0755);
		if (r < 0)
			return r;
	}
	r = open_dir_at(AT_FDCWD, state_dir, &sfd);
	if (r < 0)
		return r;
	if (create && mkdirat(sfd, COREDAM_PIPE_DIR_NAME, 0700) < 0 && errno != EEXIST)
		return -errno;
	{
		int fd = openat(sfd, COREDAM_PIPE_DIR_NAME, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0)
			return -errno;
		*ret_fd = fd;
	}
	return 0;
}

int coredam_pipe_dir_lock(int dirfd, int op, int *ret_fd)
{
	_cleanup_close_ int fd = -1;

	/* read-only: closing it must not look like a release to the waiters' inotify watch */
	fd = openat(dirfd, COREDAM_PIPE_LOCK_FILE, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, op) < 0)
		if (errno != EINTR)
			return -errno;
	*ret_fd = take_fd(&fd);
	return 0;
}

/* ---- the counters ---- */

const char *const coredam_pipe_stat_names[COREDAM_PIPE_STATS_N] = {
	"started", "admitted", "completed", "failed", "skipped_full", "skipped_timeout",
	"skipped_killed", "skipped_rlimit", "skipped_error", "skipped_space", "skipped_repeat", "uncharged",
	"truncated", "removed_retention", "bytes", "bytes_disk", "held", "lost_connect", "kmsg_seq",
};

int coredam_pipe_stats_parse(const char *text, struct coredam_pipe_stats *ret)
{
	struct coredam_pipe_stats s = { 0 };

	for (const char *p = text; *p;) {
		char name[64], val[32];
		size_t len = strcspn(p, "\n");
		uint64_t v;

		if (len && sscanf(p, "%63s %31s", name, val) == 2) {
			if (parse_u64(val, &v) < 0)
				return -EBADMSG;
			for (int i = 0; i < COREDAM_PIPE_STATS_N; i++)
				if (strcmp(name, coredam_pipe_stat_names[i]) == 0)
					s.v[i] = v;
		} else if (len) {
			return -EBADMSG;
		}
		p += len;
		if (*p)
			p++;
	}
	*ret = s;
	return 0;
}

int coredam_pipe_stats_format(const struct coredam_pipe_stats *s, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT(buf, size);

	for (int i = 0; i < COREDAM_PIPE_STATS_N; i++)
		strbuf_printf(&sb, "%s %" PRIu64 "\n", coredam_pipe_stat_names[i], s->v[i]);
	return strbuf_done(&sb);
}

static int stats_read_at(int dirfd, struct coredam_pipe_stats *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = read_file_at(dirfd, COREDAM_PIPE_STATS_FILE, 65536, &s);
	if (r < 0)
		return r;
	return coredam_pipe_stats_parse(s, ret);
}

int coredam_pipe_stats_read(const char *state_dir, struct coredam_pipe_stats *ret)
{
	_cleanup_close_ int dfd = -1;
	int r;

	r = coredam_pipe_dir_open(state_dir, false, &dfd);
	if (r < 0)
		return r;
	return stats_read_at(dfd, ret);
}

int coredam_pipe_stats_add(const char *state_dir, const struct coredam_pipe_stats *delta)
{
	_cleanup_close_ int dfd = -1, lfd = -1;
	struct coredam_pipe_stats s = { 0 };
	char buf[1024];
	int r;

	r = coredam_pipe_dir_open(state_dir, true, &dfd);
	if (r < 0)
		return r;
	r = coredam_pipe_dir_lock(dfd, LOCK_EX, &lfd);
	if (r < 0)
		return r;
	r = stats_read_at(dfd, &s);
	if (r < 0 && r != -ENOENT)
		memset(&s, 0, sizeof(s)); /* a damaged file starts over rather than blocking every dump */
	for (int i = 0; i < COREDAM_PIPE_STATS_N; i++) {
		int64_t d = (int64_t)delta->v[i];

		if (i == COREDAM_PIPE_KMSG_SEQ) {
			if (delta->v[i])
				s.v[i] = delta->v[i];
		} else if (i != COREDAM_PIPE_HELD) {
			s.v[i] += delta->v[i];
		} else if (d >= 0) {
			s.v[i] += (uint64_t)d;
		} else {	/* a file started over holds fewer than were decided */
			s.v[i] -= MIN(s.v[i], (uint64_t)-d);
		}
	}
	r = coredam_pipe_stats_format(&s, buf, sizeof(buf));
	if (r < 0)
		return r;
	return write_file_atomic_at(dfd, COREDAM_PIPE_STATS_FILE, buf, (size_t)r, 0644);
}

int coredam_pipe_stats_as_kernel(const char *state_dir, struct coredam_stats *ret)
{
	struct coredam_pipe_stats p;
	struct coredam_stats k = { 0 };
	uint32_t writing = 0, waiting = 0;
	int r;

	r = coredam_pipe_stats_read(state_dir, &p);
	if (r < 0)
		return r;
	coredam_pipe_queue_count(state_dir, &writing, &waiting);
	k.v[COREDAM_STAT_ACTIVE] = writing;
	/* the socket's held dumps have started and wait for their answer, as the kernel counts */
	k.v[COREDAM_STAT_WAITING] = waiting + p.v[COREDAM_PIPE_HELD];
	/* dumps the helper turned away before the queue never started, as the kernel counts */
	k.v[COREDAM_STAT_STARTED] = p.v[COREDAM_PIPE_STARTED] - MIN(p.v[COREDAM_PIPE_STARTED],
								    p.v[COREDAM_PIPE_SKIPPED_RLIMIT] +
									    p.v[COREDAM_PIPE_SKIPPED_ERROR] +
									    p.v[COREDAM_PIPE_SKIPPED_SPACE] +
									    p.v[COREDAM_PIPE_SKIPPED_REPEAT]);
	k.v[COREDAM_STAT_ADMITTED] = p.v[COREDAM_PIPE_ADMITTED];
	/* a truncated core was counted completed too: move it to failed_limit */
	k.v[COREDAM_STAT_FAILED_LIMIT] = MIN(p.v[COREDAM_PIPE_TRUNCATED], p.v[COREDAM_PIPE_COMPLETED]);
	k.v[COREDAM_STAT_COMPLETED] = p.v[COREDAM_PIPE_COMPLETED] - k.v[COREDAM_STAT_FAILED_LIMIT];
	k.v[COREDAM_STAT_FAILED_WRITE] = p.v[COREDAM_PIPE_FAILED];
	if (__builtin_add_overflow(k.v[COREDAM_STAT_FAILED_WRITE], k.v[COREDAM_STAT_FAILED_LIMIT],
				   &k.v[COREDAM_STAT_FAILED]))
		return -EBADMSG;
	k.v[COREDAM_STAT_SKIPPED_FULL] = p.v[COREDAM_PIPE_SKIPPED_FULL];
	k.v[COREDAM_STAT_SKIPPED_TIMEOUT] = p.v[COREDAM_PIPE_SKIPPED_TIMEOUT];
	k.v[COREDAM_STAT_SKIPPED_KILLED] = p.v[COREDAM_PIPE_SKIPPED_KILLED];
	k.v[COREDAM_STAT_UNCHARGED] = p.v[COREDAM_PIPE_UNCHARGED];
	k.v[COREDAM_STAT_BYTES] = p.v[COREDAM_PIPE_BYTES_DISK];
	*ret = k;
	return 0;
}

/* ---- the budget ---- */

int coredam_pipe_budget_write(const char *state_dir, const struct coredam_pipe_budget *b)
{
	_cleanup_close_ int dfd = -1;
	char buf[128];
	int r;

	r = coredam_pipe_dir_open(state_dir, true, &dfd);
	if (r < 0)
		return r;
	r = xsnprintf(buf, sizeof(buf), "concurrency %u\nwaiting %u\ntimeout_ms %u\n", b->concurrency, b->waiting,
		      b->timeout_ms);
	if (r < 0)
		return r;
	return write_file_atomic_at(dfd, COREDAM_PIPE_BUDGET_FILE, buf, (size_t)r, 0644);
}

int coredam_pipe_budget_read_at(int dirfd, struct coredam_pipe_budget *ret)
{
	_cleanup_free_ char *s = NULL;
	struct coredam_pipe_budget b = { 0 };
	unsigned int seen = 0;
	int r;

	r = read_file_at(dirfd, COREDAM_PIPE_BUDGET_FILE, 4096, &s);
	if (r < 0)
		return r;
	for (char *line = strtok(s, "\n"); line; line = strtok(NULL, "\n")) {
		char name[32], val[16];
		uint32_t v;

		if (sscanf(line, "%31s %15s", name, val) != 2 || parse_u32(val, &v) < 0)
			return -EBADMSG;
		if (strcmp(name, "concurrency") == 0)
			b.concurrency = v, seen |= 1;
		else if (strcmp(name, "waiting") == 0)
			b.waiting = v, seen |= 2;
		else if (strcmp(name, "timeout_ms") == 0)
			b.timeout_ms = v, seen |= 4;
	}
	if (seen != 7)
		return -EBADMSG;
	*ret = b;
	return 0;
}

int coredam_pipe_budget_read(const char *state_dir, struct coredam_pipe_budget *ret)
{
	_cleanup_close_ int dfd = -1;
	int r;

	r = coredam_pipe_dir_open(state_dir, false, &dfd);
	if (r < 0)
		return r;
	return coredam_pipe_budget_read_at(dfd, ret);
}

int coredam_pipe_budget_remove(const char *state_dir)
{
	_cleanup_close_ int dfd = -1;
	int r;

	r = coredam_pipe_dir_open(state_dir, false, &dfd);
	if (r < 0)
		return r;
	if (unlinkat(dfd, COREDAM_PIPE_BUDGET_FILE, 0) < 0)
		return -errno;
	return 0;
}
