// SPDX-License-Identifier: GPL-2.0
/*
 * crasher: allocate N MiB, fill every page with a pattern corecheck can
 * recognise in the core, record how many pages in the pattern ledger
 * (pattern.h), optionally wait for a start file, then die by a given signal.
 * A ledger it cannot write ends it with status 1 before it crashes.
 *
 *   crasher -m MB [-s SIG] [-w FILE] [-r FILE] [-t THREADS] [-T] [-H] [-S GIB] [-u UID] [-R UID]
 *
 * -w FILE: wait until FILE exists before crashing (to start a storm at once)
 * -r FILE: create FILE once the memory is filled (the process is "ready");
 *    it holds the process's AnonHugePages in kB
 * -t N: start N-1 extra threads that spin, so the dump has to zap them
 * -T: every thread takes SIGSEGV at the same moment instead of spinning
 * -H: back the memory with transparent huge pages (MADV_HUGEPAGE)
 * -S GIB: also map GIB GiB of anonymous memory (MAP_NORESERVE) and touch one
 *    page of it: a core dump walks every page of the holes, so with
 *    -S 65536 (64 TiB, half of x86_64's 4-level address space) the dump
 *    makes progress for hours without writing more (no pattern pages there)
 * -u UID: drop to UID (real, effective and saved) and exec this program's
 *    file again without -u: a setuid copy then runs with euid 0 again,
 *    as a setuid program started by UID
 * -R UID: just before crashing, set only the real uid to UID (the
 *    effective and saved ones stay): a root daemon that did so keeps
 *    dumping, and its core must not become UID's
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
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

#define HUGE_ALIGN (2UL << 20)

static pthread_barrier_t crash_together;

static void *spin(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *fault(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&crash_together);
	*(volatile int *)0 = 1;
	return NULL;
}

/* AnonHugePages of this process in kB, from smaps_rollup; -1 if unknown. */
static long anon_huge_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* -u: become @uid and exec our own file again with the same arguments, minus -u. */
static int reexec_as(uid_t uid, int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	int n = 0;

	if (!args)
		return 1;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "-u")) {
			i++;
			continue;
		}
		args[n++] = argv[i];
	}
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) || setresuid(uid, uid, uid)) {
		perror("crasher: -u");
		return 1;
	}
	execv("/proc/self/exe", args);
	perror("crasher: exec");
	return 1;
}

/* corecheck expects what the ledger says; without it no core is complete */
static int record_ledger(uint32_t npages)
{
	char path[4096] = "the ledger";
	int r = pattern_ledger_write(npages);

	if (r < 0) {
		(void)pattern_ledger_path((long)getpid(), path, sizeof(path));
		fprintf(stderr, "crasher: cannot record %u pattern pages in %s: %s\n",
			npages, path, strerror(-r));
	}
	return r;
}

/* -S: a mapping of @gib GiB that holds a single page; 0 or -1 */
static int map_sparse(long gib)
{
	unsigned char *map;

	map = mmap(NULL, (size_t)gib << 30, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (map == MAP_FAILED) {
		fprintf(stderr, "crasher: mmap of %ld GiB: %s\n", gib, strerror(errno));
		return -1;
	}
	map[0] = 1;
	return 0;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	long mb = 16, threads = 1, uid = -1, ruid = -1, sparse_gib = 0;
	bool together = false, huge = false;
	int sig = SIGSEGV, opt;
	const char *wait_file = NULL, *ready_file = NULL;
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	while ((opt = getopt(argc, argv, "m:s:w:r:t:THS:u:R:")) != -1) {
		switch (opt) {
		case 'm': mb = strtol(optarg, NULL, 0); break;
		case 's': sig = (int)strtol(optarg, NULL, 0); break;
		case 'w': wait_file = optarg; break;
		case 'r': ready_file = optarg; break;
		case 't': threads = strtol(optarg, NULL, 0); break;
		case 'T': together = true; break;
		case 'H': huge = true; break;
		case 'S': sparse_gib = strtol(optarg, NULL, 0); break;
		case 'u': uid = strtol(optarg, NULL, 0); break;
		case 'R': ruid = strtol(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: crasher -m MB [-s SIG] [-w FILE] [-r FILE] [-t N] [-T] [-H] [-S GIB] [-u UID] [-R UID]\n");
			return 2;
		}
	}
	if (mb < 0 || threads < 1 || sparse_gib < 0 || (unsigned long)sparse_gib > SIZE_MAX >> 30) {
		fprintf(stderr, "crasher: bad -m, -t or -S\n");
		return 2;
	}
	if (uid >= 0)
		return reexec_as((uid_t)uid, argc, argv);
	setrlimit(RLIMIT_CORE, &rl);

	size_t npages = (size_t)mb * 1024 * 1024 / PATTERN_PAGE;
	unsigned char *buf = NULL;

	if (npages) {
		size_t len = npages * PATTERN_PAGE, align = huge ? HUGE_ALIGN : 0;
		unsigned char *map;

		/* a huge page needs a 2 MiB aligned range: map more, use the aligned part */
		map = mmap(NULL, len + align, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (map == MAP_FAILED) {
			perror("crasher: mmap");
			return 1;
		}
		buf = map;
		if (huge) {
			buf = (unsigned char *)(((uintptr_t)map + align - 1) & ~(uintptr_t)(align - 1));
			if (madvise(buf, len, MADV_HUGEPAGE)) {
				perror("crasher: madvise(MADV_HUGEPAGE)");
				return 1;
			}
		}
		for (size_t i = 0; i < npages; i++)
			pattern_fill(buf + i * PATTERN_PAGE, (uint32_t)getpid(), (uint32_t)i,
				     (uint32_t)npages);
	}
	if (sparse_gib && map_sparse(sparse_gib) < 0)
		return 1;
	if (record_ledger((uint32_t)npages) < 0)
		return 1;
	if (together)
		pthread_barrier_init(&crash_together, NULL, (unsigned int)threads);
	for (long t = 1; t < threads; t++) {
		pthread_t th;

		if (pthread_create(&th, NULL, together ? fault : spin, NULL) != 0) {
			fprintf(stderr, "crasher: pthread_create failed\n");
			return 1;
		}
	}
	if (ready_file) {
		FILE *f = fopen(ready_file, "w");

		if (f) {
			fprintf(f, "%ld\n", anon_huge_kb());
			fclose(f);
		}
	}
	if (wait_file) {
		struct stat st;

		while (stat(wait_file, &st) != 0)
			sleep_ms(5);
	}
	if (ruid >= 0 && setresuid((uid_t)ruid, (uid_t)-1, (uid_t)-1)) {
		perror("crasher: -R");
		return 1;
	}
	signal(sig, SIG_DFL);
	if (together)
		fault(NULL);
	if (sig == SIGSEGV)
		*(volatile int *)0 = 1;
	raise(sig);
	fprintf(stderr, "crasher: signal %d did not kill me\n", sig);
	return 1;
}
