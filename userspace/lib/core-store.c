// SPDX-License-Identifier: LGPL-2.1-or-later
/* Storing one core from a stream (see core-store.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "core-store.h"
#include "elfcore.h"
#include "macro.h"
#include "pipe-outcome.h"
#include "string-util.h"
#include "time-util.h"

/* Add "; @fmt" to @ret->warn. */
static void __attribute__((format(printf, 2, 3))) warn(struct coredam_core_stored *ret, const char *fmt, ...)
{
	size_t l = strlen(ret->warn);
	va_list ap;

	if (l && l + 2 < sizeof(ret->warn)) {
		memcpy(ret->warn + l, "; ", 3);
		l += 2;
	}
	va_start(ap, fmt);
	(void)vsnprintf(ret->warn + l, sizeof(ret->warn) - l, fmt, ap);
	va_end(ap);
}

/*
 * Let the crashed user read its core, by a POSIX ACL, when
 * coredam_pipe_user_may_read() says so from the notes kept at @head. The
 * file stays root's and 0640 whatever happens here: a file system without
 * ACLs leaves the core to root (a warning), never to the user.
 */
static void grant_read(const struct coredam_pipe_args *a, int fd, const void *head, size_t head_len,
		       struct coredam_core_stored *ret)
{
	struct coredam_core_creds c;
	unsigned char acl[COREDAM_ACL_USER_READ_SIZE];
	size_t n;

	if (!head || coredam_elf_core_creds(head, head_len, &c) < 0 || !coredam_pipe_user_may_read(a, &c))
		return;
	n = coredam_acl_user_read(a->uid, acl);
	if (fsetxattr(fd, "system.posix_acl_access", acl, n, 0) < 0)
		warn(ret, "uid %u may not read it: no ACL on %s (%s); root's only", (unsigned int)a->uid, a->dir,
		     strerror(errno));
}

/*
 * Rename the finished temporary @tmp to @name (with ".incomplete" when
 * @incomplete), or to @name.1 ... @name.9 if taken: never over another
 * core.
 */
static int rename_into_place(const struct coredam_pipe_args *a, int dirfd, const char *tmp, const char *name,
			     bool incomplete, char *final, size_t finalsize, struct coredam_error *reterr)
{
	int r;

	for (int i = 0;; i++) {
		if (i == 0)
			r = xsnprintf(final, finalsize, "%s%s", name, incomplete ? ".incomplete" : "");
		else
			r = xsnprintf(final, finalsize, "%s.%d%s", name, i, incomplete ? ".incomplete" : "");
		if (r < 0)
			return coredam_error_set(reterr, r, "no name for %s/%s", a->dir, name);
		if (renameat2(dirfd, tmp, dirfd, final, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST || i >= 9) {
			r = -errno;
			return coredam_error_set(reterr, r, "cannot rename into %s/%s: %s", a->dir, final, strerror(-r));
		}
	}
}

/* The metadata beside the core, "<core>.json"; a failure costs only the metadata. */
static void write_meta(const struct coredam_pipe_args *a, int dirfd, const struct coredam_core_meta *m, mode_t mode,
		       struct coredam_core_stored *ret)
{
	char meta[16384], mname[NAME_MAX + 1];
	int r;

	r = coredam_meta_format(m, meta, sizeof(meta));
	if (r >= 0)
		r = xsnprintf(mname, sizeof(mname), "%s.json", m->core);
	if (r >= 0)
		r = coredam_meta_write_at(dirfd, mname, meta, mode);
	if (r < 0)
		warn(ret, "metadata %s/%s.json not written: %s", a->dir, m->core, strerror(-r));
}

int coredam_core_store(int infd, const void *prefix, size_t prefix_len, const struct coredam_config *cfg, const struct coredam_pipe_args *a, int dirfd,
		       uint64_t space_floor, struct coredam_core_meta *m, struct coredam_core_stored *ret,
		       struct coredam_error *reterr)
{
	_cleanup_free_ void *head = malloc(COREDAM_ELF_KEEP_MAX);	/* pages touched only as headers arrive */
	struct coredam_pipe_copy_opts o = {
		.window = cfg->writeback_window,
		.limit = MIN(m->rlimit, cfg->pipe_size_max ? cfg->pipe_size_max : UINT64_MAX),
		.deadline_usec = cfg->pipe_time_max_usec ? now_usec(CLOCK_MONOTONIC) + cfg->pipe_time_max_usec : 0,
		.compress_level = cfg->pipe_compress ? (int)cfg->pipe_compress_level : 0,
		.head = head,
		.head_size = head ? COREDAM_ELF_KEEP_MAX : 0,
		.space_fd = dirfd,
		.space_floor = space_floor,
		.prefix = prefix,
		.prefix_len = prefix_len,
	};
	struct coredam_pipe_copy_result *res = &ret->res;
	struct coredam_pipe_files files;
	_cleanup_close_ int fd = -1;
	bool incomplete;
	char name[NAME_MAX + 1], tmp[NAME_MAX + 1];
	uint64_t t0;
	int r;

	*ret = (struct coredam_core_stored){ 0 };
	coredam_pipe_files(a, &files);
	r = coredam_pipe_core_name(a, cfg->pipe_compress, name, sizeof(name));
	if (r >= 0)
		r = xsnprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	if (r < 0)
		return coredam_error_set(reterr, r, "no file name for the core: %s", strerror(-r));
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0600);
	if (fd < 0) {
		r = -errno;
		return coredam_error_set(reterr, r, "cannot create %s/%s: %s", a->dir, tmp, strerror(-r));
	}
	t0 = now_usec(CLOCK_MONOTONIC);
	r = coredam_pipe_copy(infd, fd, &o, res);
	if (r < 0) {
		coredam_error_set(reterr, r, "writing %s/%s failed: %s; partial file removed", a->dir, tmp,
				  strerror(-r));
		goto out_unlink;
	}
	m->write_ms = (now_usec(CLOCK_MONOTONIC) - t0) / 1000;
	if (res->in_bytes == 0) {
		r = coredam_error_set(reterr, -ENODATA, "the kernel sent no data (dump interrupted?)");
		goto out_unlink;
	}
	/*
	 * Root's, 0640 for an ordinary process, 0400 for suid_dumpable=2 and
	 * when the dumpable state is unknown; the crashed user may read it
	 * only if the core's own notes say it ran as that user throughout.
	 */
	if (fchmod(fd, files.core_mode) < 0) {
		r = -errno;
		coredam_error_set(reterr, r, "fchmod(%s/%s): %s", a->dir, tmp, strerror(-r));
		goto out_unlink;
	}
	grant_read(a, fd, head, res->head_len, ret);
	if (head)
		(void)coredam_elf_core_site(head, res->head_len, &ret->site);	/* zeroed when unread */
	incomplete = res->truncated || coredam_pipe_cut_short(o.head, res, &ret->expected);
	r = rename_into_place(a, dirfd, tmp, name, incomplete, ret->final, sizeof(ret->final), reterr);
	if (r < 0)
		goto out_unlink;
	m->core = ret->final;
	m->size = res->in_bytes;
	m->disk_size = res->out_bytes;
	m->truncated = incomplete;
	m->done_usec = now_usec(CLOCK_MONOTONIC);
	write_meta(a, dirfd, m, files.meta_mode, ret);
	if (fsync(dirfd) < 0)
		warn(ret, "fsync(%s): %s", a->dir, strerror(errno));
	return 0;

out_unlink:
	unlinkat(dirfd, tmp, 0);
	return r;
}
