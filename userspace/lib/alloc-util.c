// SPDX-License-Identifier: LGPL-2.1-or-later

#include "alloc-util.h"

int grow_array(void **p, size_t *alloc, size_t n, size_t size, size_t first)
{
	size_t want;
	void *nv;

	if (n < *alloc)
		return 0;
	want = *alloc ? 2 * *alloc : first;
	nv = realloc(*p, want * size);
	if (!nv)
		return -ENOMEM;
	*p = nv;
	*alloc = want;
	return 0;
}
