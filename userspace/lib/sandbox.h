/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_SANDBOX_H
#define COREDAM_SANDBOX_H

#include <stddef.h>

#include "error.h"

/*
 * Confine the calling process (the pipe helper, once it has opened what it
 * needs and before it reads the first byte of a core):
 *
 *  - a mount namespace of its own in which every mount is read-only,
 *    nosuid, nodev and noexec, but for a bind mount of @writable (the state
 *    directory); files opened before keep the access they were opened with,
 *    so a directory descriptor opened before still creates files in it.
 *    @writable NULL: none, for a process whose service manager has made
 *    the file system read-only to it already and forbids new namespaces
 *    (coredamd's socket writers under coredamd.service);
 *  - no capabilities left: effective, permitted, inheritable and ambient
 *    empty, and, where CAP_SETPCAP allows, the bounding set too, the root
 *    exemptions locked off (both matter only at an execve());
 *  - no_new_privs, and a seccomp filter that lets through only the system
 *    calls the helper makes from then on (file I/O on open descriptors,
 *    memory, time, signals, inotify, exit); any other fails with EPERM, a
 *    call from another ABI (x32, i386 on x86_64) too.
 *
 * Returns 0, or a negative errno with a sentence in @reterr: the process may
 * be part-confined then and must not go on as if it were not.
 */
int coredam_sandbox_enter(const char *writable, struct coredam_error *reterr);

/*
 * Give up capability @cap for good: out of the effective, permitted and
 * inheritable sets (so out of the ambient set too), and out of the
 * bounding set where CAP_SETPCAP allows. Returns 0 or a negative errno.
 */
int coredam_cap_drop(unsigned int cap);

#endif
