// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam-pipe: the kernel's arguments, file names, modes and ACL. */
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>

#include "pipe-args.h"
#include "macro.h"
#include "fileio.h"
#include "string-util.h"
#include "parse-util.h"
#include "elfcore.h"

static int parse_int_arg(const char *s, uint64_t max, uint64_t *ret)
{
	uint64_t v;
	int r;

	r = parse_u64(s, &v);
	if (r < 0)
		return r;
	if (v > max)
		return -ERANGE;
	*ret = v;
	return 0;
}

int coredam_pipe_args_parse(int argc, char *const *argv, struct coredam_pipe_args *ret)
{
	struct coredam_pipe_args a = { .dumpable = COREDAM_DUMPABLE_UNKNOWN, .rlimit = UINT64_MAX };
	uint64_t v;
	size_t o = 0;
	int r;

	if (argc < 6)
		return -EINVAL;
	if (argv[0][0] != '/')
		return -EINVAL;
	r = xsnprintf(a.dir, sizeof(a.dir), "%s", argv[0]);
	if (r < 0)
		return r;
	if (parse_int_arg(argv[1], INT32_MAX, &v) < 0 || v == 0)
		return -EINVAL;
	a.pid = (pid_t)v;
	if (parse_int_arg(argv[2], UINT32_MAX - 1, &v) < 0)
		return -EINVAL;
	a.uid = (uid_t)v;
	if (parse_int_arg(argv[3], UINT32_MAX - 1, &v) < 0)
		return -EINVAL;
	a.gid = (gid_t)v;
	if (parse_int_arg(argv[4], 255, &v) < 0)
		return -EINVAL;
	a.signal = (int)v;
	if (parse_int_arg(argv[5], UINT64_MAX, &v) < 0)
		return -EINVAL;
	a.time = v;
	if (argc > 6) {
		/* the kernel prints RLIM_INFINITY as an unsigned long */
		if (parse_u64(argv[6], &a.rlimit) < 0)
			return -EINVAL;
		a.have_rlimit = true;
	}
	if (argc > 7) {
		if (parse_int_arg(argv[7], 2, &v) < 0)
			return -EINVAL;
		a.dumpable = (int)v;
	}
	for (int i = 8; i < argc; i++) {
		r = snprintf(a.comm + o, sizeof(a.comm) - o, "%s%s", i > 8 ? " " : "", argv[i]);
		if (r < 0)
			return -EINVAL;
		o += (size_t)r;
		if (o >= sizeof(a.comm)) {
			o = sizeof(a.comm) - 1;
			break;
		}
	}
	*ret = a;
	return 0;
}

void coredam_pipe_files(const struct coredam_pipe_args *a, struct coredam_pipe_files *ret)
{
	bool user = a->dumpable == 1;	/* never on a guess: see COREDAM_DUMPABLE_UNKNOWN */

	*ret = (struct coredam_pipe_files){
		.core_mode = user ? 0640 : 0400,
		.meta_mode = user ? 0640 : 0600,
	};
}

bool coredam_pipe_user_may_read(const struct coredam_pipe_args *a, const struct coredam_core_creds *c)
{
	uint64_t uid = a->uid, gid = a->gid;

	if (a->dumpable != 1 || uid < COREDAM_FIRST_USER_UID || uid >= 65534)
		return false;
	/* the process ran as this user when it dumped... */
	if (c->uid != uid || c->gid != gid)
		return false;
	/* ...and was started as this user, with no setuid or setgid bit at work */
	return c->at_uid == uid && c->at_euid == uid && c->at_gid == gid && c->at_egid == gid &&
	       c->at_secure == 0;
}

/* One ACL entry as the kernel reads system.posix_acl_access: little-endian. */
static unsigned char *acl_entry(unsigned char *p, uint16_t tag, uint16_t perm, uint32_t id)
{
	p[0] = tag & 0xff, p[1] = tag >> 8;
	p[2] = perm & 0xff, p[3] = perm >> 8;
	for (int i = 0; i < 4; i++)
		p[4 + i] = (id >> (8 * i)) & 0xff;
	return p + 8;
}

size_t coredam_acl_user_read(uid_t uid, void *buf)
{
	/* <linux/posix_acl_xattr.h>: version 2, then entries sorted by tag */
	enum { USER_OBJ = 0x01, USER = 0x02, GROUP_OBJ = 0x04, MASK = 0x10, OTHER = 0x20 };
	const uint32_t undefined = UINT32_MAX;
	unsigned char *p = buf;

	p[0] = 2, p[1] = p[2] = p[3] = 0;
	p = acl_entry(p + 4, USER_OBJ, 6, undefined);
	p = acl_entry(p, USER, 4, (uint32_t)uid);
	p = acl_entry(p, GROUP_OBJ, 4, undefined);
	p = acl_entry(p, MASK, 4, undefined);
	p = acl_entry(p, OTHER, 0, undefined);
	return (size_t)(p - (unsigned char *)buf);
}

void coredam_pipe_sanitize(const char *in, char *out, size_t size)
{
	size_t o = 0;

	if (size == 0)
		return;
	for (const char *p = in; *p && o < 15 && o + 1 < size; p++) {
		char c = *p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
			  c == '_' || c == '-' || (c == '.' && o > 0);

		out[o++] = ok ? c : '_';
	}
	if (o == 0 && size > 1)
		out[o++] = '_';
	out[o] = '\0';
}

int coredam_pipe_core_name(const struct coredam_pipe_args *a, bool zstd, char *buf, size_t size)
{
	char comm[16];

	coredam_pipe_sanitize(a->comm, comm, sizeof(comm));
	return xsnprintf(buf, size, "core.%s.%d.%" PRIu64 "%s", comm, (int)a->pid, a->time, zstd ? ".zst" : "");
}

int coredam_pipe_parse_rlimit(const char *s, uint64_t *ret)
{
	const char *line;
	char soft[32];

	line = strstr(s, "\nMax core file size");
	if (!line)
		return -EBADMSG;
	if (sscanf(line + strlen("\nMax core file size"), " %31s", soft) != 1)
		return -EBADMSG;
	if (strcmp(soft, "unlimited") == 0) {
		*ret = UINT64_MAX;
		return 0;
	}
	if (parse_u64(soft, ret) < 0)
		return -EBADMSG;
	return 0;
}

int coredam_pipe_read_rlimit(const char *proc_root, pid_t pid, uint64_t *ret)
{
	_cleanup_free_ char *s = NULL;
	char path[PATH_MAX];
	int r;

	r = xsnprintf(path, sizeof(path), "%s/%d/limits", proc_root, (int)pid);
	if (r < 0)
		return r;
	r = read_file_at(AT_FDCWD, path, 16384, &s);
	if (r < 0)
		return r;
	return coredam_pipe_parse_rlimit(s, ret);
}
