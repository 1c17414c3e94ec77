// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredam.conf's keys: their types, defaults and values, and the
 * configuration written back out (--dump-config). Reading the files:
 * config-file.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>

#include "cgroup.h"
#include "config.h"
#include "error.h"
#include "macro.h"
#include "string-util.h"
#include "parse-util.h"
#include "sched-util.h"
#include "paths.h"

enum key_type {
	T_MODE,
	T_BOOL,
	T_PATH,		/* absolute path */
	T_STRING,
	T_LIST,		/* words separated by white space; an assignment adds to the list */
	T_CGROUP,
	T_DURATION,
	T_DURATION_INF,	/* a duration; "infinity": none (stored as 0, which an old config wrote) */
	T_SIZE,		/* base 1024, 0 allowed */
	T_SIZE_MAX,	/* base 1024, > 0; "max" or "infinity": none (stored as 0) */
	T_RATE,		/* base 1000, > 0 */
	T_RATE_MAX,	/* base 1000, > 0; "max" or "infinity": no limit (stored as 0) */
	T_RATE_AUTO,	/* base 1000, > 0; "auto" (stored as 0) */
	T_IOPS,		/* a count with K/M (base 1000), > 0; "max" or "infinity": no limit */
	T_U32,
	T_U32_POS,
	T_U32_INF,	/* a count; "infinity": none (stored as 0, which an old config wrote) */
	T_FRACTION,	/* "10%" or "0.1" */
	T_FLOOR,	/* "1G", "5%", or both "1G 5%": the larger */
	T_USE_CAP,	/* "4G", "10%", or both "4G 10%": the smaller; "infinity": none */
	T_KEEP_FREE,	/* as T_FLOOR, or "auto": twice FreeSpaceFloor= */
	T_SHARE,	/* struct coredam_share: "1G", "50%", or "infinity" */
	T_DESTINATION,	/* "auto" or absolute path */
	T_NICE,		/* -20..19, or "keep" (COREDAM_NICE_KEEP) */
};

struct key {
	const char *section, *name;
	enum key_type type;
	size_t offset;
	const char *def;	/* default, as a user would write it */
};

#define K(sec, name, type, field, def) { sec, name, type, offsetof(struct coredam_config, field), def }

static const struct key keys[] = {
	K("Agent", "Mode", T_MODE, mode, "fixed"),
	K("Agent", "RequireKernelSupport", T_BOOL, require_kernel_support, "no"),
	K("Agent", "MetricsFile", T_PATH, metrics_file, "/run/coredam/metrics.prom"),
	K("Agent", "ControlSocket", T_PATH, control_socket, "/run/coredam/control.sock"),
	K("Agent", "Interval", T_DURATION, interval_usec, "1s"),
	K("Cgroup", "Path", T_CGROUP, cgroup, "/coredump.slice"),
	K("Cgroup", "KernelLeaf", T_STRING, kernel_leaf, "auto"),
	K("Cgroup", "MemoryHigh", T_SIZE_MAX, memory_high, "256M"),
	K("Cgroup", "SetThroughSystemd", T_BOOL, set_through_systemd, "yes"),
	K("Devices", "Destination", T_DESTINATION, destination, "auto"),
	K("Devices", "Devices", T_LIST, devices, ""),
	K("Limits", "WriteBandwidth", T_RATE_MAX, write_bps, "10M"),
	K("Limits", "ReadBandwidth", T_RATE_MAX, read_bps, "max"),
	K("Limits", "WriteIOPS", T_IOPS, write_iops, "max"),
	K("Limits", "ReadIOPS", T_IOPS, read_iops, "max"),
	K("Limits", "Concurrency", T_U32_INF, concurrency, "2"),
	K("Limits", "QueueCap", T_U32_INF, queue_cap, "64"),
	K("Limits", "WaitTimeout", T_DURATION_INF, wait_timeout_usec, "30min"),
	K("Limits", "WaitingMemoryMax", T_SHARE, waiting_memory, "50%"),
	K("Limits", "WritebackWindow", T_SIZE, writeback_window, "1M"),
	K("Limits", "DumpNice", T_NICE, dump_nice, "19"),
	K("Adaptive", "Floor", T_RATE, floor_bps, "10M"),
	K("Adaptive", "Ceiling", T_RATE_AUTO, ceiling_bps, "auto"),
	K("Adaptive", "CeilingWhenBusy", T_RATE_AUTO, busy_ceiling_bps, "auto"),
	K("Adaptive", "ConcurrencyFloor", T_U32_POS, concurrency_floor, "1"),
	K("Adaptive", "ConcurrencyCeiling", T_U32_POS, concurrency_ceiling, "4"),
	K("Adaptive", "PressureTarget", T_FRACTION, pressure_target, "10%"),
	K("Adaptive", "PressureWindow", T_DURATION, pressure_window_usec, "1s"),
	K("Adaptive", "Step", T_RATE_AUTO, step_bps, "auto"),
	K("Adaptive", "Backoff", T_FRACTION, backoff, "50%"),
	K("Adaptive", "HoldIntervals", T_U32, hold_intervals, "2"),
	K("Adaptive", "LiftWhenIdle", T_BOOL, lift_when_idle, "yes"),
	K("Adaptive", "PressureCgroups", T_LIST, pressure_cgroups, "auto"),
	K("Space", "FreeSpaceFloor", T_FLOOR, free_floor_bytes, "1G"),
	K("Space", "MaxUse", T_USE_CAP, max_use_bytes, "4G 10%"),
	K("Space", "KeepFree", T_KEEP_FREE, keep_free_bytes, "auto"),
	K("Space", "MaxAge", T_DURATION_INF, max_age_usec, "infinity"),
	K("Space", "MarkIncomplete", T_BOOL, mark_incomplete, "yes"),
	K("Pipe", "SetCorePattern", T_BOOL, pipe_set_core_pattern, "no"),
	K("Pipe", "Program", T_PATH, pipe_program, COREDAM_PIPE_PROGRAM),
	K("Pipe", "Directory", T_PATH, pipe_directory, "/var/lib/coredam/cores"),
	K("Pipe", "Compress", T_BOOL, pipe_compress, "no"),
	K("Pipe", "CompressLevel", T_U32_POS, pipe_compress_level, "3"),
	K("Pipe", "CoreSizeMax", T_SIZE_MAX, pipe_size_max, "32G"),
	K("Pipe", "CoreTimeMax", T_DURATION_INF, pipe_time_max_usec, "1h"),
	K("Pipe", "Sandbox", T_BOOL, pipe_sandbox, "yes"),
	K("Pipe", "Journal", T_BOOL, pipe_journal, "yes"),
	K("Repeats", "Keep", T_U32_INF, repeat_keep, "2"),
	K("Repeats", "Interval", T_DURATION, repeat_interval_usec, "1h"),
	K("Socket", "SetCorePattern", T_BOOL, sock_set_core_pattern, "no"),
	K("Socket", "Listen", T_PATH, sock_listen, "/run/coredam/coredump/socket"),
	K("Socket", "ReadAhead", T_SIZE, sock_read_ahead, "256M"),
};

const char *coredam_mode_str(enum coredam_mode m)
{
	return m == COREDAM_MODE_ADAPTIVE ? "adaptive" : "fixed";
}

/*
 * A size or a rate in @base, or @none ("max" and "infinity" as systemd
 * spells it, or "auto") stored as 0. A plain 0 is refused where 0 is the
 * stored "none": written for "no limit" it would read as "nothing at all"
 * (systemd refuses it too).
 */
static int parse_amount(const char *v, uint64_t base, const char *none, uint64_t *ret)
{
	int r;

	if (none && (strcmp(v, none) == 0 || (strcmp(none, "max") == 0 && strcmp(v, "infinity") == 0))) {
		*ret = 0;
		return 0;
	}
	r = parse_size(v, base, ret);
	if (r == -ERANGE)
		return -EOVERFLOW;	/* -ERANGE is 0, which amount_error() explains */
	if (r < 0)
		return r;
	return *ret == 0 ? -ERANGE : 0;
}

static int parse_fraction(const char *v, double *ret)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || !isfinite(d))
		return -EINVAL;
	if (*end == '%') {
		d /= 100.0;
		end++;
	}
	if (*end || d < 0.0 || d > 1.0)
		return -ERANGE;
	*ret = d;
	return 0;
}

/*
 * A size, a percentage of the file system's size, or both ("1G 5%"):
 * FreeSpaceFloor=, MaxUse=, KeepFree=. A part not given is 0.
 */
static int parse_size_pct(const struct key *k, const char *value, uint64_t *ret_bytes, uint32_t *ret_pct,
			  bool *ret_zero, struct coredam_error *reterr)
{
	char buf[128], *tok, *save = NULL;
	uint64_t bytes = 0;
	uint32_t pct = 0;
	bool zero = false;	/* a part given as 0 */
	int r, parts = 0;

	if (strlen(value) >= sizeof(buf))
		return coredam_error_set(reterr, -EINVAL, "%s=: value too long", k->name);
	strcpy(buf, value);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		size_t l = strlen(tok);

		if (tok[l - 1] == '%') {
			tok[l - 1] = '\0';
			r = parse_u32(tok, &pct);
			if (r < 0 || pct > 100)
				return coredam_error_set(reterr, -EINVAL,
							 "%s=%s: bad percentage \"%s%%\"", k->name, value, tok);
			zero |= pct == 0;
			parts++;
		} else {
			r = parse_size(tok, 1024, &bytes);
			if (r < 0)
				return coredam_error_set(reterr, r,
							 "%s=%s: expected a size, a percentage or both (1G 5%%)",
							 k->name, value);
			zero |= bytes == 0;
			parts++;
		}
	}
	*ret_bytes = bytes;
	*ret_pct = pct;
	if (ret_zero)
		*ret_zero = zero || parts == 0;	/* nothing given reads as 0 */
	return 0;
}

/* WaitingMemoryMax=: a size or a percentage (of the memory), not 0, not both; or "infinity". */
static int parse_share(const struct key *k, const char *value, struct coredam_share *ret,
		       struct coredam_error *reterr)
{
	struct coredam_share sh = { 0 };
	bool zero;
	int r;

	if (strcmp(value, "infinity") != 0) {
		r = parse_size_pct(k, value, &sh.bytes, &sh.percent, &zero, reterr);
		if (r < 0)
			return r;
		if (zero || (sh.bytes && sh.percent))
			return coredam_error_set(reterr, -ERANGE,
						 "%s=%s: expected a size (e.g. 4G), a percentage (e.g. 50%%) or infinity",
						 k->name, value);
	}
	*ret = sh;
	return 0;
}

/* FreeSpaceFloor=: "1G", "5%", or both "1G 5%". */
static int parse_floor(struct coredam_config *cfg, const struct key *k, const char *value,
		       struct coredam_error *reterr)
{
	return parse_size_pct(k, value, &cfg->free_floor_bytes, &cfg->free_floor_percent, NULL, reterr);
}

/*
 * MaxUse=: "4G", "10%", both, or "infinity". A 0 in either part is
 * refused: written for "no cap" it would read as "keep nothing".
 */
static int parse_use_cap(struct coredam_config *cfg, const struct key *k, const char *value,
			 struct coredam_error *reterr)
{
	uint64_t bytes;
	uint32_t pct;
	bool zero;
	int r;

	if (strcmp(value, "infinity") == 0) {
		cfg->max_use_bytes = 0;
		cfg->max_use_percent = 0;
		return 0;
	}
	r = parse_size_pct(k, value, &bytes, &pct, &zero, reterr);
	if (r < 0)
		return r;
	if (zero)
		return coredam_error_set(reterr, -ERANGE, "%s=%s: 0 is not allowed; infinity means no limit",
					 k->name, value);
	cfg->max_use_bytes = bytes;
	cfg->max_use_percent = pct;
	return 0;
}

/* KeepFree=: as FreeSpaceFloor=, or "auto". */
static int parse_keep_free(struct coredam_config *cfg, const struct key *k, const char *value,
			   struct coredam_error *reterr)
{
	int r;

	if (strcmp(value, "auto") == 0) {
		cfg->keep_free_bytes = 0;
		cfg->keep_free_percent = 0;
		cfg->keep_free_auto = true;
		return 0;
	}
	r = parse_size_pct(k, value, &cfg->keep_free_bytes, &cfg->keep_free_percent, NULL, reterr);
	if (r < 0)
		return r;
	cfg->keep_free_auto = false;
	return 0;
}

/* How a key of @type spells "none", if it has one. */
static const char *amount_none(enum key_type type)
{
	switch (type) {
	case T_SIZE_MAX:
	case T_RATE_MAX:
	case T_IOPS:
		return "max";
	case T_RATE_AUTO:
		return "auto";
	default:
		return NULL;
	}
}

static int amount_error(const struct key *k, const char *value, int r, struct coredam_error *reterr)
{
	const char *none = amount_none(k->type);
	const char *what = k->type == T_SIZE_MAX ? "a size (use e.g. 256M, 1G)" :
			   k->type == T_IOPS	 ? "a count of operations a second (use e.g. 500, 2K)" :
						   "a rate (use e.g. 50M)";

	if (r == -EOVERFLOW)
		return coredam_error_set(reterr, r, "%s=%s: too large", k->name, value);
	if (r == -ERANGE && !none)
		return coredam_error_set(reterr, r, "%s=%s: must be more than 0", k->name, value);
	if (r == -ERANGE)
		return coredam_error_set(reterr, r, "%s=%s: 0 is not allowed; %s means %s", k->name, value, none,
					 strcmp(none, "max") == 0 ? "no limit" : "chosen by the agent");
	return coredam_error_set(reterr, r, "%s=%s: not %s%s%s", k->name, value, what, none ? ", or " : "",
				 none ?: "");
}

/*
 * Set the field of key @k from @value. One case a key type: the switch is
 * the table of how each type is read and what its error says.
 */
static int set_value(struct coredam_config *cfg, const struct key *k, const char *value,
		     struct coredam_error *reterr)
{
	void *field = (char *)cfg + k->offset;
	uint64_t u64;
	uint32_t u32;
	double d;
	bool b;
	int r = 0;

	switch (k->type) {
	case T_MODE:
		if (strcmp(value, "fixed") == 0)
			cfg->mode = COREDAM_MODE_FIXED;
		else if (strcmp(value, "adaptive") == 0)
			cfg->mode = COREDAM_MODE_ADAPTIVE;
		else
			return coredam_error_set(reterr, -EINVAL,
						 "%s=%s: expected \"fixed\" or \"adaptive\"", k->name, value);
		return 0;
	case T_BOOL:
		r = parse_bool(value, &b);
		if (r < 0)
			return coredam_error_set(reterr, r, "%s=%s: expected yes or no", k->name, value);
		*(bool *)field = b;
		return 0;
	case T_DESTINATION:
		if (strcmp(value, "auto") == 0) {
			cfg->destination[0] = '\0';
			return 0;
		}
		/* fall through */
	case T_PATH:
		if (value[0] != '/')
			return coredam_error_set(reterr, -EINVAL,
						 "%s=%s: expected an absolute path", k->name, value);
		/* fall through */
	case T_STRING:
	case T_LIST:
		if (strlen(value) >= (k->type == T_PATH || k->type == T_DESTINATION ? PATH_MAX : 1024))
			return coredam_error_set(reterr, -ENAMETOOLONG, "%s=: value too long", k->name);
		strcpy((char *)field, value);
		return 0;
	case T_CGROUP:
		r = coredam_cg_path_valid(value);
		if (r < 0)
			return coredam_error_set(reterr, r,
						 "%s=%s: expected an absolute cgroup path below the root, such as /coredump.slice",
						 k->name, value);
		strcpy((char *)field, value);
		return 0;
	case T_DURATION:
	case T_DURATION_INF:
		if (k->type == T_DURATION_INF && strcmp(value, "infinity") == 0) {
			*(uint64_t *)field = 0;
			return 0;
		}
		r = parse_duration(value, &u64);
		if (r < 0)
			return coredam_error_set(reterr, r, "%s=%s: not a duration (use e.g. 30s, 500ms, 2min)%s",
						 k->name, value, k->type == T_DURATION_INF ? ", or infinity" : "");
		*(uint64_t *)field = u64;
		return 0;
	case T_SIZE:
		r = parse_size(value, 1024, &u64);
		if (r < 0)
			return coredam_error_set(reterr, r,
						 "%s=%s: not a size (use e.g. 1M, 512K)", k->name, value);
		*(uint64_t *)field = u64;
		return 0;
	case T_SIZE_MAX:
	case T_RATE:
	case T_RATE_MAX:
	case T_RATE_AUTO:
	case T_IOPS:
		r = parse_amount(value, k->type == T_SIZE_MAX ? 1024 : 1000, amount_none(k->type), &u64);
		if (r < 0)
			return amount_error(k, value, r, reterr);
		*(uint64_t *)field = u64;
		return 0;
	case T_U32:
	case T_U32_POS:
	case T_U32_INF:
		if (k->type == T_U32_INF && strcmp(value, "infinity") == 0) {
			*(uint32_t *)field = 0;
			return 0;
		}
		r = parse_u32(value, &u32);
		if (r < 0 || (k->type == T_U32_POS && u32 == 0))
			return coredam_error_set(reterr, r < 0 ? r : -ERANGE,
						 "%s=%s: expected a%s integer%s",
						 k->name, value, k->type == T_U32_POS ? " positive" : "n unsigned",
						 k->type == T_U32_INF ? ", or infinity" : "");
		*(uint32_t *)field = u32;
		return 0;
	case T_FRACTION:
		r = parse_fraction(value, &d);
		if (r < 0)
			return coredam_error_set(reterr, r,
						 "%s=%s: expected a percentage between 0%% and 100%%",
						 k->name, value);
		*(double *)field = d;
		return 0;
	case T_FLOOR:
		return parse_floor(cfg, k, value, reterr);
	case T_SHARE:
		return parse_share(k, value, (struct coredam_share *)field, reterr);
	case T_USE_CAP:
		return parse_use_cap(cfg, k, value, reterr);
	case T_KEEP_FREE:
		return parse_keep_free(cfg, k, value, reterr);
	case T_NICE: {
		int32_t v;

		if (strcmp(value, "keep") == 0) {
			*(int *)field = COREDAM_NICE_KEEP;
			return 0;
		}
		r = parse_i32(value, &v);
		if (r < 0 || v < -20 || v > 19)
			return coredam_error_set(reterr, r < 0 ? r : -ERANGE,
						 "%s=%s: expected a nice value from -20 to 19, or \"keep\"",
						 k->name, value);
		*(int *)field = v;
		return 0;
	}
	}
	return -EINVAL;
}

static const struct key *find_key(const char *section, const char *name, bool *ret_section_known)
{
	bool sec = false;

	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		if (strcmp(keys[i].section, section) != 0)
			continue;
		sec = true;
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	}
	if (ret_section_known)
		*ret_section_known = sec;
	return NULL;
}

/* A list's value that stands for the whole list: PressureCgroups=auto or system. */
static bool list_keyword(const char *v)
{
	return strcmp(v, "auto") == 0 || strcmp(v, "system") == 0;
}

/*
 * As systemd's list settings: each assignment adds its words to the list,
 * but a keyword replaces the list and is replaced by the next assignment.
 */
static int add_to_list(struct coredam_config *cfg, const struct key *k, const char *value,
		       struct coredam_error *reterr)
{
	const char *cur = (const char *)cfg + k->offset;
	char joined[1024];

	if (!*cur || list_keyword(cur) || list_keyword(value))
		return set_value(cfg, k, value, reterr);
	if (xsnprintf(joined, sizeof(joined), "%s %s", cur, value) < 0)
		return coredam_error_set(reterr, -ENAMETOOLONG,
					 "%s=: the list is too long (at most %zu characters in all)", k->name,
					 sizeof(joined) - 1);
	return set_value(cfg, k, joined, reterr);
}

bool coredam_config_key_is_list(const char *section, const char *key)
{
	bool sec;
	const struct key *k = find_key(section, key, &sec);

	return k && k->type == T_LIST;
}

int coredam_config_set(struct coredam_config *cfg, const char *section, const char *key,
		       const char *value, struct coredam_error *reterr)
{
	const struct key *k;
	bool sec;

	k = find_key(section, key, &sec);
	if (!k && !sec)
		return coredam_error_set(reterr, -ENOENT, "unknown section [%s]", section);
	if (!k)
		return coredam_error_set(reterr, -ENOENT, "unknown key %s= in [%s]", key, section);
	/* "Key=" resets to the default */
	if (!*value)
		return set_value(cfg, k, k->def, reterr);
	if (k->type == T_LIST)
		return add_to_list(cfg, k, value, reterr);
	return set_value(cfg, k, value, reterr);
}

void coredam_config_init(struct coredam_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		int r = set_value(cfg, &keys[i], keys[i].def, NULL);

		(void)r; /* defaults are valid by construction (tested) */
	}
}

uint64_t coredam_share_bytes(const struct coredam_share *share, uint64_t total)
{
	if (share->bytes)
		return share->bytes;
	return total / 100 * share->percent;
}

uint64_t coredam_config_free_floor(const struct coredam_config *cfg, uint64_t total)
{
	uint64_t pct = total / 100 * cfg->free_floor_percent;

	return MAX(cfg->free_floor_bytes, pct);
}

uint64_t coredam_config_max_use(const struct coredam_config *cfg, uint64_t total)
{
	uint64_t cap = UINT64_MAX;

	if (cfg->max_use_bytes)
		cap = cfg->max_use_bytes;
	if (cfg->max_use_percent)
		cap = MIN(cap, total / 100 * cfg->max_use_percent);
	return cap;
}

uint64_t coredam_config_keep_free(const struct coredam_config *cfg, uint64_t total)
{
	uint64_t floor;

	if (cfg->keep_free_auto) {
		floor = coredam_config_free_floor(cfg, total);
		return floor > UINT64_MAX / 2 ? UINT64_MAX : 2 * floor;
	}
	return MAX(cfg->keep_free_bytes, total / 100 * cfg->keep_free_percent);
}

int coredam_config_key_index(const char *section, const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(keys); i++)
		if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

const char *coredam_config_key_name(size_t i)
{
	return i < ELEMENTSOF(keys) ? keys[i].name : NULL;
}

/* The value of key @k in @c, as coredam.conf spells it. */
static int format_value(const struct coredam_config *c, const struct key *k, char *buf, size_t size)
{
	const void *field = (const char *)c + k->offset;
	uint64_t u64 = 0;

	switch (k->type) {
	case T_MODE:
		return xsnprintf(buf, size, "%s", coredam_mode_str(c->mode));
	case T_BOOL:
		return xsnprintf(buf, size, "%s", *(const bool *)field ? "yes" : "no");
	case T_DESTINATION:
		return xsnprintf(buf, size, "%s", *c->destination ? c->destination : "auto");
	case T_PATH:
	case T_STRING:
	case T_LIST:
	case T_CGROUP:
		return xsnprintf(buf, size, "%s", (const char *)field);
	case T_DURATION_INF:
		if (*(const uint64_t *)field == 0)
			return xsnprintf(buf, size, "infinity");
		/* fall through */
	case T_DURATION:
		return xsnprintf(buf, size, "%" PRIu64 "ms", *(const uint64_t *)field / 1000);
	case T_SIZE:
	case T_SIZE_MAX:
	case T_RATE:
	case T_RATE_MAX:
	case T_RATE_AUTO:
	case T_IOPS:
		u64 = *(const uint64_t *)field;
		if (u64 == 0 && amount_none(k->type))
			return xsnprintf(buf, size, "%s", amount_none(k->type));
		return xsnprintf(buf, size, "%" PRIu64, u64);
	case T_U32_INF:
		if (*(const uint32_t *)field == 0)
			return xsnprintf(buf, size, "infinity");
		/* fall through */
	case T_U32:
	case T_U32_POS:
		return xsnprintf(buf, size, "%" PRIu32, *(const uint32_t *)field);
	case T_FRACTION:
		return xsnprintf(buf, size, "%.10g%%", *(const double *)field * 100.0);
	case T_FLOOR:
		return xsnprintf(buf, size, "%" PRIu64 " %" PRIu32 "%%", c->free_floor_bytes, c->free_floor_percent);
	case T_SHARE: {
		const struct coredam_share *sh = field;

		if (sh->bytes)
			return xsnprintf(buf, size, "%" PRIu64, sh->bytes);
		if (sh->percent)
			return xsnprintf(buf, size, "%" PRIu32 "%%", sh->percent);
		return xsnprintf(buf, size, "infinity");
	}
	case T_USE_CAP:
		if (!c->max_use_bytes && !c->max_use_percent)
			return xsnprintf(buf, size, "infinity");
		if (!c->max_use_percent)
			return xsnprintf(buf, size, "%" PRIu64, c->max_use_bytes);
		if (!c->max_use_bytes)
			return xsnprintf(buf, size, "%" PRIu32 "%%", c->max_use_percent);
		return xsnprintf(buf, size, "%" PRIu64 " %" PRIu32 "%%", c->max_use_bytes, c->max_use_percent);
	case T_KEEP_FREE:
		if (c->keep_free_auto)
			return xsnprintf(buf, size, "auto");
		return xsnprintf(buf, size, "%" PRIu64 " %" PRIu32 "%%", c->keep_free_bytes, c->keep_free_percent);
	case T_NICE:
		if (*(const int *)field == COREDAM_NICE_KEEP)
			return xsnprintf(buf, size, "keep");
		return xsnprintf(buf, size, "%d", *(const int *)field);
	}
	return -EINVAL;
}

/* Every key, section by section, in the order of the table. */
int coredam_config_format(const struct coredam_config *c, char *buf, size_t size)
{
	char v[PATH_MAX + 16];
	struct strbuf sb = STRBUF_INIT(buf, size);
	int r;

	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		const struct key *k = &keys[i];
		bool new_section = i == 0 || strcmp(keys[i - 1].section, k->section) != 0;

		r = format_value(c, k, v, sizeof(v));
		if (r < 0)
			return r;
		strbuf_printf(&sb, "%s%s%s%s%s=%s\n", new_section && i ? "\n" : "", new_section ? "[" : "",
			      new_section ? k->section : "", new_section ? "]\n" : "", k->name, v);
	}
	return strbuf_done(&sb);
}
