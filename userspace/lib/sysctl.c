// SPDX-License-Identifier: LGPL-2.1-or-later
/* Kernel knobs: detection, core_pattern, core_dump_stats, save/restore. */
#include <fcntl.h>
#include <sys/stat.h>

#include "sysctl.h"
#include "macro.h"
#include "log.h"
#include "fileio.h"
#include "string-util.h"
#include "parse-util.h"
#include "path-util.h"

const char *const coredam_stat_names[COREDAM_STATS_N] = {
	[COREDAM_STAT_STARTED] = "started",
	[COREDAM_STAT_ADMITTED] = "admitted",
	[COREDAM_STAT_COMPLETED] = "completed",
	[COREDAM_STAT_FAILED] = "failed",
	[COREDAM_STAT_SKIPPED_FULL] = "skipped_full",
	[COREDAM_STAT_SKIPPED_TIMEOUT] = "skipped_timeout",
	[COREDAM_STAT_SKIPPED_KILLED] = "skipped_killed",
	[COREDAM_STAT_SKIPPED_PIPE_LIMIT] = "skipped_pipe_limit",
	[COREDAM_STAT_ACTIVE] = "active",
	[COREDAM_STAT_WAITING] = "waiting",
	[COREDAM_STAT_OVERTIME] = "overtime",
	[COREDAM_STAT_LEASES_ENDED] = "leases_ended",
	[COREDAM_STAT_UNCHARGED] = "uncharged",
	[COREDAM_STAT_FAILED_OPEN] = "failed_open",
	[COREDAM_STAT_FAILED_SETUP] = "failed_setup",
	[COREDAM_STAT_FAILED_LIMIT] = "failed_limit",
	[COREDAM_STAT_FAILED_KILLED] = "failed_killed",
	[COREDAM_STAT_FAILED_WRITE] = "failed_write",
	[COREDAM_STAT_FAILED_IO] = "failed_io",
	[COREDAM_STAT_BYTES] = "bytes",
};

static int sysctl_path(const struct coredam_roots *roots, const char *name, char *buf, size_t size)
{
	char rel[256];
	int r;

	if (strchr(name, '/') || strstr(name, ".."))
		return -EINVAL;
	r = xsnprintf(rel, sizeof(rel), "%s", name);
	if (r < 0)
		return r;
	for (char *p = rel; *p; p++)
		if (*p == '.')
			*p = '/';
	return xsnprintf(buf, size, "%s/sys/%s", roots->proc, rel);
}

int coredam_sysctl_read(const struct coredam_roots *roots, const char *name, char *buf, size_t size)
{
	char path[PATH_MAX];
	int r;

	r = sysctl_path(roots, name, path, sizeof(path));
	if (r < 0)
		return r;
	return read_line_at(AT_FDCWD, path, buf, size);
}

int coredam_sysctl_write(const struct coredam_roots *roots, const char *name, const char *value)
{
	char path[PATH_MAX];
	int r;

	r = sysctl_path(roots, name, path, sizeof(path));
	if (r < 0)
		return r;
	/* a zero-length write() is ignored by procfs: clear a string with "\n" */
	r = write_file_at(AT_FDCWD, path, *value ? value : "\n");
	log_debug("sysctl %s <- \"%s\": %s", name, value, r < 0 ? strerror(-r) : "ok");
	return r;
}

int coredam_kernel_probe(const struct coredam_roots *roots, struct coredam_kernel_support *ret)
{
	struct coredam_kernel_support k = { 0 };
	_cleanup_free_ char *modes = NULL;
	_cleanup_close_ int fd = -1;
	char path[PATH_MAX];
	int r;

	r = xsnprintf(path, sizeof(path), "%s/sys/kernel", roots->proc);
	if (r < 0)
		return r;
	r = open_dir_at(AT_FDCWD, path, &fd);
	if (r < 0)
		return r;
	k.core_cgroup = faccessat(fd, "core_cgroup", F_OK, 0) == 0;
	k.core_max_concurrency = faccessat(fd, "core_max_concurrency", F_OK, 0) == 0;
	k.core_max_waiting = faccessat(fd, "core_max_waiting", F_OK, 0) == 0;
	k.core_wait_timeout_ms = faccessat(fd, "core_wait_timeout_ms", F_OK, 0) == 0;
	k.core_writeback_window = faccessat(fd, "core_writeback_window", F_OK, 0) == 0;
	k.core_dump_stats = faccessat(fd, "core_dump_stats", F_OK, 0) == 0;
	/* before 6.16 "@@/path" is a file name relative to each crashed process's directory */
	if (read_file_at(fd, "core_modes", 4096, &modes) >= 0)
		k.core_socket = coredam_word_in(modes, "socket");
	*ret = k;
	return 0;
}

bool coredam_kernel_full(const struct coredam_kernel_support *k)
{
	return k->core_cgroup && k->core_max_concurrency && k->core_max_waiting &&
	       k->core_wait_timeout_ms && k->core_writeback_window && k->core_dump_stats;
}

static const struct {
	const char *helper, *dir;
} known_helpers[] = {
	{ "systemd-coredump", "/var/lib/systemd/coredump" },
	{ "apport", "/var/crash" },
	{ "coredam-pipe", NULL },	/* takes the directory as its first argument */
};

int coredam_core_pattern_parse(const char *pattern, struct coredam_core_pattern *ret)
{
	struct coredam_core_pattern cp = { 0 };
	const char *pct, *slash;
	int r;

	if (!pattern)
		return -EINVAL;
	if (pattern[0] == '@') {
		cp.kind = COREDAM_CORE_SOCKET;
		snprintf(cp.note, sizeof(cp.note),
			 "socket core_pattern: the server behind %s decides where cores go; set Destination=",
			 pattern);
		*ret = cp;
		return 0;
	}
	if (pattern[0] == '|') {
		char helper[PATH_MAX], arg1[PATH_MAX] = "";
		const char *base;

		cp.kind = COREDAM_CORE_PIPE;
		if (sscanf(pattern + 1, "%4095s %4095s", helper, arg1) < 1)
			return -EINVAL;
		snprintf(cp.helper, sizeof(cp.helper), "%s", helper);
		base = path_basename(helper);
		for (size_t i = 0; i < ELEMENTSOF(known_helpers); i++) {
			if (strcmp(base, known_helpers[i].helper) != 0)
				continue;
			if (known_helpers[i].dir) {
				snprintf(cp.dir, sizeof(cp.dir), "%s", known_helpers[i].dir);
				cp.dir_known = true;
				snprintf(cp.note, sizeof(cp.note), "%s stores cores in %s", base, cp.dir);
			} else if (arg1[0] == '/' && !strchr(arg1, '%')) {
				snprintf(cp.dir, sizeof(cp.dir), "%s", arg1);
				cp.dir_known = true;
				snprintf(cp.note, sizeof(cp.note), "%s writes into its first argument", base);
			}
			break;
		}
		if (!cp.dir_known)
			snprintf(cp.note, sizeof(cp.note),
				 "pipe helper %s: where it stores cores is unknown; set Destination=", helper);
		*ret = cp;
		return 0;
	}
	cp.kind = COREDAM_CORE_FILE;
	if (pattern[0] != '/') {
		snprintf(cp.note, sizeof(cp.note),
			 "relative core_pattern \"%s\": cores go to each crashing process's working directory; set Destination=",
			 pattern);
		*ret = cp;
		return 0;
	}
	pct = strchr(pattern, '%');
	/* last '/' before the first specifier: the fixed directory part */
	slash = NULL;
	for (const char *p = pattern; *p && (!pct || p < pct); p++)
		if (*p == '/')
			slash = p;
	if (slash == pattern) {
		r = xsnprintf(cp.dir, sizeof(cp.dir), "/");
	} else {
		r = xsnprintf(cp.dir, sizeof(cp.dir), "%.*s", (int)(slash - pattern), pattern);
	}
	if (r < 0)
		return r;
	cp.dir_known = true;
	if (pct && strchr(pct, '/'))
		snprintf(cp.note, sizeof(cp.note), "directory depends on a %% specifier; using its fixed part %s",
			 cp.dir);
	*ret = cp;
	return 0;
}

/* The index of the counter called @name (@len bytes, not terminated), or -1. */
static int stat_index(const char *name, size_t len)
{
	for (int i = 0; i < COREDAM_STATS_N; i++)
		if (strlen(coredam_stat_names[i]) == len && memcmp(coredam_stat_names[i], name, len) == 0)
			return i;
	return -1;
}

int coredam_stats_parse(const char *text, struct coredam_stats *ret)
{
	struct coredam_stats s = { 0 };
	bool seen[COREDAM_STATS_N] = { false };

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		size_t nlen = strspn(p, "abcdefghijklmnopqrstuvwxyz0123456789_");
		char val[24];
		uint64_t v;
		int i;

		/* "name value": a name that starts with a letter, one space, a decimal that fits in 64 bits */
		if (*p < 'a' || *p > 'z' || nlen >= len || p[nlen] != ' ' || len - nlen - 1 >= sizeof(val))
			return -EBADMSG;
		memcpy(val, p + nlen + 1, len - nlen - 1);
		val[len - nlen - 1] = '\0';
		if (parse_u64(val, &v) < 0)
			return -EBADMSG;
		i = stat_index(p, nlen);
		if (i >= 0) {
			if (seen[i])
				return -EBADMSG;
			seen[i] = true;
			s.v[i] = v;
		}
		p += len;
		if (*p)
			p++;
	}
	for (int i = 0; i < COREDAM_STATS_N; i++)
		if (!seen[i]) {
			log_debug("core_dump_stats: no \"%s\"", coredam_stat_names[i]);
			return -EBADMSG;
		}
	*ret = s;
	return 0;
}

int coredam_stats_read(const struct coredam_roots *roots, struct coredam_stats *ret)
{
	_cleanup_free_ char *s = NULL;
	char path[PATH_MAX];
	int r;

	r = sysctl_path(roots, "kernel.core_dump_stats", path, sizeof(path));
	if (r < 0)
		return r;
	/* a few hundred bytes today; a later kernel may append names */
	r = read_file_at(AT_FDCWD, path, 65536, &s);
	if (r < 0)
		return r;
	return coredam_stats_parse(s, ret);
}

/* Is v[@sum] the sum of v[@parts...]? A sum that overflows is not. */
static bool sums_to(const uint64_t *v, int sum, const int *parts, size_t n)
{
	uint64_t t = 0;

	for (size_t i = 0; i < n; i++)
		if (__builtin_add_overflow(t, v[parts[i]], &t))
			return false;
	return t == v[sum];
}

bool coredam_stats_dumps_moved(const struct coredam_stats *before, const struct coredam_stats *now)
{
	static const int moves[] = { COREDAM_STAT_STARTED, COREDAM_STAT_ADMITTED, COREDAM_STAT_COMPLETED,
				     COREDAM_STAT_FAILED, COREDAM_STAT_SKIPPED_FULL, COREDAM_STAT_SKIPPED_TIMEOUT,
				     COREDAM_STAT_SKIPPED_KILLED, COREDAM_STAT_SKIPPED_PIPE_LIMIT };

	for (size_t i = 0; i < ELEMENTSOF(moves); i++)
		if (before->v[moves[i]] != now->v[moves[i]])
			return true;
	return false;
}

bool coredam_stats_consistent(const struct coredam_stats *s)
{
	static const int started[] = { COREDAM_STAT_ADMITTED, COREDAM_STAT_WAITING, COREDAM_STAT_SKIPPED_FULL,
				       COREDAM_STAT_SKIPPED_TIMEOUT, COREDAM_STAT_SKIPPED_KILLED };
	static const int admitted[] = { COREDAM_STAT_COMPLETED, COREDAM_STAT_FAILED,
					COREDAM_STAT_SKIPPED_PIPE_LIMIT, COREDAM_STAT_ACTIVE,
					COREDAM_STAT_OVERTIME };
	static const int failed[] = { COREDAM_STAT_FAILED_OPEN, COREDAM_STAT_FAILED_SETUP,
				      COREDAM_STAT_FAILED_LIMIT, COREDAM_STAT_FAILED_KILLED,
				      COREDAM_STAT_FAILED_WRITE, COREDAM_STAT_FAILED_IO };

	return sums_to(s->v, COREDAM_STAT_STARTED, started, ELEMENTSOF(started)) &&
	       sums_to(s->v, COREDAM_STAT_ADMITTED, admitted, ELEMENTSOF(admitted)) &&
	       sums_to(s->v, COREDAM_STAT_FAILED, failed, ELEMENTSOF(failed));
}

#define SAVED_FILE "sysctl.saved"

int coredam_sysctl_save(const struct coredam_roots *roots, const char *const *names, size_t n)
{
	return coredam_sysctl_save_as(roots, SAVED_FILE, names, n);
}

int coredam_sysctl_restore(const struct coredam_roots *roots)
{
	return coredam_sysctl_restore_from(roots, SAVED_FILE);
}

int coredam_sysctl_save_as(const struct coredam_roots *roots, const char *file, const char *const *names, size_t n)
{
	_cleanup_close_ int fd = -1;
	char buf[8192];
	struct strbuf sb = STRBUF_INIT(buf, sizeof(buf));
	int r;

	r = open_dir_at(AT_FDCWD, roots->state, &fd);
	if (r < 0)
		return r;
	if (faccessat(fd, file, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return 0; /* a previous run's originals: keep them */
	for (size_t i = 0; i < n; i++) {
		char val[4096];

		r = coredam_sysctl_read(roots, names[i], val, sizeof(val));
		if (r == -ENOENT)
			continue;
		if (r < 0)
			return r;
		strbuf_printf(&sb, "%s %s\n", names[i], val);
	}
	r = strbuf_done(&sb);
	if (r < 0)
		return r;
	return write_file_atomic_at(fd, file, buf, sb.len, 0600);
}

int coredam_sysctl_restore_from(const struct coredam_roots *roots, const char *file)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *s = NULL;
	char *line, *save = NULL;
	int r, ret = 0;

	r = open_dir_at(AT_FDCWD, roots->state, &fd);
	if (r < 0)
		return r;
	r = read_file_at(fd, file, 65536, &s);
	if (r < 0)
		return r;
	for (line = strtok_r(s, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strchr(line, ' ');

		if (!sp)
			continue;
		*sp = '\0';
		r = coredam_sysctl_write(roots, line, sp + 1);
		/* an empty core_cgroup is written as "" (turns it off) */
		if (r < 0 && ret == 0)
			ret = r;
	}
	if (ret == 0 && unlinkat(fd, file, 0) < 0)
		return -errno;
	return ret;
}
