/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_SPACE_H
#define COREDAM_SPACE_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "budget.h"
#include "config.h"

struct coredam_space {
	uint64_t free_bytes;	/* available to unprivileged writers (f_bavail) */
	uint64_t total_bytes;
	uint64_t floor_bytes;
	bool below;
};

/* Pure: is @free below the floor the config sets for a filesystem of @total? */
void coredam_space_eval(const struct coredam_config *cfg, uint64_t free_bytes, uint64_t total_bytes,
			struct coredam_space *ret);
int coredam_space_check(const struct coredam_config *cfg, const char *dir, struct coredam_space *ret);
/* The same for an open directory (the pipe helper's destination, opened component by component). */
int coredam_space_check_fd(const struct coredam_config *cfg, int dirfd, struct coredam_space *ret);

/*
 * The admission sysctls to write, from the budget and the space guard.
 *
 * The kernel has no "admit nothing" setting (core_max_concurrency=0 means
 * unlimited). While the destination is below its free-space floor the agent
 * squeezes admission instead: one dump may write at a time, none may wait
 * (core_max_waiting=1 with core_wait_timeout_ms=1: a dump that cannot get
 * the slot at once is skipped and counted as skipped_timeout or
 * skipped_full by the kernel). What can still land below the floor is
 * bounded by the dumps already writing plus one.
 *
 * Each waiting dumper keeps its memory (what it alone holds: RssAnon)
 * until its dump ends. With @mem_bound (WaitingMemoryMax= resolved
 * against MemTotal, 0: none) and @pin (the most one dumper held among the
 * recent ones, 0: none seen), the waiting places are cut to
 * @mem_bound / @pin, at least one: waiters beyond them are skipped
 * (skipped_full) instead of pinning more memory than the bound.
 * memory_bound says the cut is in force.
 */
struct coredam_admission {
	uint32_t concurrency, waiting, timeout_ms;
	bool memory_bound;
};

void coredam_admission_eval(const struct coredam_config *cfg, const struct coredam_budget *b,
			    bool space_below, uint64_t mem_bound, uint64_t pin,
			    struct coredam_admission *ret);

/* How long the memory the last dumpers held stays the estimate once none dumps. */
#define COREDAM_PIN_FORGET_USEC (10ULL * 60 * 1000000)

/*
 * The @pin of coredam_admission_eval() from the one before (@est, seen
 * holding memory at *@seen_usec) and the most a dumper holds now (@now_pin,
 * 0: none dumps): the present storm's own when there is one, else the
 * last one's for COREDAM_PIN_FORGET_USEC, so that the next storm's first
 * waiters are bounded too; then 0.
 */
uint64_t coredam_pin_estimate(uint64_t est, uint64_t *seen_usec, uint64_t now_pin, uint64_t now_usec);

/*
 * Is the ELF core @name (under @dirfd) shorter than its program headers
 * say? -EMEDIUMTYPE when it is not an ELF core file.
 */
int coredam_core_incomplete(int dirfd, const char *name, bool *ret);

/*
 * Rename every incomplete core modified at or after @since in @dir to
 * "<name>.incomplete" (or "<name>.N.incomplete" if that name is taken),
 * so that no partial core looks whole. A core a dump still holds open is
 * being written, not short: left as it is. Nothing is ever replaced
 * (RENAME_NOREPLACE): in a sticky, world-writable directory a name another
 * user created is theirs. Returns the number renamed; -errno if none was
 * and a file could not be read (EIO from a failed file system) or renamed
 * (EEXIST: every name taken), so that the caller says so.
 */
int coredam_mark_incomplete(const char *dir, time_t since);

#endif
