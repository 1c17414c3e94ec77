// SPDX-License-Identifier: LGPL-2.1-or-later
/* One line of /proc/PID/mountinfo. */
#include <stdlib.h>
#include <string.h>

#include "mountinfo.h"
#include "test.h"

static bool parse(const char *line, struct coredam_mount *m)
{
	return coredam_mountinfo_line(line, strlen(line), m);
}

TEST(mountinfo_line_fields)
{
	struct coredam_mount m;

	/* optional fields before the separator, escapes in the mount point and the source */
	CHECK(parse("36 35 98:0 /mnt1 /mnt/my\\040disk rw,noatime master:1 shared:2 - ext3 /dev/my\\134dev rw,errors=continue", &m));
	CHECK_EQ_INT(m.major, 98);
	CHECK_EQ_INT(m.minor, 0);
	CHECK_STREQ(m.mountpoint, "/mnt/my disk");
	CHECK_STREQ(m.fstype, "ext3");
	CHECK_STREQ(m.source, "/dev/my\\dev");

	/* no optional field at all */
	CHECK(parse("40 22 0:40 / /mnt/cg rw - cgroup2 none rw", &m));
	CHECK_STREQ(m.mountpoint, "/mnt/cg");
	CHECK_STREQ(m.fstype, "cgroup2");
	CHECK_STREQ(m.source, "none");
	CHECK_EQ_INT(m.minor, 40);

	/* only @len bytes are read: the rest of a buffer is the next line */
	CHECK(coredam_mountinfo_line("22 1 254:1 / / rw - ext4 /dev/vda rw\n23 1", 36, &m));
	CHECK_STREQ(m.source, "/dev/vda");
}

TEST(mountinfo_line_refuses)
{
	char *big = malloc(PATH_MAX + 100);
	struct coredam_mount m;

	CHECK(!parse("", &m));
	CHECK(!parse("36 35 98:0 /mnt1 /mnt rw shared:2 ext3 /dev/x rw", &m)); /* no separator */
	CHECK(!parse("36 35 98:0 /mnt1 /mnt rw - ext3", &m));                /* no source */
	CHECK(!parse("36 35 98:0 /mnt1", &m));                                /* cut short */
	CHECK(!parse("36 35 980 / /mnt rw - ext3 /dev/x rw", &m));            /* no MAJ:MIN */
	CHECK(!parse("36 35 98:0x / /mnt rw - ext3 /dev/x rw", &m));
	/* a field too long for its buffer is refused, never cut short */
	CHECK(big);
	strcpy(big, "36 35 98:0 / /");
	memset(big + strlen(big), 'a', PATH_MAX);
	strcpy(big + strlen("36 35 98:0 / /") + PATH_MAX, " rw - ext4 /dev/x rw");
	CHECK(!parse(big, &m));
	CHECK(!parse("36 35 98:0 / /mnt rw - aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa /dev/x rw", &m));
	free(big);
}
