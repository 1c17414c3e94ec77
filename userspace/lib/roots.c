// SPDX-License-Identifier: LGPL-2.1-or-later
#include "roots.h"

bool coredam_roots_option(struct coredam_roots *roots, int opt, const char *arg)
{
	switch (opt) {
	case COREDAM_OPT_CGROUP_ROOT:
		roots->cgroup = arg;
		return true;
	case COREDAM_OPT_PROC_ROOT:
		roots->proc = arg;
		return true;
	case COREDAM_OPT_SYS_ROOT:
		roots->sys = arg;
		return true;
	case COREDAM_OPT_STATE_DIR:
		roots->state = arg;
		return true;
	}
	return false;
}
