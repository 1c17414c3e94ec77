// SPDX-License-Identifier: LGPL-2.1-or-later
/* Arrays grown by doubling. */
#include <stdlib.h>

#include "alloc-util.h"
#include "test.h"
#include "macro.h"

TEST(grow_array_doubles_only_when_full)
{
	int *v = NULL, *before;
	size_t alloc = 0;

	/* the first call makes room for @first elements */
	CHECK_OK(grow_array((void **)&v, &alloc, 0, sizeof(*v), 4));
	CHECK(v != NULL);
	CHECK_EQ_INT(alloc, 4);
	/* room left for element n: nothing moves */
	before = v;
	CHECK_OK(grow_array((void **)&v, &alloc, 3, sizeof(*v), 4));
	CHECK(v == before);
	CHECK_EQ_INT(alloc, 4);
	/* full: twice the room, what was there kept (ASan checks the new size) */
	for (int i = 0; i < 4; i++)
		v[i] = i;
	CHECK_OK(grow_array((void **)&v, &alloc, 4, sizeof(*v), 4));
	CHECK_EQ_INT(alloc, 8);
	v[7] = 7;
	CHECK(v[0] == 0 && v[3] == 3 && v[7] == 7);
	free(v);
}
