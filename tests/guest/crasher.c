// SPDX-License-Identifier: GPL-2.0
/*
 * crasher: allocate N MiB, fill every page with a pattern corecheck can
 * recognise in the core, optionally wait for a start file, then die by a
 * given signal.
 *
 *   crasher -m MB [-s SIG] [-w FILE] [-r FILE] [-t THREADS]
 *
 * -w FILE: wait until FILE exists before crashing (to start a storm at once)
 * -r FILE: create FILE once the memory is filled (the process is "ready")
 * -t N: start N-1 extra threads that spin, so the dump has to zap them
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pattern.h"

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long mb = 16, threads = 1;
	int sig = SIGSEGV, opt;
	const char *wait_file = NULL, *ready_file = NULL;
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	while ((opt = getopt(argc, argv, "m:s:w:r:t:")) != -1) {
		switch (opt) {
		case 'm': mb = strtol(optarg, NULL, 0); break;
		case 's': sig = (int)strtol(optarg, NULL, 0); break;
		case 'w': wait_file = optarg; break;
		case 'r': ready_file = optarg; break;
		case 't': threads = strtol(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: crasher -m MB [-s SIG] [-w FILE] [-r FILE] [-t N]\n");
			return 2;
		}
	}
	if (mb < 0 || threads < 1) {
		fprintf(stderr, "crasher: bad -m or -t\n");
		return 2;
	}
	setrlimit(RLIMIT_CORE, &rl);

	size_t npages = (size_t)mb * 1024 * 1024 / PATTERN_PAGE;
	unsigned char *buf = NULL;

	if (npages) {
		buf = mmap(NULL, npages * PATTERN_PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (buf == MAP_FAILED) {
			perror("crasher: mmap");
			return 1;
		}
		for (size_t i = 0; i < npages; i++)
			pattern_fill(buf + i * PATTERN_PAGE, (uint32_t)getpid(), (uint32_t)i,
				     (uint32_t)npages);
	}
	for (long t = 1; t < threads; t++) {
		pthread_t th;

		if (pthread_create(&th, NULL, spin, NULL) != 0) {
			fprintf(stderr, "crasher: pthread_create failed\n");
			return 1;
		}
	}
	if (ready_file) {
		int fd = open(ready_file, O_WRONLY | O_CREAT | O_TRUNC, 0644);

		if (fd >= 0)
			close(fd);
	}
	if (wait_file) {
		struct stat st;

		while (stat(wait_file, &st) != 0)
			sleep_ms(5);
	}
	signal(sig, SIG_DFL);
	if (sig == SIGSEGV)
		*(volatile int *)0 = 1;
	raise(sig);
	fprintf(stderr, "crasher: signal %d did not kill me\n", sig);
	return 1;
}
