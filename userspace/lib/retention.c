// SPDX-License-Identifier: LGPL-2.1-or-later
/* Retention of the kept cores: see retention.h. */
#include <errno.h>
#include <inttypes.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "macro.h"
#include "retention.h"
#include "parse-util.h"

void coredam_retention_limits(const struct coredam_config *cfg, uint64_t total, uint64_t now,
			      struct coredam_retention_limits *ret)
{
	uint64_t age = cfg->max_age_usec / 1000000;

	ret->max_use = coredam_config_max_use(cfg, total);
	ret->keep_free = coredam_config_keep_free(cfg, total);
	ret->older_than = cfg->max_age_usec && now > age ? now - age : 0;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/*
 * Is @name a regular file of ours under @dirfd (never through a symbolic
 * link)? Its disk use added to *@bytes. -ENOENT when it is not there.
 */
static int own_file(int dirfd, const char *name, uint64_t *bytes)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return -EPERM;
	*bytes = add_sat(*bytes, (uint64_t)st.st_blocks * 512);
	return 0;
}

/* The store's own name: "core." and the rest (pipe-args.h: core.COMM.PID.TIME[.zst][.N][.incomplete]). */
static bool store_name(const char *name)
{
	return strncmp(name, "core.", 5) == 0 && name[5] && !strchr(name, '/');
}

/* A kept core that is ours, its disk use in *@ret; false to leave it out and alone. */
static bool ours(int dirfd, const struct coredam_kept_core *c, uint64_t *ret)
{
	uint64_t bytes = 0;
	int r;

	if (!store_name(c->core) || !store_name(c->meta))
		return false;
	if (own_file(dirfd, c->meta, &bytes) < 0)
		return false;
	if (c->present) {
		r = own_file(dirfd, c->core, &bytes);
		if (r < 0 && r != -ENOENT)	/* gone since the listing: its metadata is left */
			return false;
	}
	*ret = bytes;
	return true;
}

static bool is_kept(const struct coredam_kept_core *c, const char *keep)
{
	char meta[NAME_MAX + 8];

	if (!keep)
		return false;
	if (strcmp(c->core, keep) == 0)
		return true;
	/* renamed .incomplete after it was stored: its metadata still says so */
	return snprintf(meta, sizeof(meta), "%s.json", keep) < (int)sizeof(meta) && strcmp(c->meta, meta) == 0;
}

static int unlink_gone_ok(int dirfd, const char *name)
{
	if (unlinkat(dirfd, name, 0) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static bool over(const struct coredam_retention_limits *lim, uint64_t use, uint64_t free_bytes)
{
	return use > lim->max_use || free_bytes < lim->keep_free;
}

/* Past MaxAge=: crashed before lim->older_than. */
static bool too_old(const struct coredam_retention_limits *lim, const struct coredam_kept_core *c)
{
	return lim->older_than && c->time < lim->older_than;
}

int coredam_retention_vacuum_limits(int dirfd, const struct coredam_retention_limits *lim, uint64_t free_bytes,
				    const char *keep, unsigned int flags, coredam_retention_cb cb, void *userdata,
				    struct coredam_retention_result *ret)
{
	_cleanup_free_ struct coredam_kept_core *v = NULL;
	_cleanup_free_ uint64_t *size = NULL;
	_cleanup_free_ bool *mine = NULL;
	struct coredam_retention_result res = { .free_before = free_bytes, .free_after = free_bytes, .within = true };
	size_t n = 0, damaged = 0, newest = SIZE_MAX;
	uint64_t use = 0;
	int r = 0;

	*ret = res;
	if (lim->max_use == UINT64_MAX && lim->keep_free == 0 && !lim->older_than)
		return 0;	/* MaxUse=infinity, KeepFree=0, MaxAge=infinity: nothing to read */
	r = coredam_cores_list(dirfd, &v, &n, &damaged);
	if (r < 0)
		return r;
	size = calloc(MAX(n, (size_t)1), sizeof(*size));
	mine = calloc(MAX(n, (size_t)1), sizeof(*mine));
	if (!size || !mine)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		mine[i] = ours(dirfd, &v[i], &size[i]);
		if (mine[i]) {
			use = add_sat(use, size[i]);
			newest = i;
		}
	}
	if (!(flags & COREDAM_RETENTION_KEEP_NEWEST))
		newest = SIZE_MAX;
	res.use_before = use;

	/* oldest first, until within both limits and past the cores too old */
	for (size_t i = 0; i < n && (over(lim, use, free_bytes) || too_old(lim, &v[i])); i++) {
		if (!mine[i] || i == newest || is_kept(&v[i], keep))
			continue;
		if (!(flags & COREDAM_RETENTION_DRY_RUN)) {
			/* the core first: metadata without its core lists as "missing", never the reverse */
			if (v[i].present)
				r = unlink_gone_ok(dirfd, v[i].core);
			if (r >= 0)
				r = unlink_gone_ok(dirfd, v[i].meta);
			if (r < 0)
				break;
		}
		mine[i] = false;
		use -= size[i];
		free_bytes = add_sat(free_bytes, size[i]);
		res.removed++;
		res.removed_bytes += size[i];
		if (cb)
			cb(&v[i], size[i], userdata);
	}
	for (size_t i = 0; i < n; i++)
		res.kept += mine[i];
	res.use_after = use;
	res.free_after = free_bytes;
	res.within = !over(lim, use, free_bytes);
	*ret = res;
	return r < 0 ? r : 0;
}

int coredam_retention_vacuum(int dirfd, const struct coredam_config *cfg, const char *keep, unsigned int flags,
			     coredam_retention_cb cb, void *userdata, struct coredam_retention_result *ret)
{
	struct coredam_retention_limits lim;
	struct statvfs st;
	int r;

	*ret = (struct coredam_retention_result){ 0 };
	if (flock(dirfd, LOCK_EX) < 0)
		return -errno;
	if (fstatvfs(dirfd, &st) < 0) {
		r = -errno;
		goto out;
	}
	coredam_retention_limits(cfg, (uint64_t)st.f_blocks * st.f_frsize, (uint64_t)time(NULL), &lim);
	r = coredam_retention_vacuum_limits(dirfd, &lim, (uint64_t)st.f_bavail * st.f_frsize, keep, flags, cb,
					    userdata, ret);
out:
	(void)flock(dirfd, LOCK_UN);
	return r;
}

size_t coredam_retention_after_store(int dirfd, const char *dir, const struct coredam_config *cfg,
				     const char *stored)
{
	struct coredam_retention_result res;
	char b1[16], b2[16], b3[16];
	int r;

	r = coredam_retention_vacuum(dirfd, cfg, stored, 0, NULL, NULL, &res);
	if (r < 0)
		log_full(LOG_WARNING, "retention of %s failed after %zu removed: %s event=retention removed=%zu "
			 "bytes=%" PRIu64 " within=no", dir, res.removed, strerror(-r), res.removed, res.removed_bytes);
	else if (res.removed)
		log_full(LOG_INFO, "removed the %zu oldest kept core%s (%s) from %s: the kept cores take %s, %s free "
			 "([Space] MaxUse=, KeepFree=, MaxAge=) event=retention removed=%zu bytes=%" PRIu64 " use_bytes=%" PRIu64
			 " free_bytes=%" PRIu64 " kept=%zu within=%s", res.removed, res.removed == 1 ? "" : "s",
			 format_size(b1, sizeof(b1), res.removed_bytes), dir, format_size(b2, sizeof(b2), res.use_after),
			 format_size(b3, sizeof(b3), res.free_after), res.removed, res.removed_bytes, res.use_after,
			 res.free_after, res.kept, res.within ? "yes" : "no");
	return res.removed;
}
