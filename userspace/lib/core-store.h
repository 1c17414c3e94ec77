/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Storing one core read from a stream (the pipe helper's stdin, or a
 * connection of the coredump socket) into the destination directory:
 * a temporary file created O_EXCL|O_NOFOLLOW, the copy with the writer
 * (pipe-writer.h), its final mode and read ACL, the rename into place
 * without replacing anything, the metadata beside it. A core that the
 * stream ended before its ELF headers said is kept as ".incomplete" and
 * counted failed, never as a whole-looking file.
 */
#ifndef COREDAM_CORE_STORE_H
#define COREDAM_CORE_STORE_H

#include <limits.h>
#include <stdint.h>

#include "config.h"
#include "elfcore.h"
#include "error.h"
#include "meta.h"
#include "pipe-args.h"
#include "pipe-writer.h"

struct coredam_core_stored {
	char final[NAME_MAX + 1];	/* the name it was stored under */
	struct coredam_pipe_copy_result res;
	uint64_t expected;		/* the size its ELF headers declare, when they could be read */
	struct coredam_core_site site;	/* where it crashed, from its notes (all "" when unread) */
	char warn[512];			/* what went wrong short of losing the core ("" nothing) */
};

/*
 * Store the core on @infd, after the @prefix_len bytes of it already read
 * into @prefix (coredam_pipe_read_head(); NULL, 0: none), for the crash @a (its dir, ids, comm, rlimit,
 * dumpable) under @dirfd with @cfg's window, caps and compression and the
 * free-space floor @space_floor; @m is completed (core, sizes, times) and
 * written beside it. < 0 when nothing was kept (the temporary file is
 * removed), with @reterr saying why; *@ret is filled either way.
 */
int coredam_core_store(int infd, const void *prefix, size_t prefix_len, const struct coredam_config *cfg, const struct coredam_pipe_args *a, int dirfd,
		       uint64_t space_floor, struct coredam_core_meta *m, struct coredam_core_stored *ret,
		       struct coredam_error *reterr);

#endif
