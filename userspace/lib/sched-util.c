// SPDX-License-Identifier: LGPL-2.1-or-later
/* A dumping process's CPU scheduling. */
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "sched-util.h"
#include "cgroup.h"
#include "dumps.h"
#include "fileio.h"
#include "macro.h"
#include "parse-util.h"
#include "string-util.h"

/* Still a dumping process (@cgroup NULL), or still in @cgroup. */
static bool still_listed(int procfd, const char *cgroup)
{
	_cleanup_free_ char *text = NULL;
	char path[PATH_MAX], val[8];

	if (cgroup)
		return read_file_at(procfd, "cgroup", 65536, &text) >= 0 &&
		       coredam_proc_cgroup_parse(text, false, path, sizeof(path)) == 0 &&
		       strcmp(path, cgroup) == 0;
	if (read_file_at(procfd, "status", 65536, &text) < 0)
		return false;
	return coredam_status_field(text, "CoreDumping", val, sizeof(val)) && strcmp(val, "1") == 0;
}

static int set_thread(pid_t tid, int nice)
{
	const struct sched_param param = { 0 };

	if (sched_setscheduler(tid, SCHED_BATCH, &param) < 0 ||
	    setpriority(PRIO_PROCESS, (id_t)tid, nice) < 0)
		return errno == ESRCH ? 0 : -errno;	/* a thread gone is done */
	return 1;
}

int coredam_sched_background(const char *proc, pid_t pid, const char *cgroup, int nice)
{
	_cleanup_close_ int pidfd = -EBADF, procfd = -EBADF;
	_cleanup_closedir_ DIR *d = NULL;
	char path[PATH_MAX];
	struct dirent *de;
	int n = 0, r;

	if (nice < -20 || nice > 19 || pid <= 0)
		return -EINVAL;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return errno == ESRCH ? 0 : -errno;
	if (xsnprintf(path, sizeof(path), "%s/%d", proc, (int)pid) < 0)
		return -ENAMETOOLONG;
	procfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* the pidfd came after the listing: the same process only if still listed so */
	if (!still_listed(procfd, cgroup))
		return 0;
	r = openat(procfd, "task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r < 0)
		return errno == ENOENT ? 0 : -errno;
	d = fdopendir(r);
	if (!d) {
		close(r);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		uint32_t tid;

		if (parse_u32(de->d_name, &tid) < 0)
			continue;
		r = set_thread((pid_t)tid, nice);
		if (r < 0)
			return r;
		n += r;
	}
	/*
	 * Alive now, so alive all along: every id read above was its own. Had
	 * it ended meanwhile, its thread ids could have been handed out again
	 * only after the pid space wrapped.
	 */
	if (poll(&(struct pollfd){ .fd = pidfd, .events = POLLIN }, 1, 0) == 1)
		return 0;
	return n;
}
