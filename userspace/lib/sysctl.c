// SPDX-License-Identifier: LGPL-2.1-or-later
/* Kernel knobs: detection, core_pattern, core_dump_stats, save/restore. */
#include <fcntl.h>
#include <sys/stat.h>

#include "sysctl.h"
#include "util.h"

const char *const coredam_stat_names[COREDAM_STATS_N] = {
	"active", "waiting", "started", "admitted", "completed", "failed",
	"skipped_full", "skipped_timeout", "skipped_killed", "skipped_pipe_limit",
	"unmoved", "bytes", "overtime", "leases_ended",
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
		base = strrchr(helper, '/') ? strrchr(helper, '/') + 1 : helper;
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

int coredam_stats_parse(const char *line, struct coredam_stats *ret)
{
	struct coredam_stats s = { 0 };
	const char *p = line;
	size_t n = 0;

	while (*p && *p != '\n') {
		char *end;

		if (*p < '0' || *p > '9')
			return -EBADMSG;
		errno = 0;
		unsigned long long v = strtoull(p, &end, 10);
		if (errno)
			return -EBADMSG;
		if (n < COREDAM_STATS_N)
			s.v[n] = v;
		n++;
		p = end;
		if (*p == ' ')
			p++;
		else if (*p && *p != '\n')
			return -EBADMSG;
	}
	if (n < COREDAM_STATS_MIN)
		return -EBADMSG;
	*ret = s;
	return 0;
}

int coredam_stats_read(const struct coredam_roots *roots, struct coredam_stats *ret)
{
	char buf[1024];
	int r;

	r = coredam_sysctl_read(roots, "kernel.core_dump_stats", buf, sizeof(buf));
	if (r < 0)
		return r;
	return coredam_stats_parse(buf, ret);
}

bool coredam_stats_consistent(const struct coredam_stats *s)
{
	const uint64_t *v = s->v;

	return v[COREDAM_STAT_STARTED] ==
		       v[COREDAM_STAT_ADMITTED] + v[COREDAM_STAT_WAITING] +
			       v[COREDAM_STAT_SKIPPED_FULL] + v[COREDAM_STAT_SKIPPED_TIMEOUT] +
			       v[COREDAM_STAT_SKIPPED_KILLED] + v[COREDAM_STAT_SKIPPED_PIPE_LIMIT] &&
	       v[COREDAM_STAT_ADMITTED] ==
		       v[COREDAM_STAT_COMPLETED] + v[COREDAM_STAT_FAILED] + v[COREDAM_STAT_ACTIVE] +
			       v[COREDAM_STAT_OVERTIME];
}

#define SAVED_FILE "sysctl.saved"

int coredam_sysctl_save(const struct coredam_roots *roots, const char *const *names, size_t n)
{
	_cleanup_close_ int fd = -1;
	char buf[8192];
	size_t o = 0;
	int r;

	r = open_dir_at(AT_FDCWD, roots->state, &fd);
	if (r < 0)
		return r;
	if (faccessat(fd, SAVED_FILE, F_OK, 0) == 0)
		return 0; /* a previous run's originals: keep them */
	for (size_t i = 0; i < n; i++) {
		char val[4096];

		r = coredam_sysctl_read(roots, names[i], val, sizeof(val));
		if (r == -ENOENT)
			continue;
		if (r < 0)
			return r;
		r = xsnprintf(buf + o, sizeof(buf) - o, "%s %s\n", names[i], val);
		if (r < 0)
			return r;
		o += r;
	}
	return write_file_atomic_at(fd, SAVED_FILE, buf, o, 0600);
}

int coredam_sysctl_restore(const struct coredam_roots *roots)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *s = NULL;
	char *line, *save = NULL;
	int r, ret = 0;

	r = open_dir_at(AT_FDCWD, roots->state, &fd);
	if (r < 0)
		return r;
	r = read_file_at(fd, SAVED_FILE, 65536, &s);
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
	if (ret == 0 && unlinkat(fd, SAVED_FILE, 0) < 0)
		return -errno;
	return ret;
}
