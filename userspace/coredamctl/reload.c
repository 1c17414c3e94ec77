// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredamctl reload: the agent reads its configuration again and answers
 * when it is in force, or why it kept the running one. Synchronous, so
 * that ExecReload= (and so systemctl reload) fails when the agent refuses.
 */
#include <getopt.h>

#include "control.h"
#include "ctl.h"
#include "log.h"
#include "macro.h"

int cmd_reload(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = { { "help", no_argument, NULL, 'h' }, {} };
	char resp[COREDAM_CTL_RESP_MAX], why[1024];
	enum coredam_ctl_reach reach;
	int o;

	optind = 0;
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) >= 0)
		return ctl_option_exit("reload", o);
	if (optind < argc)
		return ctl_unexpected_arg("reload", argv[optind]);
	reach = ctl_ask(c, "RELOAD", resp, sizeof(resp), why, sizeof(why));
	if (reach != COREDAM_CTL_REACHED) {
		log_error("%s", why);
		return (int)reach;
	}
	if (strncmp(resp, "OK\n", 3) == 0)
		return CTL_EXIT_OK;
	log_error("agent refused the configuration and keeps the running one: %.*s", (int)strcspn(resp + 4, "\n"),
		  resp + 4);
	return CTL_EXIT_FAIL;
}
