/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_ROOTS_H
#define COREDAM_ROOTS_H

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

#endif
