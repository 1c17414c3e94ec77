// SPDX-License-Identifier: LGPL-2.1-or-later
/* The cores kept in a destination: see corelist.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corelist.h"
#include "fileio.h"
#include "macro.h"
#include "parse-util.h"
#include "path-util.h"

#define META_MAX 65536

static bool get_u64(json_t *o, const char *key, uint64_t *ret)
{
	json_t *v = json_object_get(o, key);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return false;
	*ret = (uint64_t)json_integer_value(v);
	return true;
}

static bool get_str(json_t *o, const char *key, char *buf, size_t size)
{
	json_t *v = json_object_get(o, key);
	int r;

	if (!json_is_string(v))
		return false;
	r = snprintf(buf, size, "%s", json_string_value(v));
	return r >= 0;	/* a long comm is cut; a long core name is caught by the name check */
}

int coredam_meta_parse(const char *text, const char *name, struct coredam_kept_core *ret)
{
	json_t *o = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
	struct coredam_kept_core c = { 0 };
	uint64_t pid, uid, gid, sig;
	char compression[16];
	json_t *t;
	bool ok;

	if (!json_is_object(o)) {
		json_decref(o);
		return -EBADMSG;
	}
	t = json_object_get(o, "truncated");
	ok = get_str(o, "core", c.core, sizeof(c.core)) && strcmp(c.core, name) == 0 &&
	     get_u64(o, "pid", &pid) && pid > 0 && pid <= INT32_MAX &&
	     get_u64(o, "uid", &uid) && uid <= UINT32_MAX && get_u64(o, "gid", &gid) && gid <= UINT32_MAX &&
	     get_u64(o, "signal", &sig) && sig < 128 && get_u64(o, "time", &c.time) &&
	     get_str(o, "comm", c.comm, sizeof(c.comm)) && get_u64(o, "size", &c.size) &&
	     get_u64(o, "disk_size", &c.disk_size) &&
	     get_str(o, "compression", compression, sizeof(compression)) &&
	     (strcmp(compression, "none") == 0 || strcmp(compression, "zstd") == 0) && json_is_boolean(t);
	if (ok) {
		c.pid = (pid_t)pid;
		c.uid = (uid_t)uid;
		c.gid = (gid_t)gid;
		c.signal = (int)sig;
		c.zstd = strcmp(compression, "zstd") == 0;
		c.truncated = json_is_true(t);
	}
	json_decref(o);
	if (!ok)
		return -EBADMSG;
	*ret = c;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct coredam_kept_core *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

int coredam_cores_list(int dirfd, struct coredam_kept_core **ret, size_t *ret_n, size_t *ret_damaged)
{
	_cleanup_free_ struct coredam_kept_core *v = NULL;
	size_t n = 0, cap = 0, damaged = 0;
	struct dirent *de;
	DIR *d;
	int r;

	r = opendir_at(dirfd, ".", &d);
	if (r < 0)
		return r;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char name[NAME_MAX + 1];
		_cleanup_free_ char *text = NULL;
		struct coredam_kept_core c;
		struct stat st;

		/* "<core>.json"; hidden files are the writers' temporaries */
		if (de->d_name[0] == '.' || len <= 5 || strcmp(de->d_name + len - 5, ".json") != 0)
			continue;
		memcpy(name, de->d_name, len - 5);
		name[len - 5] = '\0';
		if (fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
		    read_file_at(dirfd, de->d_name, META_MAX, &text) < 0 || coredam_meta_parse(text, name, &c) < 0) {
			damaged++;
			continue;
		}
		memcpy(c.meta, de->d_name, len + 1);
		c.present = fstatat(dirfd, c.core, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode);
		/* renamed NAME.incomplete by the agent after the metadata was written */
		if (!c.present) {
			char inc[NAME_MAX + 1];

			if (snprintf(inc, sizeof(inc), "%s.incomplete", c.core) < (int)sizeof(inc) &&
			    fstatat(dirfd, inc, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
				snprintf(c.core, sizeof(c.core), "%s", inc);
				c.present = c.truncated = true;
			}
		}
		if (n == cap) {
			struct coredam_kept_core *nv = reallocarray(v, cap ? cap * 2 : 16, sizeof(*v));

			if (!nv) {
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
			cap = cap ? cap * 2 : 16;
		}
		v[n++] = c;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), by_time);
	*ret = v;
	v = NULL;
	*ret_n = n;
	if (ret_damaged)
		*ret_damaged = damaged;
	return 0;
}

const struct coredam_kept_core *coredam_cores_find(const struct coredam_kept_core *v, size_t n, const char *id)
{
	const struct coredam_kept_core *found = NULL;
	uint64_t pid;

	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].core, id) == 0)
			return &v[i];
	if (parse_u64(id, &pid) < 0)
		return NULL;
	for (size_t i = 0; i < n; i++)	/* oldest first: the last match is the newest */
		if ((uint64_t)v[i].pid == pid)
			found = &v[i];
	return found;
}

const char *coredam_kept_core_state(const struct coredam_kept_core *c)
{
	if (!c->present)
		return "missing";
	return c->truncated ? "incomplete" : "complete";
}
