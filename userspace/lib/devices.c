// SPDX-License-Identifier: LGPL-2.1-or-later
/* Core destination -> the whole-disk MAJ:MIN io.max must name. */
#include <fcntl.h>
#include <sys/stat.h>

#include "devices.h"
#include "macro.h"
#include "fileio.h"
#include "mountinfo.h"
#include "parse-util.h"
#include "string-util.h"
#include "path-util.h"

const char *coredam_dev_kind_str(enum coredam_dev_kind k)
{
	switch (k) {
	case COREDAM_DEV_DISK:
		return "disk";
	case COREDAM_DEV_PARTITION:
		return "partition";
	case COREDAM_DEV_DM:
		return "dm";
	case COREDAM_DEV_MD:
		return "md";
	}
	return "?";
}

bool coredam_fs_cgroup_writeback(const char *fstype)
{
	static const char *const ok[] = { "ext2", "ext4", "xfs", "btrfs", "f2fs" };

	for (size_t i = 0; i < ELEMENTSOF(ok); i++)
		if (strcmp(fstype, ok[i]) == 0)
			return true;
	return false;
}

static const char *not_block_fs(const char *fstype)
{
	static const struct {
		const char *type, *why;
	} tab[] = {
		{ "tmpfs", "tmpfs lives in memory" },
		{ "ramfs", "ramfs lives in memory" },
		{ "devtmpfs", "devtmpfs lives in memory" },
		{ "nfs", "network filesystem" },
		{ "nfs4", "network filesystem" },
		{ "cifs", "network filesystem" },
		{ "smb3", "network filesystem" },
		{ "9p", "network/virtual filesystem" },
		{ "virtiofs", "host-shared filesystem" },
		{ "ceph", "network filesystem" },
		{ "glusterfs", "network filesystem" },
		{ "afs", "network filesystem" },
		{ "overlay", "overlay filesystem (name the upper layer's device in Devices=)" },
		{ "proc", "pseudo filesystem" },
		{ "sysfs", "pseudo filesystem" },
	};

	for (size_t i = 0; i < ELEMENTSOF(tab); i++)
		if (strcmp(fstype, tab[i].type) == 0)
			return tab[i].why;
	if (strncmp(fstype, "fuse", 4) == 0)
		return "FUSE filesystem: its I/O is done by a user-space server";
	return NULL;
}

/* Lexically normalize an absolute path: no "//", no "." , ".." resolved, no trailing "/". */
static int normalize(const char *in, char *out, size_t size)
{
	size_t o = 0;
	const char *p = in;

	if (in[0] != '/')
		return -EINVAL;
	while (*p) {
		size_t len;

		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (len == 0)
			break;
		if (len == 1 && p[0] == '.') {
			/* skip */
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else {
			if (o + 1 + len + 1 > size)
				return -ENAMETOOLONG;
			out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p += len;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return 0;
}

static bool is_prefix_dir(const char *mnt, const char *path)
{
	size_t l = strlen(mnt);

	if (strcmp(mnt, "/") == 0)
		return true;
	return strncmp(mnt, path, l) == 0 && (path[l] == '\0' || path[l] == '/');
}

static int read_devnum(int dirfd, const char *file, unsigned int *ret_major, unsigned int *ret_minor)
{
	char buf[64];
	unsigned int ma, mi;
	int r;

	r = read_line_at(dirfd, file, buf, sizeof(buf));
	if (r < 0)
		return r;
	if (parse_devnum(buf, &ma, &mi) < 0)
		return -EBADMSG;
	*ret_major = ma;
	*ret_minor = mi;
	return 0;
}

static void list_slaves(int devfd, char *buf, size_t size)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	size_t o = 0;

	buf[0] = '\0';
	if (opendir_at(devfd, "slaves", &d) < 0)
		return;
	while ((de = readdir(d))) {
		int n;

		if (de->d_name[0] == '.')
			continue;
		n = snprintf(buf + o, size - o, "%s%s", o ? " " : "", de->d_name);
		if (n < 0 || (size_t)n >= size - o)
			break;
		o += n;
	}
}

int coredam_dev_resolve_devnum(const struct coredam_roots *roots, unsigned int major,
			       unsigned int minor, struct coredam_dev_info *ret)
{
	_cleanup_close_ int sysfd = -1, devfd = -1;
	struct coredam_dev_info info = *ret;
	char rel[64], link[PATH_MAX];
	ssize_t n;
	int r;

	r = open_dir_at(AT_FDCWD, roots->sys, &sysfd);
	if (r < 0)
		return r;
	snprintf(rel, sizeof(rel), "dev/block/%u:%u", major, minor);
	r = open_dir_at(sysfd, rel, &devfd);
	if (r < 0)
		return r;
	n = readlinkat(sysfd, rel, link, sizeof(link) - 1);
	if (n < 0)
		return -errno;
	link[n] = '\0';

	info.fs_major = major;
	info.fs_minor = minor;
	info.kind = COREDAM_DEV_DISK;
	info.dm_name[0] = info.slaves[0] = '\0';
	snprintf(info.name, sizeof(info.name), "%s", path_basename(link));
	info.major = major;
	info.minor = minor;

	if (faccessat(devfd, "partition", F_OK, 0) == 0) {
		_cleanup_close_ int diskfd = -1;
		char *s;

		r = open_dir_at(devfd, "..", &diskfd);
		if (r < 0)
			return r;
		r = read_devnum(diskfd, "dev", &info.major, &info.minor);
		if (r < 0)
			return r;
		s = strrchr(link, '/');
		if (s) {
			*s = '\0';
			snprintf(info.name, sizeof(info.name), "%s", path_basename(link));
		}
		info.kind = COREDAM_DEV_PARTITION;
		closep(&devfd);
		devfd = take_fd(&diskfd);
	}
	/* a partition of a dm/md device keeps kind "partition"; the disk is still the top */
	if (faccessat(devfd, "dm/name", F_OK, 0) == 0) {
		read_line_at(devfd, "dm/name", info.dm_name, sizeof(info.dm_name));
		list_slaves(devfd, info.slaves, sizeof(info.slaves));
		if (info.kind == COREDAM_DEV_DISK)
			info.kind = COREDAM_DEV_DM;
	} else if (faccessat(devfd, "md", F_OK, 0) == 0) {
		list_slaves(devfd, info.slaves, sizeof(info.slaves));
		if (info.kind == COREDAM_DEV_DISK)
			info.kind = COREDAM_DEV_MD;
	}
	info.throttleable = true;
	info.reason[0] = '\0';
	*ret = info;
	return 0;
}

/* /dev/NAME or /dev/mapper/NAME -> MAJ:MIN via sysfs, so that fake trees work. */
static int devnum_by_name(const struct coredam_roots *roots, const char *devpath,
			  unsigned int *ret_major, unsigned int *ret_minor)
{
	_cleanup_close_ int cls = -1;
	_cleanup_closedir_ DIR *d = NULL;
	const char *name = devpath;
	struct dirent *de;
	char rel[PATH_MAX];
	int r;

	if (strncmp(name, "/dev/", 5) == 0)
		name += 5;
	r = xsnprintf(rel, sizeof(rel), "%s/class/block", roots->sys);
	if (r < 0)
		return r;
	r = open_dir_at(AT_FDCWD, rel, &cls);
	if (r < 0)
		return r;
	if (strncmp(name, "mapper/", 7) != 0 && !strchr(name, '/')) {
		char f[PATH_MAX];

		r = xsnprintf(f, sizeof(f), "%s/dev", name);
		if (r < 0)
			return r;
		return read_devnum(cls, f, ret_major, ret_minor);
	}
	if (strncmp(name, "mapper/", 7) != 0)
		return -ENODEV;
	name += 7;
	r = opendir_at(cls, ".", &d);
	if (r < 0)
		return r;
	while ((de = readdir(d))) {
		char f[PATH_MAX], dm[128];

		if (de->d_name[0] == '.')
			continue;
		if (xsnprintf(f, sizeof(f), "%s/dm/name", de->d_name) < 0)
			continue;
		if (read_line_at(cls, f, dm, sizeof(dm)) < 0 || strcmp(dm, name) != 0)
			continue;
		if (xsnprintf(f, sizeof(f), "%s/dev", de->d_name) < 0)
			continue;
		return read_devnum(cls, f, ret_major, ret_minor);
	}
	return -ENODEV;
}

int coredam_dev_resolve_spec(const struct coredam_roots *roots, const char *spec,
			     struct coredam_dev_info *ret)
{
	struct coredam_dev_info info = { 0 };
	unsigned int ma, mi;
	int r;

	if (parse_devnum(spec, &ma, &mi) < 0) {
		r = devnum_by_name(roots, spec, &ma, &mi);
		if (r < 0)
			return r;
	}
	r = coredam_dev_resolve_devnum(roots, ma, mi, &info);
	if (r < 0)
		return r;
	snprintf(info.source, sizeof(info.source), "%s", spec);
	info.cgroup_writeback = true; /* unknown: the user named the device */
	*ret = info;
	return 0;
}

int coredam_dev_resolve_path(const struct coredam_roots *roots, const char *path,
			     struct coredam_dev_info *ret)
{
	struct coredam_dev_info info = { 0 };
	_cleanup_free_ char *mi = NULL;
	char norm[PATH_MAX], f[PATH_MAX];
	size_t best = 0;
	bool found = false;
	char *line, *save = NULL;
	const char *why;
	int r;

	r = normalize(path, norm, sizeof(norm));
	if (r < 0)
		return r;
	r = xsnprintf(f, sizeof(f), "%s/self/mountinfo", roots->proc);
	if (r < 0)
		return r;
	r = read_file_at(AT_FDCWD, f, 4 << 20, &mi);
	if (r < 0)
		return r;

	for (line = strtok_r(mi, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct coredam_mount m;

		if (!coredam_mountinfo_line(line, strlen(line), &m) || !is_prefix_dir(m.mountpoint, norm))
			continue;
		/* longest match wins; among equals the later (upper) mount wins */
		if (found && strlen(m.mountpoint) < best)
			continue;
		best = strlen(m.mountpoint);
		found = true;
		snprintf(info.mountpoint, sizeof(info.mountpoint), "%s", m.mountpoint);
		snprintf(info.fstype, sizeof(info.fstype), "%s", m.fstype);
		snprintf(info.source, sizeof(info.source), "%s", m.source);
		info.fs_major = m.major;
		info.fs_minor = m.minor;
	}
	if (!found)
		return -ENOENT;

	info.cgroup_writeback = coredam_fs_cgroup_writeback(info.fstype);
	why = not_block_fs(info.fstype);
	if (why) {
		info.throttleable = false;
		snprintf(info.reason, sizeof(info.reason), "%s on %s is not throttleable: %s",
			 info.fstype, info.mountpoint, why);
		*ret = info;
		return 0;
	}

	{
		unsigned int ma = info.fs_major, mn = info.fs_minor;
		struct coredam_dev_info dev = info;

		/* btrfs and others report an anonymous 0:N device: go by the source */
		if (ma == 0) {
			r = devnum_by_name(roots, info.source, &ma, &mn);
			if (r < 0) {
				info.throttleable = false;
				snprintf(info.reason, sizeof(info.reason),
					 "%s on %s has no block device (device 0:%u, source %s)",
					 info.fstype, info.mountpoint, info.fs_minor, info.source);
				*ret = info;
				return 0;
			}
		}
		r = coredam_dev_resolve_devnum(roots, ma, mn, &dev);
		if (r < 0) {
			info.throttleable = false;
			snprintf(info.reason, sizeof(info.reason), "%s/dev/block/%u:%u: %s",
				 roots->sys, ma, mn, strerror(-r));
			*ret = info;
			return 0;
		}
		info = dev;
	}
	*ret = info;
	return 0;
}
