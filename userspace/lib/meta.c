// SPDX-License-Identifier: LGPL-2.1-or-later
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "json-util.h"
#include "meta.h"
#include "macro.h"
#include "fileio.h"
#include "string-util.h"

/* Who crashed: the first half of the metadata. */
static int meta_process(json_t *o, const struct coredam_core_meta *m)
{
	int r = 0;

	r |= json_object_set_new(o, "core", coredam_json_text(m->core ?: ""));
	r |= json_object_set_new(o, "pid", json_integer(m->pid));
	r |= json_object_set_new(o, "uid", json_integer(m->uid));
	r |= json_object_set_new(o, "gid", json_integer(m->gid));
	r |= json_object_set_new(o, "signal", json_integer(m->signal));
	r |= json_object_set_new(o, "time", coredam_json_u64(m->time));
	r |= json_object_set_new(o, "comm", coredam_json_text(m->comm ?: ""));
	r |= json_object_set_new(o, "size", coredam_json_u64(m->size));
	r |= json_object_set_new(o, "disk_size", coredam_json_u64(m->disk_size));
	r |= json_object_set_new(o, "compression", coredam_json_text(m->compression ?: ""));
	return r;
}

/* How it was stored: the second half. */
static int meta_storing(json_t *o, const struct coredam_core_meta *m)
{
	int r = 0;

	r |= json_object_set_new(o, "truncated", json_boolean(m->truncated));
	r |= json_object_set_new(o, "rlimit", m->rlimit == UINT64_MAX ? json_null() : coredam_json_u64(m->rlimit));
	r |= json_object_set_new(o, "dumpable", m->dumpable < 0 ? json_null() : json_integer(m->dumpable));
	r |= json_object_set_new(o, "ticket", coredam_json_u64(m->ticket));
	r |= json_object_set_new(o, "waited_ms", coredam_json_u64(m->waited_ms));
	r |= json_object_set_new(o, "write_ms", coredam_json_u64(m->write_ms));
	r |= json_object_set_new(o, "arrived_usec", coredam_json_u64(m->arrived_usec));
	r |= json_object_set_new(o, "admitted_usec", coredam_json_u64(m->admitted_usec));
	r |= json_object_set_new(o, "done_usec", coredam_json_u64(m->done_usec));
	r |= json_object_set_new(o, "cgroup", coredam_json_text(m->cgroup ?: ""));
	return r;
}

int coredam_meta_format(const struct coredam_core_meta *m, char *buf, size_t size)
{
	json_auto_t *o = json_object();
	int n;

	if (!o || meta_process(o, m) < 0 || meta_storing(o, m) < 0)
		return -ENOMEM;
	n = coredam_json_dumpb(o, 0, buf, size > 0 ? size - 1 : 0);
	if (n < 0)
		return n;
	buf[n++] = '\n';	/* one line, one object */
	buf[n] = '\0';
	return n;
}

int coredam_meta_write_at(int dirfd, const char *name, const char *text, mode_t mode)
{
	_cleanup_close_ int fd = -1;
	size_t len = strlen(text);
	char tmp[NAME_MAX + 1];
	ssize_t n;
	int r;

	r = xsnprintf(tmp, sizeof(tmp), ".%s.%d.tmp", name, (int)getpid());
	if (r < 0)
		return r;
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0 || (size_t)n != len) {
		r = n < 0 ? -errno : -EIO;
		goto out_unlink;
	}
	return tmpfile_commit_at(dirfd, fd, tmp, name, mode, RENAME_NOREPLACE);

out_unlink:
	unlinkat(dirfd, tmp, 0);
	return r;
}
