// SPDX-License-Identifier: GPL-2.0
/*
 * pipewriter: a minimal core_pattern pipe helper for the tests.
 *
 *   core_pattern = |/bin/pipewriter [-W KIB] [-c CGROUP_PROCS] OUT
 *
 * Reads the core from stdin and writes it to OUT.part, keeping at most a
 * window of KIB (default 2048, 0 = no window) dirty or under writeback
 * with sync_file_range(), then renames OUT.part to OUT, so a core that is
 * there is complete. With -c it first writes its pid into the given
 * cgroup.procs file (what an administrator can do on a stock kernel).
 * A line "OUT BYTES" is appended to OUT's directory's pipewriter.log.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static char buf[1 << 16];
	long window = 2048L * 1024;
	const char *procs = NULL;
	char part[4096], logp[4096], dir[4096];
	long long total = 0, synced = 0;
	int opt, fd;

	while ((opt = getopt(argc, argv, "W:c:")) != -1) {
		switch (opt) {
		case 'W': window = strtol(optarg, NULL, 0) * 1024; break;
		case 'c': procs = optarg; break;
		default: return 2;
		}
	}
	if (optind != argc - 1)
		return 2;
	if (procs) {
		int cfd = open(procs, O_WRONLY);

		if (cfd < 0 || dprintf(cfd, "%d\n", getpid()) < 0)
			return 3;
		close(cfd);
	}
	snprintf(part, sizeof(part), "%s.part", argv[optind]);
	fd = open(part, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0600);
	if (fd < 0)
		return 4;
	for (;;) {
		ssize_t n = read(0, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return 5;
		if (n == 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(fd, buf + off, (size_t)(n - off));

			if (w < 0)
				return 6;
			off += w;
		}
		total += n;
		if (window && total - synced >= window) {
			/* wait for the previous window, start the current one */
			if (synced >= window)
				sync_file_range(fd, synced - window, window,
						SYNC_FILE_RANGE_WAIT_BEFORE |
						SYNC_FILE_RANGE_WRITE |
						SYNC_FILE_RANGE_WAIT_AFTER);
			sync_file_range(fd, synced, total - synced, SYNC_FILE_RANGE_WRITE);
			synced = total;
		}
	}
	if (fsync(fd) < 0 || close(fd) < 0)
		return 7;
	if (rename(part, argv[optind]) < 0)
		return 8;
	snprintf(dir, sizeof(dir), "%s", argv[optind]);
	snprintf(logp, sizeof(logp), "%s/pipewriter.log", dirname(dir));
	fd = open(logp, O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (fd >= 0) {
		dprintf(fd, "%s %lld\n", argv[optind], total);
		close(fd);
	}
	return 0;
}
