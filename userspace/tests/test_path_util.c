// SPDX-License-Identifier: LGPL-2.1-or-later
#include "test.h"
#include "macro.h"
#include "path-util.h"
#include "string-util.h"

TEST(path_join_and_snprintf)
{
	char buf[16];

	CHECK(path_join(buf, sizeof(buf), "/", "a") == 2 && strcmp(buf, "/a") == 0);
	CHECK(path_join(buf, sizeof(buf), "/x/", "/a") >= 0 && strcmp(buf, "/x/a") == 0);
	CHECK(xsnprintf(buf, sizeof(buf), "%s", "0123456789abcdefg") == -ENOBUFS);
}
