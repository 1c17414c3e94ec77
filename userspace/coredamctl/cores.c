// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredamctl list, info, dump, gdb, vacuum: the cores coredam-pipe kept in
 * [Pipe] Directory=, from the metadata beside each, with coredumpctl's
 * verbs; vacuum removes the oldest as the writers do after each core
 * ([Space] MaxUse=, KeepFree=).
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "corelist.h"
#include "ctl.h"
#include "elfcore.h"
#include "escape.h"
#include "fileio.h"
#include "json-util.h"
#include "log.h"
#include "macro.h"
#include "parse-util.h"
#include "path-util.h"
#include "pipe-writer.h"
#include "repeats.h"
#include "retention.h"

struct kept {
	int dirfd;
	struct coredam_kept_core *v;
	size_t n, damaged;
};

static void kept_done(struct kept *k)
{
	closep(&k->dirfd);
	free(k->v);
}

/*
 * The directory and its cores: -1 to go on (none when the directory does
 * not exist yet), else the exit code.
 */
static int kept_read(const struct ctl *c, struct kept *k)
{
	const char *dir = c->cfg.pipe_directory;
	int r;

	r = open_dir_at(AT_FDCWD, dir, &k->dirfd);
	if (r == -ENOENT)
		return -1;	/* nothing kept yet */
	if (r >= 0)
		r = coredam_cores_list(k->dirfd, &k->v, &k->n, &k->damaged);
	if (r == -EACCES || r == -EPERM) {
		log_error("%s: cores are root's (%s): run as root", dir, strerror(-r));
		return CTL_EXIT_NO_ACCESS;
	}
	if (r < 0) {
		log_error("%s: %s", dir, strerror(-r));
		return CTL_EXIT_FAIL;
	}
	if (k->damaged)
		log_warning("%s: %zu metadata file%s unreadable, left out", dir, k->damaged, k->damaged == 1 ? "" : "s");
	return -1;
}

static const char *signame(int sig, char *buf, size_t size)
{
	const char *s = sigabbrev_np(sig);

	if (s)
		snprintf(buf, size, "SIG%s", s);
	else
		snprintf(buf, size, "%d", sig);
	return buf;
}

static const char *timestr(uint64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!localtime_r(&tt, &tm) || !strftime(buf, size, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, size, "%" PRIu64, t);
	return buf;
}

static json_t *core_json(const struct ctl *c, const struct coredam_kept_core *k)
{
	json_t *o = json_object();
	char path[PATH_MAX];
	int r = 0;

	if (!o)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", c->cfg.pipe_directory, k->core);
	r |= json_object_set_new(o, "core", coredam_json_text(path));
	r |= json_object_set_new(o, "time", coredam_json_u64(k->time));
	r |= json_object_set_new(o, "pid", json_integer(k->pid));
	r |= json_object_set_new(o, "uid", json_integer(k->uid));
	r |= json_object_set_new(o, "gid", json_integer(k->gid));
	r |= json_object_set_new(o, "signal", json_integer(k->signal));
	r |= json_object_set_new(o, "comm", coredam_json_text(k->comm));
	r |= json_object_set_new(o, "size", coredam_json_u64(k->size));
	r |= json_object_set_new(o, "disk_size", coredam_json_u64(k->disk_size));
	r |= json_object_set_new(o, "compression", json_string(k->zstd ? "zstd" : "none"));
	r |= json_object_set_new(o, "state", json_string(coredam_kept_core_state(k)));
	if (r < 0) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int cmd_list(struct ctl *c, int argc, char **argv)
{
	_cleanup_(kept_done) struct kept k = { .dirfd = -1 };
	bool json = false;
	int r;

	r = ctl_flag_only("list", "json", 'j', argc, argv, &json);
	if (r >= 0)
		return r;
	r = kept_read(c, &k);
	if (r >= 0)
		return r;
	if (json) {
		json_auto_t *a = json_array();

		for (size_t i = 0; i < k.n && a; i++)
			if (json_array_append_new(a, core_json(c, &k.v[i])) < 0)
				return CTL_EXIT_FAIL;
		if (!a || coredam_json_dumpf(a, JSON_INDENT(2), stdout) < 0 || putchar('\n') == EOF)
			return CTL_EXIT_FAIL;
		return CTL_EXIT_OK;
	}
	if (k.n == 0) {
		printf("No cores kept in %s.\n", c->cfg.pipe_directory);
		return CTL_EXIT_OK;
	}
	printf("%-19s  %8s  %6s  %-7s  %10s  %-16s  %s\n", "TIME", "PID", "UID", "SIG", "SIZE", "STATE", "COMM");
	for (size_t i = 0; i < k.n; i++) {
		const struct coredam_kept_core *x = &k.v[i];
		char t[32], s[16], sz[16], st[32], e[COREDAM_ESCAPE_SIZE(sizeof(x->comm))];

		snprintf(st, sizeof(st), "%s%s", coredam_kept_core_state(x), x->zstd ? ",zstd" : "");
		printf("%-19s  %8d  %6u  %-7s  %10s  %-16s  %s\n", timestr(x->time, t, sizeof(t)), (int)x->pid,
		       (unsigned)x->uid, signame(x->signal, s, sizeof(s)), format_size(sz, sizeof(sz), x->size), st,
		       coredam_escape(x->comm, 0, e, sizeof(e)));
	}
	return CTL_EXIT_OK;
}

/* The one core ID names, or the exit code. */
static int find(const struct ctl *c, const char *cmd, int argc, char **argv, struct kept *k,
		const struct coredam_kept_core **ret)
{
	int r;

	if (optind >= argc)
		return ctl_usage_error(cmd, "which core? (a PID or a core's file name, from coredamctl list)");
	if (optind + 1 < argc)
		return ctl_unexpected_arg(cmd, argv[optind + 1]);
	r = kept_read(c, k);
	if (r >= 0)
		return r;
	*ret = coredam_cores_find(k->v, k->n, argv[optind]);
	if (!*ret) {
		char e[COREDAM_ESCAPE_SIZE(64)];

		log_error("no core %s kept in %s (coredamctl list)", coredam_escape(argv[optind], 0, e, sizeof(e)),
			  c->cfg.pipe_directory);
		return CTL_EXIT_FAIL;
	}
	if (!(*ret)->present) {
		log_error("%s/%s: the core is gone (only its metadata is left)", c->cfg.pipe_directory, (*ret)->core);
		return CTL_EXIT_FAIL;
	}
	return -1;
}

/* What the core's own notes say of its crash (a compressed core is read through); 0 or -errno. */
static int core_site(int dirfd, const struct coredam_kept_core *k, struct coredam_core_site *ret)
{
	_cleanup_free_ void *head = malloc(COREDAM_ELF_KEEP_MAX);
	_cleanup_close_ int fd = -1;
	size_t len = 0;
	uint64_t total;
	int r;

	fd = openat(dirfd, k->core, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (!head)
		return -ENOMEM;
	r = k->zstd ? coredam_zstd_scan(fd, head, COREDAM_ELF_KEEP_MAX, &len, &total)
		    : coredam_pipe_read_head(fd, head, COREDAM_ELF_KEEP_MAX, 0, &len);
	if (r < 0)
		return r;
	return coredam_elf_core_site(head, len, ret);
}

/* Where the process crashed, from the core's own notes, as [Repeats] signs it. */
static void crash_site(int dirfd, const struct coredam_kept_core *k, char *buf, size_t size)
{
	struct coredam_core_site site;
	struct coredam_repeat_key key;

	snprintf(buf, size, "unknown");
	if (core_site(dirfd, k, &site) < 0)
		return;
	coredam_repeat_key(&site, k->signal, k->comm, &key);
	coredam_escape(key.label, 0, buf, size);
}

int cmd_info(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, {} };
	_cleanup_(kept_done) struct kept k = { .dirfd = -1 };
	const struct coredam_kept_core *x = NULL;
	char t[32], s[16], sz[16], dsz[16], e[COREDAM_ESCAPE_SIZE(64)], site[COREDAM_ESCAPE_SIZE(COREDAM_REPEAT_LABEL_MAX)];
	char name[COREDAM_ESCAPE_SIZE(sizeof(((struct coredam_kept_core *)NULL)->core))];
	int o, r;

	optind = 0;
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) >= 0)
		return ctl_option_exit("info", o);
	r = find(c, "info", argc, argv, &k, &x);
	if (r >= 0)
		return r;
	crash_site(k.dirfd, x, site, sizeof(site));
	printf("      Core: %s/%s\n", c->cfg.pipe_directory, coredam_escape(x->core, 0, name, sizeof(name)));
	printf("       PID: %d\n", (int)x->pid);
	printf("       UID: %u\n", (unsigned)x->uid);
	printf("       GID: %u\n", (unsigned)x->gid);
	printf("    Signal: %d (%s)\n", x->signal, signame(x->signal, s, sizeof(s)));
	printf(" Timestamp: %s\n", timestr(x->time, t, sizeof(t)));
	printf("   Command: %s\n", coredam_escape(x->comm, 0, e, sizeof(e)));
	printf("   Crashed: %s\n", site);
	printf("      Size: %s (%s on disk%s)\n", format_size(sz, sizeof(sz), x->size),
	       format_size(dsz, sizeof(dsz), x->disk_size), x->zstd ? ", zstd" : "");
	printf("     State: %s\n", coredam_kept_core_state(x));
	return CTL_EXIT_OK;
}

static int copy_plain(int in, int out)
{
	char buf[65536];

	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		int r = write_all(out, buf, (size_t)n);

		if (r < 0)
			return r;
	}
}

/*
 * Write the kept core @x (in @dirfd) out, decompressed when it is zstd,
 * to @output, created anew with mode 0600 (never over an existing file,
 * never through a symbolic link) and removed when the copy fails, or to
 * standard output (@output NULL). The exit status.
 */
static int write_out(const struct ctl *c, int dirfd, const struct coredam_kept_core *x, const char *output)
{
	_cleanup_close_ int in = -1, out = -1;
	char name[COREDAM_ESCAPE_SIZE(sizeof(((struct coredam_kept_core *)NULL)->core))];
	uint64_t bytes;
	int r;

	/* the name is as the metadata gave it: escaped wherever it is shown */
	coredam_escape(x->core, 0, name, sizeof(name));
	in = openat(dirfd, x->core, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0) {
		log_error("%s/%s: %m", c->cfg.pipe_directory, name);
		return errno == EACCES ? CTL_EXIT_NO_ACCESS : CTL_EXIT_FAIL;
	}
	if (output) {
		out = open(output, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (out < 0) {
			log_error("%s: %m", output);
			return CTL_EXIT_FAIL;
		}
	}
	r = x->zstd ? coredam_pipe_decompress(in, output ? out : STDOUT_FILENO, &bytes)
		    : copy_plain(in, output ? out : STDOUT_FILENO);
	if (r < 0) {
		log_error("%s/%s: %s%s", c->cfg.pipe_directory, name, strerror(-r),
			  r == -EBADMSG ? " (not a complete zstd stream)" : "");
		if (output)
			(void)unlink(output);
		return CTL_EXIT_FAIL;
	}
	return CTL_EXIT_OK;
}

int cmd_dump(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = { { "output", required_argument, NULL, 'o' },
					      { "help", no_argument, NULL, 'h' }, {} };
	_cleanup_(kept_done) struct kept k = { .dirfd = -1 };
	const struct coredam_kept_core *x = NULL;
	const char *output = NULL;
	int o, r;

	optind = 0;
	while ((o = getopt_long(argc, argv, "+o:h", opts, NULL)) >= 0) {
		if (o == 'o')
			output = optarg;
		else
			return ctl_option_exit("dump", o);
	}
	if (!output && isatty(STDOUT_FILENO))
		return ctl_usage_error("dump", "refusing to write a core to a terminal: use -o FILE or a redirection");
	r = find(c, "dump", argc, argv, &k, &x);
	if (r >= 0)
		return r;
	return write_out(c, k.dirfd, x, output);
}

/*
 * gdb on the core at @core, with the executable @exe ("" none) and the
 * arguments @args[0..n); gdb's exit status (127: it could not be run).
 */
static int run_gdb(const char *exe, const char *core, char **args, int n)
{
	_cleanup_free_ const char **argv = calloc((size_t)n + 4, sizeof(*argv));
	_cleanup_free_ char *execarg = NULL, *corearg = NULL;
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	int i = 0, status = 0, r;
	pid_t pid;

	/* --exec= and --core=: a name that begins with '-' stays a name */
	if (!argv || (exe[0] && asprintf(&execarg, "--exec=%s", exe) < 0) || asprintf(&corearg, "--core=%s", core) < 0) {
		log_error("out of memory");
		return CTL_EXIT_FAIL;
	}
	argv[i++] = "gdb";
	if (execarg)
		argv[i++] = execarg;
	argv[i++] = corearg;
	for (int j = 0; j < n; j++)
		argv[i++] = args[j];
	/* gdb takes ^C while it runs, not this process */
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	pid = fork();
	if (pid == 0) {
		sigaction(SIGINT, &oint, NULL);
		sigaction(SIGQUIT, &oquit, NULL);
		execvp("gdb", (char **)argv);
		log_error("cannot run gdb: %m (Debian: apt install gdb)");
		_exit(127);
	}
	r = pid < 0 ? -errno : 0;
	while (pid > 0 && waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	if (r < 0) {
		log_error("fork: %s", strerror(-r));
		return CTL_EXIT_FAIL;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int cmd_gdb(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, {} };
	_cleanup_(kept_done) struct kept k = { .dirfd = -1 };
	const struct coredam_kept_core *x = NULL;
	struct coredam_core_site site = { 0 };
	char tmpdir[] = "/var/tmp/coredamctl-gdb.XXXXXX", path[PATH_MAX];
	int o, r;

	optind = 0;
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) >= 0)
		return ctl_option_exit("gdb", o);
	/* what follows the ID goes to gdb as it is */
	r = find(c, "gdb", MIN(argc, optind + 1), argv, &k, &x);
	if (r >= 0)
		return r;
	/* the executable from the core's own notes, a regular file still there */
	if (core_site(k.dirfd, x, &site) < 0 || !site.exe[0] || access(site.exe, R_OK) < 0)
		site.exe[0] = '\0';
	if (!x->zstd) {
		snprintf(path, sizeof(path), "%s/%s", c->cfg.pipe_directory, x->core);
		return run_gdb(site.exe, path, argv + optind + 1, argc - optind - 1);
	}
	/* a zstd core decompressed into a directory of its own (mkdtemp: 0700, root's), removed after */
	if (!mkdtemp(tmpdir)) {
		log_error("/var/tmp: cannot make a directory for the decompressed core: %m");
		return CTL_EXIT_FAIL;
	}
	snprintf(path, sizeof(path), "%s/core", tmpdir);
	r = write_out(c, k.dirfd, x, path);
	if (r == CTL_EXIT_OK)
		r = run_gdb(site.exe, path, argv + optind + 1, argc - optind - 1);
	(void)unlink(path);
	(void)rmdir(tmpdir);
	return r;
}

/* What vacuum removed (or would), oldest first: printed once the directory's lock is let go. */
struct vacuumed {
	struct coredam_kept_core *v;
	uint64_t *bytes;
	size_t n, cap;
	bool nomem;
};

static void vacuumed_one(const struct coredam_kept_core *k, uint64_t bytes, void *userdata)
{
	struct vacuumed *x = userdata;

	if (x->n == x->cap) {
		size_t cap = x->cap ? 2 * x->cap : 16;
		struct coredam_kept_core *v = reallocarray(x->v, cap, sizeof(*v));
		uint64_t *b = v ? reallocarray(x->bytes, cap, sizeof(*b)) : NULL;

		if (v)
			x->v = v;
		if (b)
			x->bytes = b;
		if (!v || !b) {
			x->nomem = true;
			return;
		}
		x->cap = cap;
	}
	x->v[x->n] = *k;
	x->bytes[x->n++] = bytes;
}

static const char *limit_str(uint64_t v, uint64_t none, const char *none_str, char *buf, size_t size)
{
	return v == none ? none_str : format_size(buf, size, v);
}

int cmd_vacuum(struct ctl *c, int argc, char **argv)
{
	const char *dir = c->cfg.pipe_directory;
	struct vacuumed x = {};
	struct coredam_retention_result res;
	struct coredam_retention_limits lim;
	_cleanup_close_ int dirfd = -1;
	struct statvfs sv;
	struct stat st;
	bool dry_run = false;
	char b1[16], b2[16], b3[16], b4[16], b5[16];
	int r;

	r = ctl_flag_only("vacuum", "dry-run", 'n', argc, argv, &dry_run);
	if (r >= 0)
		return r;
	/* it removes files: never by a configuration the agent and the helper would refuse */
	if (!c->cfg_ok) {
		log_error("the configuration is refused, nothing removed: %s", c->cfg_error);
		return CTL_EXIT_FAIL;
	}
	r = open_dir_at(AT_FDCWD, dir, &dirfd);
	if (r == -ENOENT) {
		printf("No cores kept in %s.\n", dir);
		return CTL_EXIT_OK;
	}
	if (r >= 0 && fstat(dirfd, &st) < 0)
		r = -errno;
	if (r >= 0 && st.st_uid != geteuid())
		r = -EPERM;	/* root's in production: only root removes cores */
	if (r >= 0 && fstatvfs(dirfd, &sv) < 0)
		r = -errno;
	if (r == -EACCES || r == -EPERM) {
		log_error("%s: cores are root's (%s): run as root", dir, strerror(-r));
		return CTL_EXIT_NO_ACCESS;
	}
	if (r < 0) {
		log_error("%s: %s", dir, strerror(-r));
		return CTL_EXIT_FAIL;
	}
	coredam_retention_limits(&c->cfg, (uint64_t)sv.f_blocks * sv.f_frsize, (uint64_t)time(NULL), &lim);
	r = coredam_retention_vacuum(dirfd, &c->cfg, NULL,
				     COREDAM_RETENTION_KEEP_NEWEST | (dry_run ? COREDAM_RETENTION_DRY_RUN : 0), vacuumed_one,
				     &x, &res);
	for (size_t i = 0; i < x.n; i++) {
		const struct coredam_kept_core *k = &x.v[i];
		char t[32], sz[16], e[COREDAM_ESCAPE_SIZE(NAME_MAX + 1)];

		printf("%s %s/%s (%s, %s, pid %d)\n", dry_run ? "would remove" : "removed", dir,
		       coredam_escape(k->core, 0, e, sizeof(e)), format_size(sz, sizeof(sz), x.bytes[i]),
		       timestr(k->time, t, sizeof(t)), (int)k->pid);
	}
	free(x.v);
	free(x.bytes);
	if (r == -EACCES || r == -EPERM) {
		log_error("%s: %s: run as root", dir, strerror(-r));
		return CTL_EXIT_NO_ACCESS;
	}
	if (r < 0) {
		log_error("%s: %s%s", dir, strerror(-r), res.removed ? " (the cores above were removed)" : "");
		return CTL_EXIT_FAIL;
	}
	if (x.nomem)
		log_warning("out of memory: not every core removed is named above");
	if (res.removed == 0 && res.kept == 0 && res.use_before == 0 &&
	    (lim.max_use != UINT64_MAX || lim.keep_free || lim.older_than)) {
		printf("No cores kept in %s.\n", dir);
		return CTL_EXIT_OK;
	}
	if (lim.max_use == UINT64_MAX && lim.keep_free == 0 && !lim.older_than) {
		printf("Nothing to remove: [Space] MaxUse=infinity, KeepFree=0 and MaxAge=infinity set no limit.\n");
		return CTL_EXIT_OK;
	}
	printf("%s %zu core%s (%s); %zu kept, taking %s (MaxUse= %s), %s free (KeepFree= %s)%s.\n",
	       dry_run ? "Would remove" : "Removed", res.removed, res.removed == 1 ? "" : "s",
	       format_size(b1, sizeof(b1), res.removed_bytes), res.kept, format_size(b2, sizeof(b2), res.use_after),
	       limit_str(lim.max_use, UINT64_MAX, "infinity", b3, sizeof(b3)),
	       format_size(b4, sizeof(b4), res.free_after),
	       limit_str(lim.keep_free, 0, "0", b5, sizeof(b5)),
	       res.within ? "" : ": still over, with every kept core but the newest gone");
	return CTL_EXIT_OK;
}
