/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * coredam-pipe: the core_pattern pipe helper for kernels without the
 * coredam patches. Its logic lives here: the arguments the kernel passes,
 * the destination check, the arrival-order slot queue shared by every
 * helper, the counters, and the write-behind writer.
 *
 * The queue (documented in docs/pipe-helper.md) lives in <state>/pipe:
 *
 *   lock          flock()ed around every change and every count
 *   ticket        the next ticket number (decimal)
 *   q.<ticket>    one per helper alive, created and flock(LOCK_EX)ed under
 *                 "lock", holding "<state> <pid>"; state Q (waiting) or
 *                 W (writing). A file whose lock can be taken belongs to a
 *                 helper that died: whoever counts removes it.
 *   budget        written by coredamd: concurrency, waiting, timeout_ms.
 *   stats         the counters, "name value" lines, replaced atomically
 *                 under "lock".
 *
 * A helper may write when fewer than `concurrency` live tickets are older
 * than its own, so slots go in ticket (arrival) order whatever order the
 * writers finish in. The first `concurrency` waiters sleep in poll() on an
 * inotify watch of the directory (a ticket file deleted or closed after
 * writing, the budget replaced); waiters further back, or without inotify,
 * count again at a fixed interval. Whatever fails, no helper writes
 * without a slot.
 */
#ifndef COREDAM_PIPE_H
#define COREDAM_PIPE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elfcore.h"
#include "sysctl.h"

/*
 * The core_pattern the agent installs; the helper takes the same order:
 * DIR %P %u %g %s %t %c %d %e (%e last: the only value the crashed process
 * chooses; the kernel keeps it one argument, but were it split, the rest
 * is joined back).
 */
#define COREDAM_PIPE_SPECIFIERS "%P %u %g %s %t %c %d %e"

/*
 * No %d in core_pattern: the helper cannot tell a setuid process's dump
 * (suid_dumpable=2) from an ordinary one, so it treats it as the former:
 * giving a setuid program's memory to the user who crashed it is the
 * CVE-2022-4415 class of bug.
 */
#define COREDAM_DUMPABLE_UNKNOWN (-1)

struct coredam_pipe_args {
	char dir[PATH_MAX];
	pid_t pid;		/* %P: in the initial pid namespace */
	uid_t uid;		/* %u */
	gid_t gid;		/* %g */
	int signal;		/* %s */
	uint64_t time;		/* %t: seconds since the epoch */
	uint64_t rlimit;	/* %c: RLIMIT_CORE soft limit; UINT64_MAX = unlimited */
	bool have_rlimit;
	int dumpable;		/* %d: 0, 1 or 2 (suid_dumpable=2); COREDAM_DUMPABLE_UNKNOWN if absent */
	char comm[64];		/* %e as given (untrusted, never used in a path) */
};

/* argv after the options: DIR PID UID GID SIG TIME [RLIMIT DUMPABLE [COMM...]] */
int coredam_pipe_args_parse(int argc, char *const *argv, struct coredam_pipe_args *ret);

/*
 * Modes of what the helper stores for a crash, all root's (the helper
 * creates them as root). The core is 0640 when %d says 1 (a read ACL may
 * add the crashed user: coredam_pipe_user_may_read()), 0400 otherwise
 * (suid_dumpable=2, or %d not passed). It is never given to %u: a root
 * process that changed only its real uid would hand its memory to that
 * user, who would own the file. The metadata beside it never is
 * world-readable: it names the process, its uid and its cgroup, and other
 * users must not learn of every crash, root's included. 0640 for ordinary
 * dumps, 0600 for the others.
 */
struct coredam_pipe_files {
	mode_t core_mode;
	mode_t meta_mode;
};

void coredam_pipe_files(const struct coredam_pipe_args *a, struct coredam_pipe_files *ret);

/* The first uid of an ordinary user (Debian's login.defs: SYS_UID_MAX 999). */
#define COREDAM_FIRST_USER_UID 1000

/*
 * Pure: may the crashed user (%u) read its core? As systemd-coredump
 * decides, with the values from the core's own notes (@c, from
 * coredam_elf_core_creds()), never from /proc/PID: only when %d says 1,
 * the process was no setuid or setgid program (AT_SECURE 0, and the uid
 * and gid it was started with were its effective ones), it still ran as
 * that uid and gid when it dumped, and %u is an ordinary user's (not root,
 * not a system account, not nobody). Ids seen in another user namespace
 * do not match %u, so a core from one stays root's.
 */
bool coredam_pipe_user_may_read(const struct coredam_pipe_args *a, const struct coredam_core_creds *c);

/*
 * The system.posix_acl_access value that adds read access for @uid to a
 * file of mode 0640: user::rw-, user:@uid:r--, group::r--, mask::r--,
 * other::---. Written into @buf (at least COREDAM_ACL_USER_READ_SIZE
 * bytes); returns its size.
 */
#define COREDAM_ACL_USER_READ_SIZE (4 + 5 * 8)
size_t coredam_acl_user_read(uid_t uid, void *buf);

/*
 * Reduce an untrusted name to [A-Za-z0-9._-] (others become '_'), at most
 * 15 characters, never empty, never starting with '.'.
 */
void coredam_pipe_sanitize(const char *in, char *out, size_t size);

/* "core.<comm>.<pid>.<time>" (+ ".zst") */
int coredam_pipe_core_name(const struct coredam_pipe_args *a, bool zstd, char *buf, size_t size);

/*
 * Open the destination directory component by component with O_NOFOLLOW:
 * every component must be a real directory owned by @owner (0 in
 * production), the directory itself writable by nobody else, and each
 * ancestor either writable by nobody else or sticky. On failure @why says
 * which component and what is wrong with it.
 */
int coredam_pipe_open_dest(const char *dir, uid_t owner, char *why, size_t whysize, int *ret_fd);

/*
 * May @path be the helper of a pipe core_pattern? The kernel runs it as
 * root for every crash, and a helper that is missing loses every core, so
 * it must be an absolute path to an executable regular file (symlinks
 * followed, as the kernel does) owned by @owner (0 in production) and
 * writable by nobody else, in a directory that is @owner's or root's and
 * writable by nobody else. On failure @why says what is wrong: -ENOENT
 * missing, -EACCES not executable, -EPERM owner or mode, -EINVAL not an
 * absolute path or not a regular file.
 */
int coredam_pipe_helper_check(const char *path, uid_t owner, char *why, size_t whysize);

/* RLIMIT_CORE from /proc/PID/limits (when %c was not given). */
int coredam_pipe_read_rlimit(const char *proc_root, pid_t pid, uint64_t *ret);

/* ---- the counters ---- */

enum {
	COREDAM_PIPE_STARTED,		/* helper invocations */
	COREDAM_PIPE_ADMITTED,		/* got a slot */
	COREDAM_PIPE_COMPLETED,		/* core complete and renamed into place */
	COREDAM_PIPE_FAILED,		/* admitted, then the core could not be created or written */
	COREDAM_PIPE_SKIPPED_FULL,	/* queue at its cap on arrival */
	COREDAM_PIPE_SKIPPED_TIMEOUT,	/* no slot within the wait timeout */
	COREDAM_PIPE_SKIPPED_KILLED,	/* the helper was told to stop while waiting */
	COREDAM_PIPE_SKIPPED_RLIMIT,	/* RLIMIT_CORE below a page: dumping disabled */
	COREDAM_PIPE_SKIPPED_ERROR,	/* no valid destination, state dir or queue unusable */
	COREDAM_PIPE_SKIPPED_SPACE,	/* the destination below [Space] FreeSpaceFloor= on arrival */
	COREDAM_PIPE_UNCHARGED,		/* could not join the dump cgroup (still written) */
	COREDAM_PIPE_TRUNCATED,		/* completed, but cut at RLIMIT_CORE, a [Pipe] cap or the
					   free-space floor (stored as .incomplete) */
	COREDAM_PIPE_BYTES,		/* core bytes read from the kernel */
	COREDAM_PIPE_BYTES_DISK,	/* bytes stored (compressed size when compressing) */
	COREDAM_PIPE_STATS_N,
};

struct coredam_pipe_stats {
	uint64_t v[COREDAM_PIPE_STATS_N];
};

extern const char *const coredam_pipe_stat_names[COREDAM_PIPE_STATS_N];

/* "name value" lines; unknown names are ignored, missing ones are 0. */
int coredam_pipe_stats_parse(const char *text, struct coredam_pipe_stats *ret);
int coredam_pipe_stats_format(const struct coredam_pipe_stats *s, char *buf, size_t size);
/* -ENOENT when no helper ever ran. */
int coredam_pipe_stats_read(const char *state_dir, struct coredam_pipe_stats *ret);
/* Add @delta under the queue lock; the directory is created if missing. */
int coredam_pipe_stats_add(const char *state_dir, const struct coredam_pipe_stats *delta);

/*
 * The helpers' counters under the kernel's core_dump_stats names, with the
 * writing/waiting gauges counted from the live tickets, so that status and
 * metrics treat both paths alike. rlimit and error skips are not dumps the
 * kernel would have started and are left out of "started". A core cut at
 * RLIMIT_CORE is what the kernel counts failed_limit, not completed; any
 * other failure of the helper is a failed write (failed_write). Nothing
 * maps onto core_pipe_limit, leases or the other failure reasons: 0.
 */
int coredam_pipe_stats_as_kernel(const char *state_dir, struct coredam_stats *ret);

/* ---- the queue ---- */

/* What coredamd publishes; the helper falls back to the configuration. */
struct coredam_pipe_budget {
	uint32_t concurrency;	/* 0 = unlimited */
	uint32_t waiting;	/* 0 = no cap */
	uint32_t timeout_ms;	/* 0 = no timeout */
};

int coredam_pipe_budget_write(const char *state_dir, const struct coredam_pipe_budget *b);
int coredam_pipe_budget_read(const char *state_dir, struct coredam_pipe_budget *ret);
int coredam_pipe_budget_remove(const char *state_dir);

struct coredam_pipe_queue {
	char path[PATH_MAX];	/* <state>/pipe */
	int dirfd;
	int entry_fd;		/* our q.<ticket>, flock()ed */
	uint64_t ticket;
	uint32_t uid;		/* the source */
	char entry[32];
};

#define COREDAM_PIPE_QUEUE_INIT { .dirfd = -1, .entry_fd = -1 }

/* Open (create) <state>/pipe. */
int coredam_pipe_queue_open(const char *state_dir, struct coredam_pipe_queue *q);

/*
 * Fair shares. The source of a dump is the real uid of the crashed
 * process (%u). The sources of the last COREDAM_PIPE_RECENT grants are
 * kept (<state>/pipe/grants). A waiter's turn is how many of those its
 * source had, plus its source's waiters older than it; slots go by turn,
 * then by ticket. One user's storm then holds back another user's crash
 * by the dumps already writing, sources that wrote less lately go first,
 * and the dumps of one source keep their order: with one source this is
 * arrival order.
 */
#define COREDAM_PIPE_RECENT 16
#define COREDAM_PIPE_NO_UID UINT32_MAX	/* an entry without a uid (an older helper's) */

struct coredam_pipe_entry {
	uint64_t ticket;
	uint32_t uid;
	char state;		/* 'Q' waiting, 'W' writing, 'X' pushed out, leaving */
};

/*
 * Pure: of the live entries @v, with @recent the sources of the last
 * grants, how many write, and how many are ahead of @ticket: those writing
 * plus the waiters whose turn comes before it. A ticket not in @v (a
 * newcomer) has every waiter ahead.
 */
void coredam_pipe_rank(const struct coredam_pipe_entry *v, size_t n, const uint32_t *recent, size_t n_recent,
		       uint64_t ticket, uint32_t *ret_writing, uint32_t *ret_ahead);

/*
 * Pure: a dump of source @uid finds the queue full. The waiter to push out
 * instead of it: the newest waiter of the source that holds the most
 * waiting places, if that is more than @uid's source holds counting the
 * new dump; NULL when the new dump is the one not queued.
 */
const struct coredam_pipe_entry *coredam_pipe_pick_pushed_out(const struct coredam_pipe_entry *v, size_t n,
							      uint32_t uid);

/*
 * Draw a ticket, unless the queue is at its cap: the budget (as
 * coredam_pipe_wait() reads it) has a concurrency and a waiting cap and at
 * least concurrency + waiting tickets are live, and no other source holds
 * more waiting places than @uid's would (then its newest waiter is pushed
 * out and this dump queued). Returns 1 with a ticket and *ret_ahead the
 * live tickets ahead of it (coredam_pipe_rank()); 0 when full, with nothing
 * created and *ret_ahead the live tickets; < 0 on error, with no ticket.
 */
int coredam_pipe_enqueue(struct coredam_pipe_queue *q, pid_t pid, uid_t uid,
			 const struct coredam_pipe_budget *fallback, uint32_t *ret_ahead);

/* Live tickets: writing and waiting, from their state letters. */
int coredam_pipe_queue_count(const char *state_dir, uint32_t *ret_writing, uint32_t *ret_waiting);

enum coredam_pipe_wait_result {
	COREDAM_PIPE_ADMIT,
	COREDAM_PIPE_FULL,		/* from coredam_pipe_enqueue() returning 0 */
	COREDAM_PIPE_TIMEOUT,
	COREDAM_PIPE_INTERRUPTED,
	COREDAM_PIPE_PUSHED_OUT,	/* a dump of a source with fewer places took ours */
};

/*
 * Wait for a slot, in ticket order within each source and fairly across
 * sources (coredam_pipe_rank()); an admitted ticket is marked writing
 * under the queue's lock. The budget is read again on every
 * wake-up (from <state>/pipe/budget if present, else @fallback). @stop_fd
 * (-1 for none) readable ends the wait with COREDAM_PIPE_INTERRUPTED (a
 * signalfd in the helper). @ret_waited_usec is set in every outcome.
 * The first `concurrency` waiters sleep on an inotify watch; the others,
 * and any waiter inotify refuses, count again every COREDAM_PIPE_POLL_MSEC.
 * < 0 means the queue could not be read: the caller has no slot.
 */
#define COREDAM_PIPE_POLL_MSEC 200
int coredam_pipe_wait(struct coredam_pipe_queue *q, const struct coredam_pipe_budget *fallback, int stop_fd,
		      enum coredam_pipe_wait_result *ret, uint64_t *ret_waited_usec);

/*
 * inotify_init1(), a seam for tests: replaced by a function failing with
 * EMFILE it stands for root's inotify instances used up.
 */
extern int (*coredam_pipe_inotify_init1)(int flags);

/* Mark our ticket as writing. */
int coredam_pipe_mark_writing(struct coredam_pipe_queue *q);

/* Give the slot (or the place in the queue) back; safe to call twice. */
void coredam_pipe_release(struct coredam_pipe_queue *q);

/* ---- the writer ---- */

struct coredam_pipe_copy_opts {
	uint64_t window;	/* write-behind window in bytes; 0 = none (plain buffered writes) */
	uint64_t limit;		/* stop after this many input bytes; UINT64_MAX = none */
	int compress_level;	/* 0 = store as is (sparse), > 0 = zstd at this level */
	void *head;		/* NULL, or keep the input's ELF headers here (see elfcore.h) */
	size_t head_size;	/* room at @head, at most what is kept */
	uint64_t deadline_usec;	/* CLOCK_MONOTONIC: read no more once it has passed; 0 = none */
	int space_fd;		/* with @space_floor: a file on the destination's file system */
	uint64_t space_floor;	/* stop once its free space (f_bavail) is below this; 0 = never */
};

struct coredam_pipe_copy_result {
	uint64_t in_bytes;	/* read from the input (up to the limit) */
	uint64_t out_bytes;	/* file size written */
	bool truncated;		/* input had more than the limit, or was cut at the deadline */
	bool timed_out;		/* cut at the deadline */
	bool no_space;		/* cut at the free-space floor */
	size_t head_len;	/* bytes kept at opts.head */
};

/*
 * Copy @infd to @outfd (a new regular file at offset 0). Uncompressed,
 * whole zero pages become holes. At most about two windows of the file are
 * dirty or under writeback at any time: writeback of each full window is
 * started with sync_file_range(SYNC_FILE_RANGE_WRITE), then the previous
 * window is waited for and dropped from the page cache. The file is
 * fdatasync()ed at the end. With @o->head, the start of the input is kept
 * there as far as coredam_elf_head_want() asks, for coredam_elf_core_size().
 * With @o->deadline_usec, the input is read (polled) no longer: what came
 * by then is kept, and the copy is truncated and timed out; the kernel, its
 * pipe closed when the helper exits, ends the dump. With @o->space_floor,
 * the free space of @o->space_fd's file system is checked before every
 * COREDAM_PIPE_SPACE_EVERY bytes: below the floor the copy stops,
 * truncated and out of space.
 */
#define COREDAM_PIPE_SPACE_EVERY (16ULL << 20)
int coredam_pipe_copy(int infd, int outfd, const struct coredam_pipe_copy_opts *o,
		      struct coredam_pipe_copy_result *ret);

/* zstd stream @infd -> @outfd; returns the decompressed size in *ret_bytes. */
int coredam_pipe_decompress(int infd, int outfd, uint64_t *ret_bytes);

/*
 * Read the zstd stream on @fd to its end without storing it: its
 * decompressed length, and its first @head_size bytes in @head (how many in
 * *@ret_head_len). -EBADMSG when the stream is not zstd or ends inside a
 * frame (a compressed core cut short).
 */
int coredam_zstd_scan(int fd, void *head, size_t head_size, size_t *ret_head_len, uint64_t *ret_bytes);

#endif
