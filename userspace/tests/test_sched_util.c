// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * DumpNice=: a dumping process made background work. The process is a real
 * child with two threads; the /proc listing that says it dumps is a fake
 * tree (a real dump needs a kernel core_pattern).
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "sched-util.h"
#include "test.h"
#include "macro.h"

static void *sleeper(void *arg)
{
	for (;;)
		pause();
	return arg;
}

/* A child with two threads; their ids in @tids. */
static pid_t spawn_threads(pid_t tids[2])
{
	char path[64];
	pid_t pid = fork();

	if (pid == 0) {
		pthread_t t;

		if (pthread_create(&t, NULL, sleeper, NULL) != 0)
			_exit(1);
		sleeper(NULL);
	}
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	for (int i = 0; i < 500; i++) {
		_cleanup_closedir_ DIR *d = opendir(path);
		struct dirent *de;
		int n = 0;

		while (d && (de = readdir(d)) && n < 2)
			if (de->d_name[0] != '.')
				tids[n++] = atoi(de->d_name);
		if (n == 2)
			return pid;
		usleep(10000);
	}
	return -1;
}

static void fake_proc(pid_t pid, const pid_t tids[2], const char *dumping, const char *cgroup)
{
	char rel[128], status[128];

	snprintf(rel, sizeof(rel), "proc/%d/status", (int)pid);
	snprintf(status, sizeof(status), "Name:\tcrasher\nState:\tD (disk sleep)\nCoreDumping:\t%s\n", dumping);
	mkfile(rel, status);
	snprintf(rel, sizeof(rel), "proc/%d/cgroup", (int)pid);
	snprintf(status, sizeof(status), "0::%s\n", cgroup);
	mkfile(rel, status);
	for (int i = 0; i < 2; i++) {
		snprintf(rel, sizeof(rel), "proc/%d/task/%d", (int)pid, (int)tids[i]);
		mkdirs(rel);
	}
}

TEST(dumping_process_becomes_background_work)
{
	pid_t tids[2] = { 0, 0 }, pid = spawn_threads(tids);
	/* the child's threads start with the policy and nice this test runs at (`nice make check`) */
	int policy = sched_getscheduler(0), base_nice = getpriority(PRIO_PROCESS, 0);
	int helper_nice = base_nice == 10 ? 15 : 10;
	int status;

	CHECK(pid > 0);
	if (pid <= 0)
		return;
	/* not dumping, not in the dump cgroup (a pid reused since the listing): left alone */
	fake_proc(pid, tids, "0", "/system.slice/web.service");
	CHECK_EQ_INT(coredam_sched_background(tpath("proc"), pid, NULL, 19), 0);
	CHECK_EQ_INT(coredam_sched_background(tpath("proc"), pid, "/coredump.slice", 19), 0);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(sched_getscheduler(tids[i]), policy);
		CHECK_EQ_INT(getpriority(PRIO_PROCESS, (id_t)tids[i]), base_nice);
	}
	/* a pipe helper still in the dump cgroup: every thread at the nice asked for */
	fake_proc(pid, tids, "0", "/coredump.slice");
	CHECK_EQ_INT(coredam_sched_background(tpath("proc"), pid, "/coredump.slice", helper_nice), 2);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(sched_getscheduler(tids[i]), SCHED_BATCH);
		CHECK_EQ_INT(getpriority(PRIO_PROCESS, (id_t)tids[i]), helper_nice);
	}
	/* dumping: every thread SCHED_BATCH at the nice asked for */
	fake_proc(pid, tids, "1", "/system.slice/web.service");
	CHECK_EQ_INT(coredam_sched_background(tpath("proc"), pid, NULL, 19), 2);
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_INT(sched_getscheduler(tids[i]), SCHED_BATCH);
		CHECK_EQ_INT(getpriority(PRIO_PROCESS, (id_t)tids[i]), 19);
	}
	CHECK_ERRNO(coredam_sched_background(tpath("proc"), pid, NULL, 20), -EINVAL);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	/* gone: nothing to do, and no error */
	CHECK_EQ_INT(coredam_sched_background(tpath("proc"), pid, NULL, 19), 0);
}
