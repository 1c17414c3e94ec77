// SPDX-License-Identifier: LGPL-2.1-or-later
/* Dumps in progress, as /proc shows them. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

#include "cgroup.h"
#include "dumps.h"
#include "escape.h"
#include "macro.h"
#include "alloc-util.h"
#include "fileio.h"
#include "parse-util.h"
#include "string-util.h"

const char *coredam_dump_state_str(enum coredam_dump_state s)
{
	switch (s) {
	case COREDAM_DUMP_WRITING:
		return "writing";
	case COREDAM_DUMP_WAITING:
		return "waiting";
	case COREDAM_DUMP_HELPER:
		return "helper";
	case COREDAM_DUMP_DUMPING:
		return "dumping";
	}
	return "?";
}

const char *coredam_dump_name(const struct coredam_dump *d, unsigned int flags, char *buf, size_t size)
{
	return coredam_escape(d->exe[0] ? d->exe : d->comm, flags, buf, size);
}

bool coredam_status_field(const char *status, const char *key, char *buf, size_t size)
{
	size_t kl = strlen(key);

	for (const char *p = status; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		if (strncmp(p, key, kl) == 0 && p[kl] == ':') {
			const char *v = p + kl + 1;
			size_t len;

			v += strspn(v, " \t");
			len = strcspn(v, "\n");
			if (len >= size)
				len = size - 1;
			memcpy(buf, v, len);
			buf[len] = '\0';
			return true;
		}
	}
	return false;
}

int coredam_kb_field(const char *text, const char *key, uint64_t *ret)
{
	char v[64], unit[8];
	uint64_t kb;
	int n = 0;

	if (!coredam_status_field(text, key, v, sizeof(v)))
		return -ENOENT;
	if (sscanf(v, "%" SCNu64 " %7s%n", &kb, unit, &n) != 2 || v[n] != '\0' || strcmp(unit, "kB") != 0 ||
	    kb > UINT64_MAX / 1024)
		return -EINVAL;
	*ret = kb * 1024;
	return 0;
}

static int meminfo_field(const struct coredam_roots *roots, const char *key, uint64_t *ret)
{
	_cleanup_free_ char *mi = NULL;
	char path[PATH_MAX];
	int r;

	r = xsnprintf(path, sizeof(path), "%s/meminfo", roots->proc);
	if (r < 0)
		return r;
	r = read_file_at(AT_FDCWD, path, 65536, &mi);
	if (r < 0)
		return r;
	return coredam_kb_field(mi, key, ret);
}

int coredam_mem_total(const struct coredam_roots *roots, uint64_t *ret)
{
	return meminfo_field(roots, "MemTotal", ret);
}

int coredam_mem_available(const struct coredam_roots *roots, uint64_t *ret)
{
	return meminfo_field(roots, "MemAvailable", ret);
}

/* @pid is a line of @procs (a cgroup.procs). */
static bool pid_listed(const char *procs, uint32_t pid)
{
	char s[16];
	size_t len = (size_t)snprintf(s, sizeof(s), "%" PRIu32, pid);

	for (const char *p = procs; (p = strstr(p, s)); p += len)
		if ((p == procs || p[-1] == '\n') && (p[len] == '\n' || p[len] == '\0'))
			return true;
	return false;
}

/* The number on the line "@key:" of @text, 0 without one. */
static uint64_t io_field(const char *text, const char *key)
{
	char v[32];
	uint64_t n;

	if (!coredam_status_field(text, key, v, sizeof(v)) || parse_u64(v, &n) < 0)
		return 0;
	return n;
}

void coredam_proc_io_parse(const char *io, uint64_t *ret_write_bytes, uint64_t *ret_syscw)
{
	*ret_write_bytes = io_field(io, "write_bytes");
	*ret_syscw = io_field(io, "syscw");
}

int coredam_proc_io_read(const struct coredam_roots *roots, pid_t pid, uint64_t *ret_write_bytes,
			 uint64_t *ret_syscw)
{
	_cleanup_free_ char *io = NULL;
	char path[PATH_MAX];
	int r;

	r = xsnprintf(path, sizeof(path), "%s/%d/io", roots->proc, (int)pid);
	if (r < 0)
		return r;
	r = read_file_at(AT_FDCWD, path, 4096, &io);
	if (r < 0)
		return r;
	coredam_proc_io_parse(io, ret_write_bytes, ret_syscw);
	return 0;
}

enum coredam_dumps_look coredam_dumps_look(const struct coredam_stats *last, const struct coredam_stats *now,
					   size_t n_known, bool exact, bool full)
{
	if (!last || !now)
		return COREDAM_LOOK_ALL;
	if (n_known == 0 && now->v[COREDAM_STAT_STARTED] == last->v[COREDAM_STAT_STARTED] &&
	    now->v[COREDAM_STAT_ACTIVE] == 0 && now->v[COREDAM_STAT_WAITING] == 0 &&
	    now->v[COREDAM_STAT_OVERTIME] == 0)
		return COREDAM_LOOK_NONE;
	if (full || !exact || coredam_stats_dumps_moved(last, now))
		return COREDAM_LOOK_ALL;
	return COREDAM_LOOK_KNOWN;
}

int coredam_dumps_list(const struct coredam_roots *roots, const char *cgroup,
		       struct coredam_dump **ret, size_t *ret_n)
{
	_cleanup_free_ char *procs = NULL;
	_cleanup_closedir_ DIR *d = NULL;
	_cleanup_free_ struct coredam_dump *v = NULL;
	size_t n = 0, alloc = 0;
	struct dirent *de;

	/* the processes in the dump cgroup, read once rather than every process's cgroup */
	if (*cgroup && roots->cgroup) {
		char path[PATH_MAX];

		if (xsnprintf(path, sizeof(path), "%s%s/cgroup.procs", roots->cgroup, cgroup) >= 0)
			(void)read_file_at(AT_FDCWD, path, 4 << 20, &procs);
	}
	d = opendir(roots->proc);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		_cleanup_free_ char *status = NULL, *cg = NULL, *io = NULL;
		struct coredam_dump dp = { 0 };
		char f[64], val[64];
		bool dumping, in_cg;
		uint32_t pid;
		ssize_t l;

		if (parse_u32(de->d_name, &pid) < 0)
			continue;
		in_cg = procs && pid_listed(procs, pid);
		snprintf(f, sizeof(f), "%s/status", de->d_name);
		if (read_file_at(dirfd(d), f, 65536, &status) < 0)
			continue; /* gone */
		dumping = coredam_status_field(status, "CoreDumping", val, sizeof(val)) && strcmp(val, "1") == 0;
		if (!dumping && !in_cg)
			continue;
		snprintf(f, sizeof(f), "%s/cgroup", de->d_name);
		if (read_file_at(dirfd(d), f, 65536, &cg) < 0 ||
		    coredam_proc_cgroup_parse(cg, true, dp.cgroup, sizeof(dp.cgroup)) < 0)
			dp.cgroup[0] = '\0';
		/* moved in or out since cgroup.procs was read: its own file says */
		in_cg = *cgroup && strcmp(dp.cgroup, cgroup) == 0;
		if (!dumping && !in_cg)
			continue;
		dp.pid = (pid_t)pid;
		if (dumping)
			dp.state = in_cg ? COREDAM_DUMP_WRITING : COREDAM_DUMP_DUMPING;
		else
			dp.state = COREDAM_DUMP_HELPER;
		coredam_status_field(status, "Name", dp.comm, sizeof(dp.comm));
		(void)coredam_kb_field(status, "RssAnon", &dp.anon_bytes);
		snprintf(f, sizeof(f), "%s/exe", de->d_name);
		l = readlinkat(dirfd(d), f, dp.exe, sizeof(dp.exe) - 1);
		dp.exe[l > 0 ? l : 0] = '\0';
		snprintf(f, sizeof(f), "%s/io", de->d_name);
		if (read_file_at(dirfd(d), f, 4096, &io) >= 0)
			coredam_proc_io_parse(io, &dp.write_bytes, &dp.syscw);
		if (grow_array((void **)&v, &alloc, n, sizeof(*v), 8) < 0)
			return -ENOMEM;
		v[n++] = dp;
	}
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

enum coredam_dump_state coredam_dump_classify(const struct coredam_dump *now,
					      const struct coredam_dump_seen *before,
					      bool have_queue, uint64_t kernel_waiting)
{
	if (now->state != COREDAM_DUMP_DUMPING)
		return now->state;
	if (!have_queue)
		return COREDAM_DUMP_DUMPING;
	if (kernel_waiting == 0)
		return COREDAM_DUMP_WRITING;
	if (before->known && (before->state == COREDAM_DUMP_WRITING || now->syscw > before->syscw))
		return COREDAM_DUMP_WRITING;
	return COREDAM_DUMP_WAITING;
}
