/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* coredam-pipe: the checks of the destination directory and of the helper itself. */
#ifndef COREDAM_PIPE_DEST_H
#define COREDAM_PIPE_DEST_H

#include <sys/types.h>

#include "error.h"

/*
 * Open the destination directory component by component with O_NOFOLLOW:
 * every component must be a real directory owned by @owner (0 in
 * production), the directory itself writable by nobody else, and each
 * ancestor either writable by nobody else or sticky. On failure @reterr
 * says which component and what is wrong with it.
 */
int coredam_pipe_open_dest(const char *dir, uid_t owner, int *ret_fd, struct coredam_error *reterr);

/*
 * May @path be the helper of a pipe core_pattern? The kernel runs it as
 * root for every crash, and a helper that is missing loses every core, so
 * it must be an absolute path to an executable regular file (symlinks
 * followed, as the kernel does) owned by @owner (0 in production) and
 * writable by nobody else, in a directory that is @owner's or root's and
 * writable by nobody else. On failure @reterr says what is wrong: -ENOENT
 * missing, -EACCES not executable, -EPERM owner or mode, -EINVAL not an
 * absolute path or not a regular file.
 */
int coredam_pipe_helper_check(const char *path, uid_t owner, struct coredam_error *reterr);

#endif
