// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredamctl doctor: check everything the feature needs, say what to fix. */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>

#include "cgroup.h"
#include "control.h"
#include "ctl.h"
#include "devices.h"
#include "pipe-dest.h"
#include "space.h"
#include "macro.h"
#include "fileio.h"
#include "parse-util.h"
#include "path-util.h"
#include "string-util.h"

static int fails, warns;

__attribute__((format(printf, 2, 3)))
static void report(int level, const char *fmt, ...)
{
	static const char *const tag[] = { "[ OK ]", "[WARN]", "[FAIL]" };
	va_list ap;

	if (level == 1)
		warns++;
	if (level == 2)
		fails++;
	printf("%s ", tag[level]);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static void check_delegation(struct ctl *c, int rootfd)
{
	char rel[PATH_MAX], dir[PATH_MAX] = "";
	const char *p;

	snprintf(rel, sizeof(rel), "%s", c->cfg.cgroup + strspn(c->cfg.cgroup, "/"));
	p = rel;
	for (;;) {
		_cleanup_free_ char *avail = NULL, *en = NULL;
		char f[PATH_MAX + 32];
		const char *slash;

		snprintf(f, sizeof(f), "%s/cgroup.controllers", *dir ? dir : ".");
		if (read_file_at(rootfd, f, 4096, &avail) < 0) {
			report(2, "%s/%s: cannot read", c->roots.cgroup, f);
			return;
		}
		snprintf(f, sizeof(f), "%s/cgroup.subtree_control", *dir ? dir : ".");
		if (read_file_at(rootfd, f, 4096, &en) < 0)
			en = strdup("");
		for (int i = 0; i < 2; i++) {
			const char *ctrl = i ? "memory" : "io";

			if (coredam_word_in(en, ctrl))
				continue;
			if (coredam_word_in(avail, ctrl))
				report(1, "%s%s%s/cgroup.subtree_control lacks +%s (coredamd enables it; or: echo +%s > that file)",
				       c->roots.cgroup, *dir ? "/" : "", dir, ctrl, ctrl);
			else
				report(2, "%s/%s: controller %s not available (not delegated by the parent)", c->roots.cgroup,
				       dir, ctrl);
		}
		slash = strchr(p, '/');
		if (!slash)
			break;
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - rel), rel);
		p = slash + 1;
	}
}

/*
 * The helper a pipe core_pattern names, and the one coredamd would
 * install: the kernel runs it as root for every crash, and one that is
 * missing loses every core. false when core_pattern's is refused.
 */
static bool check_pipe_helpers(struct ctl *c, const struct coredam_kernel_support *k, const char *pattern)
{
	struct coredam_core_pattern cp = { 0 };
	struct coredam_error e;
	bool ok = true;

	if (coredam_core_pattern_parse(pattern, &cp) == 0 && cp.kind == COREDAM_CORE_PIPE) {
		ok = coredam_pipe_helper_check(cp.helper, 0, &e) == 0;
		if (!ok)
			report(2, "core_pattern pipes cores to %s, which is refused: %s; cores are lost or unsafe",
			       cp.helper, e.msg);
		else
			report(0, "pipe helper %s is an executable owned by root and writable by no one else", cp.helper);
	}
	if (c->cfg.pipe_set_core_pattern && !k->core_cgroup && strcmp(cp.helper, c->cfg.pipe_program) != 0 &&
	    coredam_pipe_helper_check(c->cfg.pipe_program, 0, &e) < 0)
		report(2, "[Pipe] Program=%s refused: %s; coredamd will not install it", c->cfg.pipe_program, e.msg);
	return ok;
}

/*
 * The three ways coredam protects a machine's dumps: the kernel series
 * (any core_pattern: every dump queued and charged to the dump cgroup),
 * the coredump socket coredamd serves (Linux 6.17 and later, no patch),
 * and coredam-pipe (a stock kernel's pipe core_pattern).
 */
enum doctor_path {
	DOCTOR_PATH_NONE,
	DOCTOR_PATH_KERNEL,
	DOCTOR_PATH_SOCKET,
	DOCTOR_PATH_PIPE,
};

/* Which one core_pattern and the kernel put in force now. */
static enum doctor_path path_in_force(const struct ctl *c, const struct coredam_kernel_support *k,
				      const char *pattern)
{
	struct coredam_core_pattern cp = { 0 };

	if (coredam_kernel_full(k))
		return DOCTOR_PATH_KERNEL;
	if (coredam_core_pattern_parse(pattern, &cp) < 0)
		return DOCTOR_PATH_NONE;
	if (cp.kind == COREDAM_CORE_SOCKET && k->core_socket && strncmp(pattern, "@@", 2) == 0 &&
	    strcmp(pattern + 2, c->cfg.sock_listen) == 0)
		return DOCTOR_PATH_SOCKET;
	if (cp.kind == COREDAM_CORE_PIPE &&
	    (strcmp(cp.helper, c->cfg.pipe_program) == 0 || strcmp(path_basename(cp.helper), "coredam-pipe") == 0))
		return DOCTOR_PATH_PIPE;
	return DOCTOR_PATH_NONE;
}

/* The kernel's coredam support as probed (@r the probe's result), and whether its counters can be read. */
static void check_kernel(struct ctl *c, const struct coredam_kernel_support *k, int r, enum doctor_path path)
{
	struct coredam_stats st;

	if (r < 0) {
		report(2, "%s/sys/kernel: %s", c->roots.proc, strerror(-r));
	} else if (coredam_kernel_full(k)) {
		report(0, "kernel has core_cgroup, the admission queue, the writeback window and core_dump_stats");
	} else if (!c->cfg.require_kernel_support && path == DOCTOR_PATH_SOCKET) {
		report(0, "kernel without the coredam patches (no %s/sys/kernel/core_cgroup): not needed while coredamd "
			  "serves the coredump socket", c->roots.proc);
	} else {
		report(c->cfg.require_kernel_support ? 2 : 1,
		       "kernel lacks the coredam patches (no %s/sys/kernel/%s): cores are not charged to %s, not queued, "
		       "not counted; install the patched kernel",
		       c->roots.proc, !k->core_cgroup ? "core_cgroup" : !k->core_max_concurrency ? "core_max_concurrency" : "core_dump_stats",
		       c->cfg.cgroup);
	}
	if (r < 0 || !k->core_dump_stats)
		return;
	r = coredam_stats_read(&c->roots, &st);
	if (r == -EBADMSG)
		report(1, "%s/sys/kernel/core_dump_stats is not the \"name value\" list this version reads "
		       "(a kernel of an older series): status and metrics show no counters; install the current series",
		       c->roots.proc);
	else if (r < 0)
		report(1, "%s/sys/kernel/core_dump_stats: %s: status and metrics show no counters", c->roots.proc,
		       strerror(-r));
}

/* cgroup v2, delegation, the dump cgroup and kernel.core_cgroup. */
static void check_cgroup(struct ctl *c, const struct coredam_kernel_support *k)
{
	_cleanup_close_ int rootfd = -1;
	struct coredam_cg_layout l;
	char advice[2 * PATH_MAX + 400];
	int r;

	/* hybrid and legacy machines need a reboot, not a mount over their v1 tree */
	if (coredam_cg_layout(c->roots.proc, c->roots.cgroup, &l) == 0 &&
	    coredam_cg_layout_advice(&l, c->roots.cgroup, advice, sizeof(advice))) {
		report(2, "%s", advice);
		return;
	}
	r = open_dir_at(AT_FDCWD, c->roots.cgroup, &rootfd);
	if (r < 0 || faccessat(rootfd, "cgroup.controllers", F_OK, 0) < 0) {
		report(2, "cgroup v2 is not mounted at %s (mount -t cgroup2 none %s)", c->roots.cgroup, c->roots.cgroup);
	} else {
		int cg;

		report(0, "cgroup v2 mounted at %s", c->roots.cgroup);
		check_delegation(c, rootfd);
		if (coredam_cg_open(rootfd, c->cfg.cgroup, false, &cg) == 0) {
			struct coredam_error f = { 0 };

			if (coredam_cg_check_files(rootfd, c->cfg.cgroup, &f) < 0)
				report(2, "%s%s: %s", c->roots.cgroup, f.where, f.msg);
			else
				report(0, "dump cgroup %s exists with io.max and memory.high", c->cfg.cgroup);
			close(cg);
		} else {
			report(1, "dump cgroup %s does not exist yet (coredamd creates it)", c->cfg.cgroup);
		}
		if (k->core_cgroup) {
			char cur[PATH_MAX] = "";

			coredam_sysctl_read(&c->roots, "kernel.core_cgroup", cur, sizeof(cur));
			if (strcmp(cur, c->cfg.cgroup) == 0)
				report(0, "kernel.core_cgroup = %s", cur);
			else
				report(1, "kernel.core_cgroup is \"%s\", the configuration says %s (is coredamd running?)", cur,
				       c->cfg.cgroup);
		}
	}
}

/* Where cores go, from the configuration or core_pattern; NULL if unknown (reported). */
static const char *check_pattern(struct ctl *c, const char *pattern, enum doctor_path path,
				 struct coredam_core_pattern *cp)
{
	const char *dest = NULL;

	if (c->cfg.destination[0]) {
		dest = c->cfg.destination;
	} else if (path == DOCTOR_PATH_SOCKET) {
		/* the socket's writer stores as coredam-pipe does */
		dest = c->cfg.pipe_directory;
	} else if (coredam_core_pattern_parse(pattern, cp) == 0 && cp->dir_known) {
		dest = cp->dir;
	} else {
		report(2, "core destination unknown for core_pattern \"%s\": %s", pattern,
		       coredam_core_pattern_parse(pattern, cp) == 0 ? cp->note : "cannot parse");
	}
	return dest;
}

/*
 * The verdict: which path protects this machine's dumps now, and why;
 * none is a warning (a problem with RequireKernelSupport=yes), with what
 * would put one in force.
 */
static void check_path(struct ctl *c, const struct coredam_kernel_support *k, const char *pattern,
		       enum doctor_path path, bool helper_ok)
{
	struct coredam_core_pattern cp = { 0 };
	int none = c->cfg.require_kernel_support ? 2 : 1;

	switch (path) {
	case DOCTOR_PATH_KERNEL:
		report(0, "path: the kernel series: every dump waits its turn in the kernel and is charged to %s",
		       c->cfg.cgroup);
		return;
	case DOCTOR_PATH_SOCKET:
		report(0, "path: the coredump socket %s, served by coredamd: a dump waits before the kernel sends a "
			  "byte and is written from %s", c->cfg.sock_listen, c->cfg.cgroup);
		return;
	case DOCTOR_PATH_PIPE:
		(void)coredam_core_pattern_parse(pattern, &cp);
		if (!helper_ok) {
			report(2, "path: none: the pipe helper %s is refused (above)", cp.helper);
			return;
		}
		report(0, "path: the pipe helper %s on a kernel without the series: a dump waits in the helper, "
			  "its crashed process held by the kernel, and is written from %s", cp.helper,
		       c->cfg.cgroup);
		if (k->core_socket)
			report(0, "this kernel has the coredump socket: with [Socket] SetCorePattern=yes coredamd would "
				  "hold or refuse each dump before the kernel sends a byte (coredamd(8))");
		return;
	case DOCTOR_PATH_NONE:
		break;
	}
	(void)coredam_core_pattern_parse(pattern, &cp);
	if (k->core_socket && c->cfg.sock_set_core_pattern)
		report(1, "path: none yet: core_pattern is \"%s\"; coredamd sets @@%s when it starts ([Socket] "
			  "SetCorePattern=yes)", pattern, c->cfg.sock_listen);
	else if (c->cfg.pipe_set_core_pattern)
		report(1, "path: none yet: core_pattern is \"%s\"; coredamd sets |%s when it starts ([Pipe] "
			  "SetCorePattern=yes)", pattern, c->cfg.pipe_program);
	else if (cp.kind == COREDAM_CORE_PIPE)
		report(none, "path: none: core_pattern pipes to %s, not to coredam-pipe: coredam queues none of its "
			     "dumps (only a service manager can place that helper in %s); set [Pipe] SetCorePattern=yes",
		       cp.helper, c->cfg.cgroup);
	else if (cp.kind == COREDAM_CORE_SOCKET)
		report(none, "path: none: core_pattern \"%s\" names another coredump server ([Socket] Listen=%s): "
			     "its dumps are neither queued nor paced by coredam", pattern, c->cfg.sock_listen);
	else
		report(none, "path: none: core_pattern \"%s\" on a kernel without the series: dumps are neither "
			     "queued nor paced; set %s SetCorePattern=yes, or install the patched kernel", pattern,
		       k->core_socket ? "[Socket]" : "[Pipe]");
}

/* The destination's file system: throttleable, cgroup writeback, free space. */
static void check_destination(struct ctl *c, const char *dest)
{
	struct coredam_dev_info d;
	struct coredam_space sp;
	int r;

	r = coredam_dev_resolve_path(&c->roots, dest, &d);
	if (r < 0)
		report(2, "destination %s: no filesystem found in %s/self/mountinfo: %s", dest, c->roots.proc,
		       strerror(-r));
	else if (!d.throttleable)
		report(2, "destination %s: %s", dest, d.reason);
	else {
		report(0, "destination %s on %s (%s): io.max names %u:%u (%s, %s)", dest, d.mountpoint, d.fstype,
		       d.major, d.minor, d.name, coredam_dev_kind_str(d.kind));
		if (d.cgroup_writeback)
			report(0, "%s supports cgroup writeback: buffered core writes are throttled", d.fstype);
		else
			report(2, "%s does not support cgroup writeback: io.max cannot throttle buffered core writes "
				  "(use ext4, xfs, btrfs, f2fs or ext2)", d.fstype);
	}
	if (coredam_space_check(&c->cfg, dest, &sp) == 0) {
		char b1[16], b2[16];

		report(sp.below ? 2 : 0, "free space at %s: %s (floor %s)%s", dest,
		       format_size(b1, sizeof(b1), sp.free_bytes), format_size(b2, sizeof(b2), sp.floor_bytes),
		       sp.below ? ": below the floor, new dumps are skipped; free space or lower FreeSpaceFloor=" : "");
	} else {
		report(1, "cannot statvfs %s: %m", dest);
	}
}

int cmd_doctor(struct ctl *c, int argc, char **argv)
{
	struct coredam_kernel_support k = { 0 };
	struct coredam_core_pattern cp;
	char v[PATH_MAX], resp[256], pattern[1024] = "";
	enum doctor_path path;
	const char *dest;
	bool helper_ok;
	int r;

	if (argc > 1) {
		if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)
			return ctl_option_exit("doctor", 'h');
		return ctl_unexpected_arg("doctor", argv[1]);
	}
	fails = warns = 0;

	if (c->cfg_ok)
		report(0, "configuration %s and its drop-ins are valid", c->config_file);
	else
		report(2, "configuration: %s", c->cfg_error);
	coredam_sysctl_read(&c->roots, "kernel.core_pattern", pattern, sizeof(pattern));
	r = coredam_kernel_probe(&c->roots, &k);
	path = path_in_force(c, &k, pattern);
	check_kernel(c, &k, r, path);
	check_cgroup(c, &k);
	helper_ok = check_pipe_helpers(c, &k, pattern);
	dest = check_pattern(c, pattern, path, &cp);
	if (dest)
		check_destination(c, dest);
	check_path(c, &k, pattern, path, helper_ok);

	/* PSI for adaptive mode */
	snprintf(v, sizeof(v), "%s/pressure/io", c->roots.proc);
	if (access(v, R_OK) == 0)
		report(0, "pressure stall information available (%s)", v);
	else
		report(c->cfg.mode == COREDAM_MODE_ADAPTIVE ? 2 : 1,
		       "%s missing: adaptive mode needs CONFIG_PSI=y (and psi=1 if CONFIG_PSI_DEFAULT_DISABLED)", v);

	/* agent */
	r = coredam_ctl_call(c->socket, "PING", resp, sizeof(resp));
	if (r >= 0 && strncmp(resp, "OK", 2) == 0)
		report(0, "coredamd answers on %s", c->socket);
	else
		report(1, "coredamd not reachable on %s: %s", c->socket, r < 0 ? strerror(-r) : resp);

	printf("\n%d problem(s), %d warning(s)\n", fails, warns);
	return fails ? CTL_EXIT_FAIL : CTL_EXIT_OK;
}
