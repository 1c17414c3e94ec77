// SPDX-License-Identifier: LGPL-2.1-or-later
#include <getopt.h>

#include "test.h"
#include "macro.h"
#include "roots.h"

/* Each root option moves its own root and no other; another option is left to the program. */
TEST(roots_option)
{
	static const struct option opts[] = {
		{ "cgroup-root", required_argument, NULL, COREDAM_OPT_CGROUP_ROOT },
		{ "proc-root", required_argument, NULL, COREDAM_OPT_PROC_ROOT },
		{ "sys-root", required_argument, NULL, COREDAM_OPT_SYS_ROOT },
		{ "state-dir", required_argument, NULL, COREDAM_OPT_STATE_DIR },
		{ "other", no_argument, NULL, 'o' },
		{}
	};
	char *argv[] = { "prog", "--proc-root=/p", "--other", "--state-dir", "/s", "--sys-root=/y",
			 "--cgroup-root=/c", NULL };
	struct coredam_roots roots = COREDAM_ROOTS_DEFAULT;
	int c, others = 0;

	optind = 0;	/* getopt_long() from the start */
	while ((c = getopt_long(ELEMENTSOF(argv) - 1, argv, "", opts, NULL)) >= 0)
		if (!coredam_roots_option(&roots, c, optarg))
			others += c == 'o';
	CHECK_EQ_INT(others, 1);
	CHECK_STREQ(roots.cgroup, "/c");
	CHECK_STREQ(roots.proc, "/p");
	CHECK_STREQ(roots.sys, "/y");
	CHECK_STREQ(roots.state, "/s");
	CHECK_STREQ(roots.conf, COREDAM_CONF_DIR);

	CHECK(!coredam_roots_option(&roots, 'c', "/x"));
	CHECK(!coredam_roots_option(&roots, '?', "/x"));
	CHECK_STREQ(roots.cgroup, "/c");
}
