// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredamctl: inspect and steer coredamd. One file per subcommand. */
#include <getopt.h>
#include <string.h>

#include "ctl.h"
#include "log.h"
#include "macro.h"
#include "paths.h"

void ctl_usage(FILE *f)
{
	fprintf(f,
		"Usage: coredamctl [OPTIONS] COMMAND [ARGS]\n\n"
		"Commands:\n"
		"  status [--json]               kernel support, cgroup, devices, budget, counters, dumps\n"
		"  watch [--interval=TIME]       live view with a progress line per dump\n"
		"  set [--persist] NAME VALUE    change a setting in the running agent\n"
		"                                NAME: bandwidth read-bandwidth concurrency mode floor ceiling\n"
		"                                      concurrency-floor concurrency-ceiling\n"
		"  reload                        the agent reads its configuration again; fails if it\n"
		"                                refuses it (and keeps the running one)\n"
		"  doctor                        check what the feature needs and say what to fix\n\n"
		"Options:\n"
		"  -c, --config=FILE      configuration file (default " COREDAM_CONF_FILE ")\n"
		"      --socket=PATH      agent control socket (default: ControlSocket= of the configuration)\n"
		"      --cgroup-root=DIR  --proc-root=DIR  --sys-root=DIR   alternative roots\n"
		"  -h, --help             this help\n\n"
		"Exit codes: 0 success, 1 failure (doctor: a problem found; reload: refused), 2 usage,\n"
		"3 agent not running, 4 status: only root may ask the agent.\n");
}

int ctl_option_exit(int opt)
{
	if (opt == 'h') {
		ctl_usage(stdout);
		return CTL_EXIT_OK;
	}
	ctl_usage(stderr);
	return CTL_EXIT_USAGE;
}

int ctl_unexpected_arg(const char *cmd, const char *arg)
{
	fprintf(stderr, "coredamctl %s: unexpected argument \"%s\"\n", cmd, arg);
	ctl_usage(stderr);
	return CTL_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	enum { OPT_SOCKET = 256, OPT_CG, OPT_PROC, OPT_SYS, OPT_VERSION };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "cgroup-root", required_argument, NULL, OPT_CG },
		{ "proc-root", required_argument, NULL, OPT_PROC },
		{ "sys-root", required_argument, NULL, OPT_SYS },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{}
	};
	static const struct {
		const char *name;
		int (*fn)(struct ctl *c, int argc, char **argv);
	} cmds[] = {
		{ "status", cmd_status },
		{ "watch", cmd_watch },
		{ "set", cmd_set },
		{ "reload", cmd_reload },
		{ "doctor", cmd_doctor },
	};
	static struct ctl ctl = { .roots = COREDAM_ROOTS_DEFAULT };
	struct coredam_config_error e;
	const char *socket = NULL;
	int c, r;

	log_setup("coredamctl", LOG_TARGET_STDERR);
	/* "+": stop at the command, whose own options follow it */
	while ((c = getopt_long(argc, argv, "+c:h", opts, NULL)) >= 0) {
		switch (c) {
		case 'c':
			snprintf(ctl.config_file, sizeof(ctl.config_file), "%s", optarg);
			break;
		case OPT_SOCKET:
			socket = optarg;
			break;
		case OPT_CG:
			ctl.roots.cgroup = optarg;
			break;
		case OPT_PROC:
			ctl.roots.proc = optarg;
			break;
		case OPT_SYS:
			ctl.roots.sys = optarg;
			break;
		case 'h':
			ctl_usage(stdout);
			return CTL_EXIT_OK;
		case OPT_VERSION:
			printf("coredamctl %s\n", COREDAM_VERSION);
			return CTL_EXIT_OK;
		default:
			ctl_usage(stderr);
			return CTL_EXIT_USAGE;
		}
	}
	if (optind >= argc) {
		log_error("no command given");
		ctl_usage(stderr);
		return CTL_EXIT_USAGE;
	}
	if (!ctl.config_file[0])
		snprintf(ctl.config_file, sizeof(ctl.config_file), "%s/coredam.conf", ctl.roots.conf);
	coredam_config_dropin_dir(ctl.config_file, ctl.dropin_dir, sizeof(ctl.dropin_dir));
	/*
	 * Lenient: a bad line leaves out that line only, so that ControlSocket=
	 * and the rest still find the agent, which runs on its last good
	 * configuration.
	 */
	r = coredam_config_load_full(ctl.config_file, ctl.dropin_dir, COREDAM_CONFIG_LENIENT, &ctl.cfg, &e);
	ctl.cfg_ok = r == 0;
	if (!ctl.cfg_ok)
		snprintf(ctl.cfg_error, sizeof(ctl.cfg_error), "%s:%d: %s", e.file, e.line, e.msg);
	if (r == -ENOMEM)
		coredam_config_init(&ctl.cfg);
	snprintf(ctl.socket, sizeof(ctl.socket), "%s", socket ? socket : ctl.cfg.control_socket);

	for (size_t i = 0; i < ELEMENTSOF(cmds); i++) {
		if (strcmp(argv[optind], cmds[i].name) != 0)
			continue;
		/* the subcommand parses its own options from argv[0] = its name */
		optind++;
		return cmds[i].fn(&ctl, argc - optind + 1, argv + optind - 1);
	}
	fprintf(stderr, "coredamctl: unknown command \"%s\"\n", argv[optind]);
	ctl_usage(stderr);
	return CTL_EXIT_USAGE;
}
