// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredam-pipe: the core_pattern pipe helper for kernels without the
 * coredam patches. The kernel starts it as root, with an empty environment,
 * the core on stdin:
 *
 *   |/usr/libexec/coredam/coredam-pipe DIR %P %u %g %s %t %c %d %e
 *
 * It joins the dump cgroup, waits for a write slot in arrival order, writes
 * the core into DIR with a bounded write-behind window and records
 * metadata beside it. See coredam-pipe(8) and docs/pipe-helper.md.
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <syslog.h>
#include <time.h>

#include "cgroup.h"
#include "config.h"
#include "elfcore.h"
#include "meta.h"
#include "pipe-args.h"
#include "pipe-dest.h"
#include "pipe-state.h"
#include "pipe-queue.h"
#include "pipe-writer.h"
#include "roots.h"
#include "sandbox.h"
#include "space.h"
#include "macro.h"
#include "string-util.h"
#include "path-util.h"
#include "time-util.h"

/* Exit codes, documented in coredam-pipe(8). */
enum {
	EXIT_STORED = 0,
	EXIT_FAILED = 1,	/* admitted, the write failed (partial file removed), or the kernel's stream
				   ended before the core's headers said: kept as .incomplete */
	EXIT_USAGE = 2,
	EXIT_DROPPED = 3,	/* queue full or unusable, wait timeout, stopped while waiting, or not confined */
	EXIT_RLIMIT = 4,	/* RLIMIT_CORE of the crashed process disables dumping */
	EXIT_DEST = 5,		/* the destination directory failed its checks */
	EXIT_SPACE = 6,		/* the destination below its free-space floor on arrival */
};

static bool log_stderr;

/*
 * /dev/kmsg, opened once: the kernel rate-limits what one open file writes
 * there, so a storm of helpers each logging many lines cannot flood the
 * log through fresh opens. -1 when it cannot be opened.
 */
static int kmsg_fd = -2;

/* Open the log before the sandbox: inside it every mount is nodev. */
static void log_open(void)
{
	if (kmsg_fd == -2)
		kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
}

static void logmsg(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logmsg(int prio, const char *fmt, ...)
{
	char msg[1024], line[1200];
	va_list ap;
	int n;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* /dev/kmsg: the kernel log is there from the first second of boot and lands in dmesg and the journal */
	n = snprintf(line, sizeof(line), "<%d>coredam-pipe[%d]: %s\n", LOG_DAEMON | prio, (int)getpid(), msg);
	if (n > 0 && (size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	log_open();
	if (kmsg_fd >= 0 && write(kmsg_fd, line, (size_t)n) < 0) {
		/* nothing else to tell it to */
	}
	if (log_stderr || kmsg_fd < 0)
		fprintf(stderr, "coredam-pipe: %s\n", msg);
}

static void help(FILE *f)
{
	fprintf(f,
		"Usage: coredam-pipe [OPTIONS] DIR PID UID GID SIGNAL TIME [RLIMIT DUMPABLE [COMM]]\n"
		"       coredam-pipe --decompress < CORE.zst > CORE\n"
		"       coredam-pipe --check DIR\n"
		"Write a core from stdin into DIR, throttled and queued (kernel.core_pattern helper):\n"
		"  |/usr/libexec/coredam/coredam-pipe DIR %s\n\n"
		"  -c, --config=FILE      configuration file (default /etc/coredam/coredam.conf)\n"
		"      --config-dir=DIR   drop-in directory (default FILE's directory/coredam.conf.d)\n"
		"      --state-dir=DIR    runtime state (default /run/coredam)\n"
		"      --proc-root=DIR    procfs (default /proc)\n"
		"      --cgroup-root=DIR  cgroup v2 mount (default: from /proc/self/mountinfo)\n"
		"      --decompress       zstd stdin to stdout (cores stored with Compress=yes)\n"
		"      --check            check DIR as a destination and exit\n"
		"  -h, --help             this help\n"
		"      --version          version\n\n"
		"Exit codes: 0 stored, 1 write failed or core cut short (kept as .incomplete), 2 usage,\n"
		"3 dropped (queue full or unusable, wait timeout, stopped, not confined), 4 RLIMIT_CORE\n"
		"disables dumping, 5 destination failed its checks, 6 destination below its free-space floor.\n",
		COREDAM_PIPE_SPECIFIERS);
}

/* The kernel starts helpers with only stdin open: keep fds 1 and 2 from being reused by a core file. */
static void sanitize_fds(void)
{
	for (int fd = 1; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		int n = open("/dev/null", O_RDWR | O_NOCTTY);

		if (n >= 0 && n != fd) {
			dup2(n, fd);
			close(n);
		}
	}
}

static void count(const char *state, int what, uint64_t n)
{
	struct coredam_pipe_stats d = { 0 };
	int r;

	d.v[what] = n;
	r = coredam_pipe_stats_add(state, &d);
	if (r < 0)
		logmsg(LOG_WARNING, "cannot update the counters in %s/pipe/stats: %s", state, strerror(-r));
}

struct outcome {
	int what[4];
	size_t n;
	uint64_t bytes, disk;
};

static void count_outcome(const char *state, const struct outcome *o)
{
	struct coredam_pipe_stats d = { 0 };
	int r;

	for (size_t i = 0; i < o->n; i++)
		d.v[o->what[i]]++;
	d.v[COREDAM_PIPE_BYTES] = o->bytes;
	d.v[COREDAM_PIPE_BYTES_DISK] = o->disk;
	r = coredam_pipe_stats_add(state, &d);
	if (r < 0)
		logmsg(LOG_WARNING, "cannot update the counters in %s/pipe/stats: %s", state, strerror(-r));
}

static int join_cgroup(const struct coredam_roots *roots, const char *cg, char *why, size_t whysize)
{
	_cleanup_close_ int rootfd = -1, cgfd = -1;
	char mnt[PATH_MAX];
	int r;

	if (roots->cgroup) {
		snprintf(mnt, sizeof(mnt), "%s", roots->cgroup);
	} else {
		r = coredam_cg2_mount(roots->proc, mnt, sizeof(mnt));
		if (r < 0)
			return snprintf(why, whysize, "no cgroup2 mount in %s/self/mountinfo", roots->proc), r;
	}
	r = open_dir_at(AT_FDCWD, mnt, &rootfd);
	if (r < 0)
		return snprintf(why, whysize, "%s: %s", mnt, strerror(-r)), r;
	r = coredam_cg_open(rootfd, cg, false, &cgfd);
	if (r < 0)
		return snprintf(why, whysize, "%s%s: %s (coredamd creates it)", mnt, cg, strerror(-r)), r;
	r = coredam_cg_attach(cgfd, getpid());
	if (r < 0)
		return snprintf(why, whysize, "%s%s/cgroup.procs: %s", mnt, cg, strerror(-r)), r;
	return 0;
}

static int do_decompress(void)
{
	uint64_t n = 0;
	int r;

	r = coredam_pipe_decompress(STDIN_FILENO, STDOUT_FILENO, &n);
	if (r < 0) {
		fprintf(stderr, "coredam-pipe: decompress: %s\n",
			r == -EBADMSG ? "not a complete zstd stream" : strerror(-r));
		return EXIT_FAILED;
	}
	return EXIT_STORED;
}

static int do_check(const char *dir)
{
	_cleanup_close_ int fd = -1;
	char why[PATH_MAX + 128];
	int r;

	r = coredam_pipe_open_dest(dir, 0, why, sizeof(why), &fd);
	if (r < 0) {
		fprintf(stderr, "coredam-pipe: destination %s refused: %s\n", dir, why);
		return EXIT_DEST;
	}
	printf("destination %s: ok\n", dir);
	return EXIT_STORED;
}

static int setup_stop_fd(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	return signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
}

/*
 * A core the kernel stopped sending before its program headers' data was
 * all there: the crashed process was killed (SIGKILL, the OOM killer)
 * while it dumped. A pipe core has no holes, so a complete one is at least
 * as long as its headers say. A core cut at RLIMIT_CORE is not this: the
 * helper stopped reading it. Without readable headers nothing is claimed.
 */
static bool cut_short(const struct coredam_pipe_copy_opts *o, const struct coredam_pipe_copy_result *res,
		      uint64_t *ret_expected)
{
	uint64_t expected;

	if (!o->head || res->truncated || coredam_elf_core_size(o->head, res->head_len, &expected) < 0)
		return false;
	*ret_expected = expected;
	return res->in_bytes < expected;
}

/*
 * Let the crashed user read its core, by a POSIX ACL, when
 * coredam_pipe_user_may_read() says so from the notes kept at @head. The
 * file stays root's and 0640 whatever happens here: a file system without
 * ACLs leaves the core to root (logged), never to the user.
 */
static void grant_read(const struct coredam_pipe_args *a, int fd, const void *head, size_t head_len)
{
	struct coredam_core_creds c;
	unsigned char acl[COREDAM_ACL_USER_READ_SIZE];
	size_t n;

	if (!head || coredam_elf_core_creds(head, head_len, &c) < 0 || !coredam_pipe_user_may_read(a, &c))
		return;
	n = coredam_acl_user_read(a->uid, acl);
	if (fsetxattr(fd, "system.posix_acl_access", acl, n, 0) < 0)
		logmsg(LOG_WARNING, "core of pid %d: uid %u may not read it: no ACL on %s (%m); root's only",
		       (int)a->pid, (unsigned int)a->uid, a->dir);
}

/*
 * Store the core: temporary file, copy, final mode, rename into place,
 * metadata. *ret_expected is set, and the core stored as .incomplete, when
 * the stream ended before its ELF headers said it would.
 */
static int store(const struct coredam_config *cfg, const struct coredam_pipe_args *a, int dirfd,
		 uint64_t space_floor, struct coredam_core_meta *m, char *final, size_t finalsize,
		 struct coredam_pipe_copy_result *res, uint64_t *ret_expected)
{
	_cleanup_free_ void *head = malloc(COREDAM_ELF_KEEP_MAX);	/* pages touched only as headers arrive */
	struct coredam_pipe_copy_opts o = {
		.window = cfg->writeback_window,
		.limit = MIN(m->rlimit, cfg->pipe_size_max ? cfg->pipe_size_max : UINT64_MAX),
		.deadline_usec = cfg->pipe_time_max_usec ? now_usec(CLOCK_MONOTONIC) + cfg->pipe_time_max_usec : 0,
		.compress_level = cfg->pipe_compress ? (int)cfg->pipe_compress_level : 0,
		.head = head,
		.head_size = head ? COREDAM_ELF_KEEP_MAX : 0,
		.space_fd = dirfd,
		.space_floor = space_floor,
	};
	struct coredam_pipe_files files;
	_cleanup_close_ int fd = -1;
	bool incomplete;
	char name[NAME_MAX + 1], tmp[NAME_MAX + 1], meta[16384], mname[NAME_MAX + 1];
	uint64_t t0;
	int r;

	coredam_pipe_files(a, &files);
	r = coredam_pipe_core_name(a, cfg->pipe_compress, name, sizeof(name));
	if (r < 0)
		return r;
	r = xsnprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	if (r < 0)
		return r;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0) {
		r = -errno;
		logmsg(LOG_ERR, "core of pid %d: cannot create %s/%s: %s", (int)a->pid, a->dir, tmp, strerror(-r));
		return r;
	}
	t0 = now_usec(CLOCK_MONOTONIC);
	r = coredam_pipe_copy(STDIN_FILENO, fd, &o, res);
	if (r < 0) {
		logmsg(LOG_ERR, "core of pid %d: writing %s/%s failed: %s; partial file removed", (int)a->pid, a->dir,
		       tmp, strerror(-r));
		goto out_unlink;
	}
	m->write_ms = (now_usec(CLOCK_MONOTONIC) - t0) / 1000;
	if (res->in_bytes == 0) {
		r = -ENODATA;
		logmsg(LOG_ERR, "core of pid %d: the kernel sent no data (dump interrupted?)", (int)a->pid);
		goto out_unlink;
	}
	/*
	 * Root's, 0640 for an ordinary process, 0400 for suid_dumpable=2 and
	 * when core_pattern does not say (no %d); the crashed user may read
	 * it only if the core's own notes say it ran as that user throughout.
	 */
	if (fchmod(fd, files.core_mode) < 0) {
		r = -errno;
		goto out_unlink;
	}
	grant_read(a, fd, head, res->head_len);
	incomplete = res->truncated || cut_short(&o, res, ret_expected);
	for (int i = 0;; i++) {
		if (i == 0)
			r = xsnprintf(final, finalsize, "%s%s", name, incomplete ? ".incomplete" : "");
		else
			r = xsnprintf(final, finalsize, "%s.%d%s", name, i, incomplete ? ".incomplete" : "");
		if (r < 0)
			goto out_unlink;
		if (renameat2(dirfd, tmp, dirfd, final, RENAME_NOREPLACE) == 0)
			break;
		if (errno != EEXIST || i >= 9) {
			r = -errno;
			logmsg(LOG_ERR, "core of pid %d: cannot rename into %s/%s: %s", (int)a->pid, a->dir, final,
			       strerror(-r));
			goto out_unlink;
		}
	}
	m->core = final;
	m->size = res->in_bytes;
	m->disk_size = res->out_bytes;
	m->truncated = incomplete;
	m->done_usec = now_usec(CLOCK_MONOTONIC);
	r = coredam_meta_format(m, meta, sizeof(meta));
	if (r >= 0)
		r = xsnprintf(mname, sizeof(mname), "%s.json", final);
	if (r >= 0)
		r = coredam_meta_write_at(dirfd, mname, meta, files.meta_mode);
	if (r < 0)
		logmsg(LOG_WARNING, "core of pid %d: metadata %s/%s.json not written: %s", (int)a->pid, a->dir, final,
		       strerror(-r));
	if (fsync(dirfd) < 0)
		logmsg(LOG_WARNING, "fsync(%s): %m", a->dir);
	return 0;

out_unlink:
	unlinkat(dirfd, tmp, 0);
	return r;
}

int main(int argc, char **argv)
{
	enum { OPT_CONFIG_DIR = 256, OPT_STATE, OPT_PROC, OPT_CG, OPT_DECOMPRESS, OPT_CHECK, OPT_VERSION };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "config-dir", required_argument, NULL, OPT_CONFIG_DIR },
		{ "state-dir", required_argument, NULL, OPT_STATE },
		{ "proc-root", required_argument, NULL, OPT_PROC },
		{ "cgroup-root", required_argument, NULL, OPT_CG },
		{ "decompress", no_argument, NULL, OPT_DECOMPRESS },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{}
	};
	struct coredam_roots roots = COREDAM_ROOTS_DEFAULT;
	struct coredam_pipe_queue q = COREDAM_PIPE_QUEUE_INIT;
	struct coredam_pipe_args a;
	struct coredam_config cfg;
	struct coredam_config_error e;
	struct coredam_pipe_budget fallback;
	struct coredam_space space = { 0 };
	struct coredam_core_meta m = { 0 };
	struct coredam_pipe_copy_result res = { 0 };
	struct outcome out = { 0 };
	enum coredam_pipe_wait_result wr = COREDAM_PIPE_ADMIT;
	char config[PATH_MAX] = "", dropins[PATH_MAX] = "", why[PATH_MAX + 256], cg[PATH_MAX] = "";
	char final[NAME_MAX + 1] = "";
	const char *config_dir = NULL;
	bool decompress = false, check = false;
	_cleanup_close_ int dirfd = -1;
	int c, r, stop_fd, ret;
	uint32_t ahead = 0;
	uint64_t waited = 0, expected = 0;

	log_stderr = fcntl(STDERR_FILENO, F_GETFD) >= 0 && isatty(STDERR_FILENO);
	sanitize_fds();
	umask(0077);
	roots.cgroup = NULL;	/* found in mountinfo unless given */

	while ((c = getopt_long(argc, argv, "+c:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			snprintf(config, sizeof(config), "%s", optarg);
			break;
		case OPT_CONFIG_DIR:
			config_dir = optarg;
			break;
		case OPT_STATE:
			roots.state = optarg;
			break;
		case OPT_PROC:
			roots.proc = optarg;
			break;
		case OPT_CG:
			roots.cgroup = optarg;
			break;
		case OPT_DECOMPRESS:
			decompress = true;
			break;
		case OPT_CHECK:
			check = true;
			break;
		case 'h':
			help(stdout);
			return EXIT_STORED;
		case OPT_VERSION:
			printf("coredam-pipe %s\n", COREDAM_VERSION);
			return EXIT_STORED;
		default:
			help(stderr);
			return EXIT_USAGE;
		}
	}
	if (decompress)
		return optind == argc ? do_decompress() : (help(stderr), EXIT_USAGE);
	if (check)
		return optind + 1 == argc ? do_check(argv[optind]) : (help(stderr), EXIT_USAGE);

	r = coredam_pipe_args_parse(argc - optind, argv + optind, &a);
	if (r < 0) {
		logmsg(LOG_ERR, "bad arguments (expected DIR %s): core not stored", COREDAM_PIPE_SPECIFIERS);
		if (isatty(STDERR_FILENO))
			help(stderr);
		return EXIT_USAGE;
	}
	if (a.dumpable == COREDAM_DUMPABLE_UNKNOWN)
		logmsg(LOG_WARNING, "core of pid %d: core_pattern passes no %%d, so a setuid process cannot be told "
		       "apart: the core is kept root's, mode 0400 (add %%d after %%c)", (int)a.pid);
	m = (struct coredam_core_meta){
		.pid = a.pid, .uid = a.uid, .gid = a.gid, .signal = a.signal, .time = a.time, .comm = a.comm,
		.dumpable = a.dumpable, .arrived_usec = now_usec(CLOCK_MONOTONIC), .cgroup = cg,
		.compression = "none",
	};

	/* configuration: a broken file must not cost the core, so defaults then */
	if (!config[0])
		snprintf(config, sizeof(config), "%s/coredam.conf", roots.conf);
	if (config_dir)
		snprintf(dropins, sizeof(dropins), "%s", config_dir);
	else
		coredam_config_dropin_dir(config, dropins, sizeof(dropins));
	r = coredam_config_load(config, dropins, &cfg, &e);
	if (r < 0) {
		logmsg(LOG_WARNING, "%s:%d: %s; using the defaults", e.file, e.line, e.msg);
		coredam_config_init(&cfg);
	}
	if (cfg.pipe_compress)
		m.compression = "zstd";
	count(roots.state, COREDAM_PIPE_STARTED, 1);

	/* 1. into the dump cgroup before the first byte is read */
	r = join_cgroup(&roots, cfg.cgroup, why, sizeof(why));
	if (r < 0) {
		logmsg(LOG_WARNING, "core of pid %d: not moved into the dump cgroup (%s): written unthrottled",
		       (int)a.pid, why);
		out.what[out.n++] = COREDAM_PIPE_UNCHARGED;
	}
	if (coredam_cg_of_pid(roots.proc, getpid(), cg, sizeof(cg)) < 0)
		snprintf(cg, sizeof(cg), "?");

	/* 2. RLIMIT_CORE of the crashed process: the kernel leaves it to pipe helpers */
	m.rlimit = a.rlimit;
	if (!a.have_rlimit && coredam_pipe_read_rlimit(roots.proc, a.pid, &m.rlimit) < 0)
		m.rlimit = UINT64_MAX;
	if (m.rlimit < 4096) {
		logmsg(LOG_INFO, "core of pid %d not stored: its RLIMIT_CORE is %" PRIu64 " bytes (dumping disabled)",
		       (int)a.pid, m.rlimit);
		out.what[out.n++] = COREDAM_PIPE_SKIPPED_RLIMIT;
		count_outcome(roots.state, &out);
		return EXIT_RLIMIT;
	}

	/* 3. the destination, component by component */
	r = coredam_pipe_open_dest(a.dir, 0, why, sizeof(why), &dirfd);
	if (r < 0) {
		logmsg(LOG_ERR, "core of pid %d dropped: destination %s refused: %s", (int)a.pid, a.dir, why);
		out.what[out.n++] = COREDAM_PIPE_SKIPPED_ERROR;
		count_outcome(roots.state, &out);
		return EXIT_DEST;
	}

	/*
	 * 3b. room on it: the helper writes as root, so without this check it
	 * would eat the root reservation. Below the floor the core is not
	 * stored at all; the writer checks again as it writes.
	 */
	r = coredam_space_check_fd(&cfg, dirfd, &space);
	if (r < 0 || space.below) {
		if (r < 0)
			logmsg(LOG_ERR, "core of pid %d dropped: free space of %s unknown: %s", (int)a.pid, a.dir,
			       strerror(-r));
		else
			logmsg(LOG_WARNING,
			       "core of pid %d (uid %u, signal %d) dropped: %s has %" PRIu64 " MiB free, below its floor of %" PRIu64 " MiB ([Space] FreeSpaceFloor=)",
			       (int)a.pid, (unsigned)a.uid, a.signal, a.dir, space.free_bytes >> 20,
			       space.floor_bytes >> 20);
		out.what[out.n++] = r < 0 ? COREDAM_PIPE_SKIPPED_ERROR : COREDAM_PIPE_SKIPPED_SPACE;
		count_outcome(roots.state, &out);
		return r < 0 ? EXIT_DEST : EXIT_SPACE;
	}

	/* 4. a slot, in arrival order */
	fallback = (struct coredam_pipe_budget){
		.concurrency = cfg.concurrency,
		.waiting = cfg.queue_cap,
		.timeout_ms = (uint32_t)MIN((cfg.wait_timeout_usec + 999) / 1000, (uint64_t)UINT32_MAX),
	};
	stop_fd = setup_stop_fd();
	r = coredam_pipe_queue_open(roots.state, &q);

	/*
	 * 4a. confined before the first byte is read: from here on the helper
	 * writes only through what it has opened and the state directory, with
	 * no capability and a short list of system calls. Fails closed.
	 */
	if (r >= 0 && cfg.pipe_sandbox) {
		log_open();
		r = coredam_sandbox_enter(roots.state, why, sizeof(why));
		if (r < 0) {
			logmsg(LOG_ERR,
			       "core of pid %d (uid %u, signal %d) dropped: cannot confine the helper: %s ([Pipe] Sandbox=no stores cores unconfined)",
			       (int)a.pid, (unsigned)a.uid, a.signal, why);
			out.what[out.n++] = COREDAM_PIPE_SKIPPED_ERROR;
			count_outcome(roots.state, &out);
			coredam_pipe_release(&q);
			return EXIT_DROPPED;
		}
	}
	if (r >= 0)
		r = coredam_pipe_enqueue(&q, a.pid, a.uid, &fallback, &ahead);
	if (r > 0) {
		m.ticket = q.ticket;
		r = coredam_pipe_wait(&q, &fallback, stop_fd, &wr, &waited);
	} else if (r == 0) {
		wr = COREDAM_PIPE_FULL;
	}
	if (r < 0) {
		/* no slot, no write: a dump let past the queue breaks the budget for every other */
		logmsg(LOG_ERR, "core of pid %d (uid %u, signal %d) dropped: the queue in %s/pipe is unusable: %s",
		       (int)a.pid, (unsigned)a.uid, a.signal, roots.state, strerror(-r));
		out.what[out.n++] = COREDAM_PIPE_SKIPPED_ERROR;
		count_outcome(roots.state, &out);
		coredam_pipe_release(&q);
		return EXIT_DROPPED;
	}
	m.waited_ms = waited / 1000;
	if (wr != COREDAM_PIPE_ADMIT) {
		struct coredam_pipe_budget b;
		bool agent = coredam_pipe_budget_read(roots.state, &b) == 0;

		if (!agent)
			b = fallback;
		if (wr == COREDAM_PIPE_FULL)
			logmsg(LOG_WARNING,
			       "core of pid %d (uid %u, signal %d) dropped: queue full, %u dumps ahead with %u writing and at most %u waiting (%s)",
			       (int)a.pid, (unsigned)a.uid, a.signal, ahead, b.concurrency, b.waiting,
			       agent ? "budget from coredamd" : "coredamd not running: budget from the configuration");
		else if (wr == COREDAM_PIPE_TIMEOUT)
			logmsg(LOG_WARNING,
			       "core of pid %d (uid %u, signal %d) dropped: no write slot within %u ms (%u at once, ticket %" PRIu64 "; %s)",
			       (int)a.pid, (unsigned)a.uid, a.signal, b.timeout_ms, b.concurrency, q.ticket,
			       agent ? "budget from coredamd" : "coredamd not running: budget from the configuration");
		else if (wr == COREDAM_PIPE_PUSHED_OUT)
			logmsg(LOG_WARNING,
			       "core of pid %d (uid %u, signal %d) dropped: the queue was full and uid %u held more of its waiting places than any other user; a dump of another user took this one's after %" PRIu64 " ms",
			       (int)a.pid, (unsigned)a.uid, a.signal, (unsigned)a.uid, m.waited_ms);
		else
			logmsg(LOG_WARNING, "core of pid %d dropped: stopped by a signal after waiting %" PRIu64 " ms",
			       (int)a.pid, m.waited_ms);
		out.what[out.n++] = wr == COREDAM_PIPE_FULL || wr == COREDAM_PIPE_PUSHED_OUT ? COREDAM_PIPE_SKIPPED_FULL
				    : wr == COREDAM_PIPE_TIMEOUT ? COREDAM_PIPE_SKIPPED_TIMEOUT
								 : COREDAM_PIPE_SKIPPED_KILLED;
		count_outcome(roots.state, &out);
		coredam_pipe_release(&q);
		return EXIT_DROPPED;
	}
	(void)coredam_pipe_mark_writing(&q);	/* only the gauges read the letter; the ticket holds the slot */
	m.admitted_usec = now_usec(CLOCK_MONOTONIC);
	count(roots.state, COREDAM_PIPE_ADMITTED, 1);

	/* 5. write, rename into place, metadata */
	r = store(&cfg, &a, dirfd, space.floor_bytes, &m, final, sizeof(final), &res, &expected);
	coredam_pipe_release(&q);
	out.bytes = res.in_bytes;
	if (r < 0) {
		out.what[out.n++] = COREDAM_PIPE_FAILED;
		ret = EXIT_FAILED;
	} else if (res.in_bytes < expected) {
		/* kept for what it holds, but no complete core: failed, never completed */
		out.what[out.n++] = COREDAM_PIPE_FAILED;
		out.disk = res.out_bytes;
		logmsg(LOG_ERR,
		       "core of pid %d (uid %u, signal %d) cut short: the kernel sent %" PRIu64 " of the %" PRIu64 " bytes its ELF headers declare (process killed while dumping?); kept as %s/%s",
		       (int)a.pid, (unsigned)a.uid, a.signal, res.in_bytes, expected, a.dir, final);
		ret = EXIT_FAILED;
	} else {
		out.what[out.n++] = COREDAM_PIPE_COMPLETED;
		if (res.truncated)
			out.what[out.n++] = COREDAM_PIPE_TRUNCATED;
		out.disk = res.out_bytes;
		logmsg(res.truncated && m.rlimit > res.in_bytes ? LOG_WARNING : LOG_INFO,
		       "core of pid %d (uid %u, signal %d) stored as %s/%s: %" PRIu64 " bytes%s, %" PRIu64 " on disk, waited %" PRIu64 " ms, wrote in %" PRIu64 " ms",
		       (int)a.pid, (unsigned)a.uid, a.signal, a.dir, final, res.in_bytes,
		       !res.truncated ? "" : res.timed_out ? " (cut at [Pipe] CoreTimeMax=)"
				  : res.no_space ? " (cut at the free-space floor, [Space] FreeSpaceFloor=)"
				  : m.rlimit > res.in_bytes ? " (cut at [Pipe] CoreSizeMax=)" : " (cut at RLIMIT_CORE)",
		       res.out_bytes, m.waited_ms, m.write_ms);
		ret = EXIT_STORED;
	}
	count_outcome(roots.state, &out);
	return ret;
}
