/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The coredump socket (core_pattern "@@/path", Linux 6.17 and later): the
 * request the kernel sends on each connection, the ack the server answers
 * with, the mark the kernel sends back, and who the crashed process is.
 *
 * Per connection the kernel sends a struct coredump_req (its first 32-bit
 * field its size, at least COREDUMP_REQ_SIZE_VER0), then waits, with no
 * timeout, for a struct coredump_ack of at most req.size_ack bytes; it
 * answers with one 32-bit enum coredump_mark (COREDUMP_MARK_REQACK when
 * the ack was taken) and then, for COREDUMP_KERNEL, streams the core
 * (holes as zeros) and shuts its side down. The connection comes from the
 * dumping task itself: SO_PEERPIDFD names it, and its pidfd's coredump
 * mask has PIDFD_COREDUMPED, which no other client can show.
 */
#ifndef COREDAM_SOCK_PROTO_H
#define COREDAM_SOCK_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "coredump-uapi.h"
#include "elfcore.h"

/* The largest request read; a larger size claimed is a hostile or broken peer. */
#define COREDAM_SOCK_REQ_MAX 4096

/* What the kernel asked, from struct coredump_req. */
struct coredam_sock_req {
	uint32_t size;		/* as the kernel sent it, consumed whole */
	uint32_t size_ack;	/* the largest ack it reads */
	uint64_t mask;		/* COREDUMP_* it supports */
};

/*
 * Read the request on the non-blocking stream @fd without ever blocking:
 * its size is peeked (MSG_PEEK), and nothing is consumed until all of its
 * @size bytes are there; then all of them are, a request larger than
 * struct coredump_req included (what is past the fields known here is
 * discarded, as the uapi says). Returns 0 with *@ret, -EAGAIN when the
 * request is not all there yet (poll and call again), -ECONNRESET when the
 * peer closed or reset before all of it came, -EBADMSG for a size below
 * COREDUMP_REQ_SIZE_VER0 or above COREDAM_SOCK_REQ_MAX, or an ack size
 * below COREDUMP_ACK_SIZE_VER0, -EOPNOTSUPP when the mask lacks
 * COREDUMP_KERNEL or COREDUMP_REJECT (the two answers this server gives).
 */
int coredam_sock_req_read(int fd, struct coredam_sock_req *ret);

/*
 * Answer @req with @mask (one of COREDUMP_KERNEL or COREDUMP_REJECT, maybe
 * with COREDUMP_WAIT): an ack of the size both sides know, the smaller of
 * req->size_ack and struct coredump_ack. -EOPNOTSUPP when @mask asks for a
 * bit the kernel did not offer, -EINVAL when it is not exactly one answer,
 * -EPIPE or -ECONNRESET when the peer is gone, -EIO on a short send.
 */
int coredam_sock_ack_send(int fd, const struct coredam_sock_req *req, uint64_t mask);

/*
 * Read the kernel's mark after an ack (blocking on a blocking @fd, at most
 * @timeout_ms; < 0: no limit). 0 when it is COREDUMP_MARK_REQACK;
 * -EPROTO with *@ret_mark the mark when the kernel refused the ack,
 * -ECONNRESET when the peer closed before it, -EBADMSG when it closed
 * inside it, -ETIMEDOUT.
 */
int coredam_sock_mark_read(int fd, int timeout_ms, uint32_t *ret_mark);

/* Who dumps, from the peer's pidfd. */
struct coredam_sock_peer {
	int pidfd;		/* owned: close it */
	pid_t pid;		/* in the agent's pid namespace */
	uid_t uid;		/* real ids */
	gid_t gid;
	int signal;		/* 0 when the kernel does not say (before 6.19) */
	int dumpable;		/* 1 dumped as the user, 2 as root (suid_dumpable=2) */
	bool coredumping;	/* PIDFD_COREDUMPED: the kernel's own connection */
};

/*
 * The peer of @fd through SO_PEERPIDFD and PIDFD_GET_INFO. -ENOPROTOOPT or
 * -ENOTTY when the kernel has neither (older than 6.13), -ESRCH when the
 * peer is already gone.
 */
int coredam_sock_peer_get(int fd, struct coredam_sock_peer *ret);

/*
 * Read /proc/PID/@name of the pidfd's process (a text file such as comm,
 * or the "exe" link) into @buf and only then check that the pidfd's
 * process has not been reaped, so the PID, which cannot be reused before
 * that, still named it. A trailing newline is dropped. -ESRCH when it is
 * gone (what was read is not returned).
 */
int coredam_sock_peer_proc(const char *proc_root, const struct coredam_sock_peer *p, const char *name, char *buf,
			   size_t size);

/*
 * Where the dumping process crashed, before a byte of its core: the
 * crash signature (repeats.h) as coredam_elf_core_site() reads it from a
 * core's notes. The kernel keeps the task that dumps (PF_DUMPCORE in
 * /proc/PID/task/TID/stat) with its user registers while it waits for the
 * ack, and shows its program counter (kstkeip) to root; /proc/PID/maps
 * names the file and offset it is in, /proc/PID/exe the executable. Then
 * the pidfd is checked as coredam_sock_peer_proc() does. 0 with what was
 * found (have_pc false when no task says it dumps), -ESRCH when the
 * process is gone, -errno when /proc cannot be read.
 */
int coredam_sock_peer_site(const char *proc_root, const struct coredam_sock_peer *p, struct coredam_core_site *ret);

/* Pure: from a /proc/PID/task/TID/stat line, whether the task dumps (PF_DUMPCORE) and its kstkeip. -EINVAL if malformed. */
int coredam_proc_stat_dump_pc(const char *stat, bool *ret_dumping, uint64_t *ret_pc);

/*
 * Pure: the file mapping of /proc/PID/maps (@maps) that holds @addr: its
 * path as maps shows it into @file (cut to @size), and the offset of @addr
 * in the file. false when no mapping holds it or the one that does is no
 * file's ("[stack]", anonymous).
 */
bool coredam_proc_maps_file_of(const char *maps, uint64_t addr, char *file, size_t size, uint64_t *ret_offset);

#endif
