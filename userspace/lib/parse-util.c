// SPDX-License-Identifier: LGPL-2.1-or-later
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>

#include "parse-util.h"

/* The decimal number at the start of @s; *ret_end points after its digits. */
static int parse_leading_u64(const char *s, unsigned long long *ret, char **ret_end)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno)
		return -errno;
	*ret = v;
	*ret_end = end;
	return 0;
}

int parse_u64(const char *s, uint64_t *ret)
{
	unsigned long long v;
	char *end;
	int r;

	r = parse_leading_u64(s, &v, &end);
	if (r < 0)
		return r;
	if (*end)
		return -EINVAL;
	*ret = v;
	return 0;
}

int parse_u32(const char *s, uint32_t *ret)
{
	uint64_t v;
	int r;

	r = parse_u64(s, &v);
	if (r < 0)
		return r;
	if (v > UINT32_MAX)
		return -ERANGE;
	*ret = (uint32_t)v;
	return 0;
}

int parse_devnum(const char *s, unsigned int *ret_major, unsigned int *ret_minor)
{
	const char *colon = strchr(s, ':');
	char major[16];
	uint32_t ma, mi;

	if (!colon || (size_t)(colon - s) >= sizeof(major))
		return -EINVAL;
	memcpy(major, s, colon - s);
	major[colon - s] = '\0';
	if (parse_u32(major, &ma) < 0 || parse_u32(colon + 1, &mi) < 0)
		return -EINVAL;
	*ret_major = ma;
	*ret_minor = mi;
	return 0;
}

int parse_i32(const char *s, int32_t *ret)
{
	uint32_t v;
	int r;

	r = parse_u32(s + (*s == '-'), &v);
	if (r < 0)
		return r;
	if (v > (uint32_t)INT32_MAX + (*s == '-'))
		return -ERANGE;
	*ret = *s == '-' ? (int32_t)(0 - (int64_t)v) : (int32_t)v;
	return 0;
}

int parse_size(const char *s, uint64_t base, uint64_t *ret)
{
	static const char suffixes[] = "KMGT";
	unsigned long long whole, frac = 0, frac_div = 1;
	uint64_t mult = 1, v;
	const char *p;
	char *end;
	int r;

	r = parse_leading_u64(s, &whole, &end);
	if (r < 0)
		return r;
	p = end;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		while (isdigit((unsigned char)*p)) {
			if (frac_div < 1000000) {
				frac = frac * 10 + (*p - '0');
				frac_div *= 10;
			}
			p++;
		}
	}
	if (*p) {
		const char *c = strchr(suffixes, toupper((unsigned char)*p));

		if (!c || !*c)
			return -EINVAL;
		for (int i = 0; i <= c - suffixes; i++)
			mult *= base;
		p++;
		if (*p == 'i' && base == 1024)
			p++;
	}
	if (*p == 'B' || *p == 'b')
		p++;
	if (base == 1000 && strcmp(p, "/s") == 0)
		p += 2;
	if (*p)
		return -EINVAL;
	if (mult > 1 && whole > UINT64_MAX / mult)
		return -ERANGE;
	v = whole * mult;
	if (frac) {
		uint64_t part;

		if (mult == 1)
			return -EINVAL; /* fractions of a byte */
		part = (uint64_t)((double)frac / frac_div * mult);
		if (part > UINT64_MAX - v)
			return -ERANGE;
		v += part;
	}
	*ret = v;
	return 0;
}

int parse_duration(const char *s, uint64_t *ret_usec)
{
	static const struct {
		const char *suffix;
		uint64_t usec;
	} units[] = {
		{ "", 1000000 }, { "s", 1000000 }, { "sec", 1000000 },
		{ "ms", 1000 }, { "msec", 1000 }, { "us", 1 }, { "usec", 1 },
		{ "m", 60000000 }, { "min", 60000000 }, { "h", 3600000000ULL },
		{ "d", 86400000000ULL }, { "day", 86400000000ULL }, { "days", 86400000000ULL },
	};
	unsigned long long v;
	char *end;
	int r;

	r = parse_leading_u64(s, &v, &end);
	if (r < 0)
		return r;
	while (*end == ' ')
		end++;
	for (size_t i = 0; i < ELEMENTSOF(units); i++) {
		if (strcmp(end, units[i].suffix) != 0)
			continue;
		if (v > UINT64_MAX / units[i].usec)
			return -ERANGE;
		*ret_usec = v * units[i].usec;
		return 0;
	}
	return -EINVAL;
}

int parse_bool(const char *s, bool *ret)
{
	static const char *const yes[] = { "1", "yes", "y", "true", "on" };
	static const char *const no[] = { "0", "no", "n", "false", "off" };

	for (size_t i = 0; i < ELEMENTSOF(yes); i++)
		if (strcasecmp(s, yes[i]) == 0) {
			*ret = true;
			return 0;
		}
	for (size_t i = 0; i < ELEMENTSOF(no); i++)
		if (strcasecmp(s, no[i]) == 0) {
			*ret = false;
			return 0;
		}
	return -EINVAL;
}

/* @v in @base with one decimal: "512B", "9.5Mi" + @unit, "10.0M" + @unit. */
static const char *format_scaled(char *buf, size_t size, uint64_t v, double base, const char *unit)
{
	static const char units[] = "KMGT";
	double d = (double)v;
	int u = -1;

	while (d >= base && u < 3) {
		d /= base;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%" PRIu64 "%s", v, unit);
	else
		snprintf(buf, size, "%.1f%c%s%s", d, units[u], base == 1024.0 ? "i" : "", unit);
	return buf;
}

const char *format_size(char *buf, size_t size, uint64_t v)
{
	return format_scaled(buf, size, v, 1024.0, "B");
}

const char *format_rate(char *buf, size_t size, uint64_t bps)
{
	return format_scaled(buf, size, bps, 1000.0, "B/s");
}

const char *format_bps_field(char *buf, size_t size, uint64_t bps)
{
	if (bps)
		(void)snprintf(buf, size, "%" PRIu64, bps);
	else
		(void)snprintf(buf, size, "max");
	return buf;
}
