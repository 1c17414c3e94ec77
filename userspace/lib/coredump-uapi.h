/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * The coredump socket's protocol and the pidfd information the agent reads
 * from it, as Linux 7.3 defines them (include/uapi/linux/coredump.h, added
 * in 6.17; include/uapi/linux/pidfd.h; SO_PEERPIDFD from 6.5). Copied so
 * that the agent builds against older kernel headers (Debian 12's are
 * 6.1); a system <linux/coredump.h> wins when present.
 */
#ifndef COREDAM_COREDUMP_UAPI_H
#define COREDAM_COREDUMP_UAPI_H

#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#if defined(__has_include) && __has_include(<linux/coredump.h>)
#include <linux/coredump.h>
#else
enum {
	COREDUMP_KERNEL		= (1ULL << 0),
	COREDUMP_USERSPACE	= (1ULL << 1),
	COREDUMP_REJECT		= (1ULL << 2),
	COREDUMP_WAIT		= (1ULL << 3),
};

struct coredump_req {
	uint32_t size;		/* of this struct as the kernel sends it */
	uint32_t size_ack;	/* the largest struct coredump_ack the kernel reads */
	uint64_t mask;		/* COREDUMP_* the kernel supports */
};

enum {
	COREDUMP_REQ_SIZE_VER0 = 16U,
};

struct coredump_ack {
	uint32_t size;
	uint32_t spare;
	uint64_t mask;		/* exactly one of KERNEL, USERSPACE, REJECT; WAIT may be added */
};

enum {
	COREDUMP_ACK_SIZE_VER0 = 16U,
};

/* One 32-bit word the kernel sends after reading the ack. */
enum coredump_mark {
	COREDUMP_MARK_REQACK		= 0U,
	COREDUMP_MARK_MINSIZE		= 1U,
	COREDUMP_MARK_MAXSIZE		= 2U,
	COREDUMP_MARK_UNSUPPORTED	= 3U,
	COREDUMP_MARK_CONFLICTING	= 4U,
	__COREDUMP_MARK_MAX		= (1U << 31),
};
#endif

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif

/*
 * struct pidfd_info of 7.3 (PIDFD_INFO_SIZE_VER3) under a name of our own:
 * older headers have no such struct, or one without the coredump fields,
 * and the ioctl's number encodes the size the caller knows.
 */
struct coredam_pidfd_info {
	uint64_t mask;
	uint64_t cgroupid;
	uint32_t pid, tgid, ppid;
	uint32_t ruid, rgid, euid, egid, suid, sgid, fsuid, fsgid;
	int32_t exit_code;
	uint32_t coredump_mask, coredump_signal, coredump_code, coredump_pad;
	uint64_t supported_mask;
};

#define COREDAM_PIDFD_GET_INFO			_IOWR(0xFF, 11, struct coredam_pidfd_info)
#define COREDAM_PIDFD_INFO_PID			(1ULL << 0)
#define COREDAM_PIDFD_INFO_CREDS		(1ULL << 1)
#define COREDAM_PIDFD_INFO_COREDUMP		(1ULL << 4)
#define COREDAM_PIDFD_INFO_COREDUMP_SIGNAL	(1ULL << 6)
#define COREDAM_PIDFD_COREDUMPED		(1U << 0)
#define COREDAM_PIDFD_COREDUMP_SKIP		(1U << 1)
#define COREDAM_PIDFD_COREDUMP_USER		(1U << 2)
#define COREDAM_PIDFD_COREDUMP_ROOT		(1U << 3)

#endif
