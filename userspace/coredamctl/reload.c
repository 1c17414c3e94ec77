// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredamctl reload: the agent reads its configuration again and answers
 * when it is in force, or why it kept the running one. Synchronous, so
 * that ExecReload= (and so systemctl reload) fails when the agent refuses.
 */

#include "control.h"
#include "ctl.h"
#include "log.h"
#include "macro.h"

int cmd_reload(struct ctl *c, int argc, char **argv)
{
	char resp[COREDAM_CTL_RESP_MAX], why[1024];
	enum coredam_ctl_reach reach;
	int r;

	r = ctl_flag_only("reload", NULL, 0, argc, argv, NULL);
	if (r >= 0)
		return r;
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
