// SPDX-License-Identifier: LGPL-2.1-or-later
/* The dump cgroup: creation, controller delegation, io.max, memory.high. */
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "error.h"
#include "macro.h"
#include "alloc-util.h"
#include "log.h"
#include "mountinfo.h"
#include "fileio.h"
#include "string-util.h"
#include "parse-util.h"
#include "path-util.h"

static int fmt_limit(char *buf, size_t size, uint64_t v)
{
	if (v == 0)
		return xsnprintf(buf, size, "max");
	return xsnprintf(buf, size, "%" PRIu64, v);
}

int coredam_io_limit_format(const struct coredam_io_limit *l, char *buf, size_t size)
{
	char rbps[24], wbps[24], riops[24], wiops[24];

	fmt_limit(rbps, sizeof(rbps), l->rbps);
	fmt_limit(wbps, sizeof(wbps), l->wbps);
	fmt_limit(riops, sizeof(riops), l->riops);
	fmt_limit(wiops, sizeof(wiops), l->wiops);
	return xsnprintf(buf, size, "%u:%u rbps=%s wbps=%s riops=%s wiops=%s",
			 l->major, l->minor, rbps, wbps, riops, wiops);
}

int coredam_io_limit_parse(const char *line, struct coredam_io_limit *ret)
{
	struct coredam_io_limit l = { 0 };
	char buf[256], *tok, *save = NULL;
	bool have_dev = false;
	int r;

	r = xsnprintf(buf, sizeof(buf), "%s", line);
	if (r < 0)
		return r;
	for (tok = strtok_r(buf, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save)) {
		uint64_t *field = NULL, v;
		char *eq;

		if (!have_dev) {
			char *colon = strchr(tok, ':');

			if (!colon)
				return -EINVAL;
			*colon = '\0';
			if (parse_u32(tok, &l.major) < 0 || parse_u32(colon + 1, &l.minor) < 0)
				return -EINVAL;
			have_dev = true;
			continue;
		}
		eq = strchr(tok, '=');
		if (!eq)
			return -EINVAL;
		*eq = '\0';
		if (strcmp(tok, "rbps") == 0)
			field = &l.rbps;
		else if (strcmp(tok, "wbps") == 0)
			field = &l.wbps;
		else if (strcmp(tok, "riops") == 0)
			field = &l.riops;
		else if (strcmp(tok, "wiops") == 0)
			field = &l.wiops;
		else
			return -EINVAL;
		if (strcmp(eq + 1, "max") == 0)
			v = 0;
		else if (parse_u64(eq + 1, &v) < 0 || v == 0)
			return -EINVAL;
		*field = v;
	}
	if (!have_dev)
		return -EINVAL;
	*ret = l;
	return 0;
}

int coredam_io_max_parse(const char *text, struct coredam_io_limit **ret, size_t *ret_n)
{
	_cleanup_free_ struct coredam_io_limit *v = NULL;
	size_t n = 0, alloc = 0;
	const char *p = text;

	while (*p) {
		size_t len = strcspn(p, "\n");
		char line[256];
		int r;

		if (len >= sizeof(line))
			return -EINVAL;
		memcpy(line, p, len);
		line[len] = '\0';
		p += len;
		if (*p)
			p++;
		if (!*strstrip(line))
			continue;
		r = grow_array((void **)&v, &alloc, n, sizeof(*v), 4);
		if (r < 0)
			return r;
		r = coredam_io_limit_parse(line, &v[n]);
		if (r < 0)
			return r;
		n++;
	}
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

int coredam_cg_path_valid(const char *path)
{
	const char *p = path;

	if (!path || path[0] != '/')
		return -EINVAL;
	if (strlen(path) >= PATH_MAX)
		return -ENAMETOOLONG;
	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if ((len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		p += len;
	}
	/* the root cgroup: io.max cannot be set there and dumps must not go there */
	if (strspn(path, "/") == strlen(path))
		return -EINVAL;
	return 0;
}

/* A valid cgroup @path relative to the cgroup root: no leading or trailing '/'. */
static int cg_relative(const char *path, char *buf, size_t size)
{
	int r;

	r = coredam_cg_path_valid(path);
	if (r < 0)
		return r;
	r = xsnprintf(buf, size, "%s", path + strspn(path, "/"));
	if (r < 0)
		return r;
	while (*buf && buf[strlen(buf) - 1] == '/')
		buf[strlen(buf) - 1] = '\0';
	return 0;
}

int coredam_cg_open(int rootfd, const char *path, bool create, int *ret_fd)
{
	char buf[PATH_MAX];
	_cleanup_close_ int fd = -1;
	char *p;
	int r;

	r = cg_relative(path, buf, sizeof(buf));
	if (r < 0)
		return r;
	if (create) {
		/* mkdir each component from the top: parents first */
		for (p = strchr(buf, '/');; p = strchr(p + 1, '/')) {
			if (p)
				*p = '\0';
			if (mkdirat(rootfd, buf, 0755) < 0 && errno != EEXIST)
				return -errno;
			if (!p)
				break;
			*p = '/';
		}
	}
	r = open_dir_at(rootfd, buf, &fd);
	if (r < 0)
		return r;
	*ret_fd = take_fd(&fd);
	return 0;
}

/* Name the file at fault, /@dir/@file ("" the root), and say what is wrong with it. */
static __attribute__((format(printf, 5, 6))) int set_fault(struct coredam_error *e, int r, const char *dir,
							  const char *file, const char *fmt, ...)
{
	char where[PATH_MAX + 32];
	va_list ap;

	if (!e)
		return r;
	if (!*dir)
		snprintf(where, sizeof(where), "/%s", file);
	else
		snprintf(where, sizeof(where), "/%s/%s", dir, file);
	va_start(ap, fmt);
	r = coredam_error_setv_at(e, r, where, 0, fmt, ap);
	va_end(ap);
	return r;
}

/* +io +memory in the cgroup.subtree_control of @dir ("" the root), each written on its own. */
static int enable_in(int rootfd, const char *dir, struct coredam_error *reterr)
{
	static const char *const ctrls[] = { "io", "memory" };
	_cleanup_free_ char *avail = NULL, *enabled = NULL;
	const char *d = *dir ? dir : ".";
	char f[PATH_MAX + 32];
	int r;

	r = xsnprintf(f, sizeof(f), "%s/cgroup.controllers", d);
	if (r < 0)
		return r;
	r = read_file_at(rootfd, f, 4096, &avail);
	if (r < 0)
		return set_fault(reterr, r, dir, "cgroup.controllers", "cannot read: %s (is cgroup v2 mounted there?)",
				 strerror(-r));
	r = xsnprintf(f, sizeof(f), "%s/cgroup.subtree_control", d);
	if (r < 0)
		return r;
	r = read_file_at(rootfd, f, 4096, &enabled);
	if (r < 0)
		return set_fault(reterr, r, dir, "cgroup.subtree_control", "cannot read: %s", strerror(-r));
	for (size_t i = 0; i < ELEMENTSOF(ctrls); i++) {
		char cmd[32];

		if (coredam_word_in(enabled, ctrls[i]))
			continue;
		if (!coredam_word_in(avail, ctrls[i]))
			return set_fault(reterr, -ENOENT, dir, "cgroup.subtree_control",
					 "controller \"%s\" is not available here (not in cgroup.controllers: enable +%s in the parent's cgroup.subtree_control or delegate it)",
					 ctrls[i], ctrls[i]);
		snprintf(cmd, sizeof(cmd), "+%s", ctrls[i]);
		r = write_file_at(rootfd, f, cmd);
		if (r < 0)
			return set_fault(reterr, r, dir, "cgroup.subtree_control", "writing \"%s\" failed: %s%s", cmd,
					 strerror(-r),
					 r == -EBUSY ? " (processes live in this cgroup: no internal processes with domain controllers)" :
					 r == -EACCES || r == -EPERM ? " (not delegated to us)" : "");
		log_debug("enabled +%s in /%s/cgroup.subtree_control", ctrls[i], dir);
	}
	return 0;
}

int coredam_cg_enable_controllers(int rootfd, const char *path, struct coredam_error *reterr)
{
	char rel[PATH_MAX], dir[PATH_MAX] = "";
	const char *p;
	int r;

	r = coredam_cg_path_valid(path);
	if (r < 0)
		return set_fault(reterr, r, "", path, "not a valid cgroup path (absolute, not the root, no . or ..)");
	r = cg_relative(path, rel, sizeof(rel));
	if (r < 0)
		return r;

	/* walk ancestors: "" (root), "a", "a/b", ... up to the parent of rel */
	p = rel;
	for (;;) {
		const char *slash;

		r = enable_in(rootfd, dir, reterr);
		if (r < 0)
			return r;
		slash = strchr(p, '/');
		if (!slash)
			break;
		r = xsnprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
		if (r < 0)
			return r;
		p = slash + 1;
	}
	return 0;
}

int coredam_cg_check_files(int rootfd, const char *path, struct coredam_error *reterr)
{
	static const struct {
		const char *file, *ctrl;
	} files[] = { { "io.max", "io" }, { "memory.high", "memory" } };
	char rel[PATH_MAX], parent[PATH_MAX];
	int r;

	r = cg_relative(path, rel, sizeof(rel));
	if (r < 0)
		return r;
	snprintf(parent, sizeof(parent), "%s", rel);
	{
		char *s = strrchr(parent, '/');

		if (s)
			*s = '\0';
		else
			parent[0] = '\0';
	}
	for (size_t i = 0; i < ELEMENTSOF(files); i++) {
		char f[PATH_MAX + 32];

		r = xsnprintf(f, sizeof(f), "%s/%s", rel, files[i].file);
		if (r < 0)
			return r;
		if (faccessat(rootfd, f, F_OK, 0) == 0)
			continue;
		return set_fault(reterr, -ENOENT, parent, "cgroup.subtree_control", "lacks +%s, so /%s has no %s",
				 files[i].ctrl, rel, files[i].file);
	}
	return 0;
}

static bool same_dev(const struct coredam_io_limit *a, const struct coredam_io_limit *b)
{
	return a->major == b->major && a->minor == b->minor;
}

int coredam_cg_write_io_max(int cgfd, const struct coredam_io_limit *limits, size_t n,
			    const struct coredam_io_limit *old, size_t n_old)
{
	_cleanup_close_ int fd = -1;

	fd = openat(cgfd, "io.max", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (size_t i = 0; i < n_old + n; i++) {
		struct coredam_io_limit l;
		char line[160];
		ssize_t w;
		int r;

		if (i < n_old) {
			bool keep = false;

			for (size_t j = 0; j < n; j++)
				keep |= same_dev(&old[i], &limits[j]);
			if (keep)
				continue;
			l = (struct coredam_io_limit){ .major = old[i].major, .minor = old[i].minor };
		} else {
			l = limits[i - n_old];
		}
		r = coredam_io_limit_format(&l, line, sizeof(line));
		if (r < 0)
			return r;
		/* one rule per write(): the kernel parses one rule per call */
		w = write(fd, line, strlen(line));
		if (w < 0)
			return -errno;
		if ((size_t)w != strlen(line))
			return -EIO;
		log_debug("io.max <- %s", line);
	}
	return 0;
}

int coredam_cg_read_io_max(int cgfd, struct coredam_io_limit **ret, size_t *ret_n)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = read_file_at(cgfd, "io.max", 65536, &s);
	if (r < 0)
		return r;
	return coredam_io_max_parse(s, ret, ret_n);
}

int coredam_cg_write_memory_high(int cgfd, uint64_t bytes)
{
	char buf[32];

	if (bytes == 0)
		snprintf(buf, sizeof(buf), "max");
	else
		snprintf(buf, sizeof(buf), "%" PRIu64, bytes);
	return write_file_at(cgfd, "memory.high", buf);
}

int coredam_cg_read_procs(int cgfd, pid_t **ret, size_t *ret_n)
{
	_cleanup_free_ char *s = NULL;
	_cleanup_free_ pid_t *v = NULL;
	size_t n = 0, alloc = 0;
	char *p, *save = NULL;
	int r;

	r = read_file_at(cgfd, "cgroup.procs", 1 << 20, &s);
	if (r < 0)
		return r;
	for (p = strtok_r(s, "\n", &save); p; p = strtok_r(NULL, "\n", &save)) {
		uint32_t pid;

		if (parse_u32(p, &pid) < 0)
			return -EBADMSG;
		if (grow_array((void **)&v, &alloc, n, sizeof(*v), 16) < 0)
			return -ENOMEM;
		v[n++] = (pid_t)pid;
	}
	*ret = TAKE_PTR(v);
	*ret_n = n;
	return 0;
}

int coredam_cg_populated(int cgfd, bool *ret)
{
	_cleanup_free_ char *s = NULL;
	char *p;
	int r;

	r = read_file_at(cgfd, "cgroup.events", 4096, &s);
	if (r < 0)
		return r;
	p = strstr(s, "populated ");
	if (!p)
		return -EBADMSG;
	*ret = p[strlen("populated ")] == '1';
	return 0;
}

int coredam_cg2_mount(const char *proc_root, char *buf, size_t size)
{
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *line = NULL;
	char path[PATH_MAX];
	size_t cap = 0;
	ssize_t n;
	int r;

	r = xsnprintf(path, sizeof(path), "%s/self/mountinfo", proc_root);
	if (r < 0)
		return r;
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while ((n = getline(&line, &cap, f)) > 0) {
		struct coredam_mount m;

		if (!coredam_mountinfo_line(line, (size_t)n - (line[n - 1] == '\n'), &m) ||
		    strcmp(m.fstype, "cgroup2") != 0)
			continue;
		return xsnprintf(buf, size, "%s", m.mountpoint) < 0 ? -ENAMETOOLONG : 0;
	}
	return -ENOENT;
}

void coredam_cg_layout_parse(const char *mountinfo, const char *root, struct coredam_cg_layout *ret)
{
	struct coredam_cg_layout l = { .mode = COREDAM_CG_NONE };
	bool v2_at_root = false;

	for (const char *p = mountinfo; *p;) {
		const char *end = strchrnul(p, '\n');
		struct coredam_mount m;

		if (coredam_mountinfo_line(p, (size_t)(end - p), &m)) {
			if (strcmp(m.fstype, "cgroup") == 0) {
				l.n_v1++;
			} else if (strcmp(m.fstype, "cgroup2") == 0 && (!l.v2[0] || strcmp(m.mountpoint, root) == 0)) {
				snprintf(l.v2, sizeof(l.v2), "%s", m.mountpoint);
				v2_at_root = v2_at_root || strcmp(m.mountpoint, root) == 0;
			}
		}
		p = *end ? end + 1 : end;
	}
	if (v2_at_root)
		l.mode = COREDAM_CG_UNIFIED;
	else if (l.n_v1 && l.v2[0])
		l.mode = COREDAM_CG_HYBRID;
	else if (l.n_v1)
		l.mode = COREDAM_CG_LEGACY;
	else if (l.v2[0])
		l.mode = COREDAM_CG_ELSEWHERE;
	*ret = l;
}

int coredam_cg_layout(const char *proc_root, const char *root, struct coredam_cg_layout *ret)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX];
	int r;

	r = xsnprintf(path, sizeof(path), "%s/self/mountinfo", proc_root);
	if (r < 0)
		return r;
	r = read_file_at(AT_FDCWD, path, 4 << 20, &text);
	if (r < 0)
		return r;
	coredam_cg_layout_parse(text, root, ret);
	return 0;
}

const char *coredam_cg_layout_advice(const struct coredam_cg_layout *l, const char *root, char *buf,
				     size_t size)
{
	switch (l->mode) {
	case COREDAM_CG_UNIFIED:
		return NULL;
	case COREDAM_CG_HYBRID:
		(void)snprintf(buf, size,
			       "hybrid cgroups: %u cgroup v1 hierarchies hold the controllers, cgroup v2 at %s has "
			       "none (io and memory cannot be enabled there); boot with "
			       "systemd.unified_cgroup_hierarchy=1 (do not mount cgroup2 over %s: it would hide the "
			       "v1 tree systemd uses)", l->n_v1, l->v2, root);
		break;
	case COREDAM_CG_LEGACY:
		(void)snprintf(buf, size,
			       "cgroup v1 only (%u hierarchies): coredam needs cgroup v2; boot with "
			       "systemd.unified_cgroup_hierarchy=1", l->n_v1);
		break;
	case COREDAM_CG_ELSEWHERE:
		(void)snprintf(buf, size, "cgroup v2 is mounted at %s, not at %s: pass --cgroup-root=%s", l->v2, root,
			       l->v2);
		break;
	case COREDAM_CG_NONE:
		(void)snprintf(buf, size, "no cgroup file system is mounted: mount -t cgroup2 none %s", root);
		break;
	}
	return buf;
}

int coredam_cg_attach(int cgfd, pid_t pid)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "%d\n", (int)pid);
	return write_file_at(cgfd, "cgroup.procs", buf);
}

int coredam_proc_cgroup_parse(const char *text, bool ancestor, char *buf, size_t size)
{
	const char *v = NULL;
	size_t len;

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, "0::", 3) == 0) {
			v = p + 3;
			break;
		}
	if (!v || *v != '/' || size < 2)
		return -ENOENT;
	len = strlen(v);
	if (len && v[len - 1] == '\n')
		len--;
	if (len < size) {
		memcpy(buf, v, len);
		buf[len] = '\0';
		return 0;
	}
	if (!ancestor)
		return -ENOBUFS;
	/* the longest ancestor that fits: cut at the last '/' within the buffer */
	len = size - 1;
	while (len > 1 && v[len] != '/')
		len--;
	memcpy(buf, v, len);
	buf[len] = '\0';
	return 1;
}

int coredam_cg_of_pid(const char *proc_root, pid_t pid, char *buf, size_t size)
{
	_cleanup_free_ char *s = NULL;
	char path[PATH_MAX];
	int r;

	r = xsnprintf(path, sizeof(path), "%s/%d/cgroup", proc_root, (int)pid);
	if (r < 0)
		return r;
	r = read_file_at(AT_FDCWD, path, 65536, &s);
	if (r < 0)
		return r;
	return coredam_proc_cgroup_parse(s, false, buf, size);
}

bool coredam_cg_path_under(const char *path, const char *ancestor)
{
	size_t l = strlen(ancestor);

	if (l == 1 && ancestor[0] == '/')
		return path[0] == '/';
	return strncmp(path, ancestor, l) == 0 && (path[l] == '\0' || path[l] == '/');
}

static bool holds_any(const char *path, const char *const *held, size_t n_held)
{
	for (size_t i = 0; i < n_held; i++)
		if (coredam_cg_path_under(held[i], path))
			return true;
	return false;
}

static int split(int rootfd, char *path, size_t size, const char *const *held, size_t n_held, char (*ret)[PATH_MAX],
		 size_t max, size_t *n, unsigned depth)
{
	_cleanup_closedir_ DIR *d = NULL;
	size_t len = strlen(path);
	struct dirent *de;
	int fd, r = 0;

	if (!holds_any(path, held, n_held)) {
		if (*n >= max)
			return -E2BIG;
		snprintf(ret[(*n)++], PATH_MAX, "%s", path);
		return 0;
	}
	if (depth > 32)
		return 0;
	fd = openat(rootfd, path[1] ? path + 1 : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno; /* gone: nothing to watch there */
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((de = readdir(d))) {
		struct stat st;
		int k;

		if (de->d_name[0] == '.')
			continue;
		if (de->d_type != DT_DIR) {
			if (de->d_type != DT_UNKNOWN || fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
			    !S_ISDIR(st.st_mode))
				continue;
		}
		if (len + 1 + strlen(de->d_name) >= size)
			continue; /* too deep to name: not watched */
		snprintf(path + len, size - len, "%s%s", len == 1 ? "" : "/", de->d_name);
		k = split(rootfd, path, size, held, n_held, ret, max, n, depth + 1);
		path[len] = '\0';
		if (k == -E2BIG)
			return k;
		if (k < 0 && r == 0)
			r = k;
	}
	return r;
}

int coredam_cg_free_subtrees(int rootfd, const char *top, const char *const *held, size_t n_held,
			     char (*ret)[PATH_MAX], size_t max, size_t *ret_n)
{
	char path[PATH_MAX];

	*ret_n = 0;
	if (coredam_cg_path_valid(top) < 0 && strcmp(top, "/") != 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "%s", top);
	return split(rootfd, path, sizeof(path), held, n_held, ret, max, ret_n, 0);
}

int coredam_cg_leaf_path(const char *cgroup, const char *kernel_leaf, bool systemd, char *buf, size_t size)
{
	size_t l = strlen(cgroup);
	const char *base = path_basename(cgroup);

	if (strcmp(kernel_leaf, "auto") == 0) {
		if (systemd && l > 6 && strcmp(cgroup + l - 6, ".slice") == 0 && strlen(base) > 6)
			return xsnprintf(buf, size, "%s/%.*s-kernel.slice", cgroup, (int)(strlen(base) - 6), base);
		return xsnprintf(buf, size, "%s", cgroup);
	}
	if (strcmp(kernel_leaf, "none") == 0)
		return xsnprintf(buf, size, "%s", cgroup);
	return xsnprintf(buf, size, "%s/%s", cgroup, kernel_leaf);
}
