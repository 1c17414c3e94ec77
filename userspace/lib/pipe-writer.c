// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredam-pipe's writer: the core from the kernel's pipe to a file, with a
 * bounded write-behind window, holes for zero pages, optional zstd.
 *
 * Why the window: a writer throttled by io.max but free to dirty the page
 * cache stalls every fdatasync() on the filesystem behind it (the journal
 * waits for data that io.max releases slowly). So writeback of each full
 * window is started at once (SYNC_FILE_RANGE_WRITE, which does not block
 * on the device) and the window before it is waited for and dropped from
 * the cache: at most about two windows are dirty or in flight.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/statvfs.h>
#include <zstd.h>

#include "elfcore.h"
#include "pipe-writer.h"
#include "macro.h"
#include "fileio.h"

#define PAGE 4096
#define CHUNK (256 * 1024)

struct wb {
	int fd;
	uint64_t window;
	uint64_t off;		/* file offset of the next byte */
	uint64_t cur;		/* start of the window being filled */
	uint64_t prev, prev_len;	/* the window under writeback */
	bool have_prev;
};

static int wb_flush_window(struct wb *w, bool final)
{
	uint64_t len = w->off - w->cur;

	if (w->window == 0 || len == 0 || (!final && len < w->window))
		return 0;
	if (sync_file_range(w->fd, (off64_t)w->cur, (off64_t)len, SYNC_FILE_RANGE_WRITE) < 0)
		return -errno;
	if (w->have_prev) {
		if (sync_file_range(w->fd, (off64_t)w->prev, (off64_t)w->prev_len,
				    SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER) < 0)
			return -errno;
		posix_fadvise(w->fd, (off_t)w->prev, (off_t)w->prev_len, POSIX_FADV_DONTNEED);
	}
	w->prev = w->cur;
	w->prev_len = len;
	w->have_prev = true;
	w->cur = w->off;
	return 0;
}

static int wb_pwrite(struct wb *w, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		ssize_t n = pwrite(w->fd, p, len, (off_t)w->off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		w->off += (uint64_t)n;
	}
	return wb_flush_window(w, false);
}

static bool page_zero(const unsigned char *p, size_t len)
{
	static const unsigned char zero[PAGE];

	return len == PAGE && memcmp(p, zero, PAGE) == 0;
}

/* Write @len bytes at the current offset, leaving whole zero pages as holes. */
static int wb_write_sparse(struct wb *w, const unsigned char *p, size_t len)
{
	while (len > 0) {
		size_t run = 0;
		int r;

		/* only page-aligned whole pages become holes */
		if (w->off % PAGE == 0 && len >= PAGE && page_zero(p, PAGE)) {
			while (run + PAGE <= len && page_zero(p + run, PAGE))
				run += PAGE;
			w->off += run;
			p += run;
			len -= run;
			r = wb_flush_window(w, false);
			if (r < 0)
				return r;
			continue;
		}
		/* data up to the next zero page */
		run = MIN(len, (size_t)(PAGE - w->off % PAGE));
		while (run < len && !(len - run >= PAGE && page_zero(p + run, PAGE)))
			run += MIN((size_t)PAGE, len - run);
		r = wb_pwrite(w, p, run);
		if (r < 0)
			return r;
		p += run;
		len -= run;
	}
	return 0;
}

static int wb_finish(struct wb *w, uint64_t size)
{
	int r;

	if (ftruncate(w->fd, (off_t)size) < 0)	/* trailing holes */
		return -errno;
	r = wb_flush_window(w, true);
	if (r < 0)
		return r;
	if (fdatasync(w->fd) < 0)
		return -errno;
	posix_fadvise(w->fd, 0, 0, POSIX_FADV_DONTNEED);
	return 0;
}

/* Keep the start of the input at o->head while the ELF headers there are not whole. */
static void keep_head(const struct coredam_pipe_copy_opts *o, const unsigned char *p, size_t len,
		      struct coredam_pipe_copy_result *res)
{
	while (o->head && len > 0) {
		size_t want = MIN(coredam_elf_head_want(o->head, res->head_len), o->head_size);
		size_t n = MIN(len, want - MIN(want, res->head_len));

		if (n == 0)
			return;
		memcpy((unsigned char *)o->head + res->head_len, p, n);
		res->head_len += n;
		p += n;
		len -= n;
	}
}

/* The zstd compressor of a copy: a context and its output buffer. */
struct zout {
	ZSTD_CCtx *z;
	unsigned char *buf;
	size_t size;
};

static void zout_free(struct zout *zo)
{
	ZSTD_freeCCtx(zo->z);
	free(zo->buf);
}

static int zout_init(struct zout *zo, int level)
{
	zo->z = ZSTD_createCCtx();
	zo->size = ZSTD_CStreamOutSize();
	zo->buf = malloc(zo->size);
	if (!zo->z || !zo->buf)
		return -ENOMEM;
	if (ZSTD_isError(ZSTD_CCtx_setParameter(zo->z, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(zo->z, ZSTD_c_checksumFlag, 1)))
		return -EINVAL;
	return 0;
}

/* Compress @len bytes into @w; ZSTD_e_end also ends the frame. */
static int zout_write(struct zout *zo, struct wb *w, const void *data, size_t len, ZSTD_EndDirective mode)
{
	ZSTD_inBuffer in = { data, len, 0 };
	size_t left;
	int r;

	do {
		ZSTD_outBuffer out = { zo->buf, zo->size, 0 };

		left = ZSTD_compressStream2(zo->z, &out, &in, mode);
		if (ZSTD_isError(left))
			return -EIO;
		r = wb_pwrite(w, zo->buf, out.pos);
		if (r < 0)
			return r;
	} while (mode == ZSTD_e_end ? left > 0 : in.pos < in.size);
	return 0;
}

/*
 * Is the destination below the free-space floor? Checked before every
 * COREDAM_PIPE_SPACE_EVERY bytes of input (*@next: the input offset of the
 * next check). 1 below, 0 not (or not yet checked again), -errno.
 */
static int below_floor(const struct coredam_pipe_copy_opts *o, uint64_t in_bytes, uint64_t *next)
{
	struct statvfs st;

	if (!o->space_floor || in_bytes < *next)
		return 0;
	if (fstatvfs(o->space_fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.f_bavail * st.f_frsize < o->space_floor)
		return 1;
	*next = in_bytes + COREDAM_PIPE_SPACE_EVERY;
	return 0;
}

/*
 * At the copy's size limit: is there more input? Then the core is cut
 * (truncated); a deadline that passes while asking cuts it too.
 */
static int more_past_limit(int infd, const struct coredam_pipe_copy_opts *o, struct coredam_pipe_copy_result *res)
{
	unsigned char extra;
	ssize_t n;

	n = read_full_until(infd, &extra, 1, o->deadline_usec, &res->timed_out);
	if (n < 0)
		return (int)n;
	res->truncated = n > 0 || res->timed_out;
	return 0;
}

int coredam_pipe_spool(int infd, size_t max, uint64_t deadline_usec, struct coredam_spool *ret)
{
	*ret = (struct coredam_spool){ 0 };
	if (max == 0)
		return 0;
	/* address space only: a page exists once read() fills it */
	ret->buf = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (ret->buf == MAP_FAILED) {
		ret->buf = NULL;
		return -errno;
	}
	ret->size = max;
	while (ret->len < max && !ret->timed_out) {
		ssize_t n = read_full_until(infd, (unsigned char *)ret->buf + ret->len,
					    MIN((size_t)CHUNK, max - ret->len), deadline_usec, &ret->timed_out);

		if (n < 0)
			break;
		if (n == 0) {
			ret->ended = !ret->timed_out;
			break;
		}
		ret->len += (size_t)n;
	}
	return 0;
}

void coredam_spool_free(struct coredam_spool *s)
{
	if (s->buf)
		munmap(s->buf, s->size);
	*s = (struct coredam_spool){ 0 };
}

int coredam_pipe_copy(int infd, int outfd, const struct coredam_pipe_copy_opts *o,
		      struct coredam_pipe_copy_result *ret)
{
	_cleanup_free_ unsigned char *buf = NULL;
	_cleanup_(zout_free) struct zout zo = { 0 };
	struct coredam_pipe_copy_result res = { 0 };
	struct wb w = { .fd = outfd, .window = o->window };
	uint64_t space_check = 0;	/* input offset of the next free-space check */
	bool z = o->compress_level > 0;
	int r = 0;

	buf = malloc(CHUNK);
	if (!buf)
		return -ENOMEM;
	if (z) {
		r = zout_init(&zo, o->compress_level);
		if (r < 0)
			return r;
	}
	for (;;) {
		/*
		 * The prefix first, then reads, in pieces that end on CHUNK
		 * boundaries of the input (holes stay whole), with the
		 * free-space floor checked between them: a spooled core of
		 * hundreds of MB is written as if it were read now.
		 */
		size_t want = (size_t)MIN((uint64_t)(CHUNK - res.in_bytes % CHUNK), o->limit - res.in_bytes);
		const unsigned char *src = buf;
		ssize_t n;

		if (res.truncated)
			break;

		if (want == 0) {
			/* more read ahead than the limit lets through: cut there, like more input past it */
			if (res.in_bytes < o->prefix_len) {
				res.truncated = true;
				break;
			}
			r = more_past_limit(infd, o, &res);
			if (r < 0)
				return r;
			break;
		}
		if (res.timed_out) {
			res.truncated = true;
			break;
		}
		r = below_floor(o, res.in_bytes, &space_check);
		if (r < 0)
			return r;
		if (r > 0) {
			res.no_space = res.truncated = true;
			break;
		}
		if (res.in_bytes < o->prefix_len) {
			n = (ssize_t)MIN((uint64_t)want, o->prefix_len - res.in_bytes);
			src = (const unsigned char *)o->prefix + res.in_bytes;
		} else {
			n = read_full_until(infd, buf, want, o->deadline_usec, &res.timed_out);
		}
		if (n < 0)
			return (int)n;
		if (n == 0) {
			res.truncated = res.timed_out;
			break;
		}
		keep_head(o, src, (size_t)n, &res);
		res.in_bytes += (uint64_t)n;
		r = z ? zout_write(&zo, &w, src, (size_t)n, ZSTD_e_continue) : wb_write_sparse(&w, src, (size_t)n);
		if (r < 0)
			return r;
	}
	if (z) {
		r = zout_write(&zo, &w, buf, 0, ZSTD_e_end);
		if (r < 0)
			return r;
	}
	res.out_bytes = z ? w.off : res.in_bytes;
	r = wb_finish(&w, res.out_bytes);
	if (r < 0)
		return r;
	*ret = res;
	return 0;
}

/*
 * Decompress the zstd stream on @infd: to @outfd if it is >= 0, the first
 * @head_size bytes into @head. -EBADMSG for a stream that is not zstd or
 * ends inside a frame.
 */
static int zstd_stream(int infd, int outfd, void *head, size_t head_size, size_t *ret_head_len,
		       uint64_t *ret_bytes)
{
	_cleanup_free_ unsigned char *ibuf = NULL, *obuf = NULL;
	size_t isize = ZSTD_DStreamInSize(), osize = ZSTD_DStreamOutSize(), last = 0, kept = 0;
	ZSTD_DCtx *z = ZSTD_createDCtx();
	uint64_t total = 0;
	bool any = false;
	int r = 0;

	ibuf = malloc(isize);
	obuf = malloc(osize);
	if (!z || !ibuf || !obuf) {
		r = -ENOMEM;
		goto out_free_z;
	}
	for (;;) {
		ssize_t n = read_full(infd, ibuf, isize);
		ZSTD_inBuffer in;

		if (n < 0) {
			r = (int)n;
			goto out_free_z;
		}
		if (n == 0)
			break;
		any = true;
		in = (ZSTD_inBuffer){ ibuf, (size_t)n, 0 };
		while (in.pos < in.size) {
			ZSTD_outBuffer out = { obuf, osize, 0 };

			last = ZSTD_decompressStream(z, &out, &in);
			if (ZSTD_isError(last)) {
				r = -EBADMSG;
				goto out_free_z;
			}
			if (outfd >= 0) {
				r = write_all(outfd, obuf, out.pos);
				if (r < 0)
					goto out_free_z;
			}
			if (kept < head_size) {
				size_t c = MIN(head_size - kept, out.pos);

				memcpy((unsigned char *)head + kept, obuf, c);
				kept += c;
			}
			total += out.pos;
		}
	}
	/* a frame cut short leaves the decoder wanting more */
	if (!any || last != 0) {
		r = -EBADMSG;
		goto out_free_z;
	}
	*ret_bytes = total;
	if (ret_head_len)
		*ret_head_len = kept;

out_free_z:
	ZSTD_freeDCtx(z);
	return r;
}

int coredam_pipe_decompress(int infd, int outfd, uint64_t *ret_bytes)
{
	return zstd_stream(infd, outfd, NULL, 0, NULL, ret_bytes);
}

int coredam_zstd_scan(int fd, void *head, size_t head_size, size_t *ret_head_len, uint64_t *ret_bytes)
{
	return zstd_stream(fd, -1, head, head_size, ret_head_len, ret_bytes);
}

int coredam_pipe_read_head(int infd, void *buf, size_t size, uint64_t deadline_usec, size_t *ret_len)
{
	bool timed_out = false;
	size_t len = 0;

	for (;;) {
		size_t want = MIN(coredam_elf_head_want(buf, len), size);
		ssize_t n;

		if (want <= len)
			break;
		n = read_full_until(infd, (unsigned char *)buf + len, want - len, deadline_usec, &timed_out);
		if (n < 0)
			return (int)n;
		len += (size_t)n;
		if (n == 0 || timed_out || len < want)
			break;
	}
	*ret_len = len;
	return 0;
}
