// SPDX-License-Identifier: GPL-2.0
/*
 * crashtime: how long a crash takes from fork to reaping, core dump included.
 *
 *   crashtime -n N [-m MB] [-s SIG]
 *
 * Forks N children one after the other; each fills MB MiB (default 1) and
 * dies by SIG (default SIGSEGV) like crasher. Only the time from the signal
 * to the parent's waitpid() return is counted: the child reports through a
 * pipe the moment it is about to crash. Prints one line per crash with the
 * microseconds, then "median_us N".
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long n = 20, mb = 1;
	int sig = SIGSEGV, opt;
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	while ((opt = getopt(argc, argv, "n:m:s:")) != -1) {
		switch (opt) {
		case 'n': n = strtol(optarg, NULL, 0); break;
		case 'm': mb = strtol(optarg, NULL, 0); break;
		case 's': sig = (int)strtol(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: crashtime -n N [-m MB] [-s SIG]\n");
			return 2;
		}
	}
	if (n < 1 || mb < 0)
		return 2;
	setrlimit(RLIMIT_CORE, &rl);

	int64_t *t = calloc((size_t)n, sizeof(*t));

	if (!t)
		return 1;
	for (long i = 0; i < n; i++) {
		int p[2];
		int64_t sent;
		pid_t pid;

		if (pipe(p) < 0)
			return 1;
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			size_t len = (size_t)mb << 20;
			unsigned char *buf = len ? mmap(NULL, len, PROT_READ | PROT_WRITE,
							MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : NULL;

			if (len && buf == MAP_FAILED)
				_exit(1);
			if (len)
				memset(buf, 0x5a, len);
			close(p[0]);
			sent = now_ns();
			if (write(p[1], &sent, sizeof(sent)) != sizeof(sent))
				_exit(1);
			signal(sig, SIG_DFL);
			raise(sig);
			_exit(1);
		}
		close(p[1]);
		if (read(p[0], &sent, sizeof(sent)) != sizeof(sent))
			return 1;
		close(p[0]);

		int status;

		if (waitpid(pid, &status, 0) < 0)
			return 1;
		t[i] = (now_ns() - sent) / 1000;
		printf("%lld%s\n", (long long)t[i], WCOREDUMP(status) ? "" : " nocore");
	}
	qsort(t, (size_t)n, sizeof(*t), cmp);
	printf("median_us %lld\n", (long long)t[n / 2]);
	return 0;
}
