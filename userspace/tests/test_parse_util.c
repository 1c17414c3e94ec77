// SPDX-License-Identifier: LGPL-2.1-or-later
#include <stdint.h>

#include "test.h"
#include "macro.h"
#include "parse-util.h"

TEST(parse_size_units)
{
	uint64_t v = 7;

	CHECK(parse_size("4096", 1024, &v) == 0 && v == 4096);
	CHECK(parse_size("50M", 1000, &v) == 0 && v == 50000000);
	CHECK(parse_size("50M", 1024, &v) == 0 && v == 50ULL << 20);
	CHECK(parse_size("1G", 1024, &v) == 0 && v == 1ULL << 30);
	CHECK(parse_size("1g", 1024, &v) == 0 && v == 1ULL << 30);
	CHECK(parse_size("2T", 1000, &v) == 0 && v == 2000000000000ULL);
	CHECK(parse_size("512K", 1024, &v) == 0 && v == 512 * 1024);
	CHECK(parse_size("10MB", 1000, &v) == 0 && v == 10000000);
	CHECK(parse_size("10MB/s", 1000, &v) == 0 && v == 10000000);
	CHECK(parse_size("1.5G", 1024, &v) == 0 && v == 3ULL << 29);
	CHECK(parse_size("256MiB", 1024, &v) == 0 && v == 256ULL << 20);
	v = 7;
	CHECK_ERRNO(parse_size("", 1024, &v), -EINVAL);
	CHECK_ERRNO(parse_size("M", 1024, &v), -EINVAL);
	CHECK_ERRNO(parse_size("-1", 1024, &v), -EINVAL);
	CHECK_ERRNO(parse_size("10X", 1024, &v), -EINVAL);
	CHECK_ERRNO(parse_size("10 M", 1024, &v), -EINVAL);
	CHECK_ERRNO(parse_size("1.5", 1024, &v), -EINVAL);
	CHECK_ERRNO(parse_size("99999999999T", 1024, &v), -ERANGE);
	/* the fraction must not wrap the result around: found by fuzz_units */
	CHECK_ERRNO(parse_size("18446744073.999999G", 1000, &v), -ERANGE);
	CHECK_ERRNO(parse_size("18446744.9999T", 1000, &v), -ERANGE);
	CHECK_ERRNO(parse_size("10MB/s", 1024, &v), -EINVAL);
	CHECK(v == 7); /* untouched on failure */
	CHECK(parse_size("18446744073.7G", 1000, &v) == 0 && v == 18446744073700000000ULL);
}

TEST(parse_duration_units)
{
	uint64_t v = 7;

	CHECK(parse_duration("30s", &v) == 0 && v == 30000000);
	CHECK(parse_duration("30", &v) == 0 && v == 30000000);
	CHECK(parse_duration("500ms", &v) == 0 && v == 500000);
	CHECK(parse_duration("2min", &v) == 0 && v == 120000000);
	CHECK(parse_duration("2m", &v) == 0 && v == 120000000);
	CHECK(parse_duration("1h", &v) == 0 && v == 3600000000ULL);
	CHECK(parse_duration("250us", &v) == 0 && v == 250);
	CHECK(parse_duration("0", &v) == 0 && v == 0);
	v = 7;
	CHECK_ERRNO(parse_duration("5 fortnights", &v), -EINVAL);
	CHECK_ERRNO(parse_duration("s", &v), -EINVAL);
	CHECK_ERRNO(parse_duration("-1s", &v), -EINVAL);
	CHECK(v == 7);
}

TEST(parse_numbers_bools)
{
	uint32_t u = 3;
	bool b = false;

	CHECK(parse_u32("4294967295", &u) == 0 && u == UINT32_MAX);
	CHECK_ERRNO(parse_u32("4294967296", &u), -ERANGE);
	CHECK_ERRNO(parse_u32("12a", &u), -EINVAL);
	CHECK_ERRNO(parse_u32(" 1", &u), -EINVAL);
	{
		int32_t i = 7;

		CHECK(parse_i32("-20", &i) == 0 && i == -20);
		CHECK(parse_i32("19", &i) == 0 && i == 19);
		CHECK(parse_i32("-2147483648", &i) == 0 && i == INT32_MIN);
		CHECK(parse_i32("2147483647", &i) == 0 && i == INT32_MAX);
		CHECK_ERRNO(parse_i32("2147483648", &i), -ERANGE);
		CHECK_ERRNO(parse_i32("-2147483649", &i), -ERANGE);
		CHECK_ERRNO(parse_i32("--1", &i), -EINVAL);
		CHECK_ERRNO(parse_i32("-", &i), -EINVAL);
		CHECK_ERRNO(parse_i32("+1", &i), -EINVAL);
		CHECK(i == INT32_MAX);
	}
	CHECK(parse_bool("yes", &b) == 0 && b);
	CHECK(parse_bool("off", &b) == 0 && !b);
	CHECK_ERRNO(parse_bool("maybe", &b), -EINVAL);
}

/* Sizes for people in IEC units, rates in the base the configuration reads them in. */
TEST(format_size_and_rate)
{
	char b[24];

	CHECK_STREQ(format_size(b, sizeof(b), 512), "512B");
	CHECK_STREQ(format_size(b, sizeof(b), 10000000), "9.5MiB");
	CHECK_STREQ(format_size(b, sizeof(b), 1ULL << 30), "1.0GiB");
	/* WriteBandwidth=10M is 10000000 bytes a second, and shows so */
	CHECK_STREQ(format_rate(b, sizeof(b), 10000000), "10.0MB/s");
	CHECK_STREQ(format_rate(b, sizeof(b), 999), "999B/s");
	CHECK_STREQ(format_rate(b, sizeof(b), 1500), "1.5KB/s");
	CHECK_STREQ(format_size(b, sizeof(b), UINT64_MAX), "16777216.0TiB");
	/* a log field carries the number, and 0 is no limit */
	CHECK_STREQ(format_bps_field(b, sizeof(b), 10000000), "10000000");
	CHECK_STREQ(format_bps_field(b, sizeof(b), 0), "max");
}

TEST(parse_devnum_strict)
{
	unsigned int ma = 0, mi = 0;

	CHECK_OK(parse_devnum("254:16", &ma, &mi));
	CHECK_EQ_INT(ma, 254);
	CHECK_EQ_INT(mi, 16);
	CHECK_OK(parse_devnum("0:0", &ma, &mi));
	CHECK_EQ_INT(ma, 0);
	/* what sscanf("%u:%u") let through: signs, spaces, junk after */
	CHECK_ERRNO(parse_devnum("-1:0", &ma, &mi), -EINVAL);
	CHECK_ERRNO(parse_devnum(" 8:0", &ma, &mi), -EINVAL);
	CHECK_ERRNO(parse_devnum("8:0 ", &ma, &mi), -EINVAL);
	CHECK_ERRNO(parse_devnum("8:0x", &ma, &mi), -EINVAL);
	CHECK_ERRNO(parse_devnum("8:", &ma, &mi), -EINVAL);
	CHECK_ERRNO(parse_devnum(":0", &ma, &mi), -EINVAL);
	CHECK_ERRNO(parse_devnum("8", &ma, &mi), -EINVAL);
	CHECK_ERRNO(parse_devnum("8:0:1", &ma, &mi), -EINVAL);
	CHECK_ERRNO(parse_devnum("4294967296:0", &ma, &mi), -EINVAL);
	CHECK_ERRNO(parse_devnum("12345678901234567890:0", &ma, &mi), -EINVAL);
	CHECK_EQ_INT(ma, 0);
}
