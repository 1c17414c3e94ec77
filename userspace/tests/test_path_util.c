// SPDX-License-Identifier: LGPL-2.1-or-later
#include <unistd.h>

#include "test.h"
#include "macro.h"
#include "path-util.h"
#include "string-util.h"

TEST(path_join_and_snprintf)
{
	char buf[16];

	CHECK(path_join(buf, sizeof(buf), "/", "a") == 2 && strcmp(buf, "/a") == 0);
	CHECK(path_join(buf, sizeof(buf), "/x/", "/a") >= 0 && strcmp(buf, "/x/a") == 0);
	CHECK_ERRNO(xsnprintf(buf, sizeof(buf), "%s", "0123456789abcdefg"), -ENOBUFS);
}

TEST(path_split_and_parent)
{
	char dir[16];
	const char *base = NULL;

	CHECK_OK(path_split("/run/coredam/metrics.prom", dir, sizeof(dir), &base));
	CHECK_STREQ(dir, "/run/coredam");
	CHECK_STREQ(base, "metrics.prom");
	CHECK_OK(path_split("/x", dir, sizeof(dir), &base));
	CHECK_STREQ(dir, "/");
	CHECK_STREQ(base, "x");
	CHECK_OK(path_split("a/b", dir, sizeof(dir), &base));
	CHECK_STREQ(dir, "a");
	CHECK_ERRNO(path_split("name", dir, sizeof(dir), &base), -EINVAL);
	CHECK_ERRNO(path_split("/run/", dir, sizeof(dir), &base), -EINVAL);
	CHECK_ERRNO(path_split("/a-directory-too-long/x", dir, sizeof(dir), &base), -ENOBUFS);

	CHECK_OK(mkdir_parent(tpath("p/q/file"), 0755));
	CHECK(access(tpath("p/q"), F_OK) == 0);
	CHECK(access(tpath("p/q/file"), F_OK) < 0);
}

TEST(path_basename)
{
	CHECK_STREQ(path_basename("/usr/lib/systemd/systemd-coredump"), "systemd-coredump");
	CHECK_STREQ(path_basename("/x"), "x");
	CHECK_STREQ(path_basename("name"), "name");
	CHECK_STREQ(path_basename("/run/"), "");
}
