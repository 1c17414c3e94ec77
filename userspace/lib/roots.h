/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_ROOTS_H
#define COREDAM_ROOTS_H

#include <stdbool.h>

#include "paths.h"

/*
 * Every filesystem root the library touches. The daemon and the CLI take
 * the defaults; the unit tests point them into a temporary directory.
 */
struct coredam_roots {
	const char *cgroup;	/* cgroup v2 mount, default /sys/fs/cgroup */
	const char *proc;	/* procfs, default /proc (sysctls under proc/sys) */
	const char *sys;	/* sysfs, default /sys */
	const char *state;	/* runtime state, default /run/coredam */
	const char *conf;	/* configuration, default COREDAM_CONF_DIR (/etc/coredam) */
};

#define COREDAM_ROOTS_DEFAULT { \
	.cgroup = "/sys/fs/cgroup", .proc = "/proc", .sys = "/sys", \
	.state = "/run/coredam", .conf = COREDAM_CONF_DIR, \
}

/*
 * The options that move a root, the same in every program that takes
 * them: --cgroup-root=DIR, --proc-root=DIR, --sys-root=DIR,
 * --state-dir=DIR. Their getopt_long() values, above any program's own.
 */
enum {
	COREDAM_OPT_CGROUP_ROOT = 0x1000,
	COREDAM_OPT_PROC_ROOT,
	COREDAM_OPT_SYS_ROOT,
	COREDAM_OPT_STATE_DIR,
};

/* Set the root that the getopt_long() value @opt names to @arg; false when @opt names none. */
bool coredam_roots_option(struct coredam_roots *roots, int opt, const char *arg);

#endif
