/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Paths and directories. */
#ifndef COREDAM_PATH_UTIL_H
#define COREDAM_PATH_UTIL_H

#include "macro.h"

/* Join @a and @b with exactly one '/' between them. */
int path_join(char *buf, size_t size, const char *a, const char *b);

/* Open a directory relative to @dirfd (O_PATH is not used: we read/write through it). */
int open_dir_at(int dirfd, const char *path, int *ret_fd);

/* The same as a DIR stream, for readdir(). */
int opendir_at(int dirfd, const char *path, DIR **ret);

/* mkdir -p */
int mkdir_p(const char *path, mode_t mode);

/*
 * Split @path at its last '/': its directory into @dir ("/" for a name in
 * the root) and, in *@ret_base, where its last component starts within
 * @path. -EINVAL when @path has no '/' or ends in one; -ENOBUFS when the
 * directory does not fit.
 */
int path_split(const char *path, char *dir, size_t dirsize, const char **ret_base);

/* The last component of @path: what follows its last '/', or all of it ("" when it ends in '/'). */
const char *path_basename(const char *path);

/* mkdir -p of the directory @path is in. */
int mkdir_parent(const char *path, mode_t mode);

#endif
