// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredam.conf: systemd-style INI parsed with libinih. Main file, then
 * drop-ins in lexical order; later assignments win.
 */
#include <fcntl.h>
#include <inttypes.h>
#include <ini.h>
#include <math.h>
#include <stddef.h>
#include <sys/stat.h>

#include "cgroup.h"
#include "config.h"
#include "macro.h"
#include "fileio.h"
#include "string-util.h"
#include "parse-util.h"
#include "path-util.h"

enum key_type {
	T_MODE,
	T_BOOL,
	T_PATH,		/* absolute path */
	T_STRING,
	T_CGROUP,
	T_DURATION,
	T_SIZE,		/* base 1024, 0 allowed */
	T_RATE,		/* base 1000; 0, "max", "infinity" = no limit */
	T_IOPS,		/* plain count with K/M (base 1000); 0/max = no limit */
	T_U32,
	T_U32_POS,
	T_FRACTION,	/* "10%" or "0.1" */
	T_FLOOR,	/* "1G", "5%", or both "1G 5%" */
	T_DESTINATION,	/* "auto" or absolute path */
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
	K("Cgroup", "MemoryHigh", T_SIZE, memory_high, "256M"),
	K("Devices", "Destination", T_DESTINATION, destination, "auto"),
	K("Devices", "Devices", T_STRING, devices, ""),
	K("Limits", "WriteBandwidth", T_RATE, write_bps, "10M"),
	K("Limits", "ReadBandwidth", T_RATE, read_bps, "max"),
	K("Limits", "WriteIOPS", T_IOPS, write_iops, "max"),
	K("Limits", "ReadIOPS", T_IOPS, read_iops, "max"),
	K("Limits", "Concurrency", T_U32, concurrency, "2"),
	K("Limits", "QueueCap", T_U32, queue_cap, "64"),
	K("Limits", "WaitTimeout", T_DURATION, wait_timeout_usec, "30min"),
	K("Limits", "WritebackWindow", T_SIZE, writeback_window, "1M"),
	K("Adaptive", "Floor", T_RATE, floor_bps, "10M"),
	K("Adaptive", "Ceiling", T_RATE, ceiling_bps, "auto"),
	K("Adaptive", "ConcurrencyFloor", T_U32_POS, concurrency_floor, "1"),
	K("Adaptive", "ConcurrencyCeiling", T_U32_POS, concurrency_ceiling, "4"),
	K("Adaptive", "PressureTarget", T_FRACTION, pressure_target, "10%"),
	K("Adaptive", "PressureWindow", T_DURATION, pressure_window_usec, "1s"),
	K("Adaptive", "Step", T_RATE, step_bps, "auto"),
	K("Adaptive", "Backoff", T_FRACTION, backoff, "50%"),
	K("Adaptive", "HoldIntervals", T_U32, hold_intervals, "2"),
	K("Adaptive", "LiftWhenIdle", T_BOOL, lift_when_idle, "no"),
	K("Adaptive", "PressureCgroups", T_STRING, pressure_cgroups, "auto"),
	K("Space", "FreeSpaceFloor", T_FLOOR, free_floor_bytes, "1G"),
	K("Space", "MarkIncomplete", T_BOOL, mark_incomplete, "yes"),
	K("Pipe", "SetCorePattern", T_BOOL, pipe_set_core_pattern, "no"),
	K("Pipe", "Program", T_PATH, pipe_program, "/usr/libexec/coredam/coredam-pipe"),
	K("Pipe", "Directory", T_PATH, pipe_directory, "/var/lib/coredam/cores"),
	K("Pipe", "Compress", T_BOOL, pipe_compress, "no"),
	K("Pipe", "CompressLevel", T_U32_POS, pipe_compress_level, "3"),
	K("Pipe", "CoreSizeMax", T_SIZE, pipe_size_max, "32G"),
	K("Pipe", "CoreTimeMax", T_DURATION, pipe_time_max_usec, "1h"),
	K("Pipe", "Sandbox", T_BOOL, pipe_sandbox, "yes"),
};

const char *coredam_mode_str(enum coredam_mode m)
{
	return m == COREDAM_MODE_ADAPTIVE ? "adaptive" : "fixed";
}

static int parse_rate(const char *v, uint64_t base, uint64_t *ret)
{
	if (strcmp(v, "max") == 0 || strcmp(v, "infinity") == 0 || strcmp(v, "auto") == 0) {
		*ret = 0;
		return 0;
	}
	return parse_size(v, base, ret);
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

static int set_value(struct coredam_config *cfg, const struct key *k, const char *value,
		     char *errbuf, size_t errsize)
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
			return snprintf(errbuf, errsize, "%s=%s: expected \"fixed\" or \"adaptive\"",
					k->name, value), -EINVAL;
		return 0;
	case T_BOOL:
		r = parse_bool(value, &b);
		if (r < 0)
			return snprintf(errbuf, errsize, "%s=%s: expected yes or no", k->name, value), r;
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
			return snprintf(errbuf, errsize, "%s=%s: expected an absolute path", k->name, value),
			       -EINVAL;
		/* fall through */
	case T_STRING:
		if (strlen(value) >= (k->type == T_STRING ? 1024 : PATH_MAX))
			return snprintf(errbuf, errsize, "%s=: value too long", k->name), -ENAMETOOLONG;
		strcpy((char *)field, value);
		return 0;
	case T_CGROUP:
		r = coredam_cg_path_valid(value);
		if (r < 0)
			return snprintf(errbuf, errsize,
					"%s=%s: expected an absolute cgroup path below the root, such as /coredump.slice",
					k->name, value), r;
		strcpy((char *)field, value);
		return 0;
	case T_DURATION:
		r = parse_duration(value, &u64);
		if (r < 0)
			return snprintf(errbuf, errsize, "%s=%s: not a duration (use e.g. 30s, 500ms, 2min)",
					k->name, value), r;
		*(uint64_t *)field = u64;
		return 0;
	case T_SIZE:
		if (strcmp(value, "max") == 0 || strcmp(value, "infinity") == 0)
			u64 = 0;
		else
			r = parse_size(value, 1024, &u64);
		if (r < 0)
			return snprintf(errbuf, errsize, "%s=%s: not a size (use e.g. 256M, 1G)", k->name, value),
			       r;
		*(uint64_t *)field = u64;
		return 0;
	case T_RATE:
	case T_IOPS:
		r = parse_rate(value, 1000, &u64);
		if (r < 0)
			return snprintf(errbuf, errsize, "%s=%s: not a rate (use e.g. 50M, or max)", k->name,
					value), r;
		*(uint64_t *)field = u64;
		return 0;
	case T_U32:
	case T_U32_POS:
		r = parse_u32(value, &u32);
		if (r < 0 || (k->type == T_U32_POS && u32 == 0))
			return snprintf(errbuf, errsize, "%s=%s: expected a%s integer", k->name, value,
					k->type == T_U32_POS ? " positive" : "n unsigned"), r < 0 ? r : -ERANGE;
		*(uint32_t *)field = u32;
		return 0;
	case T_FRACTION:
		r = parse_fraction(value, &d);
		if (r < 0)
			return snprintf(errbuf, errsize, "%s=%s: expected a percentage between 0%% and 100%%",
					k->name, value), r;
		*(double *)field = d;
		return 0;
	case T_FLOOR: {
		char buf[128], *tok, *save = NULL;
		uint64_t bytes = 0;
		uint32_t pct = 0;

		if (strlen(value) >= sizeof(buf))
			return snprintf(errbuf, errsize, "%s=: value too long", k->name), -EINVAL;
		strcpy(buf, value);
		for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
			size_t l = strlen(tok);

			if (tok[l - 1] == '%') {
				tok[l - 1] = '\0';
				r = parse_u32(tok, &pct);
				if (r < 0 || pct > 100)
					return snprintf(errbuf, errsize, "%s=%s: bad percentage \"%s%%\"",
							k->name, value, tok), -EINVAL;
			} else {
				r = parse_size(tok, 1024, &bytes);
				if (r < 0)
					return snprintf(errbuf, errsize,
							"%s=%s: expected a size, a percentage or both (1G 5%%)",
							k->name, value), r;
			}
		}
		cfg->free_floor_bytes = bytes;
		cfg->free_floor_percent = pct;
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

int coredam_config_set(struct coredam_config *cfg, const char *section, const char *key,
		       const char *value, char *errbuf, size_t errsize)
{
	const struct key *k;
	bool sec;

	k = find_key(section, key, &sec);
	if (!k) {
		if (!sec)
			snprintf(errbuf, errsize, "unknown section [%s]", section);
		else
			snprintf(errbuf, errsize, "unknown key %s= in [%s]", key, section);
		return -ENOENT;
	}
	/* "Key=" resets to the default */
	return set_value(cfg, k, *value ? value : k->def, errbuf, errsize);
}

void coredam_config_init(struct coredam_config *cfg)
{
	char err[256];

	memset(cfg, 0, sizeof(*cfg));
	for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
		int r = set_value(cfg, &keys[i], keys[i].def, err, sizeof(err));

		(void)r; /* defaults are valid by construction (tested) */
	}
}

uint64_t coredam_config_free_floor(const struct coredam_config *cfg, uint64_t total)
{
	uint64_t pct = total / 100 * cfg->free_floor_percent;

	return MAX(cfg->free_floor_bytes, pct);
}

/* ---- loading ---- */

struct origin {
	char file[PATH_MAX];
	int line;
};

/* The longest line libinih takes whole, newline excluded. */
#define CONF_LINE_MAX (INI_MAX_LINE - 2)

/*
 * Feeds libinih one whole line at a time and counts lines. libinih reads a
 * line in pieces of at most @num - 1 bytes and takes every piece for a line
 * of its own, so the tail of an overlong comment would become an
 * assignment; a NUL byte would hide the rest of its line. Both end the
 * parse here (as end of file) with @bad set, and the caller reports them.
 */
struct line_reader {
	FILE *f;
	int line;
	char *buf;
	size_t cap;
	enum { LINE_OK, LINE_TOO_LONG, LINE_NUL } bad;
};

static char *line_reader(char *str, int num, void *stream)
{
	struct line_reader *lr = stream;
	ssize_t n;

	n = getline(&lr->buf, &lr->cap, lr->f);
	if (n < 0)
		return NULL;
	lr->line++;
	if (n > num - 1) {
		lr->bad = LINE_TOO_LONG;
		return NULL;
	}
	if (strlen(lr->buf) != (size_t)n) {
		lr->bad = LINE_NUL;
		return NULL;
	}
	memcpy(str, lr->buf, n + 1);
	return str;
}

/*
 * ini_parse_stream() over @lr->f through line_reader(): 0, the line of the
 * first error (> 0), or -ENOMEM. @lr->bad says whether the line was refused
 * by line_reader() rather than by libinih or @handler.
 */
static int ini_parse_lines(struct line_reader *lr, ini_handler handler, void *user)
{
	int r;

	ini_stop_on_first_error = true;
	ini_allow_multiline = false;
	ini_allow_inline_comments = false;
	r = ini_parse_stream(line_reader, lr, handler, user);
	free(lr->buf);
	lr->buf = NULL;
	lr->cap = 0;
	if (r == -2)
		return -ENOMEM;
	if (r == 0 && lr->bad != LINE_OK)
		return lr->line;
	if (r == 0 && ferror(lr->f))
		return -EIO;
	return r;
}

struct parse_ctx {
	struct coredam_config *cfg;
	const char *file;
	const struct line_reader *lr;
	bool failed;
	struct coredam_config_error *err;
	struct origin origins[64];	/* per entry of keys[] */
};

static void note_origin(struct parse_ctx *ctx, struct origin *o)
{
	snprintf(o->file, sizeof(o->file), "%s", ctx->file);
	o->line = ctx->lr->line;
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse_ctx *ctx = user;
	char msg[400];
	int r;

	if (ctx->failed)
		return 0;
	r = coredam_config_set(ctx->cfg, section, name, value, msg, sizeof(msg));
	if (r < 0) {
		snprintf(ctx->err->file, sizeof(ctx->err->file), "%s", ctx->file);
		ctx->err->line = ctx->lr->line;
		snprintf(ctx->err->msg, sizeof(ctx->err->msg), "%s", msg);
		ctx->failed = true;
		return 0;
	}
	for (size_t i = 0; i < ELEMENTSOF(keys) && i < ELEMENTSOF(ctx->origins); i++)
		if (strcmp(keys[i].section, section) == 0 && strcmp(keys[i].name, name) == 0)
			note_origin(ctx, &ctx->origins[i]);
	return 1;
}

static void line_error(const struct line_reader *lr, char *buf, size_t size)
{
	switch (lr->bad) {
	case LINE_TOO_LONG:
		snprintf(buf, size, "line too long (at most %d characters, comments included)", CONF_LINE_MAX);
		break;
	case LINE_NUL:
		snprintf(buf, size, "NUL byte in the line");
		break;
	case LINE_OK:
		snprintf(buf, size, "syntax error: expected [Section], Key=value or a comment");
		break;
	}
}

static int parse_one(struct parse_ctx *ctx, const char *path)
{
	_cleanup_fclose_ FILE *f = NULL;
	struct line_reader lr = { 0 };
	char msg[128];
	int r;

	f = fopen(path, "re");
	if (!f) {
		snprintf(ctx->err->file, sizeof(ctx->err->file), "%s", path);
		ctx->err->line = 0;
		snprintf(ctx->err->msg, sizeof(ctx->err->msg), "cannot open: %s", strerror(errno));
		return -errno;
	}
	lr.f = f;
	ctx->file = path;
	ctx->lr = &lr;
	r = ini_parse_lines(&lr, handler, ctx);
	ctx->lr = NULL;
	if (r == 0)
		return 0;
	if (!ctx->failed) {
		snprintf(ctx->err->file, sizeof(ctx->err->file), "%s", path);
		ctx->err->line = r > 0 ? r : 0;
		if (r > 0)
			line_error(&lr, msg, sizeof(msg));
		else
			snprintf(msg, sizeof(msg), "cannot read: %s", strerror(-r));
		snprintf(ctx->err->msg, sizeof(ctx->err->msg), "%s", msg);
	}
	return r < 0 ? r : -EINVAL;
}

static int conf_filter(const struct dirent *de)
{
	size_t l = strlen(de->d_name);

	return de->d_name[0] != '.' && l > 5 && strcmp(de->d_name + l - 5, ".conf") == 0;
}

static const struct origin *origin_of(const struct parse_ctx *ctx, const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(keys) && i < ELEMENTSOF(ctx->origins); i++)
		if (strcmp(keys[i].name, name) == 0 && ctx->origins[i].line)
			return &ctx->origins[i];
	return NULL;
}

static int cross_check(struct parse_ctx *ctx)
{
	struct coredam_config *c = ctx->cfg;
	const struct origin *o = NULL;
	const char *msg = NULL;

	if (c->ceiling_bps && c->floor_bps > c->ceiling_bps) {
		o = origin_of(ctx, "Floor") ?: origin_of(ctx, "Ceiling");
		msg = "[Adaptive] Floor= is above Ceiling=";
	} else if (c->kernel_leaf[0] && (strchr(c->kernel_leaf, '/') || strpbrk(c->kernel_leaf, " \t") ||
					 !strcmp(c->kernel_leaf, ".") || !strcmp(c->kernel_leaf, "..") ||
					 strlen(c->kernel_leaf) >= 200)) {
		o = origin_of(ctx, "KernelLeaf");
		msg = "[Cgroup] KernelLeaf= must be auto, none or the name of one child cgroup";
	} else if (c->concurrency_floor > c->concurrency_ceiling) {
		o = origin_of(ctx, "ConcurrencyFloor") ?: origin_of(ctx, "ConcurrencyCeiling");
		msg = "[Adaptive] ConcurrencyFloor= is above ConcurrencyCeiling=";
	} else if (c->mode == COREDAM_MODE_ADAPTIVE && c->floor_bps == 0) {
		o = origin_of(ctx, "Floor");
		msg = "[Adaptive] Floor= must be a rate (not max) in adaptive mode";
	} else if (c->interval_usec < 100000 || c->interval_usec > 60000000) {
		o = origin_of(ctx, "Interval");
		msg = "[Agent] Interval= must be between 100ms and 60s";
	} else if (c->pressure_window_usec < 500000 || c->pressure_window_usec > 10000000) {
		o = origin_of(ctx, "PressureWindow");
		msg = "[Adaptive] PressureWindow= must be between 500ms and 10s (the kernel's PSI trigger limits)";
	} else if (c->wait_timeout_usec / 1000 > UINT32_MAX) {
		o = origin_of(ctx, "WaitTimeout");
		msg = "[Limits] WaitTimeout= is too long for core_wait_timeout_ms";
	} else if (c->pipe_compress_level > 19) {
		o = origin_of(ctx, "CompressLevel");
		msg = "[Pipe] CompressLevel= must be between 1 and 19";
	} else if (strpbrk(c->pipe_program, " \t%") || strpbrk(c->pipe_directory, " \t%")) {
		o = origin_of(ctx, "Program") ?: origin_of(ctx, "Directory");
		msg = "[Pipe] Program= and Directory= may not contain white space or '%' (they go into core_pattern)";
	} else if (c->writeback_window / 1024 > UINT32_MAX) {
		o = origin_of(ctx, "WritebackWindow");
		msg = "[Limits] WritebackWindow= is too large";
	}
	if (!msg)
		return 0;
	if (o) {
		snprintf(ctx->err->file, sizeof(ctx->err->file), "%s", o->file);
		ctx->err->line = o->line;
	} else {
		snprintf(ctx->err->file, sizeof(ctx->err->file), "%s", "(configuration)");
		ctx->err->line = 0;
	}
	snprintf(ctx->err->msg, sizeof(ctx->err->msg), "%s", msg);
	return -EINVAL;
}

void coredam_config_dropin_dir(const char *main_file, char *buf, size_t size)
{
	char *s;

	snprintf(buf, size, "%s", main_file);
	s = strrchr(buf, '/');
	if (s)
		s[1] = '\0';
	else
		buf[0] = '\0';
	strncat(buf, "coredam.conf.d", size - strlen(buf) - 1);
}

int coredam_config_load(const char *main_file, const char *dropin_dir,
			struct coredam_config *ret, struct coredam_config_error *err)
{
	struct coredam_config cfg;
	struct coredam_config_error dummy;
	struct parse_ctx ctx = { .cfg = &cfg };
	struct dirent **list = NULL;
	int n = 0, r = 0;

	ctx.err = err ? err : &dummy;
	memset(ctx.err, 0, sizeof(*ctx.err));
	coredam_config_init(&cfg);

	if (main_file && access(main_file, F_OK) == 0) {
		r = parse_one(&ctx, main_file);
		if (r < 0)
			return r;
	}
	if (dropin_dir) {
		n = scandir(dropin_dir, &list, conf_filter, alphasort);
		if (n < 0) {
			if (errno != ENOENT) {
				snprintf(ctx.err->file, sizeof(ctx.err->file), "%s", dropin_dir);
				snprintf(ctx.err->msg, sizeof(ctx.err->msg), "cannot list: %s", strerror(errno));
				return -errno;
			}
			n = 0;
		}
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];

		if (r == 0) {
			r = path_join(path, sizeof(path), dropin_dir, list[i]->d_name);
			if (r >= 0)
				r = parse_one(&ctx, path);
		}
		free(list[i]);
	}
	free(list);
	if (r < 0)
		return r;
	r = cross_check(&ctx);
	if (r < 0)
		return r;
	*ret = cfg;
	return 0;
}

/* ---- drop-in editing ---- */

struct dropin_entry {
	char section[64], key[64], value[256];
};

struct dropin {
	struct dropin_entry e[64];
	size_t n;
	int error;	/* why dropin_handler() stopped */
};

/*
 * Record Section.Key=value in place of an earlier assignment of the same
 * key (within a file the last one wins, so its meaning stays), else as a
 * new entry. -E2BIG: the table is full, or a name or the value is longer
 * than a line may be.
 */
static int dropin_put(struct dropin *d, const char *section, const char *key, const char *value)
{
	struct dropin_entry *e = NULL;

	if (strlen(section) >= sizeof(e->section) || strlen(key) >= sizeof(e->key) ||
	    strlen(key) + 1 + strlen(value) > CONF_LINE_MAX)
		return -E2BIG;
	for (size_t i = 0; i < d->n && !e; i++)
		if (strcmp(d->e[i].section, section) == 0 && strcmp(d->e[i].key, key) == 0)
			e = &d->e[i];
	if (!e) {
		if (d->n >= ELEMENTSOF(d->e))
			return -E2BIG;
		e = &d->e[d->n++];
		strcpy(e->section, section);
		strcpy(e->key, key);
	}
	strcpy(e->value, value);
	return 0;
}

static int dropin_handler(void *user, const char *section, const char *name, const char *value)
{
	struct dropin *d = user;

	d->error = dropin_put(d, section, name, value);
	return d->error == 0;
}

int coredam_dropin_set(const char *path, const char *section, const char *key, const char *value)
{
	_cleanup_free_ struct dropin *d = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	char buf[32768], dir[PATH_MAX], *base;
	_cleanup_close_ int dfd = -1;
	size_t o = 0;
	int r;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	f = fopen(path, "re");
	if (!f && errno != ENOENT)
		return -errno;
	if (f) {
		struct line_reader lr = { .f = f };

		r = ini_parse_lines(&lr, dropin_handler, d);
		if (r != 0)
			return r < 0 ? r : d->error ?: -EINVAL;
	}
	r = dropin_put(d, section, key, value);
	if (r < 0)
		return r;
	r = xsnprintf(buf, sizeof(buf), "# Written by coredamctl set --persist; edit freely.\n");
	if (r < 0)
		return r;
	o = r;
	/* group by section, in order of first appearance */
	for (size_t i = 0; i < d->n; i++) {
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			seen |= strcmp(d->e[j].section, d->e[i].section) == 0;
		if (seen)
			continue;
		r = xsnprintf(buf + o, sizeof(buf) - o, "\n[%s]\n", d->e[i].section);
		if (r < 0)
			return r;
		o += r;
		for (size_t j = i; j < d->n; j++) {
			if (strcmp(d->e[j].section, d->e[i].section) != 0)
				continue;
			r = xsnprintf(buf + o, sizeof(buf) - o, "%s=%s\n", d->e[j].key, d->e[j].value);
			if (r < 0)
				return r;
			o += r;
		}
	}
	r = xsnprintf(dir, sizeof(dir), "%s", path);
	if (r < 0)
		return r;
	base = strrchr(dir, '/');
	if (!base)
		return -EINVAL;
	*base++ = '\0';
	r = mkdir_p(*dir ? dir : "/", 0755);
	if (r < 0)
		return r;
	r = open_dir_at(AT_FDCWD, *dir ? dir : "/", &dfd);
	if (r < 0)
		return r;
	return write_file_atomic_at(dfd, base, buf, o, 0644);
}

static int fmt_rate(char *buf, size_t size, uint64_t v)
{
	if (v == 0)
		return xsnprintf(buf, size, "max");
	return xsnprintf(buf, size, "%" PRIu64, v);
}

int coredam_config_format(const struct coredam_config *c, char *buf, size_t size)
{
	char w[24], rd[24], wi[24], ri[24], fl[24], ce[24], st[24];

	fmt_rate(w, sizeof(w), c->write_bps);
	fmt_rate(rd, sizeof(rd), c->read_bps);
	fmt_rate(wi, sizeof(wi), c->write_iops);
	fmt_rate(ri, sizeof(ri), c->read_iops);
	fmt_rate(fl, sizeof(fl), c->floor_bps);
	if (c->ceiling_bps)
		fmt_rate(ce, sizeof(ce), c->ceiling_bps);
	else
		snprintf(ce, sizeof(ce), "auto");
	if (c->step_bps)
		fmt_rate(st, sizeof(st), c->step_bps);
	else
		snprintf(st, sizeof(st), "auto");
	return xsnprintf(buf, size,
			 "[Agent]\nMode=%s\nRequireKernelSupport=%s\nMetricsFile=%s\nControlSocket=%s\nInterval=%" PRIu64 "ms\n\n"
			 "[Cgroup]\nPath=%s\nMemoryHigh=%" PRIu64 "\n\n"
			 "[Devices]\nDestination=%s\nDevices=%s\n\n"
			 "[Limits]\nWriteBandwidth=%s\nReadBandwidth=%s\nWriteIOPS=%s\nReadIOPS=%s\n"
			 "Concurrency=%u\nQueueCap=%u\nWaitTimeout=%" PRIu64 "ms\nWritebackWindow=%" PRIu64 "\n\n"
			 "[Adaptive]\nFloor=%s\nCeiling=%s\nConcurrencyFloor=%u\nConcurrencyCeiling=%u\n"
			 "PressureTarget=%.1f%%\nPressureWindow=%" PRIu64 "ms\nStep=%s\nBackoff=%.0f%%\n"
			 "HoldIntervals=%u\nLiftWhenIdle=%s\nPressureCgroups=%s\n\n"
			 "[Space]\nFreeSpaceFloor=%" PRIu64 " %u%%\nMarkIncomplete=%s\n\n"
			 "[Pipe]\nSetCorePattern=%s\nProgram=%s\nDirectory=%s\nCompress=%s\nCompressLevel=%u\n"
			 "CoreSizeMax=%" PRIu64 "\nCoreTimeMax=%" PRIu64 "ms\nSandbox=%s\n",
			 coredam_mode_str(c->mode), c->require_kernel_support ? "yes" : "no",
			 c->metrics_file, c->control_socket, c->interval_usec / 1000,
			 c->cgroup, c->memory_high,
			 *c->destination ? c->destination : "auto", c->devices,
			 w, rd, wi, ri, c->concurrency, c->queue_cap, c->wait_timeout_usec / 1000,
			 c->writeback_window,
			 fl, ce, c->concurrency_floor, c->concurrency_ceiling, c->pressure_target * 100.0,
			 c->pressure_window_usec / 1000, st, c->backoff * 100.0, c->hold_intervals,
			 c->lift_when_idle ? "yes" : "no", c->pressure_cgroups, c->free_floor_bytes, c->free_floor_percent,
			 c->mark_incomplete ? "yes" : "no",
			 c->pipe_set_core_pattern ? "yes" : "no", c->pipe_program, c->pipe_directory,
			 c->pipe_compress ? "yes" : "no", c->pipe_compress_level, c->pipe_size_max,
			 c->pipe_time_max_usec / 1000, c->pipe_sandbox ? "yes" : "no");
}
