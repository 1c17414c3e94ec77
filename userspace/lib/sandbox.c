// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The pipe helper's confinement. The kernel starts coredam-pipe as root
 * with every capability, in the init namespaces, and it then reads and
 * compresses bytes any local user chose: once it has joined the dump
 * cgroup and opened its destination, queue and log, it gives up what a
 * compromise could use. See sandbox.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/mount.h>
#include <linux/prctl.h>
#include <linux/seccomp.h>
#include <linux/securebits.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox.h"
#include "error.h"
#include "macro.h"

#if defined(__x86_64__)
#define SANDBOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SANDBOX_ARCH AUDIT_ARCH_AARCH64
#else
#error "coredam: the seccomp filter needs this architecture's AUDIT_ARCH_* (lib/sandbox.c)"
#endif

#ifndef __X32_SYSCALL_BIT
#define __X32_SYSCALL_BIT 0x40000000
#endif

/*
 * What the helper calls once confined: the queue (flock, inotify, poll,
 * getdents), the copy (read, write, sync_file_range, fadvise, fstatfs),
 * storing (openat, fchmod, fsetxattr for the read ACL, linkat, renameat2,
 * unlinkat, fsync, getrandom for names), the counters (mkdir of the state
 * directory's path, which exists), the log (write) and libc's own
 * (memory, time, signals, exit). No exec, fork, socket, ptrace, mount,
 * namespace, module, BPF, keyring or prctl call is here, and no signal to
 * another process: tgkill (abort()'s) only to our own.
 */
static const int allowed[] = {
	__NR_read, __NR_write, __NR_readv, __NR_writev, __NR_pread64, __NR_pwrite64, __NR_lseek,
	__NR_openat, __NR_close, __NR_fstat, __NR_newfstatat, __NR_statx, __NR_fstatfs, __NR_statfs,
	__NR_fcntl, __NR_flock, __NR_dup, __NR_dup3, __NR_getdents64, __NR_ftruncate, __NR_fallocate,
	__NR_fsync, __NR_fdatasync, __NR_sync_file_range, __NR_fadvise64,
	__NR_fchmod, __NR_fsetxattr, __NR_fgetxattr, __NR_linkat, __NR_renameat2, __NR_unlinkat, __NR_mkdirat,
	__NR_readlinkat, __NR_faccessat, __NR_faccessat2, __NR_getrandom,
	__NR_inotify_init1, __NR_inotify_add_watch, __NR_inotify_rm_watch, __NR_ppoll, __NR_pselect6,
	__NR_mmap, __NR_munmap, __NR_mremap, __NR_mprotect, __NR_madvise, __NR_brk,
	__NR_clock_gettime, __NR_clock_getres, __NR_clock_nanosleep, __NR_nanosleep, __NR_gettimeofday,
	__NR_getpid, __NR_gettid, __NR_getppid, __NR_getuid, __NR_geteuid, __NR_getgid, __NR_getegid,
	__NR_rt_sigprocmask, __NR_rt_sigaction, __NR_rt_sigreturn, __NR_signalfd4,
	__NR_futex, __NR_sched_yield, __NR_restart_syscall, __NR_exit, __NR_exit_group,
#ifdef __NR_poll
	__NR_poll,
#endif
#ifdef __NR_select
	__NR_select,
#endif
#ifdef __NR_dup2
	__NR_dup2,
#endif
#ifdef __NR_time
	__NR_time,
#endif
#ifdef __NR_rename
	__NR_rename, __NR_renameat, __NR_unlink, __NR_mkdir, __NR_readlink, __NR_access, __NR_stat, __NR_lstat,
#endif
};

#define ALLOW_INSNS (2 * ELEMENTSOF(allowed))

static int seccomp_enter(void)
{
	struct sock_filter f[16 + ALLOW_INSNS];
	uint32_t pid = (uint32_t)getpid();
	size_t n = 0;

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SANDBOX_ARCH, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
	/* x32 calls share the arch value and set a bit in the number */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, __X32_SYSCALL_BIT, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
#endif
	/*
	 * tgkill(getpid(), ...) only: abort() signals itself. The low word of
	 * args[0] (both architectures here are little-endian); a tgid that
	 * is not ours, negative ones included, differs in it.
	 */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_tgkill, 0, 4);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, pid, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	for (size_t i = 0; i < ELEMENTSOF(allowed); i++) {
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)allowed[i], 0, 1);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	}
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);

	struct sock_fprog prog = { .len = (unsigned short)n, .filter = f };

	/* prctl() rather than seccomp(): a service's @system-service filter lets only the first through */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0)
		return -errno;
	return 0;
}

static int mount_attr(const char *path, unsigned int flags, uint64_t set, uint64_t clr)
{
	struct mount_attr a = { .attr_set = set, .attr_clr = clr };

	if (syscall(SYS_mount_setattr, AT_FDCWD, path, flags, &a, sizeof(a)) < 0)
		return -errno;
	return 0;
}

/* Every mount read-only but a bind mount of @writable, in a namespace of our own. */
static int mounts_enter(const char *writable, struct coredam_error *reterr)
{
	const uint64_t locked = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC;
	int r;

	if (unshare(CLONE_NEWNS) < 0)
		return coredam_error_set(reterr, -errno, "unshare(CLONE_NEWNS): %s", strerror(errno));
	/* nothing done here may reach the machine's mount table */
	if (syscall(SYS_mount, NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return coredam_error_set(reterr, -errno, "making / private: %s", strerror(errno));
	r = mount_attr("/", AT_RECURSIVE, locked, 0);
	if (r < 0)
		return coredam_error_set(reterr, r, "making every mount read-only: %s", strerror(-r));
	if (syscall(SYS_mount, writable, writable, NULL, MS_BIND, NULL) < 0)
		return coredam_error_set(reterr, -errno, "bind mount of %s: %s", writable, strerror(errno));
	r = mount_attr(writable, 0, 0, MOUNT_ATTR_RDONLY);
	if (r < 0)
		return coredam_error_set(reterr, r, "making %s writable: %s", writable, strerror(-r));
	return 0;
}

/* No capability left, and none to be had back. */
static int caps_drop(struct coredam_error *reterr)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3] = { { 0 } };

	if (syscall(SYS_capget, &h, d) < 0)
		return coredam_error_set(reterr, -errno, "capget: %s", strerror(errno));
	/*
	 * The securebits and the bounding set take CAP_SETPCAP, which a
	 * service's bounding set may have taken already; they only matter
	 * at the next execve(), which no_new_privs and the filter forbid.
	 */
	if (!(d[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP)))
		goto sets;
	memset(d, 0, sizeof(d));
	if (prctl(PR_SET_SECUREBITS, SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
		  SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
		  SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED, 0, 0, 0) < 0)
		return coredam_error_set(reterr, -errno, "securebits: %s", strerror(errno));
	for (unsigned long cap = 0;; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL && cap > 0)
			break;	/* past the kernel's last capability */
		return coredam_error_set(reterr, -errno,
					 "bounding set, capability %lu: %s", cap, strerror(errno));
	}
sets:
	memset(d, 0, sizeof(d));
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return coredam_error_set(reterr, -errno, "ambient capabilities: %s", strerror(errno));
	if (syscall(SYS_capset, &h, d) < 0)
		return coredam_error_set(reterr, -errno, "capset: %s", strerror(errno));
	return 0;
}

int coredam_sandbox_enter(const char *writable, struct coredam_error *reterr)
{
	int r;

	if (writable) {
		r = mounts_enter(writable, reterr);
		if (r < 0)
			return r;
	}
	r = caps_drop(reterr);
	if (r < 0)
		return r;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return coredam_error_set(reterr, -errno, "no_new_privs: %s", strerror(errno));
	r = seccomp_enter();
	if (r < 0)
		return coredam_error_set(reterr, r, "seccomp filter: %s", strerror(-r));
	return 0;
}

int coredam_cap_drop(unsigned int cap)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[_LINUX_CAPABILITY_U32S_3];
	unsigned int i = cap / 32, bit = 1U << (cap % 32);

	if (i >= _LINUX_CAPABILITY_U32S_3)
		return -EINVAL;
	if (syscall(SYS_capget, &h, d) < 0)
		return -errno;
	/* the bounding set needs CAP_SETPCAP; without exec it does not matter */
	if (d[CAP_TO_INDEX(CAP_SETPCAP)].effective & CAP_TO_MASK(CAP_SETPCAP) &&
	    prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0)
		return -errno;
	d[i].effective &= ~bit;
	d[i].permitted &= ~bit;
	d[i].inheritable &= ~bit;
	if (syscall(SYS_capset, &h, d) < 0)
		return -errno;
	return 0;
}
