// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The unit parsers of coredam.conf and the command line: sizes ("50M",
 * "1.5G"), rates ("10MB/s"), durations ("30s", "2min"), numbers, booleans,
 * and the keys built on them, through coredam_config_set().
 *
 * Properties: a strict number is all digits; a u32 is the u64 it parses
 * to; "X.Y<unit>" lies in [X<unit>, (X+1)<unit>) (no wrap-around on the
 * way); a duration is a whole multiple of its unit.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz.h"
#include "macro.h"
#include "parse-util.h"

static void check_numbers(const char *s)
{
	uint64_t v;
	uint32_t v32;

	if (parse_u64(s, &v) == 0) {
		FUZZ_CHECK(*s);
		for (const char *p = s; *p; p++)
			FUZZ_CHECK(isdigit((unsigned char)*p));
	}
	if (parse_u32(s, &v32) == 0) {
		FUZZ_CHECK(parse_u64(s, &v) == 0);
		FUZZ_CHECK(v == v32);
	}
}

/* "X.Y<rest>" against "X<rest>" and "1<rest>". */
static void check_fraction(const char *s, uint64_t base, uint64_t v)
{
	char whole[64], unit[64];
	const char *dot = strchr(s, '.'), *rest;
	uint64_t lo, one;

	if (!dot || (size_t)(dot - s) >= sizeof(whole) - 8)
		return;
	rest = dot + 1 + strspn(dot + 1, "0123456789");
	if (strlen(rest) > 8)
		return;
	snprintf(whole, sizeof(whole), "%.*s%s", (int)(dot - s), s, rest);
	snprintf(unit, sizeof(unit), "1%s", rest);
	FUZZ_CHECK(parse_size(whole, base, &lo) == 0);
	FUZZ_CHECK(parse_size(unit, base, &one) == 0);
	FUZZ_CHECK(v >= lo);
	if (lo <= UINT64_MAX - one)
		FUZZ_CHECK(v < lo + one);
}

static void check_sizes(const char *s)
{
	static const uint64_t bases[] = { 1000, 1024 };
	char buf[32];

	for (size_t i = 0; i < ELEMENTSOF(bases); i++) {
		uint64_t v;

		if (parse_size(s, bases[i], &v) < 0)
			continue;
		check_fraction(s, bases[i], v);
		format_size(buf, sizeof(buf), v);
		format_rate(buf, sizeof(buf), v);
		FUZZ_CHECK(strlen(buf) < sizeof(buf) - 1);
	}
}

static void check_duration(const char *s)
{
	uint64_t usec, n;
	char digits[32];
	size_t len = strspn(s, "0123456789");

	if (parse_duration(s, &usec) < 0)
		return;
	FUZZ_CHECK(len > 0);
	if (len >= sizeof(digits))
		return;
	memcpy(digits, s, len);
	digits[len] = '\0';
	FUZZ_CHECK(parse_u64(digits, &n) == 0);
	FUZZ_CHECK(n == 0 ? usec == 0 : usec % n == 0);
}

/* Every key type of coredam.conf with @s as its value; a good value formats. */
static void check_keys(const char *s)
{
	static const char *const keys[][2] = {
		{ "Agent", "Mode" }, { "Agent", "RequireKernelSupport" }, { "Agent", "MetricsFile" },
		{ "Agent", "Interval" }, { "Cgroup", "Path" }, { "Cgroup", "MemoryHigh" },
		{ "Devices", "Destination" }, { "Devices", "Devices" }, { "Limits", "WriteBandwidth" },
		{ "Limits", "WriteIOPS" }, { "Limits", "Concurrency" }, { "Adaptive", "ConcurrencyFloor" },
		{ "Adaptive", "PressureTarget" }, { "Adaptive", "Backoff" }, { "Space", "FreeSpaceFloor" },
	};
	static char out[65536];	/* longer than any configuration: paths may be PATH_MAX */
	struct coredam_config c;
	struct coredam_error err;

	coredam_config_init(&c);
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		err.msg[0] = '\0';
		if (coredam_config_set(&c, keys[i][0], keys[i][1], s, &err) < 0)
			FUZZ_CHECK(err.msg[0]);
	}
	FUZZ_CHECK(coredam_config_format(&c, out, sizeof(out)) > 0);
	FUZZ_CHECK(c.pressure_target >= 0.0 && c.pressure_target <= 1.0);
	FUZZ_CHECK(c.backoff >= 0.0 && c.backoff <= 1.0);
	FUZZ_CHECK(c.free_floor_percent <= 100);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);
	bool b;

	check_numbers(s);
	check_sizes(s);
	check_duration(s);
	parse_bool(s, &b);
	check_keys(s);
	free(s);
	return 0;
}
