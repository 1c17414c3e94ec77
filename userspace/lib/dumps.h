/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_DUMPS_H
#define COREDAM_DUMPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "roots.h"

enum coredam_dump_state {
	COREDAM_DUMP_WRITING,	/* dumping, inside the dump cgroup: admitted */
	COREDAM_DUMP_WAITING,	/* dumping, not (yet) moved: waiting for a slot */
	COREDAM_DUMP_HELPER,	/* a pipe helper inside the dump cgroup */
	COREDAM_DUMP_DUMPING,	/* dumping, no dump cgroup to tell admission */
};

struct coredam_dump {
	pid_t pid;
	enum coredam_dump_state state;
	char comm[32];
	char exe[256];
	uint64_t write_bytes;	/* /proc/PID/io write_bytes */
};

const char *coredam_dump_state_str(enum coredam_dump_state s);

/*
 * Every task dumping core ("CoreDumping: 1" in /proc/PID/status) and every
 * process in the dump cgroup @cgroup ("" = none). *ret is malloc()ed.
 */
int coredam_dumps_list(const struct coredam_roots *roots, const char *cgroup,
		       struct coredam_dump **ret, size_t *ret_n);

#endif
