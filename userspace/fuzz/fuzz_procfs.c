// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * Files of a fake /proc and /sys, the way the unit tests point the library
 * at them: the input becomes <proc>/self/mountinfo, <proc>/1/cgroup,
 * <proc>/1/limits, <proc>/1/status, <proc>/1/io and <sys>/class/block/sda/dev
 * all at once, and every reader runs over it. Mount points and sources in
 * mountinfo are partly chosen by users (FUSE, user namespaces). The input
 * is also one /dev/kmsg record (the crashed process's comm is in it).
 *
 * Properties: the destination's mount is a prefix of the destination; a
 * cgroup2 mount point and a process's cgroup are absolute.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "devices.h"
#include "dumps.h"
#include "fuzz.h"
#include "kmsg.h"
#include "pipe-args.h"
#include "roots.h"

static void check_destination(const struct coredam_roots *roots, const char *path)
{
	struct coredam_dev_info info;
	size_t l;

	memset(&info, 0, sizeof(info));
	if (coredam_dev_resolve_path(roots, path, &info) < 0)
		return;
	l = strlen(info.mountpoint);
	FUZZ_CHECK(info.mountpoint[0] == '/');
	FUZZ_CHECK(strcmp(info.mountpoint, "/") == 0 ||
		   (strncmp(info.mountpoint, path, l) == 0 && (path[l] == '\0' || path[l] == '/')));
	FUZZ_CHECK(info.throttleable || info.reason[0]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char proc[PATH_MAX], sys[PATH_MAX];
	struct coredam_roots roots;
	struct coredam_dev_info info;
	struct coredam_dump *d = NULL;
	char buf[PATH_MAX];
	uint64_t rl;
	size_t n = 0;

	if (!proc[0]) {
		snprintf(proc, sizeof(proc), "%s", fuzz_path("proc"));
		snprintf(sys, sizeof(sys), "%s", fuzz_path("sys"));
	}
	roots = (struct coredam_roots){ .proc = proc, .sys = sys, .cgroup = fuzz_dir(), .state = fuzz_dir() };
	fuzz_write("proc/self/mountinfo", data, size);
	fuzz_write("proc/1/cgroup", data, size);
	fuzz_write("proc/1/limits", data, size);
	fuzz_write("proc/1/status", data, size);
	fuzz_write("proc/1/io", data, size);
	fuzz_write("coredump.slice/cgroup.procs", (const uint8_t *)"1\n", 2);	/* pid 1 in the dump cgroup */
	fuzz_write("sys/class/block/sda/dev", data, size);

	check_destination(&roots, "/var/lib/coredam/cores");
	check_destination(&roots, "/");
	if (coredam_cg2_mount(proc, buf, sizeof(buf)) == 0)
		FUZZ_CHECK(strlen(buf) < sizeof(buf));
	{
		struct coredam_cg_layout l;
		char advice[2 * PATH_MAX + 400];

		if (coredam_cg_layout(proc, "/sys/fs/cgroup", &l) == 0) {
			FUZZ_CHECK(l.mode <= COREDAM_CG_NONE && strlen(l.v2) < sizeof(l.v2));
			FUZZ_CHECK((coredam_cg_layout_advice(&l, "/sys/fs/cgroup", advice, sizeof(advice)) == NULL) ==
				   (l.mode == COREDAM_CG_UNIFIED));
		}
	}
	if (coredam_cg_of_pid(proc, 1, buf, sizeof(buf)) == 0)
		FUZZ_CHECK(strlen(buf) < sizeof(buf));
	{
		char small[12], *text = strndup((const char *)data, size);

		/* an ancestor that fits, at a component boundary */
		if (text && coredam_proc_cgroup_parse(text, true, small, sizeof(small)) >= 0)
			FUZZ_CHECK(small[0] == '/' && strlen(small) < sizeof(small));
		free(text);
	}
	coredam_pipe_read_rlimit(proc, 1, &rl);
	if (coredam_dumps_list(&roots, "/coredump.slice", &d, &n) == 0) {
		FUZZ_CHECK(n <= 1);
		for (size_t i = 0; i < n; i++)
			FUZZ_CHECK(d[i].pid == 1 && strlen(d[i].comm) < sizeof(d[i].comm) &&
				   strlen(d[i].cgroup) < sizeof(d[i].cgroup) &&
				   (!d[i].cgroup[0] || d[i].cgroup[0] == '/'));
		free(d);
	}
	memset(&info, 0, sizeof(info));
	coredam_dev_resolve_spec(&roots, "/dev/sda", &info);
	{
		struct coredam_kmsg_record k;
		int r = coredam_kmsg_parse((const char *)data, size, "/run/coredam/coredump/socket", &k);

		FUZZ_CHECK(r == 0 || r == -EBADMSG);
		if (r == 0) {
			FUZZ_CHECK(k.loss <= COREDAM_KMSG_SUPPRESSED);
			FUZZ_CHECK((k.loss == COREDAM_KMSG_NONE) == (k.count == 0) || k.loss == COREDAM_KMSG_SUPPRESSED);
			FUZZ_CHECK(k.loss == COREDAM_KMSG_NONE || k.loss == COREDAM_KMSG_SUPPRESSED || k.count == 1);
		}
	}
	return 0;
}
