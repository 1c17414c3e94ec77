// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe: arguments, destination check, arrival-order queue, counters. */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>

#include "pipe.h"
#include "util.h"

/* ---- arguments ---- */

static int parse_int_arg(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	int r;

	r = parse_u64(s, &v);
	if (r < 0)
		return r;
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int coredam_pipe_args_parse(int argc, char *const *argv, struct coredam_pipe_args *ret)
{
	struct coredam_pipe_args a = { .dumpable = COREDAM_DUMPABLE_UNKNOWN, .rlimit = UINT64_MAX };
	uint64_t v;
	size_t o = 0;
	int r;

	if (argc < 6)
		return -EINVAL;
	if (argv[0][0] != '/')
		return -EINVAL;
	r = xsnprintf(a.dir, sizeof(a.dir), "%s", argv[0]);
	if (r < 0)
		return r;
	if (parse_int_arg(argv[1], INT32_MAX, &v) < 0 || v == 0)
		return -EINVAL;
	a.pid = (pid_t)v;
	if (parse_int_arg(argv[2], UINT32_MAX - 1, &v) < 0)
		return -EINVAL;
	a.uid = (uid_t)v;
	if (parse_int_arg(argv[3], UINT32_MAX - 1, &v) < 0)
		return -EINVAL;
	a.gid = (gid_t)v;
	if (parse_int_arg(argv[4], 255, &v) < 0)
		return -EINVAL;
	a.signal = (int)v;
	if (parse_int_arg(argv[5], UINT64_MAX, &v) < 0)
		return -EINVAL;
	a.time = v;
	if (argc > 6) {
		/* the kernel prints RLIM_INFINITY as an unsigned long */
		if (parse_u64(argv[6], &a.rlimit) < 0)
			return -EINVAL;
		a.have_rlimit = true;
	}
	if (argc > 7) {
		if (parse_int_arg(argv[7], 2, &v) < 0)
			return -EINVAL;
		a.dumpable = (int)v;
	}
	for (int i = 8; i < argc; i++) {
		r = snprintf(a.comm + o, sizeof(a.comm) - o, "%s%s", i > 8 ? " " : "", argv[i]);
		if (r < 0)
			return -EINVAL;
		o += (size_t)r;
		if (o >= sizeof(a.comm)) {
			o = sizeof(a.comm) - 1;
			break;
		}
	}
	*ret = a;
	return 0;
}

void coredam_pipe_files(const struct coredam_pipe_args *a, struct coredam_pipe_files *ret)
{
	bool user = a->dumpable == 1;	/* never on a guess: see COREDAM_DUMPABLE_UNKNOWN */

	*ret = (struct coredam_pipe_files){
		.core_mode = user ? 0640 : 0400,
		.meta_mode = user ? 0640 : 0600,
	};
}

bool coredam_pipe_user_may_read(const struct coredam_pipe_args *a, const struct coredam_core_creds *c)
{
	uint64_t uid = a->uid, gid = a->gid;

	if (a->dumpable != 1 || uid < COREDAM_FIRST_USER_UID || uid >= 65534)
		return false;
	/* the process ran as this user when it dumped... */
	if (c->uid != uid || c->gid != gid)
		return false;
	/* ...and was started as this user, with no setuid or setgid bit at work */
	return c->at_uid == uid && c->at_euid == uid && c->at_gid == gid && c->at_egid == gid &&
	       c->at_secure == 0;
}

/* One ACL entry as the kernel reads system.posix_acl_access: little-endian. */
static unsigned char *acl_entry(unsigned char *p, uint16_t tag, uint16_t perm, uint32_t id)
{
	p[0] = tag & 0xff, p[1] = tag >> 8;
	p[2] = perm & 0xff, p[3] = perm >> 8;
	for (int i = 0; i < 4; i++)
		p[4 + i] = (id >> (8 * i)) & 0xff;
	return p + 8;
}

size_t coredam_acl_user_read(uid_t uid, void *buf)
{
	/* <linux/posix_acl_xattr.h>: version 2, then entries sorted by tag */
	enum { USER_OBJ = 0x01, USER = 0x02, GROUP_OBJ = 0x04, MASK = 0x10, OTHER = 0x20 };
	const uint32_t undefined = UINT32_MAX;
	unsigned char *p = buf;

	p[0] = 2, p[1] = p[2] = p[3] = 0;
	p = acl_entry(p + 4, USER_OBJ, 6, undefined);
	p = acl_entry(p, USER, 4, (uint32_t)uid);
	p = acl_entry(p, GROUP_OBJ, 4, undefined);
	p = acl_entry(p, MASK, 4, undefined);
	p = acl_entry(p, OTHER, 0, undefined);
	return (size_t)(p - (unsigned char *)buf);
}

void coredam_pipe_sanitize(const char *in, char *out, size_t size)
{
	size_t o = 0;

	if (size == 0)
		return;
	for (const char *p = in; *p && o < 15 && o + 1 < size; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '_' || c == '-' || (c == '.' && o > 0);

		out[o++] = ok ? c : '_';
	}
	if (o == 0 && size > 1)
		out[o++] = '_';
	out[o] = '\0';
}

int coredam_pipe_core_name(const struct coredam_pipe_args *a, bool zstd, char *buf, size_t size)
{
	char comm[16];

	coredam_pipe_sanitize(a->comm, comm, sizeof(comm));
	return xsnprintf(buf, size, "core.%s.%d.%" PRIu64 "%s", comm, (int)a->pid, a->time, zstd ? ".zst" : "");
}

/* ---- destination ---- */

/*
 * May nobody but @owner (and root, where @root_ok) change the directory
 * @st? Others may write it only when it is sticky and not @last, the
 * directory that holds the file itself.
 */
static int check_dir_stat(const struct stat *st, const char *shown, uid_t owner, bool root_ok, bool last,
			  char *why, size_t whysize)
{
	if (st->st_uid != owner && !(root_ok && st->st_uid == 0))
		return snprintf(why, whysize, "%s: owned by uid %u, not %u", shown, (unsigned)st->st_uid,
				(unsigned)owner), -EPERM;
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) && (last || !(st->st_mode & S_ISVTX)))
		return snprintf(why, whysize, "%s: writable by group or others (mode %04o)", shown,
				(unsigned)(st->st_mode & 07777)), -EPERM;
	return 0;
}

static int check_dir(int fd, const char *shown, uid_t owner, bool last, char *why, size_t whysize)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return snprintf(why, whysize, "%s: fstat: %s", shown, strerror(errno)), -errno;
	if (!S_ISDIR(st.st_mode))
		return snprintf(why, whysize, "%s: not a directory", shown), -ENOTDIR;
	/* the destination itself is @owner's; its ancestors may be root's */
	return check_dir_stat(&st, shown, owner, !last, last, why, whysize);
}

int coredam_pipe_open_dest(const char *dir, uid_t owner, char *why, size_t whysize, int *ret_fd)
{
	_cleanup_close_ int fd = -1;
	char buf[PATH_MAX], shown[PATH_MAX] = "";
	char *p, *save = NULL;
	size_t so = 0;
	int r;

	if (dir[0] != '/')
		return snprintf(why, whysize, "%s: not an absolute path", dir), -EINVAL;
	r = xsnprintf(buf, sizeof(buf), "%s", dir);
	if (r < 0)
		return snprintf(why, whysize, "destination path too long"), r;
	fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return snprintf(why, whysize, "/: %s", strerror(errno)), -errno;
	p = strtok_r(buf, "/", &save);
	if (!p)
		return snprintf(why, whysize, "/ cannot be the destination"), -EINVAL;
	for (; p; p = strtok_r(NULL, "/", &save)) {
		int nfd;

		if (strcmp(p, ".") == 0 || strcmp(p, "..") == 0)
			return snprintf(why, whysize, "%s: \".\" and \"..\" are not allowed", dir), -EINVAL;
		/* ancestors must hold still: root's (or @owner's), no one else may write them unless sticky */
		r = check_dir(fd, so ? shown : "/", owner, false, why, whysize);
		if (r < 0)
			return r;
		so += (size_t)snprintf(shown + so, sizeof(shown) - so, "/%s", p);
		if (so >= sizeof(shown))
			so = sizeof(shown) - 1;
		nfd = openat(fd, p, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			r = -errno;
			if (errno == ELOOP || errno == ENOTDIR) {
				struct stat st;

				if (fstatat(fd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode))
					return snprintf(why, whysize, "%s: is a symbolic link", shown), -ELOOP;
			}
			return snprintf(why, whysize, "%s: %s", shown, strerror(-r)), r;
		}
		close(fd);
		fd = nfd;
	}
	r = check_dir(fd, shown, owner, true, why, whysize);
	if (r < 0)
		return r;
	*ret_fd = take_fd(&fd);
	return 0;
}

/* Is the directory @path (of the helper, @last: its own) safe from everyone but @owner and root? */
static int check_helper_dir(const char *path, uid_t owner, bool last, char *why, size_t whysize)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return snprintf(why, whysize, "%s: %s", path, strerror(errno)), -errno;
	return check_dir_stat(&st, path, owner, true, last, why, whysize);
}

int coredam_pipe_helper_check(const char *path, uid_t owner, char *why, size_t whysize)
{
	char real[PATH_MAX], dir[PATH_MAX];
	const char *base;
	struct stat st;
	int r;

	if (path[0] != '/')
		return snprintf(why, whysize, "%s: not an absolute path", path), -EINVAL;
	if (!realpath(path, real))
		return snprintf(why, whysize, "%s: %s", path, strerror(errno)), -errno;
	if (stat(real, &st) < 0)
		return snprintf(why, whysize, "%s: %s", real, strerror(errno)), -errno;
	if (!S_ISREG(st.st_mode))
		return snprintf(why, whysize, "%s: not a regular file", real), -EINVAL;
	if (!(st.st_mode & S_IXUSR))
		return snprintf(why, whysize, "%s: not executable (mode %04o)", real, (unsigned)(st.st_mode & 07777)),
		       -EACCES;
	if (st.st_uid != owner)
		return snprintf(why, whysize, "%s: owned by uid %u, not %u", real, (unsigned)st.st_uid,
				(unsigned)owner), -EPERM;
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return snprintf(why, whysize, "%s: writable by group or others (mode %04o)", real,
				(unsigned)(st.st_mode & 07777)), -EPERM;
	/*
	 * Whoever may write a directory on the way may put another program
	 * in its place: each is @owner's or root's and writable by nobody
	 * else (an ancestor may be sticky; the helper's own directory not).
	 */
	base = strrchr(real, '/');
	for (const char *p = real; p; p = strchr(p + 1, '/')) {
		if (p > base)
			break;
		r = xsnprintf(dir, sizeof(dir), "%.*s", p == real ? 1 : (int)(p - real), real);
		if (r < 0)
			return r;
		r = check_helper_dir(dir, owner, p == base, why, whysize);
		if (r < 0)
			return r;
	}
	return 0;
}

int coredam_pipe_read_rlimit(const char *proc_root, pid_t pid, uint64_t *ret)
{
	_cleanup_free_ char *s = NULL;
	char path[PATH_MAX], soft[32];
	const char *line;
	int r;

	r = xsnprintf(path, sizeof(path), "%s/%d/limits", proc_root, (int)pid);
	if (r < 0)
		return r;
	r = read_file_at(AT_FDCWD, path, 16384, &s);
	if (r < 0)
		return r;
	line = strstr(s, "\nMax core file size");
	if (!line)
		return -EBADMSG;
	if (sscanf(line + strlen("\nMax core file size"), " %31s", soft) != 1)
		return -EBADMSG;
	if (strcmp(soft, "unlimited") == 0) {
		*ret = UINT64_MAX;
		return 0;
	}
	if (parse_u64(soft, ret) < 0)
		return -EBADMSG;
	return 0;
}

/* ---- state directory ---- */

#define PIPE_DIR "pipe"
#define LOCK_FILE "lock"
#define TICKET_FILE "ticket"
#define BUDGET_FILE "budget"
#define GRANTS_FILE "grants"
#define STATS_FILE "stats"

static int open_pipe_dir(const char *state_dir, bool create, int *ret_fd)
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
	if (create && mkdirat(sfd, PIPE_DIR, 0700) < 0 && errno != EEXIST)
		return -errno;
	{
		int fd = openat(sfd, PIPE_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (fd < 0)
			return -errno;
		*ret_fd = fd;
	}
	return 0;
}

static int lock_dir(int dirfd, int op, int *ret_fd)
{
	_cleanup_close_ int fd = -1;

	/* read-only: closing it must not look like a release to the waiters' inotify watch */
	fd = openat(dirfd, LOCK_FILE, O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, op) < 0)
		if (errno != EINTR)
			return -errno;
	*ret_fd = take_fd(&fd);
	return 0;
}

/* ---- counters ---- */

const char *const coredam_pipe_stat_names[COREDAM_PIPE_STATS_N] = {
	"started", "admitted", "completed", "failed", "skipped_full", "skipped_timeout",
	"skipped_killed", "skipped_rlimit", "skipped_error", "skipped_space", "uncharged", "truncated",
	"bytes", "bytes_disk",
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
	size_t o = 0;

	for (int i = 0; i < COREDAM_PIPE_STATS_N; i++) {
		int r = xsnprintf(buf + o, size - o, "%s %" PRIu64 "\n", coredam_pipe_stat_names[i], s->v[i]);

		if (r < 0)
			return r;
		o += (size_t)r;
	}
	return (int)o;
}

static int stats_read_at(int dirfd, struct coredam_pipe_stats *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = read_file_at(dirfd, STATS_FILE, 65536, &s);
	if (r < 0)
		return r;
	return coredam_pipe_stats_parse(s, ret);
}

int coredam_pipe_stats_read(const char *state_dir, struct coredam_pipe_stats *ret)
{
	_cleanup_close_ int dfd = -1;
	int r;

	r = open_pipe_dir(state_dir, false, &dfd);
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

	r = open_pipe_dir(state_dir, true, &dfd);
	if (r < 0)
		return r;
	r = lock_dir(dfd, LOCK_EX, &lfd);
	if (r < 0)
		return r;
	r = stats_read_at(dfd, &s);
	if (r < 0 && r != -ENOENT)
		memset(&s, 0, sizeof(s)); /* a damaged file starts over rather than blocking every dump */
	for (int i = 0; i < COREDAM_PIPE_STATS_N; i++)
		s.v[i] += delta->v[i];
	r = coredam_pipe_stats_format(&s, buf, sizeof(buf));
	if (r < 0)
		return r;
	return write_file_atomic_at(dfd, STATS_FILE, buf, (size_t)r, 0644);
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
	k.v[COREDAM_STAT_WAITING] = waiting;
	/* dumps the helper turned away before the queue never started, as the kernel counts */
	k.v[COREDAM_STAT_STARTED] = p.v[COREDAM_PIPE_STARTED] - MIN(p.v[COREDAM_PIPE_STARTED],
								    p.v[COREDAM_PIPE_SKIPPED_RLIMIT] +
									    p.v[COREDAM_PIPE_SKIPPED_ERROR] +
									    p.v[COREDAM_PIPE_SKIPPED_SPACE]);
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

/* ---- budget ---- */

int coredam_pipe_budget_write(const char *state_dir, const struct coredam_pipe_budget *b)
{
	_cleanup_close_ int dfd = -1;
	char buf[128];
	int r;

	r = open_pipe_dir(state_dir, true, &dfd);
	if (r < 0)
		return r;
	r = xsnprintf(buf, sizeof(buf), "concurrency %u\nwaiting %u\ntimeout_ms %u\n", b->concurrency, b->waiting,
		      b->timeout_ms);
	if (r < 0)
		return r;
	return write_file_atomic_at(dfd, BUDGET_FILE, buf, (size_t)r, 0644);
}

static int budget_read_at(int dirfd, struct coredam_pipe_budget *ret)
{
	_cleanup_free_ char *s = NULL;
	struct coredam_pipe_budget b = { 0 };
	unsigned int seen = 0;
	int r;

	r = read_file_at(dirfd, BUDGET_FILE, 4096, &s);
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

	r = open_pipe_dir(state_dir, false, &dfd);
	if (r < 0)
		return r;
	return budget_read_at(dfd, ret);
}

int coredam_pipe_budget_remove(const char *state_dir)
{
	_cleanup_close_ int dfd = -1;
	int r;

	r = open_pipe_dir(state_dir, false, &dfd);
	if (r < 0)
		return r;
	if (unlinkat(dfd, BUDGET_FILE, 0) < 0)
		return -errno;
	return 0;
}

/* ---- queue ---- */

int coredam_pipe_queue_open(const char *state_dir, struct coredam_pipe_queue *q)
{
	int r;

	r = path_join(q->path, sizeof(q->path), state_dir, PIPE_DIR);
	if (r < 0)
		return r;
	return open_pipe_dir(state_dir, true, &q->dirfd);
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

	if (read_file_at(dirfd, GRANTS_FILE, 1024, &s) < 0)
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
	return write_file_atomic_at(dirfd, GRANTS_FILE, buf, o, 0600);
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

	if (budget_read_at(dirfd, &b) < 0)
		b = *fallback;
	return b;
}

int coredam_pipe_enqueue(struct coredam_pipe_queue *q, pid_t pid, uid_t uid,
			 const struct coredam_pipe_budget *fallback, uint32_t *ret_ahead)
{
	_cleanup_close_ int lfd = -1, efd = -1;
	_cleanup_free_ char *s = NULL;
	struct coredam_pipe_budget b;
	uint64_t t = 0;
	uint32_t live;
	char buf[48], name[32];
	int r;

	r = lock_dir(q->dirfd, LOCK_EX, &lfd);
	if (r < 0)
		return r;
	/*
	 * The cap first, under the lock: a dump beyond it costs no ticket and
	 * no inotify instance, unless another source holds more of the
	 * waiting places than this dump's would (counting it): then that
	 * source's newest waiter leaves instead, so one user's storm cannot
	 * take every place.
	 */
	b = budget_now(q->dirfd, fallback);
	if (b.concurrency && b.waiting) {
		_cleanup_free_ struct coredam_pipe_entry *v = NULL;
		const struct coredam_pipe_entry *out;
		size_t n = 0;

		r = collect(q->dirfd, true, &v, &n);
		if (r < 0)
			return r;
		live = live_count(v, n, UINT64_MAX);
		if ((uint64_t)live >= (uint64_t)b.concurrency + b.waiting) {
			out = coredam_pipe_pick_pushed_out(v, n, (uint32_t)uid);
			if (!out || push_out(q->dirfd, out) < 0) {
				*ret_ahead = live;
				return 0;
			}
		}
	}
	r = read_file_at(q->dirfd, TICKET_FILE, 64, &s);
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
		r = write_file_atomic_at(q->dirfd, TICKET_FILE, buf, (size_t)r, 0600);
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

	r = lock_dir(q->dirfd, LOCK_EX, &lfd);
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

	r = open_pipe_dir(state_dir, false, &dfd);
	if (r < 0)
		return r;
	r = lock_dir(dfd, LOCK_SH, &lfd);
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
			else if (ev->len && strcmp(ev->name, BUDGET_FILE) == 0 && (ev->mask & IN_MOVED_TO))
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
