/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* One line of /proc/PID/mountinfo. */
#ifndef COREDAM_MOUNTINFO_H
#define COREDAM_MOUNTINFO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

struct coredam_mount {
	unsigned int major, minor; /* st_dev of files on the mount */
	char mountpoint[PATH_MAX]; /* unescaped */
	char fstype[64];
	char source[PATH_MAX];     /* unescaped; "none" and the like as written */
};

/*
 * Pure: parse one line (@len bytes, without its newline) of the form
 *   ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
 * False when the line is not of that form or a field does not fit (a
 * field is never cut short).
 */
bool coredam_mountinfo_line(const char *line, size_t len, struct coredam_mount *ret);

#endif
