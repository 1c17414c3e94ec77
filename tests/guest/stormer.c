// SPDX-License-Identifier: GPL-2.0
/*
 * stormer: a crash storm whose every crash is timed, for the benchmark.
 *
 *   stormer -n N -m MB[,MB...] -o OUT [-p MS [-f]] [-t THREADS] [-c CGROUP[,CGROUP...]]
 *
 * Burst (no -p): forks N children that fill MB MiB each with the page
 * pattern corecheck recognises, waits until all are filled, then lets them
 * crash at the same moment. Sustained (-p MS): forks a child every MS
 * milliseconds that fills its memory and crashes at once. Staggered (-p MS
 * -f): forks and fills every child first, as the burst does, then lets one
 * crash every MS milliseconds: the arrivals are spread, but no child fills
 * its memory (CPU time, under emulation much of it) while the others dump.
 * Every child
 * records its pages in the pattern ledger (pattern.h) before it crashes;
 * a child that cannot fill its memory or write its ledger says why and
 * exits instead, and stormer then exits with status 1 (at once in a burst,
 * after the storm's report when sustained).
 *
 * -m MB,MB,...: child i fills the (i mod count)th size of the list, for a
 * storm of mixed core sizes.
 *
 * -t THREADS: every child runs THREADS threads (THREADS - 1 started once its
 * memory is filled, each asleep in pause()), so that the dump has to stop
 * them all; the child's first thread crashes.
 *
 * -c CGROUP: move stormer into that cgroup directory first, so every
 * crasher is charged there (its memory.peak is the memory the storm held).
 * -c CGROUP,CGROUP,...: stormer stays where it is and child i moves itself
 * into the (i mod count)th directory of the list before it fills its memory,
 * for crashers spread over cgroups of their own (a cgroup with controllers
 * enabled for its children cannot hold stormer itself).
 *
 * OUT gets, in milliseconds of CLOCK_MONOTONIC:
 *   prep MS              before the first child is forked
 *   start MS             the first crash
 *   crash PID CRASH_MS EXIT_MS DUMPED   one per child: its signal, its reaping
 *   end MS               the last child reaped
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pattern.h"

struct report {
	int32_t pid;
	int64_t crash_us;
};

static int64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void sleep_us(int64_t us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	if (us > 0)
		nanosleep(&ts, NULL);
}

/* A child that cannot crash as asked: say why, tell a waiting parent, exit. */
static void child_fail(int ready_fd, const char *what, int err)
{
	char c = 'x';

	fprintf(stderr, "stormer: child %d: %s: %s\n", getpid(), what, strerror(err));
	if (ready_fd >= 0)
		(void)write(ready_fd, &c, 1);
	_exit(1);
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static int join_cgroup(const char *dir)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%d\n", getpid()) < 0 || fclose(f) != 0) {
		fprintf(stderr, "stormer: %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* What one child does: its core's size, its threads, its cgroup (or none). */
struct child_spec {
	long mb;
	long threads;
	const char *cgroup;
};

/*
 * The child: join its cgroup (if any), fill the memory, record it, start
 * its threads, say ready, wait for go (if any), crash.
 */
static void crash_child(const struct child_spec *spec, int ready_fd, int go_fd, int report_fd)
{
	size_t npages = (size_t)spec->mb * 1024 * 1024 / PATTERN_PAGE;
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	struct report r = { getpid(), 0 };
	unsigned char *buf;
	char c = 'r';
	int err;

	if (spec->cgroup && join_cgroup(spec->cgroup) < 0)
		child_fail(ready_fd, "cannot join its cgroup", errno);
	setrlimit(RLIMIT_CORE, &rl);
	buf = mmap(NULL, npages * PATTERN_PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		child_fail(ready_fd, "mmap", errno);
	for (size_t i = 0; i < npages; i++)
		pattern_fill(buf + i * PATTERN_PAGE, (uint32_t)getpid(), (uint32_t)i,
			     (uint32_t)npages);
	err = pattern_ledger_write((uint32_t)npages);
	if (err < 0)
		child_fail(ready_fd, "cannot record its pattern pages in the ledger", -err);
	for (long t = 1; t < spec->threads; t++) {
		pthread_t th;

		err = pthread_create(&th, NULL, sleeper, NULL);
		if (err)
			child_fail(ready_fd, "pthread_create", err);
	}
	if (ready_fd >= 0 && write(ready_fd, &c, 1) != 1)
		_exit(1);
	if (go_fd >= 0 && read(go_fd, &c, 1) < 0)
		_exit(1);
	r.crash_us = now_us();
	if (write(report_fd, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	signal(SIGSEGV, SIG_DFL);
	*(volatile int *)0 = 1;
	_exit(1);
}

/* A burst child failed to get ready: no crash of this storm may follow. */
static int stop_storm(const pid_t *pids, long forked)
{
	fprintf(stderr, "stormer: a child did not get ready, stopping the storm\n");
	for (long i = 0; i < forked; i++)
		kill(pids[i], SIGKILL);
	return 1;
}

/* Split a comma-separated list in place; the number of items, at most max. */
static int split_list(char *list, char **items, int max)
{
	int n = 0;

	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ","))
		if (n < max)
			items[n++] = tok;
		else
			return -1;
	return n;
}

#define MAX_LIST 64

int main(int argc, char **argv)
{
	long n = 0, period_ms = 0, threads = 1, sizes[MAX_LIST];
	bool prefill = false;
	const char *out = NULL;
	char *size_list[MAX_LIST], *cgroups[MAX_LIST];
	int nsizes = 0, ncgroups = 0;
	int ready[2], go[2], report[2], opt;
	int64_t *crash_us, *exit_us, start_us = 0, end_us = 0, prep_us;
	pid_t *pids;
	int *dumped;
	FILE *f;

	while ((opt = getopt(argc, argv, "n:m:o:p:c:t:f")) != -1) {
		switch (opt) {
		case 'n': n = strtol(optarg, NULL, 0); break;
		case 'm': nsizes = split_list(optarg, size_list, MAX_LIST); break;
		case 'o': out = optarg; break;
		case 'p': period_ms = strtol(optarg, NULL, 0); break;
		case 'c': ncgroups = split_list(optarg, cgroups, MAX_LIST); break;
		case 't': threads = strtol(optarg, NULL, 0); break;
		case 'f': prefill = true; break;
		default: goto usage;
		}
	}
	if (n <= 0 || nsizes <= 0 || ncgroups < 0 || !out || period_ms < 0 || threads < 1 ||
	    (prefill && !period_ms))
		goto usage;
	/* the children wait for their go when they are all filled first */
	bool gated = !period_ms || prefill;
	for (int i = 0; i < nsizes; i++) {
		sizes[i] = strtol(size_list[i], NULL, 0);
		if (sizes[i] <= 0)
			goto usage;
	}
	/* one cgroup: stormer's own, which its children inherit */
	if (ncgroups == 1 && join_cgroup(cgroups[0]) < 0)
		return 1;
	f = fopen(out, "w");
	if (!f) {
		fprintf(stderr, "stormer: %s: %s\n", out, strerror(errno));
		return 1;
	}
	pids = calloc(n, sizeof(*pids));
	crash_us = calloc(n, sizeof(*crash_us));
	exit_us = calloc(n, sizeof(*exit_us));
	dumped = calloc(n, sizeof(*dumped));
	if (!pids || !crash_us || !exit_us || !dumped ||
	    pipe(ready) || pipe(go) || pipe2(report, O_NONBLOCK))
		return 1;

	prep_us = now_us();
	long forked = 0, released = 0, reaped = 0, failed = 0;
	int64_t next = prep_us;

	while (reaped < n) {
		if (prefill && forked == n && released < n && now_us() >= next) {
			/* one byte on the go pipe lets one waiting child crash */
			char c = 'g';

			if (write(go[1], &c, 1) != 1) {
				perror("stormer: go");
				return stop_storm(pids, forked);
			}
			if (++released == n)
				close(go[1]);
			next += period_ms * 1000;
			continue;
		}
		if (forked < n && (gated || now_us() >= next)) {
			pid_t pid = fork();

			if (pid < 0) {
				perror("stormer: fork");
				return 1;
			}
			if (pid == 0) {
				struct child_spec spec = {
					.mb = sizes[forked % nsizes],
					.threads = threads,
					.cgroup = ncgroups > 1 ? cgroups[forked % ncgroups] : NULL,
				};

				close(ready[0]);
				close(go[1]);
				close(report[0]);
				crash_child(&spec, gated ? ready[1] : -1,
					    gated ? go[0] : -1, report[1]);
			}
			pids[forked++] = pid;
			if (!prefill)
				next += period_ms * 1000;
			if (gated && forked == n) {
				char c;

				for (long i = 0; i < n; i++)
					if (read(ready[0], &c, 1) != 1 || c != 'r')
						return stop_storm(pids, forked);
				if (!prefill)
					close(go[1]);	/* every child's read() returns: go */
				next = now_us();
			}
			continue;
		}

		int status;
		bool more = forked < n || (prefill && released < n);
		pid_t pid = waitpid(-1, &status, period_ms && more ? WNOHANG : 0);

		if (pid < 0 && errno == ECHILD && more) {
			/* every child so far is reaped (they die fast without a dump) */
			sleep_us(next - now_us());
			continue;
		}
		if (pid < 0) {
			perror("stormer: waitpid");
			return 1;
		}
		if (pid == 0) {
			sleep_us(next - now_us() < 5000 ? next - now_us() : 5000);
			continue;
		}
		for (long i = 0; i < n; i++) {
			if (pids[i] != pid)
				continue;
			exit_us[i] = now_us();
			dumped[i] = WIFSIGNALED(status) && WCOREDUMP(status);
			failed += WIFEXITED(status);
			reaped++;
		}
	}
	end_us = now_us();

	struct report r;

	while (read(report[0], &r, sizeof(r)) == sizeof(r))
		for (long i = 0; i < n; i++)
			if (pids[i] == r.pid)
				crash_us[i] = r.crash_us;
	for (long i = 0; i < n; i++)
		if (crash_us[i] && (!start_us || crash_us[i] < start_us))
			start_us = crash_us[i];

	fprintf(f, "prep %lld\nstart %lld\n", (long long)prep_us / 1000,
		(long long)start_us / 1000);
	for (long i = 0; i < n; i++)
		fprintf(f, "crash %d %lld %lld %d\n", pids[i], (long long)crash_us[i] / 1000,
			(long long)exit_us[i] / 1000, dumped[i]);
	fprintf(f, "end %lld\n", (long long)end_us / 1000);
	if (fclose(f))
		return 1;
	if (failed) {
		fprintf(stderr, "stormer: %ld of %ld children exited instead of crashing\n",
			failed, n);
		return 1;
	}
	return 0;
usage:
	fprintf(stderr, "usage: stormer -n N -m MB[,MB...] -o OUT [-p MS [-f]] [-t THREADS] "
		"[-c CGROUP[,CGROUP...]]\n");
	return 2;
}
