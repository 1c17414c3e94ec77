/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_DUMPS_H
#define COREDAM_DUMPS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "roots.h"
#include "sysctl.h"

enum coredam_dump_state {
	COREDAM_DUMP_WRITING,	/* dumping, admitted */
	COREDAM_DUMP_WAITING,	/* dumping, waiting for a slot */
	COREDAM_DUMP_HELPER,	/* a pipe helper inside the dump cgroup */
	COREDAM_DUMP_DUMPING,	/* dumping; the listing alone cannot tell more */
};

struct coredam_dump {
	pid_t pid;
	enum coredam_dump_state state;
	char comm[32];
	char exe[256];
	uint64_t write_bytes;	/* /proc/PID/io write_bytes */
	uint64_t syscw;		/* /proc/PID/io syscw: the dump's writes count too */
	uint64_t anon_bytes;	/* RssAnon: private memory it keeps from being freed until its dump ends */
	char cgroup[1024];	/* its v2 cgroup, or an ancestor when longer; "" unknown */
};

const char *coredam_dump_state_str(enum coredam_dump_state s);

/* The "@key:   N kB" line of a /proc/PID/status or /proc/meminfo, in bytes; -ENOENT, -EINVAL. */
int coredam_kb_field(const char *text, const char *key, uint64_t *ret);

/* MemTotal of <proc>/meminfo, in bytes. */
int coredam_mem_total(const struct coredam_roots *roots, uint64_t *ret);

/* MemAvailable of <proc>/meminfo, in bytes. */
int coredam_mem_available(const struct coredam_roots *roots, uint64_t *ret);

/*
 * The dump's executable (its comm when the path is unknown) for a log line
 * or a terminal, escaped by coredam_escape() with @flags: the crashed
 * process chose it. Returns @buf.
 */
const char *coredam_dump_name(const struct coredam_dump *d, unsigned int flags, char *buf, size_t size);

/*
 * The value of the line "@key:" of @status (a /proc/PID/status), blanks
 * after the colon skipped, cut to fit @buf; false when there is no such line.
 */
bool coredam_status_field(const char *status, const char *key, char *buf, size_t size);

/*
 * Every task dumping core ("CoreDumping: 1" in /proc/PID/status) and every
 * process in the dump cgroup @cgroup ("" = none; its cgroup.procs below
 * roots->cgroup, read once, each listed process's own cgroup file then
 * checked). *ret is malloc()ed.
 * A dumper is listed as DUMPING: the kernel keeps it in its own cgroup,
 * waiting or writing alike (the first series moved admitted dumpers into
 * @cgroup: such a one is listed as WRITING).
 */
int coredam_dumps_list(const struct coredam_roots *roots, const char *cgroup,
		       struct coredam_dump **ret, size_t *ret_n);

/* What the agent knew of a dumper at its last look. */
struct coredam_dump_seen {
	bool known;
	enum coredam_dump_state state;
	uint64_t syscw;
};

/* How far the agent must look to know the dumps in progress. */
enum coredam_dumps_look {
	COREDAM_LOOK_NONE,	/* nothing dumps: no look at all */
	COREDAM_LOOK_KNOWN,	/* the dumps known, as they were: their bytes only */
	COREDAM_LOOK_ALL,	/* every process in /proc */
};

/*
 * From the counters at the last look (@last) and now (@now), either NULL
 * when there are none, and the @n_known dumps the agent tracks:
 *  - NONE when nothing dumps, nothing started since the last look and
 *    nothing was dumping then;
 *  - otherwise ALL when asked for (@full: the tick's look once an interval, for
 *    what the counters cannot tell), where the counters are not exact
 *    (@exact false: a pipe helper's, or a pipe helper among the dumps), or
 *    when a dump started, got its slot or ended since the last look;
 *  - KNOWN else: the look through every process (a file read each, most
 *    of the agent's own CPU time) can wait for the tick.
 */
enum coredam_dumps_look coredam_dumps_look(const struct coredam_stats *last, const struct coredam_stats *now,
					   size_t n_known, bool exact, bool full);

/*
 * write_bytes and syscw of a /proc/PID/io text (0 for a line it lacks);
 * and of the process @pid itself: -errno when its file cannot be read
 * (-ENOENT: it is gone).
 */
void coredam_proc_io_parse(const char *io, uint64_t *ret_write_bytes, uint64_t *ret_syscw);
int coredam_proc_io_read(const struct coredam_roots *roots, pid_t pid, uint64_t *ret_write_bytes,
			 uint64_t *ret_syscw);

/*
 * Whether a dumper listed now writes or waits for a slot. With nobody
 * waiting in the kernel's queue (@kernel_waiting 0) every dumper writes;
 * a dumper whose write count grew since the last look, or that was seen
 * writing before, has been admitted; any other waits. Without a queue
 * (@have_queue false) a dumper is only DUMPING.
 */
enum coredam_dump_state coredam_dump_classify(const struct coredam_dump *now,
					      const struct coredam_dump_seen *before,
					      bool have_queue, uint64_t kernel_waiting);

#endif
