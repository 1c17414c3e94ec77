// SPDX-License-Identifier: LGPL-2.1-or-later
/* Free-space guard and incomplete-core marking. */
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include "elfcore.h"
#include "json-util.h"
#include "meta.h"
#include "pipe-writer.h"
#include "space.h"
#include "macro.h"
#include "log.h"
#include "string-util.h"

void coredam_space_eval(const struct coredam_config *cfg, uint64_t free_bytes, uint64_t total_bytes,
			struct coredam_space *ret)
{
	struct coredam_space s = {
		.free_bytes = free_bytes,
		.total_bytes = total_bytes,
		.floor_bytes = coredam_config_free_floor(cfg, total_bytes),
	};

	s.below = s.floor_bytes > 0 && free_bytes < s.floor_bytes;
	*ret = s;
}

static void eval_statvfs(const struct coredam_config *cfg, const struct statvfs *st, struct coredam_space *ret)
{
	coredam_space_eval(cfg, (uint64_t)st->f_bavail * st->f_frsize, (uint64_t)st->f_blocks * st->f_frsize,
			   ret);
}

int coredam_space_check(const struct coredam_config *cfg, const char *dir, struct coredam_space *ret)
{
	struct statvfs st;

	if (statvfs(dir, &st) < 0)
		return -errno;
	eval_statvfs(cfg, &st, ret);
	return 0;
}

int coredam_space_check_fd(const struct coredam_config *cfg, int dirfd, struct coredam_space *ret)
{
	struct statvfs st;

	if (fstatvfs(dirfd, &st) < 0)
		return -errno;
	eval_statvfs(cfg, &st, ret);
	return 0;
}

void coredam_admission_eval(const struct coredam_config *cfg, const struct coredam_budget *b,
			    bool space_below, uint64_t mem_bound, uint64_t pin,
			    struct coredam_admission *ret)
{
	struct coredam_admission a = {
		.concurrency = b->concurrency,
		.waiting = cfg->queue_cap,
		.timeout_ms = (uint32_t)(cfg->wait_timeout_usec / 1000),
	};

	if (cfg->wait_timeout_usec && a.timeout_ms == 0)
		a.timeout_ms = 1;
	if (mem_bound && pin) {
		uint64_t places = MAX(mem_bound / pin, 1);

		/* QueueCap=infinity is 0: no count cap, only this one */
		if (a.waiting == 0 || places < a.waiting) {
			a.waiting = (uint32_t)MIN(places, (uint64_t)UINT32_MAX);
			a.memory_bound = true;
		}
	}
	if (space_below) {
		a.concurrency = 1;
		a.waiting = 1;
		a.timeout_ms = 1;
		a.memory_bound = false;
	}
	*ret = a;
}

uint64_t coredam_pin_estimate(uint64_t est, uint64_t *seen_usec, uint64_t now_pin, uint64_t now_usec)
{
	if (now_pin) {
		*seen_usec = now_usec;
		return now_pin;
	}
	if (est && now_usec - *seen_usec > COREDAM_PIN_FORGET_USEC)
		return 0;
	return est;
}

/* @a + @b, or UINT64_MAX where that would wrap: no file is ever that long. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static int elf_need(int fd, uint64_t *ret)
{
	unsigned char ident[EI_NIDENT];
	uint64_t need = 0;
	ssize_t n;

	n = pread(fd, ident, sizeof(ident), 0);
	if (n < 0)
		return -errno;	/* EIO: the file system failed, not a verdict on the file */
	if (n != (ssize_t)sizeof(ident))
		return -EMEDIUMTYPE;
	if (memcmp(ident, ELFMAG, SELFMAG) != 0 || ident[EI_DATA] != ELFDATA2LSB)
		return -EMEDIUMTYPE;
	if (ident[EI_CLASS] == ELFCLASS64) {
		Elf64_Ehdr eh;

		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || eh.e_type != ET_CORE ||
		    eh.e_phentsize != sizeof(Elf64_Phdr))
			return -EMEDIUMTYPE;
		need = add_sat(eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr));
		if (need > INT64_MAX) {
			*ret = UINT64_MAX; /* no file holds these headers */
			return 0;
		}
		for (unsigned int i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)) != (ssize_t)sizeof(ph)) {
				*ret = UINT64_MAX; /* headers themselves cut off */
				return 0;
			}
			need = MAX(need, add_sat(ph.p_offset, ph.p_filesz));
		}
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;

		if (pread(fd, &eh, sizeof(eh), 0) != (ssize_t)sizeof(eh) || eh.e_type != ET_CORE ||
		    eh.e_phentsize != sizeof(Elf32_Phdr))
			return -EMEDIUMTYPE;
		need = eh.e_phoff + (uint64_t)eh.e_phnum * sizeof(Elf32_Phdr);
		for (unsigned int i = 0; i < eh.e_phnum; i++) {
			Elf32_Phdr ph;

			if (pread(fd, &ph, sizeof(ph), eh.e_phoff + (uint64_t)i * sizeof(ph)) != (ssize_t)sizeof(ph)) {
				*ret = UINT64_MAX;
				return 0;
			}
			need = MAX(need, (uint64_t)ph.p_offset + ph.p_filesz);
		}
	} else {
		return -EMEDIUMTYPE;
	}
	*ret = need;
	return 0;
}

/*
 * A zstd-compressed core (coredam-pipe's Compress=yes, systemd-coredump's
 * store): read to its end, it is short when the stream stops inside a
 * frame, or when it holds fewer bytes than its ELF program headers declare
 * (a piped core has no holes: a complete one reaches the end of its last
 * segment). -EMEDIUMTYPE when the file is no zstd stream, or holds no ELF
 * core.
 */
static int zstd_incomplete(int fd, bool *ret)
{
	static const unsigned char magic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	_cleanup_free_ void *head = NULL;
	unsigned char m[4];
	size_t head_len = 0;
	uint64_t total = 0, need = 0;
	int r;

	if (pread(fd, m, sizeof(m), 0) != (ssize_t)sizeof(m) || memcmp(m, magic, sizeof(m)) != 0)
		return -EMEDIUMTYPE;
	head = malloc(COREDAM_ELF_HEAD_MAX);
	if (!head)
		return -ENOMEM;
	if (lseek(fd, 0, SEEK_SET) < 0)
		return -errno;
	r = coredam_zstd_scan(fd, head, COREDAM_ELF_HEAD_MAX, &head_len, &total);
	if (r == -EBADMSG) {
		*ret = true;
		return 0;
	}
	if (r < 0)
		return r;
	if (coredam_elf_core_size(head, head_len, &need) < 0)
		return -EMEDIUMTYPE;
	*ret = total < need;
	return 0;
}

int coredam_core_incomplete(int dirfd, const char *name, bool *ret)
{
	_cleanup_close_ int fd = -1;
	struct stat st;
	uint64_t need = 0;
	int r;

	fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EMEDIUMTYPE;
	if (st.st_size == 0) {
		/* created for a core that never got its first byte (ENOSPC) */
		*ret = true;
		return 0;
	}
	r = zstd_incomplete(fd, ret);
	if (r != -EMEDIUMTYPE)
		return r;
	r = elf_need(fd, &need);
	if (r < 0)
		return r;
	*ret = (uint64_t)st.st_size < need;
	return 0;
}

/*
 * Rename @name to "<name>.incomplete", or "<name>.N.incomplete" when that
 * is taken, never replacing anything: the directory may be sticky and
 * world-writable, and a name someone created there is theirs (a rename
 * over it, as root, would delete another user's file). -EEXIST when all
 * ten names are taken; -EINVAL where the file system has no
 * RENAME_NOREPLACE.
 */
static int rename_incomplete(int dirfd, const char *name, char *ret_new, size_t size)
{
	for (int i = 0; i < 10; i++) {
		int r;

		if (i == 0)
			r = xsnprintf(ret_new, size, "%s.incomplete", name);
		else
			r = xsnprintf(ret_new, size, "%s.%d.incomplete", name, i);
		if (r < 0)
			return r;
		if (renameat2(dirfd, name, dirfd, ret_new, RENAME_NOREPLACE) == 0)
			return 0;
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

/* The start of coredam-pipe's metadata of core @name: {"core": "NAME" */
static int sidecar_head(const char *name, char *buf, size_t size)
{
	json_auto_t *j = coredam_json_text(name);
	int r, n;

	if (!j)
		return -ENOMEM;
	r = xsnprintf(buf, size, "{\"core\": ");
	if (r < 0)
		return r;
	n = coredam_json_dumpb(j, JSON_ENCODE_ANY, buf + r, size - (size_t)r);
	return n < 0 ? n : r + n;
}

/*
 * coredam-pipe's metadata NAME.json beside a core the agent renamed to
 * @newname: rewritten as @newname.json saying so ("core" the new name,
 * "truncated": true), the old one removed, so that no record calls the
 * core whole under a name it no longer has. Only a file that is the
 * helper's own (regular, root's, in its format) is touched; a sidecar
 * that is not there is no error.
 */
static int move_sidecar(int dirfd, const char *name, const char *newname)
{
	_cleanup_close_ int fd = -1;
	char old[NAME_MAX + 1], new[NAME_MAX + 1], text[16384], out[16384], *tail, *t;
	size_t pos;
	struct stat st;
	ssize_t n;
	int r;

	if (xsnprintf(old, sizeof(old), "%s.json", name) < 0 || xsnprintf(new, sizeof(new), "%s.json", newname) < 0)
		return -ENAMETOOLONG;
	fd = openat(dirfd, old, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 || st.st_size >= (off_t)sizeof(text))
		return -EMEDIUMTYPE;
	n = read(fd, text, sizeof(text) - 1);
	if (n < 0)
		return -errno;
	text[n] = '\0';
	/* {"core": "<name>", ... "truncated": false, ...}, as coredam_meta_format() writes it */
	r = sidecar_head(name, out, sizeof(out));
	if (r < 0)
		return r;
	if (strncmp(text, out, (size_t)r) != 0)
		return -EMEDIUMTYPE;
	tail = text + r;
	t = strstr(tail, "\"truncated\": false,");
	r = sidecar_head(newname, out, sizeof(out));
	if (r < 0)
		return r;
	pos = (size_t)r;
	if (t)
		r = xsnprintf(out + pos, sizeof(out) - pos, "%.*s\"truncated\": true,%s", (int)(t - tail), tail,
			      t + strlen("\"truncated\": false,"));
	else
		r = xsnprintf(out + pos, sizeof(out) - pos, "%s", tail);
	if (r < 0)
		return r;
	r = coredam_meta_write_at(dirfd, new, out, st.st_mode & 07777);
	if (r < 0)
		return r;
	if (unlinkat(dirfd, old, 0) < 0)
		return -errno;
	return 0;
}

/*
 * Is a dump still writing @name? A write lease (F_SETLEASE, F_WRLCK) is
 * refused with EAGAIN while any other descriptor has the file open, and
 * the kernel's file dump holds its core open until it ends (and creates
 * it with O_EXCL, so no later dump opens it again). The agent's idea of
 * "nothing is dumping" comes from a counter read a moment before, and a
 * dump that starts in that moment must not have its core renamed under
 * it. Where leases cannot be taken (no CAP_LEASE, a file system without
 * them, fs.leases-enable=0) nothing can be told: false.
 */
static bool core_in_use(int dirfd, const char *name)
{
	_cleanup_close_ int fd = -1;
	bool busy;

	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fcntl(fd, F_SETLEASE, F_WRLCK) == 0) {
		(void)fcntl(fd, F_SETLEASE, F_UNLCK);
		return false;
	}
	busy = errno == EAGAIN;
	if (!busy)
		log_debug("%s: cannot take a lease to see whether a dump still writes it: %m", name);
	return busy;
}

int coredam_mark_incomplete(const char *dir, time_t since)
{
	_cleanup_closedir_ DIR *d = NULL;
	struct dirent *de;
	int count = 0, err = 0, r;

	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		char newname[NAME_MAX + 16];
		struct stat st;
		bool bad = false;
		size_t l = strlen(de->d_name);

		if (de->d_name[0] == '.' || (l > 11 && strcmp(de->d_name + l - 11, ".incomplete") == 0))
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
		    st.st_mtime < since)
			continue;
		r = coredam_core_incomplete(dirfd(d), de->d_name, &bad);
		if (r < 0 && r != -EMEDIUMTYPE && r != -ENOENT && !err)
			err = r;	/* cannot tell: say so rather than pass it as whole */
		if (r < 0 || !bad)
			continue;
		if (core_in_use(dirfd(d), de->d_name)) {
			log_debug("%s/%s is short but still being written: left as it is", dir, de->d_name);
			continue;
		}
		r = rename_incomplete(dirfd(d), de->d_name, newname, sizeof(newname));
		if (r == -EEXIST) {
			/* every name taken: the core stays as it is, and the caller says so */
			if (!err)
				err = r;
			continue;
		}
		if (r < 0)
			return r;
		log_debug("marked %s/%s incomplete as %s", dir, de->d_name, newname);
		r = move_sidecar(dirfd(d), de->d_name, newname);
		if (r < 0)
			log_debug("%s/%s.json left as it was (its core is now %s): %s", dir, de->d_name, newname,
				  strerror(-r));
		count++;
	}
	return count == 0 && err < 0 ? err : count;
}
