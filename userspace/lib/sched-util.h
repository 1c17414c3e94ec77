/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_SCHED_UTIL_H
#define COREDAM_SCHED_UTIL_H

#include <sys/types.h>

/* [Limits] DumpNice=keep: the dumping process keeps its own scheduling. */
#define COREDAM_NICE_KEEP 100

/*
 * Make a dumping process, or a pipe helper, background work: every thread
 * listed in @proc/@pid/task becomes SCHED_BATCH (it does not preempt
 * others when it wakes) at nice @nice, whatever it was, a real-time policy
 * included. Once a pidfd holds it, the process must still be what it was
 * listed as, so that a pid reused since is left alone: with @cgroup NULL
 * a process that shows "CoreDumping: 1", else one in the v2 cgroup
 * @cgroup (a helper in the dump cgroup). Returns the number of threads
 * changed (0: it is no longer that, or ended meanwhile), or -errno (-EPERM
 * without CAP_SYS_NICE for another user's process).
 */
int coredam_sched_background(const char *proc, pid_t pid, const char *cgroup, int nice);

#endif
