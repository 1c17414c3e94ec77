/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What every file of the project uses: the C library headers it always
 * needs, array and min/max macros, and the cleanup attributes.
 *
 * Every fallible function of the library returns 0 or a positive count on
 * success and -errno on failure; output parameters come last, are named
 * ret_*, and are left untouched on failure.
 */
#ifndef COREDAM_MACRO_H
#define COREDAM_MACRO_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/types.h>
#include <unistd.h>

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;

		close(*fd);
		errno = saved;
	}
}

static inline void fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

static inline void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

#define _cleanup_(x) __attribute__((cleanup(x)))
#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)

/* Hand an fd or a pointer out of a cleanup variable. */
static inline int take_fd(int *fd)
{
	int r = *fd;

	*fd = -1;
	return r;
}

#define TAKE_PTR(p) ({ __typeof__(p) _t = (p); (p) = NULL; _t; })

#endif
