/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_CGROUP_H
#define COREDAM_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

/* One io.max rule. A limit of 0 means "max" (no limit). */
struct coredam_io_limit {
	unsigned int major, minor;
	uint64_t rbps, wbps, riops, wiops;
};

/* "8:0 rbps=max wbps=10000000 riops=max wiops=max" (no newline). */
int coredam_io_limit_format(const struct coredam_io_limit *l, char *buf, size_t size);
/* Parse one line of io.max, as the kernel prints it or as a user writes it. */
int coredam_io_limit_parse(const char *line, struct coredam_io_limit *ret);
/* Parse a whole io.max file; *ret is malloc()ed (NULL when empty). */
int coredam_io_max_parse(const char *text, struct coredam_io_limit **ret, size_t *ret_n);

/* Reject "", "/", relative paths, "." and ".." components. */
int coredam_cg_path_valid(const char *path);

/*
 * Open (and with @create, make, including missing parents) the cgroup
 * @path relative to the cgroup root directory @rootfd.
 */
int coredam_cg_open(int rootfd, const char *path, bool create, int *ret_fd);

/*
 * Make io and memory available to @path: every ancestor from the root down
 * to @path's parent gets "+io" and "+memory" in cgroup.subtree_control,
 * each written separately. On failure @reterr names the file at fault,
 * relative to the cgroup root ("/a/cgroup.subtree_control"), and the cause
 * (controller missing from the parent's cgroup.controllers, or the write
 * refused with errno).
 */
int coredam_cg_enable_controllers(int rootfd, const char *path, struct coredam_error *reterr);

/*
 * Check the controller files exist in the cgroup; when one is missing fill
 * @reterr with the parent's cgroup.subtree_control that lacks +io/+memory.
 */
int coredam_cg_check_files(int rootfd, const char *path, struct coredam_error *reterr);

/*
 * Apply @n rules to io.max of @cgfd, one write() per rule; devices present
 * in @old (what io.max held) but not in @limits are reset to max.
 */
int coredam_cg_write_io_max(int cgfd, const struct coredam_io_limit *limits, size_t n,
			    const struct coredam_io_limit *old, size_t n_old);
int coredam_cg_read_io_max(int cgfd, struct coredam_io_limit **ret, size_t *ret_n);

/* memory.high, 0 = max */
int coredam_cg_write_memory_high(int cgfd, uint64_t bytes);

/* cgroup.procs as an array; *ret is malloc()ed. */
int coredam_cg_read_procs(int cgfd, pid_t **ret, size_t *ret_n);

/* "populated" of cgroup.events */
int coredam_cg_populated(int cgfd, bool *ret);

/* The cgroup v2 mount point, from <proc>/self/mountinfo (the first one). */
int coredam_cg2_mount(const char *proc_root, char *buf, size_t size);

/* How the machine mounts cgroups, seen from the cgroup root coredam uses. */
enum coredam_cg_mode {
	COREDAM_CG_UNIFIED,	/* cgroup v2 at the root: what coredam needs */
	COREDAM_CG_HYBRID,	/* v1 hierarchies hold the controllers, v2 beside them (systemd's "hybrid") */
	COREDAM_CG_LEGACY,	/* cgroup v1 only */
	COREDAM_CG_ELSEWHERE,	/* cgroup v2 alone, mounted somewhere else than the root */
	COREDAM_CG_NONE,	/* no cgroup file system at all */
};

struct coredam_cg_layout {
	enum coredam_cg_mode mode;
	char v2[PATH_MAX];	/* the first cgroup v2 mount point, "" if none */
	unsigned int n_v1;	/* cgroup v1 hierarchies mounted */
};

/* Pure: the layout from the text of a mountinfo file, for a cgroup root @root (e.g. /sys/fs/cgroup). */
void coredam_cg_layout_parse(const char *mountinfo, const char *root, struct coredam_cg_layout *ret);
/* The same from <proc>/self/mountinfo. */
int coredam_cg_layout(const char *proc_root, const char *root, struct coredam_cg_layout *ret);
/*
 * What an operator should do about @l, for coredam's cgroup root @root, or
 * NULL when nothing is wrong (unified).
 */
const char *coredam_cg_layout_advice(const struct coredam_cg_layout *l, const char *root, char *buf,
				     size_t size);

/*
 * Where dumping processes go under the dump cgroup @cgroup ([Cgroup]
 * Path=), by [Cgroup] KernelLeaf= @kernel_leaf: "none", Path itself; a
 * name, that child; "auto", NAME-kernel.slice for NAME.slice when
 * @systemd runs the machine (a cgroup whose children use controllers may
 * hold no process itself), else Path. The path into @buf.
 */
int coredam_cg_leaf_path(const char *cgroup, const char *kernel_leaf, bool systemd, char *buf, size_t size);

/* Move @pid into the cgroup @cgfd (one write() to cgroup.procs). */
int coredam_cg_attach(int cgfd, pid_t pid);

/*
 * The v2 path in the text of /proc/PID/cgroup: what follows "0::" at the
 * start of a line, to the end of the text less its last newline (a
 * cgroup's name may hold a newline: the rest of the line alone could name
 * another cgroup). A path longer than @size: -ENOBUFS, or with @ancestor
 * its longest ancestor that fits, and 1.
 */
int coredam_proc_cgroup_parse(const char *text, bool ancestor, char *buf, size_t size);

/* The v2 cgroup of @pid ("0::/path" of <proc>/PID/cgroup), e.g. "/coredump.slice". */
int coredam_cg_of_pid(const char *proc_root, pid_t pid, char *buf, size_t size);

/* @path is @ancestor or below it ("/a/b" is under "/a", "/ab" is not). */
bool coredam_cg_path_under(const char *path, const char *ancestor);

/*
 * What to watch of the cgroup @top when the cgroups @held hold processes
 * whose stalls are not foreground work (dumpers): @top itself when none of
 * @held is @top or under it; else, below it, every cgroup that holds none
 * of @held and whose parent does. Paths are relative to the cgroup root
 * @rootfd ("/system.slice"). Fills at most @max paths; -E2BIG when there
 * were more.
 */
int coredam_cg_free_subtrees(int rootfd, const char *top, const char *const *held, size_t n_held,
			     char (*ret)[PATH_MAX], size_t max, size_t *ret_n);

#endif
