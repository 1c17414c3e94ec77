// SPDX-License-Identifier: LGPL-2.1-or-later
#include <errno.h>

#include "error.h"
#include "test.h"

TEST(error_set)
{
	struct coredam_error e = { .where = "stale", .line = 7 };

	/* no error object: only the return value */
	CHECK_ERRNO(coredam_error_set(NULL, -EINVAL, "ignored %d", 1), -EINVAL);
	CHECK_ERRNO(coredam_error_set_at(NULL, -ENOENT, "f", 2, "ignored"), -ENOENT);

	CHECK_ERRNO(coredam_error_set(&e, -EPERM, "%s: owned by uid %u", "/d", 42u), -EPERM);
	CHECK_STREQ(e.msg, "/d: owned by uid 42");
	CHECK_STREQ(e.where, "");	/* no file at fault: what an earlier failure said is gone */
	CHECK_EQ_INT(e.line, 0);
}

TEST(error_set_long_message_is_cut)
{
	struct coredam_error e;
	char big[1024];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_ERRNO(coredam_error_set(&e, -E2BIG, "%s", big), -E2BIG);
	CHECK_EQ_INT(strlen(e.msg), sizeof(e.msg) - 1);
	CHECK(strncmp(e.msg, big, sizeof(e.msg) - 1) == 0);
}

TEST(error_set_at)
{
	struct coredam_error e;

	CHECK_ERRNO(coredam_error_set_at(&e, -EINVAL, "/etc/coredam.conf", 12, "unknown key %s=", "Foo"), -EINVAL);
	CHECK_STREQ(e.where, "/etc/coredam.conf");
	CHECK_EQ_INT(e.line, 12);
	CHECK_STREQ(e.msg, "unknown key Foo=");
}

TEST(error_str)
{
	struct coredam_error e;
	char buf[64], small[8];

	coredam_error_set_at(&e, -EINVAL, "a.conf", 3, "bad value");
	CHECK_STREQ(coredam_error_str(&e, buf, sizeof(buf)), "a.conf:3: bad value");
	coredam_error_set_at(&e, -EACCES, "/x/cgroup.subtree_control", 0, "Permission denied");
	CHECK_STREQ(coredam_error_str(&e, buf, sizeof(buf)), "/x/cgroup.subtree_control: Permission denied");
	coredam_error_set(&e, -EPERM, "seccomp filter: refused");
	CHECK_STREQ(coredam_error_str(&e, buf, sizeof(buf)), "seccomp filter: refused");
	/* cut to the buffer, still a string */
	CHECK(coredam_error_str(&e, small, sizeof(small)) == small);
	CHECK_STREQ(small, "seccomp");
}
