/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The kernel log (/dev/kmsg) read for the crashes the kernel could not
 * hand to the coredump socket: it connects to "@@<path>" without blocking
 * and, when that fails, ends the dump without a core and says so in a
 * rate-limited line, the only trace such a crash leaves (Linux 6.17 and
 * later; the wording is 7.3's):
 *
 *   coredump: PID(COMM): Coredump socket PATH receive queue full
 *   coredump: PID(COMM): Coredump socket connection PATH failed ERRNO
 *   coredump_sock_connect: N callbacks suppressed
 *
 * The last is printed by the rate limit (10 lines in 5 s per call site)
 * at the first failure after the interval that dropped N of the others.
 */
#ifndef COREDAM_KMSG_H
#define COREDAM_KMSG_H

#include <stddef.h>
#include <stdint.h>

enum coredam_kmsg_loss {
	COREDAM_KMSG_NONE,		/* no loss of this socket's */
	COREDAM_KMSG_BACKLOG,		/* the listen backlog was full */
	COREDAM_KMSG_CONNECT,		/* the connection failed otherwise (no one listened) */
	COREDAM_KMSG_SUPPRESSED,	/* lines of either the rate limit dropped */
};

struct coredam_kmsg_record {
	uint64_t seq;			/* the record's sequence number */
	enum coredam_kmsg_loss loss;
	uint64_t count;			/* crashes lost: 1, or N suppressed; 0 for none */
};

/*
 * One record as read() returns it from /dev/kmsg ("PRIO,SEQ,TS,FLAGS[,...];
 * MESSAGE\n", then continuation lines), of @len bytes, not NUL-terminated,
 * read for the socket at @path. Only the kernel's own records (facility 0:
 * the kernel gives the user facility to what userspace writes) count.
 * Returns 0, or -EBADMSG for a record that is not in that form.
 */
int coredam_kmsg_parse(const char *rec, size_t len, const char *path, struct coredam_kmsg_record *ret);

#endif
