/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What coredamd answers to the control socket's STATUS request, and what
 * coredamctl status and watch show of it: one struct, the daemon's
 * formatter and the client's parser.
 *
 * On the wire (after the "OK" line): one "key=value" line per field, in
 * the order of enum coredam_status_field, and one "device=MAJ:MIN NAME
 * KIND" line per device. A string value goes through coredam_escape(), so
 * that no value holds a newline (it would start a key of its own): a
 * backslash, a control character or a byte that is not UTF-8 is spelt
 * "\\", "\n", "\xNN"; ordinary text is sent as it is. The parser undoes
 * the escapes, skips keys it does not know (a newer daemon's) and marks
 * the fields it did not get (an older daemon's) absent.
 */
#ifndef COREDAM_STATUS_H
#define COREDAM_STATUS_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "string-util.h"

/* The fields, in the order they are sent; each a bit of coredam_status.have. */
enum coredam_status_field {
	COREDAM_STATUS_AGENT_PID,
	COREDAM_STATUS_CONFIG,
	COREDAM_STATUS_LAST_RELOAD,
	COREDAM_STATUS_MODE,
	COREDAM_STATUS_CGROUP,
	COREDAM_STATUS_WRITE_BPS,
	COREDAM_STATUS_READ_BPS,
	COREDAM_STATUS_CONCURRENCY,
	COREDAM_STATUS_QUEUE_CAP,
	COREDAM_STATUS_WAIT_TIMEOUT_MS,
	COREDAM_STATUS_FLOOR_BPS,
	COREDAM_STATUS_CEILING_BPS,
	COREDAM_STATUS_BUSY_CEILING_BPS,
	COREDAM_STATUS_FOREGROUND_PRESSURE,
	COREDAM_STATUS_CORE_PATTERN,
	COREDAM_STATUS_DESTINATION,
	COREDAM_STATUS_PIPE_HELPER,
	COREDAM_STATUS_STATS_SOURCE,
	COREDAM_STATUS_SPACE_BELOW,
	COREDAM_STATUS_FREE_BYTES,
	COREDAM_STATUS_FLOOR_BYTES,
	COREDAM_STATUS_DEVICES,		/* "device=" lines, at least one */
	COREDAM_STATUS_BUDGET_CHANGES,
	COREDAM_STATUS_RELOADS,
	COREDAM_STATUS_RELOAD_FAILURES,
	COREDAM_STATUS_WAITING_MEMORY,
	COREDAM_STATUS_DUMPER_MEMORY,
	COREDAM_STATUS_LIMITS_THROUGH,
	COREDAM_STATUS_UNIT_CALLS,
	COREDAM_STATUS_N_FIELDS,
};

#define COREDAM_STATUS_ALL ((UINT32_C(1) << COREDAM_STATUS_N_FIELDS) - 1)
#define COREDAM_STATUS_MAX_DEVICES 8

/* A device io.max names: "8:0 sda disk". */
struct coredam_status_device {
	unsigned int major, minor;
	char name[64];
	char kind[16];		/* coredam_dev_kind_str() */
};

struct coredam_status {
	uint32_t have;			/* 1 << field: the fields present */
	int agent_pid;
	char config[PATH_MAX];		/* the configuration file */
	char last_reload[600];		/* "ok", "none", or why it was refused */
	char mode[16];			/* "fixed", "adaptive" */
	char cgroup[PATH_MAX];		/* the dump cgroup */
	uint64_t write_bps;		/* 0: no limit */
	uint64_t read_bps;
	uint64_t concurrency, queue_cap, wait_timeout_ms;
	uint64_t floor_bps, ceiling_bps, busy_ceiling_bps;
	double foreground_pressure;	/* sent with 4 decimals */
	char core_pattern[4096];
	char destination[PATH_MAX];	/* "" when core_pattern names none */
	char pipe_helper[16];		/* "active", "inactive" */
	char stats_source[16];		/* "kernel", "coredam-pipe", "none" */
	int space_below;		/* 1: the destination is below its free-space floor */
	uint64_t free_bytes, floor_bytes;
	struct coredam_status_device devices[COREDAM_STATUS_MAX_DEVICES];
	size_t n_devices;
	uint64_t budget_changes, reloads, reload_failures;
	uint64_t waiting_memory;	/* WaitingMemoryMax= in bytes; 0: none */
	uint64_t dumper_memory;		/* what one dumper holds as it counts (RssAnon); 0: none seen */
	char limits_through[272];	/* "cgroupfs", or the slice unit systemd sets them on */
	uint64_t unit_calls;		/* SetUnitProperties calls on it */
};

static inline bool coredam_status_has(const struct coredam_status *s, enum coredam_status_field f)
{
	return (s->have >> f) & 1;
}

/* The key of field @f on the wire ("agent_pid", ..., "device"). */
const char *coredam_status_key(enum coredam_status_field f);

/*
 * Append the fields of @s that it has (s->have) to @sb as "key=value"
 * lines; a failure (-ENOBUFS) sticks in @sb, as every strbuf append's.
 */
void coredam_status_format(const struct coredam_status *s, struct strbuf *sb);

/*
 * The value of field @f into @buf as a "key=value" line holds it: a number
 * in decimal (the pressure with 4 decimals), a string escaped, so that it
 * is safe on a terminal. Its length; -ENOENT when @s does not have it,
 * -EINVAL for the devices (several lines), -ENOBUFS when cut.
 */
int coredam_status_value(const struct coredam_status *s, enum coredam_status_field f, char *buf, size_t size);

/*
 * The value of field @f for JSON: an integer, a real (the pressure) or a
 * string (through coredam_json_text()); NULL when @s does not have it,
 * for the devices, or when out of memory.
 */
struct json_t;
struct json_t *coredam_status_json(const struct coredam_status *s, enum coredam_status_field f);

/*
 * Fill *ret from @text, "key=value" lines (other lines, such as the
 * answer's "OK", are skipped). A key met twice keeps its first value; a
 * number that does not parse, or a device line that does not, counts as
 * absent; a string too long for its field is cut. Returns the number of
 * fields present.
 */
int coredam_status_parse(const char *text, struct coredam_status *ret);

#endif
