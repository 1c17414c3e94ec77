// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredamd: set up the dump cgroup, the devices and the kernel knobs. */
#include <fcntl.h>
#include <inttypes.h>
#include <linux/capability.h>
#include <string.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

#include "agent.h"
#include "cgroup.h"
#include "control.h"
#include "log.h"
#include "pipe-args.h"
#include "pipe-dest.h"
#include "pipe-state.h"
#include "sandbox.h"
#include "macro.h"
#include "string-util.h"
#include "parse-util.h"
#include "path-util.h"

static const char *const owned_sysctls[] = {
	"kernel.core_cgroup",
	"kernel.core_max_concurrency",
	"kernel.core_max_waiting",
	"kernel.core_wait_timeout_ms",
	"kernel.core_writeback_window",
};

int agent_check_kernel(struct agent *a)
{
	struct coredam_kernel_support *k = &a->kern;
	int r;

	r = coredam_kernel_probe(&a->roots, k);
	if (r < 0) {
		log_error("cannot read %s/sys/kernel: %s", a->roots.proc, strerror(-r));
		return r;
	}
	a->m.kernel_full = coredam_kernel_full(k);
	r = coredam_mem_total(&a->roots, &a->mem_total);
	if (r < 0)
		log_warning("cannot read MemTotal from %s/meminfo: %s; WaitingMemoryMax= as a percentage bounds nothing",
			    a->roots.proc, strerror(-r));
	/*
	 * CAP_SYS_ADMIN is for the series' knobs alone: on a kernel without
	 * them nothing here needs it, and a compromised agent is weaker
	 * without; but for the coredump socket's writers, which confine
	 * themselves in a mount namespace of their own (and then drop every
	 * capability) unless the unit's sandbox stands in for it (external).
	 */
	if (!k->core_cgroup && !k->core_max_concurrency && !k->core_max_waiting && !k->core_wait_timeout_ms &&
	    !k->core_writeback_window &&
	    !(a->cfg.sock_set_core_pattern && a->cfg.pipe_sandbox && !a->pattern_external)) {
		r = coredam_cap_drop(CAP_SYS_ADMIN);
		if (r < 0)
			log_warning("cannot drop CAP_SYS_ADMIN, which this kernel's knobs do not need: %s", strerror(-r));
	}
	if (k->core_dump_stats) {
		struct coredam_stats st;

		/* the counters are read every interval; say once here why they would be missing */
		r = coredam_stats_read(&a->roots, &st);
		if (r == -EBADMSG)
			log_warning("%s/sys/kernel/core_dump_stats is not the \"name value\" list this agent reads "
				    "(a kernel of an older series?): no dump counters in metrics and status, ignoring",
				    a->roots.proc);
		else if (r < 0)
			log_warning("cannot read %s/sys/kernel/core_dump_stats: %s: no dump counters in metrics and status, ignoring",
				    a->roots.proc, strerror(-r));
		else if (!coredam_stats_consistent(&st))
			log_warning("%s/sys/kernel/core_dump_stats does not add up; its counters are reported as read",
				    a->roots.proc);
	}
	if (a->m.kernel_full) {
		log_info("kernel support: complete (core_cgroup, admission queue, writeback window, statistics)");
		return 0;
	}
	log_warning("kernel support: incomplete; this kernel lacks the coredam patches. What that means:");
	if (!k->core_cgroup)
		log_warning("  %s/sys/kernel/core_cgroup missing: cores are not charged to the dump cgroup; "
			    "only pipe helpers that a service manager starts in it (systemd-coredump with the slice drop-in) are throttled",
			    a->roots.proc);
	if (!k->core_max_concurrency || !k->core_max_waiting || !k->core_wait_timeout_ms)
		log_warning("  core_max_concurrency/core_max_waiting/core_wait_timeout_ms missing: dumps are not queued; "
			    "concurrency, queue cap and wait timeout are not enforced, and the space guard can only warn");
	if (!k->core_writeback_window)
		log_warning("  core_writeback_window missing: file-mode dumps may pile up dirty page cache");
	if (!k->core_dump_stats)
		log_warning("  core_dump_stats missing: no dump counters in metrics and status");
	if (a->cfg.require_kernel_support) {
		log_error("RequireKernelSupport=yes in the configuration and the kernel lacks support: exiting");
		return -EOPNOTSUPP;
	}
	return 0;
}

/*
 * Under systemd the dump cgroup is a slice whose children are units
 * (systemd-coredump's workers): a cgroup with children that use
 * controllers may hold no process itself, so the kernel's moves go to a
 * leaf below it. KernelLeaf=auto picks NAME-kernel.slice for NAME.slice
 * when systemd runs the machine (a nested slice, created empty here or by
 * coredump-kernel.slice), else none.
 */
static int setup_kernel_leaf(struct agent *a)
{
	int fd, r;

	r = coredam_cg_leaf_path(a->cg_path, a->cfg.kernel_leaf, sd_booted() > 0, a->kernel_path,
				 sizeof(a->kernel_path));
	if (r < 0)
		return r;
	if (strcmp(a->kernel_path, a->cg_path) == 0)
		return 0;
	r = coredam_cg_open(a->cgroot_fd, a->kernel_path, true, &fd);
	if (r < 0) {
		log_error("cannot create cgroup %s%s: %s", a->roots.cgroup, a->kernel_path, strerror(-r));
		return r;
	}
	close(fd);
	log_info("dumping tasks go to the leaf %s event=kernel-leaf", a->kernel_path);
	return 0;
}

int agent_setup_cgroup(struct agent *a)
{
	struct coredam_error f = { 0 };
	bool existed;
	int r;

	if (a->cgroot_fd < 0) {
		r = open_dir_at(AT_FDCWD, a->roots.cgroup, &a->cgroot_fd);
		if (r < 0) {
			log_error("cannot open cgroup root %s: %s", a->roots.cgroup, strerror(-r));
			return r;
		}
	}
	if (faccessat(a->cgroot_fd, "cgroup.controllers", F_OK, 0) < 0) {
		log_error("%s/cgroup.controllers missing: cgroup v2 is not mounted at %s", a->roots.cgroup,
			  a->roots.cgroup);
		return -ENOTSUP;
	}
	r = coredam_cg_enable_controllers(a->cgroot_fd, a->cfg.cgroup, &f);
	if (r < 0) {
		log_error("cannot delegate io and memory to %s: %s%s: %s", a->cfg.cgroup, a->roots.cgroup, f.where,
			  f.msg);
		return r;
	}
	{
		int fd;

		existed = coredam_cg_open(a->cgroot_fd, a->cfg.cgroup, false, &fd) == 0;
		if (existed)
			close(fd);
	}
	if (a->cg_fd >= 0)
		close(a->cg_fd);
	a->cg_fd = -1;
	r = coredam_cg_open(a->cgroot_fd, a->cfg.cgroup, true, &a->cg_fd);
	if (r < 0) {
		log_error("cannot create cgroup %s%s: %s", a->roots.cgroup, a->cfg.cgroup, strerror(-r));
		return r;
	}
	r = coredam_cg_check_files(a->cgroot_fd, a->cfg.cgroup, &f);
	if (r < 0) {
		log_error("%s%s: %s", a->roots.cgroup, f.where, f.msg);
		return r;
	}
	snprintf(a->cg_path, sizeof(a->cg_path), "%s", a->cfg.cgroup);
	/* a slice of systemd's gets its memory.high through systemd, with io.max (agent_apply_io()) */
	unit_attach(a);
	if (!a->unit.active) {
		r = coredam_cg_write_memory_high(a->cg_fd, a->cfg.memory_high);
		if (r < 0) {
			log_error("cannot write %s%s/memory.high: %s", a->roots.cgroup, a->cfg.cgroup, strerror(-r));
			return r;
		}
	}
	r = setup_kernel_leaf(a);
	if (r < 0)
		return r;
	if (a->events_fd >= 0)
		close(a->events_fd);
	a->events_fd = openat(a->cg_fd, "cgroup.events", O_RDONLY | O_CLOEXEC);
	log_info("cgroup %s %s event=cgroup-ready memory_high=%" PRIu64, a->cfg.cgroup,
		 existed ? "adopted" : "created", a->cfg.memory_high);
	return 0;
}

static void add_dev(struct agent *a, const struct coredam_dev_info *d)
{
	for (size_t i = 0; i < a->n_devs; i++)
		if (a->devs[i].major == d->major && a->devs[i].minor == d->minor)
			return;
	if (a->n_devs < MAX_DEVS)
		a->devs[a->n_devs++] = *d;
}

bool agent_pattern_dest(const struct agent *a, const char *pat, struct coredam_core_pattern *cp, char *buf,
			size_t size)
{
	memset(cp, 0, sizeof(*cp));
	if (a->cfg.destination[0])
		return xsnprintf(buf, size, "%s", a->cfg.destination) >= 0;
	/* served here: the writer stores where the pipe helper would */
	if (a->sock.active && strcmp(pat, a->sock.pattern) == 0)
		return xsnprintf(buf, size, "%s", a->cfg.pipe_directory) >= 0;
	if (coredam_core_pattern_parse(pat, cp) < 0 || !cp->dir_known)
		return false;
	return xsnprintf(buf, size, "%s", cp->dir) >= 0;
}

void agent_resolve_devices(struct agent *a)
{
	char *save = NULL, *tok, list[sizeof(a->cfg.devices)];
	int r;

	a->n_devs = 0;
	r = coredam_sysctl_read(&a->roots, "kernel.core_pattern", a->core_pattern, sizeof(a->core_pattern));
	if (r < 0) {
		log_warning("cannot read kernel.core_pattern: %s", strerror(-r));
		a->core_pattern[0] = '\0';
	}
	a->dest_known = agent_pattern_dest(a, a->core_pattern, &a->cp, a->dest, sizeof(a->dest));
	if (a->cp.note[0])
		log_info("core_pattern \"%s\": %s", a->core_pattern, a->cp.note);
	if (a->dest_known) {
		struct coredam_dev_info d;

		r = coredam_dev_resolve_path(&a->roots, a->dest, &d);
		if (r < 0) {
			log_warning("destination %s: cannot find its filesystem in %s/self/mountinfo: %s", a->dest,
				    a->roots.proc, strerror(-r));
		} else if (!d.throttleable) {
			log_warning("destination %s: %s", a->dest, d.reason);
		} else {
			log_info("destination %s on %s (%s, %s) event=device-resolved device=%u:%u name=%s kind=%s%s%s",
				 a->dest, d.mountpoint, d.fstype, d.source, d.major, d.minor, d.name,
				 coredam_dev_kind_str(d.kind), d.slaves[0] ? " members=" : "", d.slaves);
			if (!d.cgroup_writeback)
				log_warning("destination %s: %s does not support cgroup writeback: buffered writes escape io.max",
					    a->dest, d.fstype);
			add_dev(a, &d);
		}
	} else {
		log_warning("core destination unknown (core_pattern \"%s\"): set Destination= or Devices= to throttle",
			    a->core_pattern);
	}
	snprintf(list, sizeof(list), "%s", a->cfg.devices);
	for (tok = strtok_r(list, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		struct coredam_dev_info d;

		r = coredam_dev_resolve_spec(&a->roots, tok, &d);
		if (r < 0) {
			log_warning("Devices=%s: cannot resolve under %s: %s", tok, a->roots.sys, strerror(-r));
			continue;
		}
		add_dev(a, &d);
	}
}

/* The budget as the slice's limits: each of them on every device, and MemoryHigh. */
static void slice_want(const struct agent *a, struct coredam_slice_want *ret)
{
	*ret = (struct coredam_slice_want){
		.n_devs = MIN(a->n_devs, (size_t)COREDAM_SLICE_MAX_DEVS),
		.io = {
			[COREDAM_SLICE_IO_WRITE_BPS] = a->budget.wbps,
			[COREDAM_SLICE_IO_READ_BPS] = a->cfg.read_bps,
			[COREDAM_SLICE_IO_WRITE_IOPS] = a->cfg.write_iops,
			[COREDAM_SLICE_IO_READ_IOPS] = a->cfg.read_iops,
		},
		.memory_high = a->cfg.memory_high,
	};
	for (size_t i = 0; i < ret->n_devs; i++) {
		ret->major[i] = a->devs[i].major;
		ret->minor[i] = a->devs[i].minor;
	}
}

/*
 * Under systemd, through the slice's unit properties: true when systemd
 * took them. When it cannot be told, cgroupfs from now on (memory.high
 * written here, io.max by the caller): logged once, shown in status.
 */
static bool apply_through_unit(struct agent *a)
{
	struct coredam_slice_want want;
	int r;

	slice_want(a, &want);
	r = unit_apply(a, &want);
	if (r >= 0)
		return true;
	log_warning("cannot set %s's limits through systemd: %s; writing %s%s's io.max and memory.high directly "
		    "from now on event=slice-fallback", a->unit.name, strerror(-r), a->roots.cgroup, a->cg_path);
	unit_fallback(a);
	r = coredam_cg_write_memory_high(a->cg_fd, a->cfg.memory_high);
	if (r < 0)
		log_error("cannot write %s%s/memory.high: %s", a->roots.cgroup, a->cg_path, strerror(-r));
	return false;
}

int agent_apply_io(struct agent *a)
{
	struct coredam_io_limit lim[MAX_DEVS], *old = NULL;
	size_t n_old = 0;
	int r;

	if (a->unit.active && apply_through_unit(a))
		return 0;
	for (size_t i = 0; i < a->n_devs; i++)
		lim[i] = (struct coredam_io_limit){
			.major = a->devs[i].major,
			.minor = a->devs[i].minor,
			.wbps = a->budget.wbps,
			.rbps = a->cfg.read_bps,
			.wiops = a->cfg.write_iops,
			.riops = a->cfg.read_iops,
		};
	if (coredam_cg_read_io_max(a->cg_fd, &old, &n_old) < 0)
		n_old = 0;
	r = coredam_cg_write_io_max(a->cg_fd, lim, a->n_devs, old, n_old);
	free(old);
	if (r < 0)
		log_error("cannot write %s%s/io.max: %s", a->roots.cgroup, a->cg_path, strerror(-r));
	return r;
}

/*
 * Whether the dump cgroup or its kernel leaf is no longer the one set up:
 * removed, or removed and made again by someone else without the budget
 * (the descriptor held is then another directory than the path names).
 * cgroup v2 refuses renames. The kernel leaves dumps uncharged once the
 * cgroup it pinned is removed.
 */
bool agent_cgroup_gone(struct agent *a)
{
	struct stat held, now;
	int fd, r;

	if (a->cg_fd < 0 || fstat(a->cg_fd, &held) < 0)
		return true;
	if (coredam_cg_open(a->cgroot_fd, a->cg_path, false, &fd) < 0)
		return true;
	r = fstat(fd, &now);
	close(fd);
	if (r < 0 || now.st_ino != held.st_ino || now.st_dev != held.st_dev)
		return true;
	if (strcmp(a->kernel_path, a->cg_path) != 0) {
		if (coredam_cg_open(a->cgroot_fd, a->kernel_path, false, &fd) < 0)
			return true;
		close(fd);
	}
	return false;
}

int agent_apply_core_cgroup(struct agent *a)
{
	int r;

	if (!a->kern.core_cgroup)
		return 0;
	r = coredam_sysctl_write(&a->roots, "kernel.core_cgroup", a->kernel_path);
	if (r < 0)
		log_error("cannot write %s/sys/kernel/core_cgroup=%s: %s%s", a->roots.proc, a->kernel_path,
			  strerror(-r),
			  r == -EBUSY ? " (the cgroup has controllers enabled in its own cgroup.subtree_control)" : "");
	return r;
}

/*
 * Does io.max hold the budget for every device? Something else may write
 * it: systemd does when it starts coredump.slice or on daemon-reload, when
 * the agent does not set the slice's limits through it (a->unit).
 */
bool agent_io_in_force(struct agent *a)
{
	_cleanup_free_ struct coredam_io_limit *cur = NULL;
	size_t n = 0;

	if (coredam_cg_read_io_max(a->cg_fd, &cur, &n) < 0)
		return true;	/* cannot tell; agent_apply_io() would fail the same way */
	for (size_t i = 0; i < a->n_devs; i++) {
		struct coredam_io_limit want = {
			.wbps = a->budget.wbps, .rbps = a->cfg.read_bps,
			.wiops = a->cfg.write_iops, .riops = a->cfg.read_iops,
		}, have = { 0 };	/* no line: no limit */

		for (size_t j = 0; j < n; j++)
			if (cur[j].major == a->devs[i].major && cur[j].minor == a->devs[i].minor)
				have = cur[j];
		if (have.wbps != want.wbps || have.rbps != want.rbps || have.wiops != want.wiops ||
		    have.riops != want.riops)
			return false;
	}
	return true;
}

static int write_u32(struct agent *a, const char *name, uint32_t v)
{
	char buf[16];
	int r;

	snprintf(buf, sizeof(buf), "%u", v);
	r = coredam_sysctl_write(&a->roots, name, buf);
	if (r < 0)
		log_error("cannot write %s/sys/%s=%s: %s", a->roots.proc, name, buf, strerror(-r));
	return r;
}

int agent_apply_admission(struct agent *a)
{
	struct coredam_admission adm;
	int r = 0;

	coredam_admission_eval(&a->cfg, &a->budget, a->tick.space_valid && a->tick.space_below,
			       coredam_share_bytes(&a->cfg.waiting_memory, a->mem_total), a->pin_bytes, &adm);
	if (a->adm_applied && memcmp(&adm, &a->adm, sizeof(adm)) == 0)
		return 0;
	if (adm.memory_bound != a->adm.memory_bound) {
		char bound[32], pin[32];

		if (adm.memory_bound)
			log_notice("waiting places cut to %u by WaitingMemoryMax= (%s for waiters that hold up to %s each) "
				   "event=queue-memory waiting=%u pin_bytes=%" PRIu64,
				   adm.waiting,
				   format_size(bound, sizeof(bound), coredam_share_bytes(&a->cfg.waiting_memory, a->mem_total)),
				   format_size(pin, sizeof(pin), a->pin_bytes), adm.waiting, a->pin_bytes);
		else
			log_info("waiting places back to QueueCap= event=queue-memory waiting=%u", adm.waiting);
	}
	if (a->kern.core_max_concurrency)
		r = write_u32(a, "kernel.core_max_concurrency", adm.concurrency) ?: r;
	if (a->kern.core_max_waiting)
		r = write_u32(a, "kernel.core_max_waiting", adm.waiting) ?: r;
	if (a->kern.core_wait_timeout_ms)
		r = write_u32(a, "kernel.core_wait_timeout_ms", adm.timeout_ms) ?: r;
	if (!a->kern.core_max_concurrency) {
		/* no kernel queue: coredam-pipe takes the same budget from the state directory */
		struct coredam_pipe_budget b = { adm.concurrency, adm.waiting, adm.timeout_ms };
		int w = coredam_pipe_budget_write(a->roots.state, &b);

		if (w < 0)
			log_warning("cannot publish the budget to %s/pipe/budget: %s", a->roots.state, strerror(-w));
	}
	if (r == 0) {
		a->adm = adm;
		a->adm_applied = true;
		a->m.waiting_places = adm.waiting;
	}
	return r;
}

/* The core_pattern that names the helper. */
static int pipe_pattern(const struct agent *a, char *buf, size_t size)
{
	return xsnprintf(buf, size, "|%s %s %s", a->cfg.pipe_program, a->cfg.pipe_directory, COREDAM_PIPE_SPECIFIERS);
}

/*
 * Point core_pattern at the helper, and core_pipe_limit at 0 so that the
 * kernel skips no pipe dump and the helper does the queueing.
 */
static int install_pipe(struct agent *a)
{
	struct coredam_error e = {};
	char pattern[4096];
	int r;

	r = pipe_pattern(a, pattern, sizeof(pattern));
	if (r < 0)
		return r;
	/*
	 * Fail closed: the kernel runs the helper as root for every crash,
	 * and one that is missing loses every core. core_pattern keeps its
	 * old value then.
	 */
	r = coredam_pipe_helper_check(a->cfg.pipe_program, 0, &e);
	if (r < 0) {
		log_error("[Pipe] Program=%s refused: %s; kernel.core_pattern left as it was", a->cfg.pipe_program,
			  e.msg);
		return r;
	}
	r = mkdir_p(a->cfg.pipe_directory, 0755);
	if (r < 0)
		log_warning("cannot create %s: %s (coredam-pipe refuses to write there until it exists)",
			    a->cfg.pipe_directory, strerror(-r));
	r = coredam_sysctl_write(&a->roots, "kernel.core_pipe_limit", "0");
	if (r < 0) {
		log_error("cannot write %s/sys/kernel/core_pipe_limit=0: %s", a->roots.proc, strerror(-r));
		return r;
	}
	r = coredam_sysctl_write(&a->roots, "kernel.core_pattern", pattern);
	if (r < 0) {
		log_error("cannot write %s/sys/kernel/core_pattern: %s", a->roots.proc, strerror(-r));
		return r;
	}
	log_info("core_pattern set to the pipe helper event=pipe-helper core_pattern=\"%s\"", pattern);
	return 0;
}

/*
 * Stock kernel with [Pipe] SetCorePattern=yes: core_pattern names the
 * helper (the previous value is in sysctl.saved). With
 * --core-pattern=external the unit's ExecStartPre= installed it and this
 * process cannot write it: the helper is active if the pattern is its.
 */
static int apply_pipe(struct agent *a)
{
	int r;

	if (a->pattern_external) {
		char want[4096], now[4096];

		r = pipe_pattern(a, want, sizeof(want));
		if (r < 0)
			return r;
		if (coredam_sysctl_read(&a->roots, "kernel.core_pattern", now, sizeof(now)) < 0 ||
		    strcmp(now, want) != 0) {
			log_warning("core_pattern is not the pipe helper's (\"%s\"): coredamd --core-pattern=install "
				    "(the unit's ExecStartPre=) did not set it; the helper's budget is published anyway",
				    now);
		}
	} else {
		r = install_pipe(a);
		if (r < 0)
			return r;
	}
	agent_resolve_devices(a);
	agent_apply_io(a);
	return 0;
}

/* The sysctls @names as they are, for agent_core_pattern_restore(); a previous run's kept. */
static int save_pattern(struct agent *a, const char *const *names, size_t n)
{
	int r;

	r = mkdir_p(a->roots.state, 0755);
	if (r >= 0)
		r = coredam_sysctl_save_as(&a->roots, COREDAM_PATTERN_SAVED, names, n);
	if (r < 0)
		log_error("cannot save core_pattern to %s/%s: %s; left as it was", a->roots.state,
			  COREDAM_PATTERN_SAVED, strerror(-r));
	return r;
}

int agent_core_pattern_install(struct agent *a)
{
	static const char *const names[] = { "kernel.core_pattern", "kernel.core_pipe_limit" };
	int r;

	if (!a->cfg.pipe_set_core_pattern || a->kern.core_cgroup) {
		log_info("core_pattern left as it is (%s)", a->kern.core_cgroup ? "the kernel queues dumps itself"
										 : "[Pipe] SetCorePattern=no");
		return 0;
	}
	r = save_pattern(a, names, ELEMENTSOF(names));
	if (r < 0)
		return r;
	r = install_pipe(a);
	if (r < 0)
		(void)coredam_sysctl_restore_from(&a->roots, COREDAM_PATTERN_SAVED);
	return r;
}

bool agent_core_pattern_is_socket(struct agent *a)
{
	char pattern[4096];

	return coredam_sysctl_read(&a->roots, "kernel.core_pattern", pattern, sizeof(pattern)) == 0 &&
	       strncmp(pattern, "@@", 2) == 0;
}

/*
 * [Socket] SetCorePattern=yes under a service manager: core_pattern names
 * the socket only once coredamd listens there (coredam-socket.service
 * starts after coredamd.service's READY=1, which follows listen()), so no
 * dump finds it missing. The old value is saved where install saves it,
 * for restore. Run in the initial mount namespace: the kernel refuses
 * "@@" from any other.
 */
int agent_core_pattern_socket(struct agent *a)
{
	static const char *const names[] = { "kernel.core_pattern" };
	char pattern[PATH_MAX + 2];
	struct stat st;
	int r;

	if (!a->cfg.sock_set_core_pattern || a->kern.core_cgroup) {
		/* applied again (ExecReload=) after the configuration stopped asking for it */
		if (agent_core_pattern_is_socket(a))
			return agent_core_pattern_restore(a);
		log_info("core_pattern left as it is (%s)", a->kern.core_cgroup ? "the kernel queues dumps itself"
										 : "[Socket] SetCorePattern=no");
		return 0;
	}
	if (!a->kern.core_socket) {
		log_error("[Socket] SetCorePattern=yes: this kernel has no coredump socket (@@ needs Linux 6.17 or "
			  "later): core_pattern left as it was");
		return -EOPNOTSUPP;
	}
	if (lstat(a->cfg.sock_listen, &st) < 0 || !S_ISSOCK(st.st_mode) || st.st_uid != 0) {
		log_error("[Socket] Listen=%s is no socket of root's (does coredamd listen there?): core_pattern left "
			  "as it was", a->cfg.sock_listen);
		return -ENOTCONN;
	}
	r = save_pattern(a, names, ELEMENTSOF(names));
	if (r < 0)
		return r;
	r = sock_pattern(a, pattern, sizeof(pattern));
	if (r >= 0)
		r = coredam_sysctl_write(&a->roots, "kernel.core_pattern", pattern);
	if (r < 0) {
		log_error("cannot write %s/sys/kernel/core_pattern: %s; left as it was", a->roots.proc, strerror(-r));
		(void)coredam_sysctl_restore_from(&a->roots, COREDAM_PATTERN_SAVED);
		return r;
	}
	log_info("core_pattern set to the coredump socket event=socket core_pattern=\"%s\"", pattern);
	return 0;
}

int agent_core_pattern_restore(struct agent *a)
{
	int r = coredam_sysctl_restore_from(&a->roots, COREDAM_PATTERN_SAVED);

	if (r == -ENOENT)
		return 0;	/* nothing was installed */
	if (r < 0) {
		log_error("restoring core_pattern from %s/%s failed: %s (file kept)", a->roots.state,
			  COREDAM_PATTERN_SAVED, strerror(-r));
		return r;
	}
	log_info("core_pattern restored event=core-pattern-restored");
	return 0;
}

int agent_apply_sysctls(struct agent *a, bool first)
{
	int r;

	if (first) {
		const char *names[ELEMENTSOF(owned_sysctls) + 2];
		size_t n = 0;

		for (size_t i = 0; i < ELEMENTSOF(owned_sysctls); i++)
			names[n++] = owned_sysctls[i];
		a->pipe_active = a->cfg.pipe_set_core_pattern && !a->kern.core_cgroup;
		if (a->pipe_active && !a->pattern_external) {
			names[n++] = "kernel.core_pattern";
			names[n++] = "kernel.core_pipe_limit";
		}
		if (a->sock.active && !a->pattern_external)
			names[n++] = "kernel.core_pattern";
		r = coredam_sysctl_save(&a->roots, names, n);
		if (r < 0) {
			log_error("cannot save the original sysctls to %s/sysctl.saved: %s", a->roots.state,
				  strerror(-r));
			return r;
		}
		a->sysctls_touched = true;
	}
	if (a->kern.core_writeback_window) {
		r = write_u32(a, "kernel.core_writeback_window", (uint32_t)(a->cfg.writeback_window / 1024));
		if (r < 0)
			return r;
	}
	if (a->pipe_active) {
		r = apply_pipe(a);
		if (r < 0)
			return r;
	} else if (first && a->sock.active) {
		/* external: --core-pattern=socket names the socket once this listens */
		r = a->pattern_external ? 0 : sock_install_pattern(a);
		if (r < 0)
			return r;
		agent_resolve_devices(a);
		agent_apply_io(a);
	} else if (!first && a->cfg.pipe_set_core_pattern && !a->kern.core_cgroup) {
		log_warning("[Pipe] SetCorePattern=yes takes effect when coredamd restarts");
	}
	a->adm_applied = false;
	r = agent_apply_admission(a);
	if (r < 0)
		return r;
	return agent_apply_core_cgroup(a);
}

void agent_restore(struct agent *a)
{
	int r;

	if (!a->kern.core_max_concurrency) {
		/* coredam-pipe falls back to the configuration */
		r = coredam_pipe_budget_remove(a->roots.state);
		if (r < 0 && r != -ENOENT)
			log_warning("cannot remove %s/pipe/budget: %s", a->roots.state, strerror(-r));
	}
	if (!a->sysctls_touched)
		return;
	r = coredam_sysctl_restore(&a->roots);
	if (r < 0 && r != -ENOENT)
		log_error("restoring sysctls from %s/sysctl.saved failed: %s (file kept)", a->roots.state,
			  strerror(-r));
	else
		log_info("sysctls restored event=sysctls-restored");
}

void agent_budget_reset(struct agent *a)
{
	coredam_budget_params_from_config(&a->cfg, a->tick.peak_write_bps, &a->params);
	coredam_budget_init(&a->params, &a->budget);
}

static void log_config(struct agent *a)
{
	char w[24];

	log_info("config mode=%s cgroup=%s write_bps=%s concurrency=%u queue_cap=%u wait_timeout_ms=%" PRIu64,
		 coredam_mode_str(a->cfg.mode), a->cfg.cgroup, format_bps_field(w, sizeof(w), a->cfg.write_bps),
		 a->cfg.concurrency, a->cfg.queue_cap, a->cfg.wait_timeout_usec / 1000);
}

/*
 * Put a->cfg in force after @old: the cgroup (when its path or memory.high
 * changed), the devices, the pressure sources, io.max and the kernel's
 * knobs. On failure @reterr (if given) says which step failed.
 */
static int reload_apply(struct agent *a, const struct coredam_config *old, struct coredam_error *reterr)
{
	int r;

	if (strcmp(old->cgroup, a->cfg.cgroup) != 0 || old->memory_high != a->cfg.memory_high ||
	    old->set_through_systemd != a->cfg.set_through_systemd) {
		r = agent_setup_cgroup(a);
		if (r < 0)
			return coredam_error_set(reterr, r, "cgroup %s setup failed: %s", a->cfg.cgroup, strerror(-r));
	}
	agent_budget_reset(a);
	agent_resolve_devices(a);
	pressure_close(a);
	pressure_setup(a);
	r = agent_apply_io(a);
	if (r < 0)
		return coredam_error_set(reterr, r, "cannot write io.max of %s: %s", a->cfg.cgroup, strerror(-r));
	if (a->sock.active) {
		r = sock_check_directory(a, reterr);
		if (r < 0)
			return r;
	}
	r = agent_apply_sysctls(a, false);
	if (r < 0)
		return coredam_error_set(reterr, r, "cannot set the kernel's coredump knobs: %s", strerror(-r));
	return 0;
}

/*
 * Load the configuration again and put it in force. If it does not load,
 * or any step of putting it in force fails, the last good configuration
 * stays (and is put back in force) and the reload is reported as failed:
 * never "ok" for a configuration that is not what runs.
 */
int agent_reload(struct agent *a)
{
	struct coredam_config cfg, old = a->cfg;
	struct coredam_error e = {};
	int r;

	r = coredam_ctl_reload_config(a->config_file, a->dropins.list, &a->cfg, &cfg, &e);
	if (r < 0) {
		(void)coredam_error_str(&e, a->last_reload, sizeof(a->last_reload));
		goto refused;
	}
	a->cfg = cfg;
	r = reload_apply(a, &old, &e);
	if (r < 0) {
		(void)coredam_error_str(&e, a->last_reload, sizeof(a->last_reload));
		a->cfg = old;
		if (reload_apply(a, &cfg, NULL) < 0)
			log_error("the last good configuration could not be put back in force either");
		goto refused;
	}
	snprintf(a->last_reload, sizeof(a->last_reload), "ok");
	a->m.reloads++;
	log_info("configuration reloaded event=reloaded");
	log_config(a);
	return 0;

refused:
	log_error("reload refused, keeping the last good configuration: %s event=reload-failed", a->last_reload);
	a->m.reload_failures++;
	return r;
}

int agent_set(struct agent *a, const char *name, const char *value, struct coredam_error *reterr)
{
	struct coredam_config cfg = a->cfg;
	const char *section, *key;
	int r;

	r = coredam_ctl_apply_set(&cfg, name, value, reterr);
	if (r < 0)
		return r;
	(void)coredam_ctl_set_key(name, &section, &key);
	a->cfg = cfg;
	{
		struct coredam_budget keep = a->budget;
		bool mode_change = strcmp(key, "Mode") == 0;

		coredam_budget_params_from_config(&a->cfg, a->tick.peak_write_bps, &a->params);
		if (mode_change || a->cfg.mode == COREDAM_MODE_FIXED) {
			coredam_budget_init(&a->params, &a->budget);
		} else {
			/* hold, lifted or not */
			struct coredam_pressure_sample s = { .foreground = a->params.target, .others_idle = true };

			coredam_budget_step(&a->params, &keep, &s, &a->budget);
		}
	}
	r = agent_apply_io(a);
	if (r >= 0)
		r = agent_apply_admission(a);
	if (r < 0)
		return coredam_error_set(reterr, r, "applying failed: %s", strerror(-r));
	log_info("runtime change %s=%s event=set mode=%s write_bps=%" PRIu64 " concurrency=%u", key, value,
		 coredam_mode_str(a->cfg.mode), a->budget.wbps, a->budget.concurrency);
	return 0;
}
