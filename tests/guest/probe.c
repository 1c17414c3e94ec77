// SPDX-License-Identifier: GPL-2.0
/*
 * probe: measure what a foreground user of the disk feels.
 *
 *   probe -d DIR -o OUT [-i MS] [-m write|read|stream] [-s STOPFILE] [-t SECONDS]
 *
 * write:  every MS milliseconds write 4 KiB to DIR/probe.dat and fdatasync it.
 * read:   every MS milliseconds read 4 KiB at a random offset of a 64 MiB
 *         file DIR/probe-read.dat with O_DIRECT (created first if missing).
 * stream: a foreground writer: without pause, write the next 4 MiB of
 *         DIR/probe-stream.dat (a 256 MiB ring) and fdatasync it; the
 *         latency is the fdatasync's, the throughput 4 MiB per sample.
 * Each sample is a line "START_MS LATENCY_US" in OUT, START_MS on
 * CLOCK_MONOTONIC. The probe stops when STOPFILE exists or after SECONDS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define READ_FILE_MB 64
#define STREAM_CHUNK (4 << 20)
#define STREAM_RING (256 << 20)

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* the file to read, unless it is already there (made before the probes start) */
static int make_read_file(const char *path)
{
	static char block[1 << 20];
	struct stat st;
	int fd;

	if (stat(path, &st) == 0 && st.st_size >= (off_t)READ_FILE_MB << 20)
		return 0;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0)
		return -1;
	memset(block, 0xa5, sizeof(block));
	for (int i = 0; i < READ_FILE_MB; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			return -1;
	fsync(fd);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	const char *dir = NULL, *out = NULL, *stop = NULL, *mode = "write";
	long interval_ms = 50, seconds = 0;
	char path[4096];
	void *buf;
	int opt, fd;

	while ((opt = getopt(argc, argv, "d:o:i:m:s:t:")) != -1) {
		switch (opt) {
		case 'd': dir = optarg; break;
		case 'o': out = optarg; break;
		case 'i': interval_ms = strtol(optarg, NULL, 0); break;
		case 'm': mode = optarg; break;
		case 's': stop = optarg; break;
		case 't': seconds = strtol(optarg, NULL, 0); break;
		default: goto usage;
		}
	}
	if (!dir || !out || interval_ms <= 0 ||
	    (strcmp(mode, "write") && strcmp(mode, "read") && strcmp(mode, "stream")))
		goto usage;

	FILE *f = fopen(out, "w");

	if (!f) {
		fprintf(stderr, "probe: %s: %s\n", out, strerror(errno));
		return 1;
	}
	setvbuf(f, NULL, _IOLBF, 0);
	if (posix_memalign(&buf, 4096, STREAM_CHUNK))
		return 1;
	memset(buf, 0x5a, STREAM_CHUNK);

	int rd = !strcmp(mode, "read"), stream = !strcmp(mode, "stream");

	snprintf(path, sizeof(path), "%s/probe%s.dat", dir,
		 rd ? "-read" : stream ? "-stream" : "");
	if (rd && make_read_file(path) < 0) {
		fprintf(stderr, "probe: %s: %s\n", path, strerror(errno));
		return 1;
	}
	fd = open(path, rd ? O_RDONLY | O_DIRECT : O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		fprintf(stderr, "probe: %s: %s\n", path, strerror(errno));
		return 1;
	}
	srand((unsigned int)getpid());

	int64_t t0 = now_us(), next = t0;
	long n = 0;

	for (;;) {
		struct stat st;
		int64_t start = now_us(), lat;

		if (seconds && start - t0 >= seconds * 1000000LL)
			break;
		if (stop && stat(stop, &st) == 0)
			break;
		if (rd) {
			off_t off = (off_t)(rand() % (READ_FILE_MB * 256)) * 4096;

			if (pread(fd, buf, 4096, off) != 4096) {
				fprintf(stderr, "probe: read: %s\n", strerror(errno));
				return 1;
			}
		} else if (stream) {
			off_t off = (off_t)(n % (STREAM_RING / STREAM_CHUNK)) * STREAM_CHUNK;

			if (pwrite(fd, buf, STREAM_CHUNK, off) != STREAM_CHUNK) {
				fprintf(stderr, "probe: write: %s\n", strerror(errno));
				return 1;
			}
			start = now_us();
			if (fdatasync(fd) != 0) {
				fprintf(stderr, "probe: fdatasync: %s\n", strerror(errno));
				return 1;
			}
		} else {
			off_t off = (off_t)(n % 256) * 4096;

			if (pwrite(fd, buf, 4096, off) != 4096 || fdatasync(fd) != 0) {
				fprintf(stderr, "probe: write: %s\n", strerror(errno));
				return 1;
			}
		}
		lat = now_us() - start;
		fprintf(f, "%lld %lld\n", (long long)(start / 1000), (long long)lat);
		n++;
		if (stream)
			continue;
		next += interval_ms * 1000;
		int64_t now = now_us();

		if (next > now) {
			struct timespec ts = { (next - now) / 1000000, ((next - now) % 1000000) * 1000 };

			nanosleep(&ts, NULL);
		} else {
			next = now;	/* a late sample does not cause a burst of catch-up samples */
		}
	}
	fclose(f);
	return 0;
usage:
	fprintf(stderr, "usage: probe -d DIR -o OUT [-i MS] [-m write|read|stream] [-s STOPFILE] [-t SECONDS]\n");
	return 2;
}
