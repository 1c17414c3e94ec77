// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredamctl: inspect and steer coredamd. One file per subcommand. */
#include <getopt.h>
#include <stdarg.h>
#include <string.h>

#include "ctl.h"
#include "log.h"
#include "macro.h"
#include "paths.h"
#include "roots.h"

/* Each command: its arguments, what it does, its own options and exit codes. */
static const struct ctl_command {
	const char *name, *args, *summary, *about, *options, *exits;
	int (*fn)(struct ctl *c, int argc, char **argv);
} commands[] = {
	{ "status", "[--json]", "kernel support, cgroup, devices, budget, counters, dumps",
	  "Show what the kernel supports, the dump cgroup and its limits, the budget,\n"
	  "the counters and the dumps in progress.\n",
	  "  -j, --json          one JSON object (the agent's answer and the kernel's counters)\n",
	  "0 the agent runs, 3 it does not, 4 only root may ask it, 1 no telling",
	  cmd_status },
	{ "watch", "[--interval=TIME]", "live view with a progress line per dump",
	  "Redraw the status every TIME, with a progress line per dump in progress.\n"
	  "Without a terminal, one block per interval.\n",
	  "  -i, --interval=TIME every TIME (default 1s, at least 100ms; e.g. 500ms, 2s)\n",
	  "none while it runs (until interrupted); 1 the status could not be read",
	  cmd_watch },
	{ "set", "[--persist] NAME VALUE", "change a setting in the running agent",
	  "Change a setting of the running agent, which checks the value against the\n"
	  "rest of its configuration and refuses what does not fit, a setting its mode\n"
	  "does not read included (bandwidth and concurrency are fixed mode's, the\n"
	  "others but read-bandwidth and mode adaptive mode's). NAME is one of\n"
	  "bandwidth, read-bandwidth, concurrency, mode, floor, ceiling,\n"
	  "ceiling-when-busy, concurrency-floor, concurrency-ceiling.\n",
	  "  -p, --persist       also write it to the drop-in 50-coredamctl.conf, so that\n"
	  "                      it outlives a reload or restart (it must fit the\n"
	  "                      configuration files too)\n",
	  "0 set, 1 the agent refused it (or no telling\n"
	  "whether it runs), 2 a bad name or value, 3 the agent is not running (with\n"
	  "--persist the drop-in is written anyway), 4 only root may ask it",
	  cmd_set },
	{ "reload", "", "read the configuration again, or fail and keep the running one",
	  "Ask the agent to read its configuration files again. It applies all of the\n"
	  "new configuration or none of it: a refused file is named with its line, and\n"
	  "the agent keeps running on the old one. `systemctl reload coredamd` runs this.\n",
	  "",
	  "0 applied, 1 refused (or no telling whether the agent\n"
	  "runs), 3 the agent is not running, 4 only root may ask it",
	  cmd_reload },
	{ "list", "[--json]", "the cores kept, oldest first",
	  "List the cores coredam-pipe kept in [Pipe] Directory=, oldest first: time,\n"
	  "pid, uid, signal, size, state (complete, incomplete, missing; zstd when\n"
	  "compressed) and the command, from the metadata stored beside each core.\n"
	  "Repeats of a crash skipped by [Repeats] are counted in status, not listed.\n",
	  "  -j, --json          one JSON array\n",
	  "0 listed (none too), 1 the directory could not be read, 4 only root may read it",
	  cmd_list },
	{ "info", "ID", "one kept core in detail",
	  "Show one kept core: ID is a PID (its newest core) or a core's file name.\n"
	  "Where it crashed comes from the core's own notes (compressed cores are\n"
	  "read through).\n",
	  "",
	  "0 shown, 1 no such core, 4 only root may read it",
	  cmd_info },
	{ "dump", "[-o FILE] ID", "write a kept core out, decompressed",
	  "Write one kept core (ID as for info) to FILE, created anew (never over an\n"
	  "existing file or through a symbolic link), or to standard output when it\n"
	  "is no terminal; a zstd core is decompressed, and one that is not a whole\n"
	  "zstd stream fails.\n",
	  "  -o, --output=FILE   write to FILE instead of standard output\n",
	  "0 written, 1 no such core or it could not be written, 2 usage, 4 only root\n"
	  "may read it",
	  cmd_dump },
	{ "gdb", "ID [GDB-ARGUMENT...]", "debug a kept core with gdb",
	  "Run gdb on one kept core (ID as for info), a zstd one decompressed into a\n"
	  "directory of its own under /var/tmp and removed when gdb exits, with the\n"
	  "executable the core's own notes name (when it is still there). Arguments\n"
	  "after ID go to gdb as they are: coredamctl gdb 1234 -batch -ex bt.\n",
	  "",
	  "gdb's exit status; 1 no such core or it could not be read, 2 usage, 4 only\n"
	  "root may read it, 127 no gdb",
	  cmd_gdb },
	{ "vacuum", "[--dry-run]", "remove the oldest kept cores past [Space] MaxUse=, KeepFree=, MaxAge=",
	  "Remove the oldest kept cores, each with its metadata, until the kept cores\n"
	  "take at most [Space] MaxUse=, the file system has KeepFree= free and none\n"
	  "crashed longer than MaxAge= ago, as coredam-pipe does after each core it\n"
	  "stores; print each one removed. Only\n"
	  "cores the store named and root owns are counted or removed, and the newest\n"
	  "stays. Root only.\n",
	  "  -n, --dry-run       print what would be removed, remove nothing\n",
	  "0 done (nothing to remove too), 1 the configuration is refused or a core\n"
	  "could not be removed, 2 usage, 4 only root may remove cores",
	  cmd_vacuum },
	{ "doctor", "", "check what the feature needs and say what to fix",
	  "Check the kernel, cgroup v2 and its controllers, core_pattern, the\n"
	  "destination and the agent, one line each, and say how to fix what fails.\n",
	  "",
	  "0 nothing to fix, 1 a problem found",
	  cmd_doctor },
	{ "help", "[COMMAND]", "this help, or a command's",
	  "Show the list of commands, or one command's help (as COMMAND --help).\n",
	  "",
	  "0 shown, 2 no such command",
	  NULL },
};

static const struct ctl_command *find_command(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(commands); i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static void ctl_usage(FILE *f)
{
	fprintf(f, "Usage: coredamctl [OPTIONS] COMMAND [ARGS]\n\nCommands:\n");
	for (size_t i = 0; i < ELEMENTSOF(commands); i++) {
		char head[64];

		snprintf(head, sizeof(head), "%s %s", commands[i].name, commands[i].args);
		fprintf(f, "  %-29s %s\n", head, commands[i].summary);
	}
	fprintf(f,
		"\nOptions:\n"
		"  -c, --config=FILE      configuration file (default " COREDAM_CONF_FILE ")\n"
		"      --socket=PATH      agent control socket (default: ControlSocket= of the configuration)\n"
		"      --cgroup-root=DIR  --proc-root=DIR  --sys-root=DIR   alternative roots\n"
		"  -h, --help             this help; COMMAND --help: the command's\n"
		"      --version          the version\n\n"
		"Exit codes: 0 success, 1 failure (doctor: a problem found; reload: refused), 2 usage,\n"
		"3 agent not running, 4 only root may ask the agent.\n"
		"See coredamctl(1).\n");
}

static void command_help(const struct ctl_command *cmd)
{
	printf("Usage: coredamctl [OPTIONS] %s%s%s\n\n%s\nOptions:\n%s"
	       "  -h, --help          this help\n\nExit codes: %s.\n",
	       cmd->name, *cmd->args ? " " : "", cmd->args, cmd->about, cmd->options, cmd->exits);
}

int ctl_option_exit(const char *cmd, int opt)
{
	if (opt == 'h') {
		command_help(find_command(cmd));
		return CTL_EXIT_OK;
	}
	/* getopt said what was wrong */
	fprintf(stderr, "Try 'coredamctl %s --help'.\n", cmd);
	return CTL_EXIT_USAGE;
}

int ctl_flag_only(const char *cmd, const char *flag_long, int flag_short, int argc, char **argv, bool *ret)
{
	struct option opts[3] = { { "help", no_argument, NULL, 'h' } };
	char shorts[4] = "+h";
	int o;

	if (flag_long) {
		opts[1] = (struct option){ flag_long, no_argument, NULL, flag_short };
		shorts[2] = (char)flag_short;
	}

	optind = 0;
	while ((o = getopt_long(argc, argv, shorts, opts, NULL)) >= 0) {
		if (flag_long && o == flag_short)
			*ret = true;
		else
			return ctl_option_exit(cmd, o);
	}
	if (optind < argc)
		return ctl_unexpected_arg(cmd, argv[optind]);
	return -1;
}

int ctl_usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "coredamctl %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'coredamctl %s --help'.\n", cmd);
	return CTL_EXIT_USAGE;
}

int ctl_unexpected_arg(const char *cmd, const char *arg)
{
	return ctl_usage_error(cmd, "unexpected argument \"%s\"", arg);
}

static int cmd_help(int argc, char **argv)
{
	const struct ctl_command *cmd;
	const char *name;

	if (argc > 2)
		return ctl_unexpected_arg("help", argv[2]);
	if (argc < 2) {
		ctl_usage(stdout);
		return CTL_EXIT_OK;
	}
	name = argv[1];
	if (strcmp(name, "-h") == 0 || strcmp(name, "--help") == 0)
		name = "help";
	cmd = find_command(name);
	if (!cmd) {
		fprintf(stderr, "coredamctl help: unknown command \"%s\"\nTry 'coredamctl --help'.\n", name);
		return CTL_EXIT_USAGE;
	}
	command_help(cmd);
	return CTL_EXIT_OK;
}

/* The options before the command: -1 to go on, else the exit code. */
static int parse_options(struct ctl *ctl, const char **ret_socket, int argc, char **argv)
{
	enum { OPT_SOCKET = 256, OPT_VERSION };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "socket", required_argument, NULL, OPT_SOCKET },
		{ "cgroup-root", required_argument, NULL, COREDAM_OPT_CGROUP_ROOT },
		{ "proc-root", required_argument, NULL, COREDAM_OPT_PROC_ROOT },
		{ "sys-root", required_argument, NULL, COREDAM_OPT_SYS_ROOT },
		{ "state-dir", required_argument, NULL, COREDAM_OPT_STATE_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{}
	};
	int c;

	/* "+": stop at the command, whose own options follow it */
	while ((c = getopt_long(argc, argv, "+c:h", opts, NULL)) >= 0) {
		if (coredam_roots_option(&ctl->roots, c, optarg))
			continue;
		switch (c) {
		case 'c':
			snprintf(ctl->config_file, sizeof(ctl->config_file), "%s", optarg);
			break;
		case OPT_SOCKET:
			*ret_socket = optarg;
			break;
		case 'h':
			ctl_usage(stdout);
			return CTL_EXIT_OK;
		case OPT_VERSION:
			printf("coredamctl %s\n", COREDAM_VERSION);
			return CTL_EXIT_OK;
		default:
			fprintf(stderr, "Try 'coredamctl --help'.\n");
			return CTL_EXIT_USAGE;
		}
	}
	return -1;
}

enum coredam_ctl_reach ctl_ask(const struct ctl *c, const char *request, char *answer, size_t size, char *why,
			       size_t why_size)
{
	int r;

	r = coredam_ctl_call(c->socket, request, answer, size);
	return coredam_ctl_reach(r, answer, c->socket, c->cfg_ok || c->socket_given ? NULL : c->cfg_error, why,
				 why_size);
}

/*
 * Lenient: a bad line leaves out that line only, so that ControlSocket=
 * and the rest still find the agent, which runs on its last good
 * configuration.
 */
static void load_config(struct ctl *ctl, const char *socket)
{
	struct coredam_error e;
	int r;

	if (!ctl->config_file[0])
		snprintf(ctl->config_file, sizeof(ctl->config_file), "%s/coredam.conf", ctl->roots.conf);
	coredam_config_dropin_dirs(ctl->config_file, NULL, &ctl->dropins);
	r = coredam_config_load_full(ctl->config_file, ctl->dropins.list, COREDAM_CONFIG_LENIENT, &ctl->cfg, &e);
	ctl->cfg_ok = r == 0;
	if (!ctl->cfg_ok)
		(void)coredam_error_str(&e, ctl->cfg_error, sizeof(ctl->cfg_error));
	if (r == -ENOMEM)
		coredam_config_init(&ctl->cfg);
	snprintf(ctl->socket, sizeof(ctl->socket), "%s", socket ? socket : ctl->cfg.control_socket);
	ctl->socket_given = socket;
}

int main(int argc, char **argv)
{
	static struct ctl ctl = { .roots = COREDAM_ROOTS_DEFAULT };
	const struct ctl_command *cmd;
	const char *socket = NULL;
	static char prog[32];
	int r;

	log_setup("coredamctl", LOG_TARGET_STDERR);
	/* getopt names the program by argv[0]: "coredamctl:", however it was started */
	if (argc > 0)
		argv[0] = (char *)"coredamctl";
	r = parse_options(&ctl, &socket, argc, argv);
	if (r >= 0)
		return r;
	if (optind >= argc) {
		fprintf(stderr, "coredamctl: no command given\nTry 'coredamctl --help'.\n");
		return CTL_EXIT_USAGE;
	}
	cmd = find_command(argv[optind]);
	if (!cmd) {
		fprintf(stderr, "coredamctl: unknown command \"%s\"\nTry 'coredamctl --help'.\n", argv[optind]);
		return CTL_EXIT_USAGE;
	}
	if (!cmd->fn)
		return cmd_help(argc - optind, argv + optind);
	load_config(&ctl, socket);

	/* the command parses its own options; getopt names it by argv[0] */
	snprintf(prog, sizeof(prog), "coredamctl %s", cmd->name);
	argv[optind] = prog;
	return cmd->fn(&ctl, argc - optind, argv + optind);
}
