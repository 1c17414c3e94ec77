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

enum {
	COREDAM_STAT_ACTIVE,
	COREDAM_STAT_WAITING,
	COREDAM_STAT_STARTED,
	COREDAM_STAT_ADMITTED,
	COREDAM_STAT_COMPLETED,
	COREDAM_STAT_FAILED,
	COREDAM_STAT_SKIPPED_FULL,
	COREDAM_STAT_SKIPPED_TIMEOUT,
	COREDAM_STAT_SKIPPED_KILLED,
	COREDAM_STAT_SKIPPED_PIPE_LIMIT,
	COREDAM_STAT_UNMOVED,
	COREDAM_STAT_BYTES,
	COREDAM_STAT_OVERTIME,		/* gauge: writing after their lease ended */
	COREDAM_STAT_LEASES_ENDED,
	COREDAM_STATS_N,
};

/* The fields of the first series' line; later fields read as 0 when absent. */
#define COREDAM_STATS_MIN (COREDAM_STAT_BYTES + 1)

struct coredam_stats {
	uint64_t v[COREDAM_STATS_N];
};

extern const char *const coredam_stat_names[COREDAM_STATS_N];

/* One line of COREDAM_STATS_MIN or more (new fields are appended) unsigned decimals. */
int coredam_stats_parse(const char *line, struct coredam_stats *ret);
int coredam_stats_read(const struct coredam_roots *roots, struct coredam_stats *ret);
/* Do the documented invariants hold? (exact at rest) */
bool coredam_stats_consistent(const struct coredam_stats *s);

/*
 * Remember the original value of each sysctl the agent changes, in
 * <state>/sysctl.saved, before the first change. An existing file (from a
 * previous run that did not shut down cleanly) is kept: it holds the values
 * from before coredam touched anything.
 */
int coredam_sysctl_save(const struct coredam_roots *roots, const char *const *names, size_t n);
/* Write the saved values back and remove the file; -ENOENT if there is none. */
int coredam_sysctl_restore(const struct coredam_roots *roots);

#endif
