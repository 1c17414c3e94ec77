/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_SCHED_UTIL_H
#define COREDAM_SCHED_UTIL_H

#include <sys/types.h>

/* [Limits] DumpNice=keep: the dumping process keeps its own scheduling. */
#define COREDAM_NICE_KEEP 100

/*
 * Make a dumping process background work: every thread listed in
 * @proc/@pid/task becomes SCHED_BATCH (it does not preempt others when it
 * wakes) at nice @nice, whatever it was, a real-time policy included. The
 * process must still show "CoreDumping: 1" once a pidfd holds it, so that
 * a pid reused since it was listed is left alone. Returns the number of
 * threads changed (0: it no longer dumps, or ended meanwhile), or -errno
 * (-EPERM without CAP_SYS_NICE for another user's process).
 */
int coredam_sched_background(const char *proc, pid_t pid, int nice);

#endif
