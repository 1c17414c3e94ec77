/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_IOSTAT_H
#define COREDAM_IOSTAT_H

#include <stddef.h>
#include <stdint.h>

/*
 * A cgroup's io.stat: a line per device the cgroup did I/O on,
 * "MAJ:MIN rbytes=N wbytes=N rios=N wios=N dbytes=N dios=N", possibly with
 * more keys (io.latency, io.cost). A device with no line had no I/O.
 */
struct coredam_devnum {
	unsigned int major, minor;
};

/*
 * The requests (reads, writes and discards) @text counts on any of
 * @devs, summed. -EBADMSG for a line that is not "MAJ:MIN key=value...".
 */
int coredam_iostat_ios(const char *text, const struct coredam_devnum *devs, size_t n_devs, uint64_t *ret);
int coredam_iostat_read_ios(int dirfd, const char *path, const struct coredam_devnum *devs, size_t n_devs,
			    uint64_t *ret);

#endif
