// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Reading coredam.conf: systemd-style INI. The main file, then the
 * drop-ins of every layer in lexical order of their names; later
 * assignments win. And writing one assignment into a drop-in, for set
 * --persist.
 */
#include <sys/un.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "config.h"
#include "error.h"
#include "macro.h"
#include "fileio.h"
#include "string-util.h"
#include "parse-util.h"
#include "path-util.h"
#include "paths.h"

struct origin {
	char file[PATH_MAX];
	int line;
};

/* The longest line read, newline excluded: far more than any key takes. */
#define CONF_LINE_MAX 65536

/* Called for each assignment: 0 to go on, < 0 to stop at this line. */
typedef int (*conf_handler)(void *user, const char *section, const char *key, const char *value);

struct line_reader {
	FILE *f;
	int line;
	enum { LINE_OK, LINE_TOO_LONG, LINE_NUL, LINE_SYNTAX, LINE_REFUSED } bad;
};

/*
 * The syntax systemd's configuration files have: "[Section]" lines,
 * "Key=value" lines (white space around key and value ignored, the value
 * taken as it is to the end of its line), comment lines starting with '#'
 * or ';', blank lines. 0 at the end of the file; the number (> 0) of the
 * first line that is not one of these, holds a NUL byte, is longer than
 * CONF_LINE_MAX or that @handler refused (@lr->bad says which); or
 * -errno.
 */
static int conf_parse(struct line_reader *lr, conf_handler handler, void *user)
{
	_cleanup_free_ char *buf = NULL;
	char section[64] = "";
	size_t cap = 0;
	ssize_t n;

	for (;;) {
		char *s, *eq;

		errno = 0;
		n = getline(&buf, &cap, lr->f);
		if (n < 0)
			break;
		lr->line++;
		if ((size_t)n - (buf[n - 1] == '\n') > CONF_LINE_MAX)
			lr->bad = LINE_TOO_LONG;
		else if (strlen(buf) != (size_t)n)
			lr->bad = LINE_NUL;
		if (lr->bad)
			return lr->line;
		s = buf;
		if (lr->line == 1 && strncmp(s, "\xef\xbb\xbf", 3) == 0)
			s += 3;	/* a UTF-8 byte order mark */
		s = strstrip(s);
		if (!*s || *s == '#' || *s == ';')
			continue;
		if (*s == '[') {
			size_t l = strlen(s);

			if (l < 3 || s[l - 1] != ']' || l - 2 >= sizeof(section) || strpbrk(s + 1, "[") ||
			    memchr(s + 1, ']', l - 2)) {
				lr->bad = LINE_SYNTAX;
				return lr->line;
			}
			memcpy(section, s + 1, l - 2);
			section[l - 2] = '\0';
			continue;
		}
		eq = strchr(s, '=');
		if (!eq || eq == s) {
			lr->bad = LINE_SYNTAX;
			return lr->line;
		}
		*eq = '\0';
		if (handler(user, section, strstrip(s), strstrip(eq + 1)) < 0) {
			lr->bad = LINE_REFUSED;
			return lr->line;
		}
	}
	if (errno == ENOMEM)
		return -ENOMEM;
	/* getline() left read()'s errno: EISDIR says more than EIO */
	if (ferror(lr->f))
		return errno > 0 ? -errno : -EIO;
	return 0;
}

struct parse_ctx {
	struct coredam_config *cfg;
	const char *file;
	const struct line_reader *lr;
	bool failed;
	bool lenient;		/* keep going past errors; the first is reported */
	struct coredam_error *err;	/* may be NULL */
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
	struct coredam_error e = {};
	int r;

	r = coredam_config_set(ctx->cfg, section, name, value, &e);
	if (r < 0) {
		if (!ctx->failed)
			(void)coredam_error_set_at(ctx->err, r, ctx->file, ctx->lr->line, "%s", e.msg);
		ctx->failed = true;
		/* lenient: the line is left out, the rest of the file still counts */
		return ctx->lenient ? 0 : r;
	}
	r = coredam_config_key_index(section, name);
	if (r >= 0 && (size_t)r < ELEMENTSOF(ctx->origins))
		note_origin(ctx, &ctx->origins[r]);
	return 0;
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
	case LINE_SYNTAX:
	case LINE_OK:
	case LINE_REFUSED:
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
		if (!ctx->failed)
			(void)coredam_error_set_at(ctx->err, r, path, 0, "cannot open: %s", strerror(-r));
		ctx->failed = true;
		return r;
	}
	lr.f = f;
	ctx->file = path;
	ctx->lr = &lr;
	r = conf_parse(&lr, handler, ctx);
	ctx->lr = NULL;
	if (r == 0)
		return 0;
	if (!ctx->failed) {
		if (r > 0)
			line_error(&lr, msg, sizeof(msg));
		else
			snprintf(msg, sizeof(msg), "cannot read: %s", strerror(-r));
		(void)coredam_error_set_at(ctx->err, r < 0 ? r : -EINVAL, path, r > 0 ? r : 0, "%s", msg);
	}
	ctx->failed = true;
	return r < 0 ? r : -EINVAL;
}

static int conf_filter(const struct dirent *de)
{
	size_t l = strlen(de->d_name);

	return de->d_name[0] != '.' && l > 5 && strcmp(de->d_name + l - 5, ".conf") == 0;
}

struct dropin_file {
	char name[256];
	char path[PATH_MAX];
};

static int dropin_cmp(const void *a, const void *b)
{
	return strcmp(((const struct dropin_file *)a)->name, ((const struct dropin_file *)b)->name);
}

/*
 * The drop-ins of every directory of @dirs, a name in an earlier directory
 * hiding the same name in the later ones, sorted by name: *ret (to free)
 * and their number, or -errno (and *reterr names the directory). A link to
 * /dev/null masks a name as systemd's does: it hides the others and reads
 * as empty.
 */
static int list_dropins(const char *const *dirs, struct dropin_file **ret, struct coredam_error *reterr)
{
	_cleanup_free_ struct dropin_file *files = NULL;
	size_t n = 0, cap = 0;

	for (; dirs && *dirs; dirs++) {
		struct dirent **list = NULL;
		int k = scandir(*dirs, &list, conf_filter, alphasort);

		if (k < 0) {
			int r = -errno;

			if (r == -ENOENT || r == -ENOTDIR)
				continue;
			return coredam_error_set_at(reterr, r, *dirs, 0, "cannot list: %s", strerror(-r));
		}
		for (int i = 0; i < k; i++) {
			const char *name = list[i]->d_name;
			struct dropin_file *f;
			bool seen = false;

			for (size_t j = 0; j < n && !seen; j++)
				seen = strcmp(files[j].name, name) == 0;
			if (!seen && n == cap) {
				struct dropin_file *m = reallocarray(files, cap + 16, sizeof(*files));

				if (!m) {
					for (int j = 0; j < k; j++)
						free(list[j]);
					free(list);
					return -ENOMEM;
				}
				files = m;
				cap += 16;
			}
			f = &files[n];
			/* a name or path too long for the table is no drop-in of ours */
			if (!seen && xsnprintf(f->name, sizeof(f->name), "%s", name) >= 0 &&
			    path_join(f->path, sizeof(f->path), *dirs, name) >= 0)
				n++;
		}
		for (int i = 0; i < k; i++)
			free(list[i]);
		free(list);
	}
	if (n)
		qsort(files, n, sizeof(*files), dropin_cmp);
	*ret = TAKE_PTR(files);
	return (int)n;
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
	} else if (c->busy_ceiling_bps && c->floor_bps > c->busy_ceiling_bps) {
		o = origin_of(ctx, "Floor") ?: origin_of(ctx, "CeilingWhenBusy");
		msg = "[Adaptive] Floor= is above CeilingWhenBusy=";
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
	} else if (c->pipe_set_core_pattern && c->sock_set_core_pattern) {
		o = origin_of(ctx, "SetCorePattern");
		msg = "[Pipe] SetCorePattern= and [Socket] SetCorePattern= both ask for core_pattern: choose one";
	} else if (strpbrk(c->sock_listen, " \t%") || strstr(c->sock_listen, "..") ||
		   strlen(c->sock_listen) >= sizeof(((struct sockaddr_un *)0)->sun_path) ||
		   !strcmp(path_basename(c->sock_listen), "") || strrchr(c->sock_listen, '/') == c->sock_listen) {
		o = origin_of(ctx, "Listen");
		msg = "[Socket] Listen= must be a socket's path in a directory of its own: shorter than 108 bytes, "
		      "without white space, '%' or '..' (the kernel's rules for core_pattern)";
	} else if (!c->keep_free_auto && (c->keep_free_bytes || c->keep_free_percent) &&
		   (c->keep_free_bytes < c->free_floor_bytes || c->keep_free_percent < c->free_floor_percent)) {
		o = origin_of(ctx, "KeepFree") ?: origin_of(ctx, "FreeSpaceFloor");
		msg = "[Space] KeepFree= is below FreeSpaceFloor= (in its size or its percentage): old cores would "
		      "be removed only once new ones are already skipped; set KeepFree= at or above the floor in "
		      "both, auto (twice the floor), or 0 to remove cores by MaxUse= only";
	} else if (c->writeback_window / 1024 > UINT32_MAX) {
		o = origin_of(ctx, "WritebackWindow");
		msg = "[Limits] WritebackWindow= is too large";
	}
	if (!msg)
		return 0;
	if (o)
		return coredam_error_set_at(ctx->err, -EINVAL, o->file, o->line, "%s", msg);
	return coredam_error_set_at(ctx->err, -EINVAL, "(configuration)", 0, "%s", msg);
}

void coredam_config_dropin_dirs(const char *main_file, const char *site, struct coredam_dropin_dirs *d)
{
	size_t n = 0;
	char *s;

	memset(d, 0, sizeof(*d));
	if (site) {
		snprintf(d->dir[0], sizeof(d->dir[0]), "%s", site);
	} else {
		snprintf(d->dir[0], sizeof(d->dir[0]), "%s", main_file);
		s = strrchr(d->dir[0], '/');
		if (s)
			s[1] = '\0';
		else
			d->dir[0][0] = '\0';
		strncat(d->dir[0], "coredam.conf.d", sizeof(d->dir[0]) - strlen(d->dir[0]) - 1);
	}
	d->list[n++] = d->dir[0];
	/* another main file (a test's, say) has no other layers */
	if (strcmp(main_file, COREDAM_CONF_FILE) == 0) {
		snprintf(d->dir[1], sizeof(d->dir[1]), "%s", "/run/coredam/coredam.conf.d");
		snprintf(d->dir[2], sizeof(d->dir[2]), "%s", COREDAM_PKGLIBDIR "/coredam.conf.d");
		d->list[n++] = d->dir[1];
		d->list[n++] = d->dir[2];
	}
	d->list[n] = NULL;
}

int coredam_config_load(const char *main_file, const char *const *dropin_dirs,
			struct coredam_config *ret, struct coredam_error *reterr)
{
	return coredam_config_load_full(main_file, dropin_dirs, 0, ret, reterr);
}

int coredam_config_load_full(const char *main_file, const char *const *dropin_dirs, unsigned int flags,
			     struct coredam_config *ret, struct coredam_error *reterr)
{
	struct coredam_config cfg;
	_cleanup_free_ struct parse_ctx *ctx = NULL;
	_cleanup_free_ struct dropin_file *files = NULL;
	int n, r = 0;

	/* on the heap: where each key was set is 64 paths, 260 KB */
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->cfg = &cfg;
	ctx->lenient = flags & COREDAM_CONFIG_LENIENT;
	ctx->err = reterr;
	if (reterr)
		*reterr = (struct coredam_error){ 0 };
	coredam_config_init(&cfg);

	if (main_file && access(main_file, F_OK) == 0) {
		r = parse_one(ctx, main_file);
		if (r < 0 && !ctx->lenient)
			return r;
	}
	n = list_dropins(dropin_dirs, &files, r == 0 ? ctx->err : NULL);
	if (n < 0) {
		if (r == 0)
			r = n;
		if (!ctx->lenient)
			return r;
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		int k;

		if (r < 0 && !ctx->lenient)
			break;
		k = parse_one(ctx, files[i].path);
		if (r == 0)
			r = k;
	}
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
	char section[64], key[64], value[1024];
};

struct dropin {
	struct dropin_entry e[64];
	size_t n;
	int error;	/* why dropin_handler() stopped */
};

/*
 * Record Section.Key=value in place of an earlier assignment of the same
 * key (within a file the last one wins, so its meaning stays), else as a
 * new entry; each assignment to a list key is kept, since each adds to
 * the list. -E2BIG: the table is full, or a name or the value is longer
 * than the table takes.
 */
static int dropin_put(struct dropin *d, const char *section, const char *key, const char *value)
{
	struct dropin_entry *e = NULL;
	bool list = coredam_config_key_is_list(section, key);

	if (strlen(section) >= sizeof(e->section) || strlen(key) >= sizeof(e->key) ||
	    strlen(value) >= sizeof(e->value))
		return -E2BIG;
	for (size_t i = 0; i < d->n && !e && !list; i++)
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
	return d->error;
}

int coredam_dropin_set(const char *path, const char *section, const char *key, const char *value)
{
	_cleanup_free_ struct dropin *d = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	_cleanup_free_ char *buf = NULL;
	struct strbuf sb;
	size_t size;
	int r;

	d = calloc(1, sizeof(*d));
	/* every entry on a line of its own, each under its section's header */
	size = 128 + ELEMENTSOF(d->e) * (2 * sizeof(d->e[0]) + 8);
	buf = malloc(size);
	if (!d || !buf)
		return -ENOMEM;
	sb = STRBUF_INIT(buf, size);
	f = fopen(path, "re");
	if (!f && errno != ENOENT)
		return -errno;
	if (f) {
		struct line_reader lr = { .f = f };

		r = conf_parse(&lr, dropin_handler, d);
		if (r != 0)
			return r < 0 ? r : d->error ?: -EINVAL;
	}
	r = dropin_put(d, section, key, value);
	if (r < 0)
		return r;
	strbuf_printf(&sb, "# Written by coredamctl set --persist; edit freely.\n");
	/* group by section, in order of first appearance */
	for (size_t i = 0; i < d->n; i++) {
		bool seen = false;

		for (size_t j = 0; j < i; j++)
			seen |= strcmp(d->e[j].section, d->e[i].section) == 0;
		if (seen)
			continue;
		strbuf_printf(&sb, "\n[%s]\n", d->e[i].section);
		for (size_t j = i; j < d->n; j++)
			if (strcmp(d->e[j].section, d->e[i].section) == 0)
				strbuf_printf(&sb, "%s=%s\n", d->e[j].key, d->e[j].value);
	}
	r = strbuf_done(&sb);
	if (r < 0)
		return r;
	r = mkdir_parent(path, 0755);
	if (r < 0)
		return r;
	return write_file_atomic(path, buf, sb.len, 0644);
}
