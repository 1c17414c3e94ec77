/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * coredam-pipe, the core_pattern pipe helper for kernels without the
 * coredam patches: what the kernel passes it and what it makes of that
 * (the files' names, modes and ACL, the core's RLIMIT_CORE).
 */
#ifndef COREDAM_PIPE_ARGS_H
#define COREDAM_PIPE_ARGS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elfcore.h"

/*
 * The core_pattern the agent installs; the helper takes the same order:
 * DIR %P %u %g %s %t %c %d %e (%e last: the only value the crashed process
 * chooses; the kernel keeps it one argument, but were it split, the rest
 * is joined back).
 */
#define COREDAM_PIPE_SPECIFIERS "%P %u %g %s %t %c %d %e"

/*
 * No %d in core_pattern: the helper cannot tell a setuid process's dump
 * (suid_dumpable=2) from an ordinary one, so it treats it as the former:
 * giving a setuid program's memory to the user who crashed it is the
 * CVE-2022-4415 class of bug.
 */
#define COREDAM_DUMPABLE_UNKNOWN (-1)

struct coredam_pipe_args {
	char dir[PATH_MAX];
	pid_t pid;		/* %P: in the initial pid namespace */
	uid_t uid;		/* %u */
	gid_t gid;		/* %g */
	int signal;		/* %s */
	uint64_t time;		/* %t: seconds since the epoch */
	uint64_t rlimit;	/* %c: RLIMIT_CORE soft limit; UINT64_MAX = unlimited */
	bool have_rlimit;
	int dumpable;		/* %d: 0, 1 or 2 (suid_dumpable=2); COREDAM_DUMPABLE_UNKNOWN if absent */
	char comm[64];		/* %e as given (untrusted, never used in a path) */
};

/* argv after the options: DIR PID UID GID SIG TIME [RLIMIT DUMPABLE [COMM...]] */
int coredam_pipe_args_parse(int argc, char *const *argv, struct coredam_pipe_args *ret);

/*
 * Modes of what the helper stores for a crash, all root's (the helper
 * creates them as root). The core is 0640 when %d says 1 (a read ACL may
 * add the crashed user: coredam_pipe_user_may_read()), 0400 otherwise
 * (suid_dumpable=2, or %d not passed). It is never given to %u: a root
 * process that changed only its real uid would hand its memory to that
 * user, who would own the file. The metadata beside it never is
 * world-readable: it names the process, its uid and its cgroup, and other
 * users must not learn of every crash, root's included. 0640 for ordinary
 * dumps, 0600 for the others.
 */
struct coredam_pipe_files {
	mode_t core_mode;
	mode_t meta_mode;
};

void coredam_pipe_files(const struct coredam_pipe_args *a, struct coredam_pipe_files *ret);

/* The first uid of an ordinary user (Debian's login.defs: SYS_UID_MAX 999). */
#define COREDAM_FIRST_USER_UID 1000

/*
 * Pure: may the crashed user (%u) read its core? As systemd-coredump
 * decides, with the values from the core's own notes (@c, from
 * coredam_elf_core_creds()), never from /proc/PID: only when %d says 1,
 * the process was no setuid or setgid program (AT_SECURE 0, and the uid
 * and gid it was started with were its effective ones), it still ran as
 * that uid and gid when it dumped, and %u is an ordinary user's (not root,
 * not a system account, not nobody). Ids seen in another user namespace
 * do not match %u, so a core from one stays root's.
 */
bool coredam_pipe_user_may_read(const struct coredam_pipe_args *a, const struct coredam_core_creds *c);

/*
 * The system.posix_acl_access value that adds read access for @uid to a
 * file of mode 0640: user::rw-, user:@uid:r--, group::r--, mask::r--,
 * other::---. Written into @buf (at least COREDAM_ACL_USER_READ_SIZE
 * bytes); returns its size.
 */
#define COREDAM_ACL_USER_READ_SIZE (4 + 5 * 8)
size_t coredam_acl_user_read(uid_t uid, void *buf);

/*
 * Reduce an untrusted name to [A-Za-z0-9._-] (others become '_'), at most
 * 15 characters, never empty, never starting with '.'.
 */
void coredam_pipe_sanitize(const char *in, char *out, size_t size);

/* "core.<comm>.<pid>.<time>" (+ ".zst") */
int coredam_pipe_core_name(const struct coredam_pipe_args *a, bool zstd, char *buf, size_t size);

/* RLIMIT_CORE from /proc/PID/limits (when %c was not given). */
int coredam_pipe_read_rlimit(const char *proc_root, pid_t pid, uint64_t *ret);

/* The soft "Max core file size" of a limits file's text; UINT64_MAX for unlimited. */
int coredam_pipe_parse_rlimit(const char *limits, uint64_t *ret);

#endif
