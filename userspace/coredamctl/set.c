// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredamctl set [--persist] NAME VALUE */
#include <getopt.h>
#include <limits.h>

#include "control.h"
#include "ctl.h"
#include "log.h"
#include "macro.h"
#include "string-util.h"
#include "path-util.h"

#define DROPIN_NAME "50-coredamctl.conf"

int cmd_set(struct ctl *c, int argc, char **argv)
{
	static const struct option opts[] = { { "persist", no_argument, NULL, 'p' }, { "help", no_argument, NULL, 'h' }, {} };
	char req[COREDAM_CTL_REQ_MAX], resp[1024], dropin[PATH_MAX], why[1024];
	enum coredam_ctl_reach reach;
	struct coredam_config tmp = c->cfg, files = c->cfg;
	struct coredam_error e;
	const char *section, *key, *name, *value;
	bool persist = false;
	int o, r;

	optind = 0;
	while ((o = getopt_long(argc, argv, "+ph", opts, NULL)) >= 0) {
		if (o == 'p') {
			persist = true;
		} else {
			return ctl_option_exit("set", o);
		}
	}
	if (argc - optind != 2)
		return ctl_usage_error("set", "expected NAME VALUE");
	name = argv[optind];
	value = argv[optind + 1];
	if (coredam_ctl_set_key(name, &section, &key) < 0)
		return ctl_usage_error("set", "unknown setting \"%s\"", name);
	/* check the value here, so that a bad one is named even without an agent */
	if (!*value || strpbrk(value, " \t\n"))
		return ctl_usage_error("set", "%s \"%s\": empty or contains white space", name, value);
	/*
	 * The value alone: how it fits the rest (floor and ceiling, the mode)
	 * is the running agent's to say, whose settings may differ from the
	 * files' by earlier runtime changes.
	 */
	if (coredam_config_set(&tmp, section, key, value, &e) < 0)
		return ctl_usage_error("set", "%s: %s", name, e.msg);
	/*
	 * What is persisted joins the files' configuration, read at the next
	 * start or reload, whatever the agent runs on now: it must fit that
	 * too (a bandwidth persisted where the files say adaptive would do
	 * nothing there).
	 */
	if (persist && coredam_ctl_apply_set(&files, name, value, &e) < 0) {
		log_error("not persisted: with the configuration files, %s", e.msg);
		return CTL_EXIT_FAIL;
	}
	r = xsnprintf(req, sizeof(req), "SET %s %s", name, value);
	if (r < 0)
		return ctl_usage_error("set", "value \"%s\" too long", value);
	/*
	 * The agent first: what it refuses is not persisted either. Only an
	 * agent that is not running lets --persist go on without its word.
	 */
	reach = ctl_ask(c, req, resp, sizeof(resp), why, sizeof(why));
	if (reach != COREDAM_CTL_REACHED && (!persist || reach != COREDAM_CTL_NOT_RUNNING)) {
		log_error("%s", why);
		return (int)reach;
	}
	if (reach == COREDAM_CTL_REACHED && strncmp(resp, "OK\n", 3) != 0) {
		log_error("agent refused %s=%s: %.*s", name, value, (int)strcspn(resp + 4, "\n"), resp + 4);
		return CTL_EXIT_FAIL;
	}
	if (persist) {
		int k = path_join(dropin, sizeof(dropin), c->dropins.dir[0], DROPIN_NAME);

		if (k >= 0)
			k = coredam_dropin_set(dropin, section, key, value);
		if (k < 0) {
			log_error("cannot write %s: %s", dropin, strerror(-k));
			return CTL_EXIT_FAIL;
		}
		printf("persisted [%s] %s=%s in %s\n", section, key, value, dropin);
	}
	if (reach != COREDAM_CTL_REACHED) {
		log_error("%s (the drop-in takes effect when coredamd starts or reloads)", why);
		return (int)reach;
	}
	printf("%s", resp + 3);
	if (!persist)
		printf("(runtime only: lost on reload or restart; use --persist to keep it)\n");
	return CTL_EXIT_OK;
}
