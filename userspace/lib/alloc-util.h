/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Growing arrays. */
#ifndef COREDAM_ALLOC_UTIL_H
#define COREDAM_ALLOC_UTIL_H

#include "macro.h"

/*
 * Room for one more element in the array *@p of *@alloc elements of @size
 * bytes, @n of them used: doubled when full, @first elements the first
 * time. -ENOMEM leaves the array as it was.
 */
int grow_array(void **p, size_t *alloc, size_t n, size_t size, size_t first);

#endif
