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
#include <syslog.h>
#include <time.h>

#include "cgroup.h"
#include "config.h"
#include "core-journal.h"
#include "core-store.h"
#include "elfcore.h"
#include "escape.h"
#include "log.h"
#include "meta.h"
#include "pipe-args.h"
#include "pipe-dest.h"
#include "pipe-outcome.h"
#include "pipe-state.h"
#include "pipe-queue.h"
#include "pipe-writer.h"
#include "repeats.h"
#include "retention.h"
#include "roots.h"
#include "sandbox.h"
#include "sched-util.h"
#include "space.h"
#include "macro.h"
#include "string-util.h"
#include "path-util.h"
#include "time-util.h"

static void help(FILE *f)
{
	fprintf(f,
		"Usage: coredam-pipe [OPTIONS] DIR PID UID GID SIGNAL TIME [RLIMIT DUMPABLE [COMM]]\n"
		"       coredam-pipe --decompress < CORE.zst > CORE\n"
		"       coredam-pipe --check DIR\n"
		"Write a core from stdin into DIR, throttled and queued (kernel.core_pattern helper):\n"
		"  |" COREDAM_PIPE_PROGRAM " DIR %s\n\n"
		"  -c, --config=FILE      configuration file (default " COREDAM_CONF_FILE ")\n"
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
		log_full(LOG_WARNING, "cannot update the counters in %s/pipe/stats: %s", state, strerror(-r));
}

static void count_outcome(const char *state, const struct coredam_pipe_outcome *o)
{
	struct coredam_pipe_stats d;
	int r;

	coredam_pipe_outcome_delta(o, &d);
	r = coredam_pipe_stats_add(state, &d);
	if (r < 0)
		log_full(LOG_WARNING, "cannot update the counters in %s/pipe/stats: %s", state, strerror(-r));
}

static int join_cgroup(const struct coredam_roots *roots, const struct coredam_config *cfg,
		       struct coredam_error *reterr)
{
	_cleanup_close_ int rootfd = -1, cgfd = -1;
	char mnt[PATH_MAX], cg[PATH_MAX];
	struct stat st;
	int r;

	/* the leaf coredamd makes for dumping processes: under systemd Path has children */
	r = coredam_cg_leaf_path(cfg->cgroup, cfg->kernel_leaf,
				 lstat("/run/systemd/system", &st) == 0 && S_ISDIR(st.st_mode), cg, sizeof(cg));
	if (r < 0)
		return coredam_error_set(reterr, r, "[Cgroup] Path=%s KernelLeaf=%s: too long", cfg->cgroup,
					 cfg->kernel_leaf);

	if (roots->cgroup) {
		snprintf(mnt, sizeof(mnt), "%s", roots->cgroup);
	} else {
		r = coredam_cg2_mount(roots->proc, mnt, sizeof(mnt));
		if (r < 0)
			return coredam_error_set(reterr, r,
						 "no cgroup2 mount in %s/self/mountinfo", roots->proc);
	}
	r = open_dir_at(AT_FDCWD, mnt, &rootfd);
	if (r < 0)
		return coredam_error_set(reterr, r, "%s: %s", mnt, strerror(-r));
	r = coredam_cg_open(rootfd, cg, false, &cgfd);
	if (r == -ENOENT && strcmp(cg, cfg->cgroup) != 0) {
		/* no leaf (coredamd makes it): Path itself, which may take a process */
		snprintf(cg, sizeof(cg), "%s", cfg->cgroup);
		r = coredam_cg_open(rootfd, cg, false, &cgfd);
	}
	if (r < 0)
		return coredam_error_set(reterr, r, "%s%s: %s (coredamd creates it)", mnt, cg, strerror(-r));
	r = coredam_cg_attach(cgfd, getpid());
	if (r < 0)
		return coredam_error_set(reterr, r, "%s%s/cgroup.procs: %s", mnt, cg, strerror(-r));
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
		return COREDAM_PIPE_EXIT_FAILED;
	}
	return COREDAM_PIPE_EXIT_STORED;
}

static int do_check(const char *dir)
{
	_cleanup_close_ int fd = -1;
	struct coredam_error e;
	int r;

	r = coredam_pipe_open_dest(dir, 0, &fd, &e);
	if (r < 0) {
		fprintf(stderr, "coredam-pipe: destination %s refused: %s\n", dir, e.msg);
		return COREDAM_PIPE_EXIT_DEST;
	}
	printf("destination %s: ok\n", dir);
	return COREDAM_PIPE_EXIT_STORED;
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
 * Store the core from stdin (core-store.h): the failure, or what went
 * wrong short of losing it, logged once.
 */
static int store(const struct coredam_config *cfg, const struct coredam_pipe_args *a, int dirfd,
		 uint64_t space_floor, const void *prefix, size_t prefix_len, struct coredam_core_meta *m,
		 struct coredam_core_stored *ret)
{
	struct coredam_error e = {};
	int r;

	r = coredam_core_store(STDIN_FILENO, prefix, prefix_len, cfg, a, dirfd, space_floor, m, ret, &e);
	if (r < 0)
		log_full(LOG_ERR, "core of pid %d: %s", (int)a->pid, e.msg);
	if (ret->warn[0])
		log_full(LOG_WARNING, "core of pid %d: %s", (int)a->pid, ret->warn);
	return r;
}

/* One crash, from the kernel's arguments to the helper's exit status. */
struct helper {
	struct coredam_roots roots;
	struct coredam_config cfg;
	struct coredam_pipe_args a;
	struct coredam_pipe_queue q;
	struct coredam_pipe_budget fallback;	/* the configuration's, when coredamd publishes none */
	struct coredam_space space;
	struct coredam_core_meta m;
	struct coredam_pipe_outcome out;
	char config[PATH_MAX];
	const char *config_dir;
	char cg[PATH_MAX];
	void *pre;		/* the core's start, read to tell a repeat ([Repeats]) */
	size_t pre_len;
	struct coredam_repeat_entry rep;	/* its signature's counts, when checked */
	bool have_rep;
	int dirfd;
	bool decompress, check;
	bool config_failed;	/* storing with the defaults: nothing is removed by them */
};

static void helper_done(struct helper *h)
{
	coredam_pipe_release(&h->q);
	closep(&h->dirfd);
	freep(&h->pre);
}

/* Count the outcome and return @status; helper_done() gives the queue place back. */
static int finish(struct helper *h, int status)
{
	count_outcome(h->roots.state, &h->out);
	return status;
}

/* The crash is not stored: counted as @what, the helper exits with @status. */
static int drop(struct helper *h, int what, int status)
{
	coredam_pipe_outcome_add(&h->out, what);
	return finish(h, status);
}

/* Options; -1 to go on, else the exit status (--help, --version, a usage error). */
static int parse_options(struct helper *h, int argc, char **argv)
{
	enum { OPT_CONFIG_DIR = 256, OPT_DECOMPRESS, OPT_CHECK, OPT_VERSION };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "config-dir", required_argument, NULL, OPT_CONFIG_DIR },
		{ "state-dir", required_argument, NULL, COREDAM_OPT_STATE_DIR },
		{ "proc-root", required_argument, NULL, COREDAM_OPT_PROC_ROOT },
		{ "cgroup-root", required_argument, NULL, COREDAM_OPT_CGROUP_ROOT },
		{ "decompress", no_argument, NULL, OPT_DECOMPRESS },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "+c:h", opts, NULL)) >= 0) {
		if (coredam_roots_option(&h->roots, c, optarg))
			continue;
		switch (c) {
		case 'c':
			snprintf(h->config, sizeof(h->config), "%s", optarg);
			break;
		case OPT_CONFIG_DIR:
			h->config_dir = optarg;
			break;
		case OPT_DECOMPRESS:
			h->decompress = true;
			break;
		case OPT_CHECK:
			h->check = true;
			break;
		case 'h':
			help(stdout);
			return COREDAM_PIPE_EXIT_STORED;
		case OPT_VERSION:
			printf("coredam-pipe %s\n", COREDAM_VERSION);
			return COREDAM_PIPE_EXIT_STORED;
		default:
			help(stderr);
			return COREDAM_PIPE_EXIT_USAGE;
		}
	}
	return -1;
}

/* The configuration: a broken file must not cost the core, so the defaults then. */
static void load_config(struct helper *h)
{
	struct coredam_error e;
	struct coredam_dropin_dirs dropins;

	if (!h->config[0])
		snprintf(h->config, sizeof(h->config), "%s/coredam.conf", h->roots.conf);
	coredam_config_dropin_dirs(h->config, h->config_dir, &dropins);
	if (coredam_config_load(h->config, dropins.list, &h->cfg, &e) < 0) {
		char buf[sizeof(e.where) + sizeof(e.msg) + 16];

		log_full(LOG_WARNING, "%s; using the defaults (and removing no old core)",
			 coredam_error_str(&e, buf, sizeof(buf)));
		coredam_config_init(&h->cfg);
		h->config_failed = true;
	}
}

/*
 * Once the ticket is taken: into the dump cgroup before the first byte is
 * read, and the crashed process, which writes the core into the pipe, and
 * this helper made background work ([Limits] DumpNice=), whether coredamd
 * runs or not. Not before the ticket: a helper at nice 19 on a busy CPU
 * could take its ticket after one that crashed later (and coredamd makes
 * every process it finds in the dump cgroup background work), and the
 * queue's order is the arrival order. Before the sandbox, while the helper
 * may still change another user's process.
 */
static void settle(struct helper *h)
{
	const struct coredam_pipe_args *a = &h->a;
	struct coredam_error e = {};
	int r;

	r = join_cgroup(&h->roots, &h->cfg, &e);
	if (r < 0) {
		log_full(LOG_WARNING, "core of pid %d: not moved into the dump cgroup (%s): written unthrottled",
		       (int)a->pid, e.msg);
		coredam_pipe_outcome_add(&h->out, COREDAM_PIPE_UNCHARGED);
	}
	if (coredam_cg_of_pid(h->roots.proc, getpid(), h->cg, sizeof(h->cg)) < 0)
		snprintf(h->cg, sizeof(h->cg), "?");
	if (h->cfg.dump_nice == COREDAM_NICE_KEEP)
		return;
	r = coredam_sched_background(h->roots.proc, a->pid, NULL, h->cfg.dump_nice);
	if (r >= 0)
		r = coredam_sched_background(h->roots.proc, getpid(), h->cg, h->cfg.dump_nice);
	if (r < 0)
		log_full(LOG_WARNING, "core of pid %d: not made background work (DumpNice=%d): %s",
			 (int)a->pid, h->cfg.dump_nice, strerror(-r));
}

/*
 * 1-3. Before the queue: the crashed process's RLIMIT_CORE, the
 * destination and its free space. -1 to go on, else the exit status of a
 * crash that is not stored.
 */
static int arrive(struct helper *h)
{
	const struct coredam_pipe_args *a = &h->a;
	struct coredam_error e;
	int r;

	/* 1. RLIMIT_CORE of the crashed process: the kernel leaves it to pipe helpers */
	h->m.rlimit = a->rlimit;
	if (!a->have_rlimit && coredam_pipe_read_rlimit(h->roots.proc, a->pid, &h->m.rlimit) < 0)
		h->m.rlimit = UINT64_MAX;
	if (coredam_pipe_rlimit_disables(h->m.rlimit)) {
		log_full(LOG_INFO, "core of pid %d not stored: its RLIMIT_CORE is %" PRIu64 " bytes (dumping disabled)",
		       (int)a->pid, h->m.rlimit);
		return drop(h, COREDAM_PIPE_SKIPPED_RLIMIT, COREDAM_PIPE_EXIT_RLIMIT);
	}

	/* 2. the destination, component by component */
	r = coredam_pipe_open_dest(a->dir, 0, &h->dirfd, &e);
	if (r < 0) {
		log_full(LOG_ERR, "core of pid %d dropped: destination %s refused: %s", (int)a->pid, a->dir, e.msg);
		return drop(h, COREDAM_PIPE_SKIPPED_ERROR, COREDAM_PIPE_EXIT_DEST);
	}

	/*
	 * 3. room on it: the helper writes as root, so without this check it
	 * would eat the root reservation. Below the floor the core is not
	 * stored at all; the writer checks again as it writes.
	 */
	r = coredam_space_check_fd(&h->cfg, h->dirfd, &h->space);
	if (r < 0) {
		log_full(LOG_ERR, "core of pid %d dropped: free space of %s unknown: %s", (int)a->pid, a->dir,
		       strerror(-r));
		return drop(h, COREDAM_PIPE_SKIPPED_ERROR, COREDAM_PIPE_EXIT_DEST);
	}
	if (h->space.below) {
		log_full(LOG_WARNING,
		       "core of pid %d (uid %u, signal %d) dropped: %s has %" PRIu64 " MiB free, below its floor of %" PRIu64 " MiB ([Space] FreeSpaceFloor=)",
		       (int)a->pid, (unsigned)a->uid, a->signal, a->dir, h->space.free_bytes >> 20,
		       h->space.floor_bytes >> 20);
		return drop(h, COREDAM_PIPE_SKIPPED_SPACE, COREDAM_PIPE_EXIT_SPACE);
	}
	return -1;
}

/*
 * 3b. A repeat ([Repeats])? The start of the core (headers and the first
 * notes, kept for the writer) says where the process crashed; the first
 * Keep= cores of that signature in every Interval= go on, the rest are
 * skipped before they take a place in the queue. Anything that fails here
 * keeps the core: this only ever saves disk. -1 to go on, else the exit
 * status of a skipped repeat.
 */
#define HEAD_READ_USEC (10 * 1000000ULL)
static int check_repeat(struct helper *h)
{
	const struct coredam_pipe_args *a = &h->a;
	struct coredam_core_site site;
	struct coredam_repeat_key key;
	struct coredam_repeat_entry e;
	char label[COREDAM_ESCAPE_SIZE(COREDAM_REPEAT_LABEL_MAX)];
	int r;

	if (h->cfg.repeat_keep == 0)
		return -1;
	h->pre = malloc(COREDAM_ELF_KEEP_MAX);	/* pages touched only as headers arrive */
	if (!h->pre)
		return -1;
	r = coredam_pipe_read_head(STDIN_FILENO, h->pre, COREDAM_ELF_KEEP_MAX,
				   now_usec(CLOCK_MONOTONIC) + HEAD_READ_USEC, &h->pre_len);
	if (r < 0) {
		log_full(LOG_WARNING, "core of pid %d: reading its start failed (%s): not checked for repeats",
			 (int)a->pid, strerror(-r));
		return -1;
	}
	r = coredam_elf_core_site(h->pre, h->pre_len, &site);
	coredam_repeat_key(r < 0 ? NULL : &site, a->signal, a->comm, &key);
	r = coredam_repeats_check(h->roots.state, &key, h->cfg.repeat_keep, h->cfg.repeat_interval_usec, &e);
	if (r < 0) {
		log_full(LOG_WARNING, "core of pid %d: repeat table in %s/pipe unusable (%s): not checked for repeats",
			 (int)a->pid, h->roots.state, strerror(-r));
		return -1;
	}
	coredam_escape(key.label, 0, label, sizeof(label));
	h->rep = e;
	h->have_rep = true;
	if (r > 0) {
		log_full(LOG_DEBUG, "core of pid %d: signature %016" PRIx64 " (%s), %" PRIu32 " of %" PRIu32 " kept this interval",
			 (int)a->pid, key.hash, label, e.window_kept, h->cfg.repeat_keep);
		return -1;
	}
	if (coredam_repeat_log_this(e.skipped)) {
		log_full(LOG_NOTICE,
			 "core of pid %d (uid %u, signal %d) skipped: a repeat of %s; %" PRIu64 " kept, %" PRIu64 " skipped as repeats so far ([Repeats] Keep=%" PRIu32 ")",
			 (int)a->pid, (unsigned)a->uid, a->signal, label, e.kept, e.skipped, h->cfg.repeat_keep);
		/* for coredumpctl, the crash with no core, as often as the line */
		(void)coredam_core_journal_repeat(&h->cfg, a, &h->m, &site, &key, &e);
	}
	return drop(h, COREDAM_PIPE_SKIPPED_REPEAT, COREDAM_PIPE_EXIT_REPEAT);
}

/* Why a dump got no slot, with the budget that decided it. */
static void log_not_admitted(const struct helper *h, enum coredam_pipe_wait_result wr, uint32_t ahead)
{
	const struct coredam_pipe_args *a = &h->a;
	struct coredam_pipe_budget b;
	bool agent = coredam_pipe_budget_read(h->roots.state, &b) == 0;
	const char *from = agent ? "budget from coredamd" : "coredamd not running: budget from the configuration";

	if (!agent)
		b = h->fallback;
	if (wr == COREDAM_PIPE_FULL)
		log_full(LOG_WARNING,
		       "core of pid %d (uid %u, signal %d) dropped: queue full, %u dumps ahead with %u writing and at most %u waiting (%s)",
		       (int)a->pid, (unsigned)a->uid, a->signal, ahead, b.concurrency, b.waiting, from);
	else if (wr == COREDAM_PIPE_TIMEOUT)
		log_full(LOG_WARNING,
		       "core of pid %d (uid %u, signal %d) dropped: no write slot within %u ms (%u at once, ticket %" PRIu64 "; %s)",
		       (int)a->pid, (unsigned)a->uid, a->signal, b.timeout_ms, b.concurrency, h->q.ticket, from);
	else if (wr == COREDAM_PIPE_PUSHED_OUT)
		log_full(LOG_WARNING,
		       "core of pid %d (uid %u, signal %d) dropped: the queue was full and uid %u held more of its waiting places than any other user; a dump of another user took this one's after %" PRIu64 " ms",
		       (int)a->pid, (unsigned)a->uid, a->signal, (unsigned)a->uid, h->m.waited_ms);
	else
		log_full(LOG_WARNING, "core of pid %d dropped: stopped by a signal after waiting %" PRIu64 " ms",
		       (int)a->pid, h->m.waited_ms);
}

/*
 * 4. A write slot, in arrival order, in the dump cgroup and confined
 * before the first byte of the core is read. -1 once admitted, else the exit status of a crash that
 * got no slot.
 */
static int take_slot(struct helper *h)
{
	const struct coredam_pipe_args *a = &h->a;
	enum coredam_pipe_wait_result wr = COREDAM_PIPE_ADMIT;
	struct coredam_error e;
	uint64_t waited = 0;
	uint32_t ahead = 0;
	int r, stop_fd;

	h->fallback = (struct coredam_pipe_budget){
		.concurrency = h->cfg.concurrency,
		.waiting = h->cfg.queue_cap,
		.timeout_ms = (uint32_t)MIN((h->cfg.wait_timeout_usec + 999) / 1000, (uint64_t)UINT32_MAX),
	};
	stop_fd = setup_stop_fd();
	/* the ticket first, at the priority the kernel started the helper with */
	r = coredam_pipe_queue_open(h->roots.state, &h->q);
	if (r >= 0)
		r = coredam_pipe_enqueue(&h->q, a->pid, a->uid, &h->fallback, &ahead);
	if (r > 0)
		settle(h);

	/*
	 * Confined: from here on the helper writes only through what it has
	 * opened and the state directory, with no capability and a short
	 * list of system calls. Fails closed.
	 */
	if (r >= 0 && h->cfg.pipe_sandbox) {
		int s;

		log_open();
		s = coredam_sandbox_enter(h->roots.state, &e);
		if (s < 0) {
			log_full(LOG_ERR,
			       "core of pid %d (uid %u, signal %d) dropped: cannot confine the helper: %s ([Pipe] Sandbox=no stores cores unconfined)",
			       (int)a->pid, (unsigned)a->uid, a->signal, e.msg);
			coredam_pipe_release(&h->q);
			return drop(h, COREDAM_PIPE_SKIPPED_ERROR, COREDAM_PIPE_EXIT_DROPPED);
		}
	}
	if (r > 0) {
		h->m.ticket = h->q.ticket;
		r = coredam_pipe_wait(&h->q, &h->fallback, stop_fd, &wr, &waited);
	} else if (r == 0) {
		wr = COREDAM_PIPE_FULL;
	}
	if (r < 0) {
		/* no slot, no write: a dump let past the queue breaks the budget for every other */
		log_full(LOG_ERR, "core of pid %d (uid %u, signal %d) dropped: the queue in %s/pipe is unusable: %s",
		       (int)a->pid, (unsigned)a->uid, a->signal, h->roots.state, strerror(-r));
		return drop(h, COREDAM_PIPE_SKIPPED_ERROR, COREDAM_PIPE_EXIT_DROPPED);
	}
	h->m.waited_ms = waited / 1000;
	if (wr != COREDAM_PIPE_ADMIT) {
		log_not_admitted(h, wr, ahead);
		return drop(h, coredam_pipe_wait_skip(wr), COREDAM_PIPE_EXIT_DROPPED);
	}
	(void)coredam_pipe_mark_writing(&h->q);	/* only the gauges read the letter; the ticket holds the slot */
	h->m.admitted_usec = now_usec(CLOCK_MONOTONIC);
	count(h->roots.state, COREDAM_PIPE_ADMITTED, 1);
	return -1;
}

/* 5. Write, rename into place, metadata; the exit status. */
static int write_core(struct helper *h)
{
	const struct coredam_pipe_args *a = &h->a;
	struct coredam_core_stored st;
	const struct coredam_pipe_copy_result *res = &st.res;
	int r, status;

	r = store(&h->cfg, a, h->dirfd, h->space.floor_bytes, h->pre, h->pre_len, &h->m, &st);
	coredam_pipe_release(&h->q);
	if (r >= 0)
		(void)coredam_core_journal_stored(&h->cfg, a, &h->m, &st, h->have_rep ? &h->rep : NULL);
	status = coredam_pipe_outcome_stored(&h->out, r, res, st.expected);
	if (r >= 0 && status != COREDAM_PIPE_EXIT_STORED)
		log_full(LOG_ERR,
		       "core of pid %d (uid %u, signal %d) cut short: the kernel sent %" PRIu64 " of the %" PRIu64 " bytes its ELF headers declare (process killed while dumping?); kept as %s/%s",
		       (int)a->pid, (unsigned)a->uid, a->signal, res->in_bytes, st.expected, a->dir, st.final);
	else if (r >= 0)
		log_full(res->truncated && h->m.rlimit > res->in_bytes ? LOG_WARNING : LOG_INFO,
		       "core of pid %d (uid %u, signal %d) stored as %s/%s: %" PRIu64 " bytes%s, %" PRIu64 " on disk, waited %" PRIu64 " ms, wrote in %" PRIu64 " ms",
		       (int)a->pid, (unsigned)a->uid, a->signal, a->dir, st.final, res->in_bytes,
		       coredam_pipe_cut_reason(res, h->m.rlimit), res->out_bytes, h->m.waited_ms, h->m.write_ms);
	/*
	 * 6. the oldest kept cores past [Space] MaxUse=, KeepFree=; the slot
	 * is given back already. Never by limits nobody chose: a broken
	 * configuration may be the one that said MaxUse=infinity.
	 */
	if (r >= 0 && !h->config_failed)
		h->out.removed = coredam_retention_after_store(h->dirfd, a->dir, &h->cfg, st.final);
	return finish(h, status);
}

int main(int argc, char **argv)
{
	_cleanup_(helper_done) struct helper h = {
		.roots = COREDAM_ROOTS_DEFAULT,
		.q = COREDAM_PIPE_QUEUE_INIT,
		.dirfd = -1,
	};
	int r;

	log_setup("coredam-pipe", LOG_TARGET_KMSG);
	sanitize_fds();
	umask(0077);
	h.roots.cgroup = NULL;	/* found in mountinfo unless given */

	r = parse_options(&h, argc, argv);
	if (r >= 0)
		return r;
	if (h.decompress)
		return optind == argc ? do_decompress() : (help(stderr), COREDAM_PIPE_EXIT_USAGE);
	if (h.check)
		return optind + 1 == argc ? do_check(argv[optind]) : (help(stderr), COREDAM_PIPE_EXIT_USAGE);

	r = coredam_pipe_args_parse(argc - optind, argv + optind, &h.a);
	if (r < 0) {
		log_full(LOG_ERR, "bad arguments (expected DIR %s): core not stored", COREDAM_PIPE_SPECIFIERS);
		if (isatty(STDERR_FILENO))
			help(stderr);
		return COREDAM_PIPE_EXIT_USAGE;
	}
	if (h.a.dumpable == COREDAM_DUMPABLE_UNKNOWN)
		log_full(LOG_WARNING, "core of pid %d: core_pattern passes no %%d, so a setuid process cannot be told "
		       "apart: the core is kept root's, mode 0400 (add %%d after %%c)", (int)h.a.pid);
	h.m = (struct coredam_core_meta){
		.pid = h.a.pid, .uid = h.a.uid, .gid = h.a.gid, .signal = h.a.signal, .time = h.a.time,
		.comm = h.a.comm, .dumpable = h.a.dumpable, .arrived_usec = now_usec(CLOCK_MONOTONIC),
		.cgroup = h.cg, .compression = "none",
	};
	load_config(&h);
	if (h.cfg.pipe_compress)
		h.m.compression = "zstd";
	count(h.roots.state, COREDAM_PIPE_STARTED, 1);

	r = arrive(&h);
	if (r >= 0)
		return r;
	r = check_repeat(&h);
	if (r >= 0)
		return r;
	r = take_slot(&h);
	if (r >= 0)
		return r;
	return write_core(&h);
}
