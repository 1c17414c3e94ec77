// SPDX-License-Identifier: LGPL-2.1-or-later
#include <inttypes.h>

#include "macro.h"
#include "slice.h"
#include "test.h"

TEST(slice_unit_name)
{
	char buf[256];

	CHECK(coredam_slice_unit_name("/coredump.slice", buf, sizeof(buf)) >= 0);
	CHECK_STREQ(buf, "coredump.slice");
	CHECK(coredam_slice_unit_name("/a.slice/a-b.slice", buf, sizeof(buf)) >= 0);
	CHECK_STREQ(buf, "a-b.slice");
	CHECK(coredam_slice_unit_name("/a.slice/a-b.slice/a-b-c.slice", buf, sizeof(buf)) >= 0);
	CHECK_STREQ(buf, "a-b-c.slice");
	/* systemd's escape of a cgroup name that would clash with a controller's files */
	CHECK(coredam_slice_unit_name("/_io.slice", buf, sizeof(buf)) >= 0);
	CHECK_STREQ(buf, "io.slice");
	CHECK(coredam_slice_unit_name("/dump\\x2dcores.slice", buf, sizeof(buf)) >= 0);
	CHECK_STREQ(buf, "dump\\x2dcores.slice");

	/* not a slice's cgroup: its unit would be another, or none */
	CHECK_ERRNO(coredam_slice_unit_name("/a.slice/b.slice", buf, sizeof(buf)), -EINVAL);
	CHECK_ERRNO(coredam_slice_unit_name("/a-b.slice", buf, sizeof(buf)), -EINVAL);
	CHECK_ERRNO(coredam_slice_unit_name("/a.slice/a-.slice", buf, sizeof(buf)), -EINVAL);
	CHECK_ERRNO(coredam_slice_unit_name("/a.slice/a-b-c.slice", buf, sizeof(buf)), -EINVAL);
	CHECK_ERRNO(coredam_slice_unit_name("/system.slice/coredamd.service", buf, sizeof(buf)), -EINVAL);
	CHECK_ERRNO(coredam_slice_unit_name("/coredump", buf, sizeof(buf)), -EINVAL);
	CHECK_ERRNO(coredam_slice_unit_name("/.slice", buf, sizeof(buf)), -EINVAL);
	CHECK_ERRNO(coredam_slice_unit_name("/", buf, sizeof(buf)), -EINVAL);
	CHECK_ERRNO(coredam_slice_unit_name("coredump.slice", buf, sizeof(buf)), -EINVAL);
	CHECK_ERRNO(coredam_slice_unit_name("/coredump.slice/", buf, sizeof(buf)), -EINVAL);
	CHECK_ERRNO(coredam_slice_unit_name("/core dump.slice", buf, sizeof(buf)), -EINVAL);
	CHECK_ERRNO(coredam_slice_unit_name("/coredump.slice", buf, 8), -ENOBUFS);
}

TEST(slice_want_diff)
{
	struct coredam_slice_want a = {
		.major = { 8 }, .minor = { 0 }, .n_devs = 1,
		.io = { [COREDAM_SLICE_IO_WRITE_BPS] = 7000000 }, .memory_high = 256 << 20,
	}, b = a;

	CHECK_EQ_INT(coredam_slice_want_diff(&a, &b), 0);
	/* the adaptive budget moves: only the write bandwidth is sent */
	b.io[COREDAM_SLICE_IO_WRITE_BPS] = 8000000;
	CHECK_EQ_INT(coredam_slice_want_diff(&a, &b), 1u << COREDAM_SLICE_IO_WRITE_BPS);
	b = a;
	b.memory_high = 0;
	CHECK_EQ_INT(coredam_slice_want_diff(&a, &b), 1u << COREDAM_SLICE_MEMORY_HIGH);
	/* another disk: every limit that is set moves with it, the unset ones stay unset */
	b = a;
	b.minor[0] = 16;
	CHECK_EQ_INT(coredam_slice_want_diff(&a, &b), 1u << COREDAM_SLICE_IO_WRITE_BPS);
	b.io[COREDAM_SLICE_IO_READ_IOPS] = 100;
	CHECK_EQ_INT(coredam_slice_want_diff(&a, &b),
		     (1u << COREDAM_SLICE_IO_WRITE_BPS) | (1u << COREDAM_SLICE_IO_READ_IOPS));
	b = a;
	b.n_devs = 2;
	b.major[1] = 253;
	CHECK_EQ_INT(coredam_slice_want_diff(&a, &b), 1u << COREDAM_SLICE_IO_WRITE_BPS);
}

TEST(slice_dev_path)
{
	/* the unit file's "/var" first, then an unresolved node, then the agent's own earlier name */
	const struct coredam_slice_known k[] = {
		{ "/var", true, 8, 0 },
		{ "/dev/sdz", false, 0, 0 },
		{ "/dev/block/8:16", true, 8, 16 },
		{ "/dev/block/8:0", true, 8, 0 },
	};
	unsigned int major, minor;
	char buf[64];

	CHECK(coredam_slice_dev_path(k, ELEMENTSOF(k), 8, 0, buf, sizeof(buf)) >= 0);
	CHECK_STREQ(buf, "/var");
	CHECK(coredam_slice_dev_path(k, ELEMENTSOF(k), 8, 16, buf, sizeof(buf)) >= 0);
	CHECK_STREQ(buf, "/dev/block/8:16");
	CHECK(coredam_slice_dev_path(k, ELEMENTSOF(k), 253, 2, buf, sizeof(buf)) >= 0);
	CHECK_STREQ(buf, "/dev/block/253:2");
	CHECK(coredam_slice_dev_path(NULL, 0, 8, 0, buf, sizeof(buf)) >= 0);
	CHECK_STREQ(buf, "/dev/block/8:0");
	CHECK_ERRNO(coredam_slice_dev_path(NULL, 0, 8, 0, buf, 8), -ENOBUFS);

	CHECK_OK(coredam_slice_parse_dev_block("/dev/block/259:3", &major, &minor));
	CHECK(major == 259 && minor == 3);
	CHECK_ERRNO(coredam_slice_parse_dev_block("/dev/block/8:0x", &major, &minor), -EINVAL);
	CHECK_ERRNO(coredam_slice_parse_dev_block("/dev/block/8", &major, &minor), -EINVAL);
	CHECK_ERRNO(coredam_slice_parse_dev_block("/dev/block/-8:0", &major, &minor), -EINVAL);
	CHECK_ERRNO(coredam_slice_parse_dev_block("/dev/sda", &major, &minor), -EINVAL);
}

TEST(slice_limits_format_parse)
{
	static struct coredam_slice_limits l, p;
	char buf[1024];

	l.n_io[COREDAM_SLICE_IO_WRITE_BPS] = 2;
	snprintf(l.io[COREDAM_SLICE_IO_WRITE_BPS][0].path, sizeof(l.io[0][0].path), "/var");
	l.io[COREDAM_SLICE_IO_WRITE_BPS][0].limit = 10000000;
	snprintf(l.io[COREDAM_SLICE_IO_WRITE_BPS][1].path, sizeof(l.io[0][0].path), "/dev/block/8:16");
	l.io[COREDAM_SLICE_IO_WRITE_BPS][1].limit = COREDAM_SLICE_NO_LIMIT;
	l.n_io[COREDAM_SLICE_IO_READ_IOPS] = 1;
	snprintf(l.io[COREDAM_SLICE_IO_READ_IOPS][0].path, sizeof(l.io[0][0].path), "/srv");
	l.io[COREDAM_SLICE_IO_READ_IOPS][0].limit = 100;
	l.memory_high = 256 << 20;
	CHECK(coredam_slice_limits_format(&l, buf, sizeof(buf)) >= 0);
	CHECK_STREQ(buf, "IOWriteBandwidthMax /var 10000000\n"
			 "IOWriteBandwidthMax /dev/block/8:16 max\n"
			 "IOReadIOPSMax /srv 100\n"
			 "MemoryHigh 268435456\n");
	CHECK_OK(coredam_slice_limits_parse(buf, &p));
	CHECK(memcmp(&l, &p, sizeof(l)) == 0);
	CHECK_ERRNO(coredam_slice_limits_format(&l, buf, 20), -ENOBUFS);

	CHECK_OK(coredam_slice_limits_parse("MemoryHigh max\n", &p));
	CHECK(p.memory_high == COREDAM_SLICE_NO_LIMIT && p.n_io[COREDAM_SLICE_IO_WRITE_BPS] == 0);
	/* refused: what the formatter never writes */
	CHECK_ERRNO(coredam_slice_limits_parse("", &p), -EINVAL);
	CHECK_ERRNO(coredam_slice_limits_parse("IOWriteBandwidthMax /var 1\n", &p), -EINVAL);
	CHECK_ERRNO(coredam_slice_limits_parse("MemoryHigh 1\nMemoryHigh 2\n", &p), -EINVAL);
	CHECK_ERRNO(coredam_slice_limits_parse("MemoryHigh 1\nIOWriteBandwidthMax var 1\n", &p), -EINVAL);
	CHECK_ERRNO(coredam_slice_limits_parse("MemoryHigh 1\nIOWriteBandwidthMax /var fast\n", &p), -EINVAL);
	CHECK_ERRNO(coredam_slice_limits_parse("MemoryHigh 1\nIOWriteBandwidthMax /var 1 2\n", &p), -EINVAL);
	CHECK_ERRNO(coredam_slice_limits_parse("MemoryHigh 1\nCPUQuota /var 1\n", &p), -EINVAL);
	CHECK_ERRNO(coredam_slice_limits_parse("MemoryHigh 1\nIOWriteBandwidthMax /v\tar 1\n", &p), -EINVAL);
	/* a path the file cannot hold is not saved */
	snprintf(l.io[COREDAM_SLICE_IO_READ_IOPS][0].path, sizeof(l.io[0][0].path), "/srv/my cores");
	CHECK_ERRNO(coredam_slice_limits_format(&l, buf, sizeof(buf)), -EINVAL);
}
