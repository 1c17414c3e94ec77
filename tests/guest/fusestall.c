// SPDX-License-Identifier: GPL-2.0
/*
 * fusestall: a FUSE file system whose writes stall, for tests that need a
 * core dump that never finishes on its own (the slot lease,
 * kernel.core_slot_lease_ms).
 *
 *   fusestall [-b BYTES] [-r READYFILE] MOUNTPOINT
 *
 * Mounts itself on MOUNTPOINT and serves, single-threaded, until killed, a
 * flat root directory (mode 01777) of regular files kept in memory. A file
 * is owned by the uid and gid that created it, as the core dump code
 * checks. A WRITE that ends within the first BYTES bytes of its file
 * (default 0) is answered; any other WRITE is read and never answered, and
 * logged on stderr, so its writer waits in the kernel for good while every
 * other request is still served: the mount can be listed, and the file
 * stat'ed and read (unlinking or truncating it waits for the write: the
 * writer holds its inode lock). A file never holds more than BYTES bytes,
 * so its data is kept. With -r, READYFILE is created once the kernel's
 * INIT has been answered, that is once the mount serves requests.
 *
 * The wait is killable: a signal makes the kernel send an INTERRUPT for
 * the write, which fusestall answers by failing that write with EINTR.
 * Without that answer FUSE would wait for the write in D state, which not
 * even SIGKILL ends. The cgroup freezer wakes a task as a signal does, so
 * freezing a stalled writer fails its write too.
 *
 * The raw /dev/fuse protocol (<linux/fuse.h>), without libfuse: the test
 * guest is a static busybox initramfs.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fuse.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_NODES	1024	/* files, linked or still looked up */
#define MAX_STALLED	1024	/* writes left unanswered */
#define MAX_WRITE	(128 * 1024)
#define BUF_SIZE	(MAX_WRITE + 4096)
/*
 * A stalled writer holds its file's inode lock. So that others can still
 * read the file: no flush on close (it takes that lock; every write is
 * answered or stalled before it returns, there is nothing to flush), and
 * no dropping of the page cache on open (it waits for pages being written;
 * the data changes only through this mount, so the cache stays right).
 */
#define OPEN_FLAGS	(FOPEN_KEEP_CACHE | FOPEN_NOFLUSH)

struct node {
	uint64_t nodeid;	/* 0: free slot */
	uint64_t nlookup;	/* the kernel's references, dropped by FORGET */
	char name[NAME_MAX + 1];	/* "" once unlinked */
	uint32_t mode, uid, gid;
	uint64_t size;
	unsigned char *data;	/* size bytes, never more than the limit */
	time_t mtime;
};

static struct node root = { .nodeid = FUSE_ROOT_ID, .mode = S_IFDIR | 01777 };
static struct node nodes[MAX_NODES];
static uint64_t next_nodeid = FUSE_ROOT_ID + 1;
static uint64_t stalled[MAX_STALLED];	/* unique ids of unanswered writes */
static uint64_t limit;			/* -b */
static int fuse_fd;

static int reply(uint64_t unique, int error, const void *arg, size_t len)
{
	struct fuse_out_header out = {
		.len = (uint32_t)(sizeof(out) + len), .error = error, .unique = unique,
	};
	struct iovec iov[2] = { { &out, sizeof(out) }, { (void *)arg, len } };

	/* ENOENT: the request was interrupted meanwhile; nobody waits for it */
	if (writev(fuse_fd, iov, len ? 2 : 1) < 0 && errno != ENOENT) {
		perror("fusestall: reply");
		return -errno;
	}
	return 0;
}

static int reply_err(uint64_t unique, int error)
{
	return reply(unique, -error, NULL, 0);
}

static struct node *node_get(uint64_t nodeid)
{
	if (nodeid == FUSE_ROOT_ID)
		return &root;
	for (int i = 0; i < MAX_NODES; i++)
		if (nodes[i].nodeid == nodeid)
			return &nodes[i];
	return NULL;
}

static struct node *node_find(const char *name)
{
	for (int i = 0; i < MAX_NODES; i++)
		if (nodes[i].nodeid && !strcmp(nodes[i].name, name))
			return &nodes[i];
	return NULL;
}

/* an unlinked node goes once the kernel forgets it */
static void node_put(struct node *n, uint64_t nlookup)
{
	n->nlookup = nlookup < n->nlookup ? n->nlookup - nlookup : 0;
	if (n != &root && !n->nlookup && !n->name[0]) {
		free(n->data);
		memset(n, 0, sizeof(*n));
	}
}

static void fill_attr(const struct node *n, struct fuse_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->ino = n->nodeid;
	a->size = n->size;
	a->blocks = (n->size + 511) / 512;
	a->atime = a->mtime = a->ctime = (uint64_t)n->mtime;
	a->mode = n->mode;
	a->nlink = S_ISDIR(n->mode) ? 2 : n->name[0] ? 1 : 0;
	a->uid = n->uid;
	a->gid = n->gid;
	a->blksize = 4096;
}

/* attributes and names are never cached: the next stat asks again */
static int reply_entry(uint64_t unique, struct node *n, const struct fuse_open_out *open)
{
	struct {
		struct fuse_entry_out e;
		struct fuse_open_out o;
	} out;

	memset(&out, 0, sizeof(out));
	out.e.nodeid = n->nodeid;
	fill_attr(n, &out.e.attr);
	if (open)
		out.o = *open;
	n->nlookup++;
	return reply(unique, 0, &out, open ? sizeof(out) : sizeof(out.e));
}

static int reply_attr(uint64_t unique, const struct node *n)
{
	struct fuse_attr_out out;

	memset(&out, 0, sizeof(out));
	fill_attr(n, &out.attr);
	return reply(unique, 0, &out, sizeof(out));
}

static int set_size(struct node *n, uint64_t size)
{
	unsigned char *data;

	if (size > limit)
		return -EFBIG;
	data = realloc(n->data, size ? size : 1);
	if (!data)
		return -ENOMEM;
	if (size > n->size)
		memset(data + n->size, 0, size - n->size);
	n->data = data;
	n->size = size;
	n->mtime = time(NULL);
	return 0;
}

static int do_create(const struct fuse_in_header *in, const struct fuse_create_in *arg,
		     const char *name)
{
	struct fuse_open_out open = { .open_flags = OPEN_FLAGS };
	struct node *n = NULL;

	if (in->nodeid != FUSE_ROOT_ID)
		return reply_err(in->unique, ENOTDIR);
	if (strlen(name) > NAME_MAX)
		return reply_err(in->unique, ENAMETOOLONG);
	if (node_find(name))
		return reply_err(in->unique, EEXIST);
	for (int i = 0; i < MAX_NODES && !n; i++)
		if (!nodes[i].nodeid)
			n = &nodes[i];
	if (!n)
		return reply_err(in->unique, ENOSPC);
	n->nodeid = next_nodeid++;
	strcpy(n->name, name);
	n->mode = S_IFREG | (arg->mode & 07777);
	n->uid = in->uid;
	n->gid = in->gid;
	n->mtime = time(NULL);
	open.fh = n->nodeid;
	return reply_entry(in->unique, n, &open);
}

static int do_setattr(const struct fuse_in_header *in, struct node *n,
		      const struct fuse_setattr_in *arg)
{
	if (arg->valid & FATTR_SIZE) {
		int r = set_size(n, arg->size);

		if (r < 0)
			return reply_err(in->unique, -r);
	}
	if (arg->valid & FATTR_MODE)
		n->mode = (n->mode & S_IFMT) | (arg->mode & 07777);
	if (arg->valid & FATTR_UID)
		n->uid = arg->uid;
	if (arg->valid & FATTR_GID)
		n->gid = arg->gid;
	return reply_attr(in->unique, n);
}

/* answered within the limit; otherwise left waiting, remembered for INTERRUPT */
static int do_write(const struct fuse_in_header *in, struct node *n,
		    const struct fuse_write_in *arg, const void *data)
{
	struct fuse_write_out out = { .size = arg->size };
	uint64_t end = arg->offset + arg->size;

	if (arg->offset <= limit && arg->size <= limit - arg->offset) {
		if (end > n->size && set_size(n, end) < 0)
			return reply_err(in->unique, ENOMEM);
		memcpy(n->data + arg->offset, data, arg->size);
		n->mtime = time(NULL);
		return reply(in->unique, 0, &out, sizeof(out));
	}
	for (int i = 0; i < MAX_STALLED; i++)
		if (!stalled[i]) {
			stalled[i] = in->unique;
			fprintf(stderr, "fusestall: stalling a write of %u bytes at %llu to %s\n",
				arg->size, (unsigned long long)arg->offset,
				n->name[0] ? n->name : "an unlinked file");
			return 0;
		}
	fprintf(stderr, "fusestall: %d writes stalled already, failing one\n", MAX_STALLED);
	return reply_err(in->unique, EIO);
}

static int do_read(const struct fuse_in_header *in, const struct node *n,
		   const struct fuse_read_in *arg)
{
	uint64_t len = 0;

	if (arg->offset < n->size)
		len = n->size - arg->offset < arg->size ? n->size - arg->offset : arg->size;
	return reply(in->unique, 0, len ? n->data + arg->offset : NULL, len);
}

/* ".", "..", then the linked files; an entry's offset is its position + 1 */
static int do_readdir(const struct fuse_in_header *in, const struct fuse_read_in *arg)
{
	static char buf[BUF_SIZE];
	size_t used = 0, max = arg->size < sizeof(buf) ? arg->size : sizeof(buf);

	for (uint64_t pos = arg->offset; pos < MAX_NODES + 2; pos++) {
		const struct node *n = pos < 2 ? &root : &nodes[pos - 2];
		const char *name = pos == 0 ? "." : pos == 1 ? ".." : n->name;
		struct fuse_dirent *d = (struct fuse_dirent *)(buf + used);
		size_t len = FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + strlen(name));

		if (!n->nodeid || !name[0])
			continue;
		if (used + len > max)
			break;
		memset(d, 0, len);
		d->ino = n->nodeid;
		d->off = pos + 1;
		d->namelen = (uint32_t)strlen(name);
		d->type = S_ISDIR(n->mode) ? DT_DIR : DT_REG;
		memcpy(d->name, name, d->namelen);
		used += len;
	}
	return reply(in->unique, 0, used ? buf : NULL, used);
}

static int do_statfs(const struct fuse_in_header *in)
{
	struct fuse_statfs_out out;

	memset(&out, 0, sizeof(out));
	out.st.blocks = out.st.bfree = out.st.bavail = 1 << 20;
	out.st.files = MAX_NODES;
	out.st.ffree = MAX_NODES;
	out.st.bsize = out.st.frsize = 4096;
	out.st.namelen = NAME_MAX;
	return reply(in->unique, 0, &out, sizeof(out));
}

/*
 * An interrupt is answered through the request it names: a stalled write
 * fails; one answered already needs nothing.
 */
static int do_interrupt(const struct fuse_interrupt_in *arg)
{
	for (int i = 0; i < MAX_STALLED; i++)
		if (stalled[i] == arg->unique) {
			stalled[i] = 0;
			return reply_err(arg->unique, EINTR);
		}
	return 0;	/* answered already */
}

static int do_init(const struct fuse_in_header *in, const struct fuse_init_in *arg,
		   const char *ready_file)
{
	struct fuse_init_out out;
	int fd;

	if (arg->major != FUSE_KERNEL_VERSION) {
		fprintf(stderr, "fusestall: kernel speaks FUSE %u, not %u\n", arg->major,
			FUSE_KERNEL_VERSION);
		(void)reply_err(in->unique, EPROTO);
		return -EPROTO;
	}
	memset(&out, 0, sizeof(out));
	out.major = FUSE_KERNEL_VERSION;
	out.minor = arg->minor < FUSE_KERNEL_MINOR_VERSION ? arg->minor : FUSE_KERNEL_MINOR_VERSION;
	out.max_readahead = arg->max_readahead;
	out.max_background = 16;
	out.congestion_threshold = 12;
	out.max_write = MAX_WRITE;
	out.time_gran = 1000000000;
	if (reply(in->unique, 0, &out, sizeof(out)) < 0)
		return -EIO;
	if (!ready_file)
		return 0;
	fd = open(ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || close(fd) < 0) {
		fprintf(stderr, "fusestall: cannot create %s: %m\n", ready_file);
		return -EIO;
	}
	return 0;
}

/* one request: 0 served (answered, or left waiting on purpose), < 0 fatal */
static int serve(const char *req, const char *ready_file)
{
	const struct fuse_in_header *in = (const void *)req;
	const void *arg = req + sizeof(*in);
	struct node *n = node_get(in->nodeid);

	switch (in->opcode) {
	case FUSE_INIT:
		return do_init(in, arg, ready_file);
	case FUSE_FORGET:
		if (n)
			node_put(n, ((const struct fuse_forget_in *)arg)->nlookup);
		return 0;
	case FUSE_BATCH_FORGET: {
		const struct fuse_batch_forget_in *b = arg;
		const struct fuse_forget_one *f = (const void *)(b + 1);

		for (uint32_t i = 0; i < b->count; i++)
			if ((n = node_get(f[i].nodeid)))
				node_put(n, f[i].nlookup);
		return 0;
	}
	case FUSE_INTERRUPT:
		return do_interrupt(arg);
	case FUSE_STATFS:
		return do_statfs(in);
	}
	if (!n)
		return reply_err(in->unique, ENOENT);
	switch (in->opcode) {
	case FUSE_LOOKUP:
		if (n != &root || !(n = node_find(arg)))
			return reply_err(in->unique, ENOENT);
		return reply_entry(in->unique, n, NULL);
	case FUSE_CREATE:
		return do_create(in, arg, (const char *)arg + sizeof(struct fuse_create_in));
	case FUSE_UNLINK:
		if (n != &root || !(n = node_find(arg)))
			return reply_err(in->unique, ENOENT);
		n->name[0] = '\0';
		node_put(n, 0);
		return reply_err(in->unique, 0);
	case FUSE_GETATTR:
		return reply_attr(in->unique, n);
	case FUSE_SETATTR:
		return do_setattr(in, n, arg);
	case FUSE_OPEN:
	case FUSE_OPENDIR: {
		struct fuse_open_out open = { .fh = n->nodeid, .open_flags = OPEN_FLAGS };

		return reply(in->unique, 0, &open, sizeof(open));
	}
	case FUSE_READ:
		return do_read(in, n, arg);
	case FUSE_WRITE:
		return do_write(in, n, arg, (const char *)arg + sizeof(struct fuse_write_in));
	case FUSE_READDIR:
		return do_readdir(in, arg);
	case FUSE_ACCESS:
	case FUSE_FLUSH:
	case FUSE_FSYNC:
	case FUSE_RELEASE:
	case FUSE_RELEASEDIR:
		return reply_err(in->unique, 0);
	default:	/* GETXATTR, LISTXATTR, MKDIR, ...: not here */
		return reply_err(in->unique, ENOSYS);
	}
}

static int mount_fuse(const char *mountpoint)
{
	char opts[128];

	fuse_fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fuse_fd < 0) {
		fprintf(stderr, "fusestall: cannot open /dev/fuse: %m\n");
		return -1;
	}
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other,default_permissions",
		 fuse_fd);
	if (mount("fusestall", mountpoint, "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
		fprintf(stderr, "fusestall: cannot mount on %s: %m\n", mountpoint);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char req[BUF_SIZE];
	const char *ready_file = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "b:r:")) != -1) {
		switch (opt) {
		case 'b': limit = strtoull(optarg, NULL, 0); break;
		case 'r': ready_file = optarg; break;
		default:
			fprintf(stderr, "usage: fusestall [-b BYTES] [-r READYFILE] MOUNTPOINT\n");
			return 2;
		}
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: fusestall [-b BYTES] [-r READYFILE] MOUNTPOINT\n");
		return 2;
	}
	root.mtime = time(NULL);
	if (mount_fuse(argv[optind]) < 0)
		return 1;
	for (;;) {
		ssize_t len = read(fuse_fd, req, sizeof(req));

		/* ENOENT: a request interrupted before it was read */
		if (len < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (len < 0 && errno == ENODEV)
			return 0;	/* unmounted */
		if (len < 0) {
			perror("fusestall: read /dev/fuse");
			return 1;
		}
		if ((size_t)len < sizeof(struct fuse_in_header)) {
			fprintf(stderr, "fusestall: short request (%zd bytes)\n", len);
			return 1;
		}
		if (serve(req, ready_file) < 0)
			return 1;
	}
}
