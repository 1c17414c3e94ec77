/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_SYSCTL_H
#define COREDAM_SYSCTL_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roots.h"

/* The patched kernel's knobs, as files under /proc/sys/kernel. */
struct coredam_kernel_support {
	bool core_cgroup;
	bool core_max_concurrency;
	bool core_max_waiting;
	bool core_wait_timeout_ms;
	bool core_writeback_window;
	bool core_dump_stats;
	bool core_socket;	/* core_modes lists "socket": core_pattern may be "@@path" (6.17 on) */
};

int coredam_kernel_probe(const struct coredam_roots *roots, struct coredam_kernel_support *ret);
bool coredam_kernel_full(const struct coredam_kernel_support *k);

/* "kernel.core_pattern" -> <proc>/sys/kernel/core_pattern; one line, newline stripped */
int coredam_sysctl_read(const struct coredam_roots *roots, const char *name, char *buf, size_t size);
int coredam_sysctl_write(const struct coredam_roots *roots, const char *name, const char *value);

enum coredam_core_kind {
	COREDAM_CORE_FILE,
	COREDAM_CORE_PIPE,
	COREDAM_CORE_SOCKET,
};

struct coredam_core_pattern {
	enum coredam_core_kind kind;
	bool dir_known;		/* dir holds the destination directory */
	char dir[PATH_MAX];
	char helper[PATH_MAX];	/* pipe mode: the helper program */
	char note[256];		/* why dir is unknown, or how it was guessed */
};

/*
 * Where does a core_pattern put cores? File patterns: the directory part
 * up to the last '/' before the first '%' specifier. Relative patterns
 * write into the crashing task's cwd: unknown. Pipe patterns: known
 * helpers (systemd-coredump, apport) map to their store; others unknown.
 */
int coredam_core_pattern_parse(const char *pattern, struct coredam_core_pattern *ret);

/*
 * kernel.core_dump_stats: "name value" lines, one counter each (as
 * /proc/vmstat). Indices in the kernel's order; the parser goes by name.
 */
enum {
	COREDAM_STAT_STARTED,
	COREDAM_STAT_ADMITTED,
	COREDAM_STAT_COMPLETED,
	COREDAM_STAT_FAILED,		/* the sum of the six FAILED_* reasons */
	COREDAM_STAT_SKIPPED_FULL,
	COREDAM_STAT_SKIPPED_TIMEOUT,
	COREDAM_STAT_SKIPPED_KILLED,
	COREDAM_STAT_SKIPPED_PIPE_LIMIT,	/* admitted, then over core_pipe_limit */
	COREDAM_STAT_ACTIVE,		/* gauge: admitted and writing */
	COREDAM_STAT_WAITING,		/* gauge: waiting for a slot */
	COREDAM_STAT_OVERTIME,		/* gauge: writing after their lease ended */
	COREDAM_STAT_LEASES_ENDED,
	COREDAM_STAT_UNCHARGED,		/* not charged to core_cgroup, or helper not started in it */
	COREDAM_STAT_FAILED_OPEN,	/* the core file could not be created */
	COREDAM_STAT_FAILED_SETUP,	/* no memory, no helper, no name */
	COREDAM_STAT_FAILED_LIMIT,	/* cut short by RLIMIT_CORE */
	COREDAM_STAT_FAILED_KILLED,	/* cut short by a fatal signal */
	COREDAM_STAT_FAILED_WRITE,	/* a write failed: disk full, helper gone */
	COREDAM_STAT_FAILED_IO,		/* writeback of the core failed */
	COREDAM_STAT_BYTES,
	COREDAM_STATS_N,
};

struct coredam_stats {
	uint64_t v[COREDAM_STATS_N];
};

/* The kernel's names, indexed by COREDAM_STAT_*. */
extern const char *const coredam_stat_names[COREDAM_STATS_N];

/*
 * Parse the text of core_dump_stats. Names the agent does not know (a newer
 * kernel's) are ignored and the order does not matter; a known name that is
 * missing or repeated, a line that is not "name value", or a value that
 * does not fit in 64 bits is -EBADMSG.
 */
int coredam_stats_parse(const char *text, struct coredam_stats *ret);
int coredam_stats_read(const struct coredam_roots *roots, struct coredam_stats *ret);
/*
 * Do the documented invariants hold? The kernel hands out only snapshots
 * in which they do:
 *   started = admitted + waiting + skipped_full + skipped_timeout + skipped_killed
 *   admitted = completed + failed + skipped_pipe_limit + active + overtime
 *   failed = failed_open + failed_setup + failed_limit + failed_killed + failed_write + failed_io
 */
bool coredam_stats_consistent(const struct coredam_stats *s);
/*
 * Did a dump start, get its slot or end (completed, failed, skipped)
 * between the snapshots @before and @now? False when none of those
 * counters moved: the dumps in progress are the ones of @before, each
 * still waiting or writing as it was.
 */
bool coredam_stats_dumps_moved(const struct coredam_stats *before, const struct coredam_stats *now);

/*
 * Remember the original value of each sysctl the agent changes, in
 * <state>/sysctl.saved, before the first change. An existing file (from a
 * previous run that did not shut down cleanly) is kept: it holds the values
 * from before coredam touched anything.
 */
int coredam_sysctl_save(const struct coredam_roots *roots, const char *const *names, size_t n);
/* Write the saved values back and remove the file; -ENOENT if there is none. */
int coredam_sysctl_restore(const struct coredam_roots *roots);

/*
 * The same under another file of the state directory: the core_pattern a
 * unit's ExecStartPre= installs is saved apart from the daemon's knobs
 * (COREDAM_PATTERN_SAVED), as the two are restored by different processes.
 */
#define COREDAM_PATTERN_SAVED "core_pattern.saved"
int coredam_sysctl_save_as(const struct coredam_roots *roots, const char *file, const char *const *names, size_t n);
int coredam_sysctl_restore_from(const struct coredam_roots *roots, const char *file);

#endif
