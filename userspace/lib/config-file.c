// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading coredam.conf: systemd-style INI parsed with libinih. Main file,
 * then drop-ins in lexical order; later assignments win. And writing one
 * assignment into a drop-in, for set --persist.
 */
#include <fcntl.h>
#include <ini.h>
#include <sys/stat.h>

#include "config.h"
#include "macro.h"
#include "fileio.h"
#include "string-util.h"
#include "parse-util.h"
#include "path-util.h"

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
	bool lenient;		/* keep going past errors; the first is reported */
	struct coredam_config_error *err;
	struct origin origins[64];	/* by coredam_config_key_index() */
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

	if (ctx->failed && !ctx->lenient)
		return 0;
	r = coredam_config_set(ctx->cfg, section, name, value, msg, sizeof(msg));
	if (r < 0) {
		if (!ctx->failed) {
			snprintf(ctx->err->file, sizeof(ctx->err->file), "%s", ctx->file);
			ctx->err->line = ctx->lr->line;
			snprintf(ctx->err->msg, sizeof(ctx->err->msg), "%s", msg);
		}
		ctx->failed = true;
		/* lenient: the line is left out, the rest of the file still counts */
		return ctx->lenient;
	}
	r = coredam_config_key_index(section, name);
	if (r >= 0 && (size_t)r < ELEMENTSOF(ctx->origins))
		note_origin(ctx, &ctx->origins[r]);
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
		r = -errno;
		if (!ctx->failed) {
			snprintf(ctx->err->file, sizeof(ctx->err->file), "%s", path);
			ctx->err->line = 0;
			snprintf(ctx->err->msg, sizeof(ctx->err->msg), "cannot open: %s", strerror(-r));
		}
		ctx->failed = true;
		return r;
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
	ctx->failed = true;
	return r < 0 ? r : -EINVAL;
}

static int conf_filter(const struct dirent *de)
{
	size_t l = strlen(de->d_name);

	return de->d_name[0] != '.' && l > 5 && strcmp(de->d_name + l - 5, ".conf") == 0;
}

static const struct origin *origin_of(const struct parse_ctx *ctx, const char *name)
{
	const char *k;

	for (size_t i = 0; i < ELEMENTSOF(ctx->origins) && (k = coredam_config_key_name(i)); i++)
		if (strcmp(k, name) == 0 && ctx->origins[i].line)
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
	return coredam_config_load_full(main_file, dropin_dir, 0, ret, err);
}

int coredam_config_load_full(const char *main_file, const char *dropin_dir, unsigned int flags,
			     struct coredam_config *ret, struct coredam_config_error *err)
{
	struct coredam_config cfg;
	struct coredam_config_error dummy;
	_cleanup_free_ struct parse_ctx *ctx = NULL;
	struct dirent **list = NULL;
	int n = 0, r = 0;

	/* on the heap: where each key was set is 64 paths, 260 KB */
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->cfg = &cfg;
	ctx->lenient = flags & COREDAM_CONFIG_LENIENT;
	ctx->err = err ? err : &dummy;
	memset(ctx->err, 0, sizeof(*ctx->err));
	coredam_config_init(&cfg);

	if (main_file && access(main_file, F_OK) == 0) {
		r = parse_one(ctx, main_file);
		if (r < 0 && !ctx->lenient)
			return r;
	}
	if (dropin_dir) {
		n = scandir(dropin_dir, &list, conf_filter, alphasort);
		if (n < 0) {
			if (errno != ENOENT && r == 0) {
				r = -errno;
				snprintf(ctx->err->file, sizeof(ctx->err->file), "%s", dropin_dir);
				snprintf(ctx->err->msg, sizeof(ctx->err->msg), "cannot list: %s", strerror(-r));
				if (!ctx->lenient)
					return r;
			}
			n = 0;
		}
	}
	for (int i = 0; i < n; i++) {
		char path[PATH_MAX];

		if (r == 0 || ctx->lenient) {
			int k = path_join(path, sizeof(path), dropin_dir, list[i]->d_name);

			if (k >= 0)
				k = parse_one(ctx, path);
			if (r == 0)
				r = k;
		}
		free(list[i]);
	}
	free(list);
	if (r == 0 && ctx->failed)
		r = -EINVAL;	/* lenient: a line was left out */
	if (r == 0)
		r = cross_check(ctx);
	if (r < 0 && !ctx->lenient)
		return r;
	*ret = cfg;
	return r < 0 ? r : 0;
}

/* ---- editing a drop-in (set --persist) ---- */

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
	char buf[32768];
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
	r = mkdir_parent(path, 0755);
	if (r < 0)
		return r;
	return write_file_atomic(path, buf, o, 0644);
}
