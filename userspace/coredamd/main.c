// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredamd: owns the dump cgroup, sets the kernel's coredump knobs, adapts
 * the dumpers' bandwidth and concurrency, guards free space, reports.
 */
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>
#include <time.h>

#include "agent.h"
#include "cgroup.h"
#include "control.h"
#include "fileio.h"
#include "log.h"
#include "macro.h"
#include "string-util.h"
#include "parse-util.h"
#include "path-util.h"
#include "paths.h"
#include "roots.h"

static void help(FILE *f)
{
	fprintf(f,
		"Usage: coredamd [OPTIONS]\n"
		"Keep a machine responsive while processes dump core.\n\n"
		"  -c, --config=FILE      configuration file (default " COREDAM_CONF_FILE ")\n"
		"      --config-dir=DIR   drop-in directory (default FILE's directory/coredam.conf.d)\n"
		"      --check            load the configuration and run the self-check, then exit\n"
		"      --dump-config      print the effective configuration and exit\n"
		"      --cgroup-root=DIR  cgroup v2 mount (default /sys/fs/cgroup)\n"
		"      --proc-root=DIR    procfs (default /proc)\n"
		"      --sys-root=DIR     sysfs (default /sys)\n"
		"      --state-dir=DIR    runtime state (default /run/coredam)\n"
		"      --core-pattern=MODE  self (default): set the pipe helper's or the coredump socket's\n"
		"                         core_pattern and restore it at exit; external: leave it to install\n"
		"                         (the helper's), socket (once coredamd listens), restore (not\n"
		"                         the socket's) and restore-socket (only what socket saved), which\n"
		"                         do that alone and exit (coredamd.service's ExecStartPre= and\n"
		"                         ExecStopPost=, coredam-socket.service's ExecStart= and ExecStop=)\n"
		"  -d, --debug            debug output\n"
		"  -h, --help             this help\n"
		"      --version          version\n\n"
		"Exit codes: 0 clean shutdown, 1 runtime failure, 2 usage, 3 bad configuration,\n"
		"4 kernel lacks support (RequireKernelSupport=yes), 5 cgroup setup failed,\n"
		"6 sysctl write failed, 7 state directory, control socket or coredump socket failed.\n");
}

static int setup_runtime(struct agent *a)
{
	sigset_t mask;
	int r;

	r = mkdir_p(a->roots.state, 0755);
	if (r < 0) {
		log_error("cannot create state directory %s: %s", a->roots.state, strerror(-r));
		return r;
	}
	/* a failure here shows when the file is written, with its reason */
	(void)mkdir_parent(a->cfg.metrics_file, 0755);
	(void)mkdir_parent(a->cfg.control_socket, 0755);
	r = coredam_ctl_listen(a->cfg.control_socket, &a->ctl_fd);
	if (r < 0) {
		log_error("cannot listen on %s: %s", a->cfg.control_socket, strerror(-r));
		return r;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	a->sig_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	if (a->sig_fd < 0) {
		log_error("signalfd: %m");
		return -errno;
	}
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

struct options {
	const char *config, *config_dir;
	const char *pattern_mode;	/* self, external, install or restore */
	bool check, dump;
};

/* Options; -1 to go on, else the exit status (--help, --version, a usage error). */
static int parse_options(struct agent *a, struct options *o, int argc, char **argv)
{
	enum { OPT_CONFIG_DIR = 256, OPT_CHECK, OPT_DUMP, OPT_VERSION, OPT_PATTERN };
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "config-dir", required_argument, NULL, OPT_CONFIG_DIR },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "dump-config", no_argument, NULL, OPT_DUMP },
		{ "cgroup-root", required_argument, NULL, COREDAM_OPT_CGROUP_ROOT },
		{ "proc-root", required_argument, NULL, COREDAM_OPT_PROC_ROOT },
		{ "sys-root", required_argument, NULL, COREDAM_OPT_SYS_ROOT },
		{ "state-dir", required_argument, NULL, COREDAM_OPT_STATE_DIR },
		{ "core-pattern", required_argument, NULL, OPT_PATTERN },
		{ "debug", no_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{}
	};
	int c;

	while ((c = getopt_long(argc, argv, "c:dh", opts, NULL)) >= 0) {
		if (coredam_roots_option(&a->roots, c, optarg))
			continue;
		switch (c) {
		case 'c':
			o->config = optarg;
			break;
		case OPT_CONFIG_DIR:
			o->config_dir = optarg;
			break;
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_DUMP:
			o->dump = true;
			break;
		case OPT_PATTERN:
			if (strcmp(optarg, "self") && strcmp(optarg, "external") && strcmp(optarg, "install") &&
			    strcmp(optarg, "socket") && strcmp(optarg, "restore") && strcmp(optarg, "restore-socket")) {
				fprintf(stderr, "coredamd: --core-pattern=%s: expected self, external, install, socket, "
					"restore or restore-socket\n", optarg);
				return EXIT_USAGE;
			}
			o->pattern_mode = optarg;
			break;
		case 'd':
			log_max_prio = LOG_DEBUG;
			break;
		case 'h':
			help(stdout);
			return EXIT_OK;
		case OPT_VERSION:
			printf("coredamd %s\n", COREDAM_VERSION);
			return EXIT_OK;
		default:
			help(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "coredamd: unexpected argument \"%s\"\n", argv[optind]);
		help(stderr);
		return EXIT_USAGE;
	}
	return -1;
}

/* 1. The configuration (and --dump-config); -1 to go on, else the exit status. */
static int load_config(struct agent *a, const struct options *o)
{
	struct coredam_error e = {};
	static char buf[65536];	/* every key, paths up to PATH_MAX */

	if (o->config)
		snprintf(a->config_file, sizeof(a->config_file), "%s", o->config);
	else
		snprintf(a->config_file, sizeof(a->config_file), "%s/coredam.conf", a->roots.conf);
	coredam_config_dropin_dirs(a->config_file, o->config_dir, &a->dropins);

	if (coredam_config_load(a->config_file, a->dropins.list, &a->cfg, &e) < 0) {
		log_error("%s", coredam_error_str(&e, buf, sizeof(buf)));
		return EXIT_CONFIG;
	}
	if (!o->dump)
		return -1;
	if (coredam_config_format(&a->cfg, buf, sizeof(buf)) < 0)
		return EXIT_GENERIC;
	fputs(buf, stdout);
	return EXIT_OK;
}

/*
 * The core_pattern switch alone (@mode install, socket or restore), for
 * the units' commands run outside the daemon's sandbox: the daemon itself
 * (--core-pattern=external) cannot write core_pattern.
 */
static int core_pattern_switch(struct agent *a, const char *mode)
{
	int r;

	r = coredam_kernel_probe(&a->roots, &a->kern);
	if (r < 0) {
		log_error("cannot read %s/sys/kernel: %s", a->roots.proc, strerror(-r));
		return EXIT_GENERIC;
	}
	/*
	 * What to put back is decided by the pattern in force, not by the
	 * configuration, which may have changed since the pattern was set: an
	 * "@@" one is the socket's, for coredam-socket.service to put back
	 * (not coredamd.service's ExecStopPost=, which runs when the daemon
	 * dies too, while the socket systemd holds keeps taking dumps for the
	 * next one); any other is the pipe helper's.
	 */
	if (!strcmp(mode, "install"))
		r = agent_core_pattern_install(a);
	else if (!strcmp(mode, "socket"))
		r = agent_core_pattern_socket(a);
	else if (agent_core_pattern_is_socket(a) == !strcmp(mode, "restore-socket"))
		r = agent_core_pattern_restore(a);
	else
		r = 0;	/* the other one's to put back */
	if (r == -EOPNOTSUPP)
		return EXIT_KERNEL;
	return r < 0 ? EXIT_SYSCTL : EXIT_OK;
}

/* --check, after the kernel's: cgroup v2 and the devices. */
static int self_check(struct agent *a)
{
	static const char *const needed[] = { "io", "memory" };
	char path[PATH_MAX], advice[2 * PATH_MAX + 400];
	_cleanup_free_ char *avail = NULL;
	struct coredam_cg_layout l;
	int r;

	if (coredam_cg_layout(a->roots.proc, a->roots.cgroup, &l) == 0 &&
	    coredam_cg_layout_advice(&l, a->roots.cgroup, advice, sizeof(advice))) {
		log_error("%s", advice);
		return EXIT_CGROUP;
	}
	snprintf(path, sizeof(path), "%s/cgroup.controllers", a->roots.cgroup);
	r = read_file_at(AT_FDCWD, path, 4096, &avail);
	if (r < 0) {
		log_error_errno(r, "%s: %m (cgroup v2 not mounted at %s)", path, a->roots.cgroup);
		return EXIT_CGROUP;
	}
	for (size_t i = 0; i < ELEMENTSOF(needed); i++)
		if (!coredam_word_in(avail, needed[i])) {
			log_error("%s lacks the %s controller: the dump cgroup cannot be limited (bound to a "
				  "cgroup v1 hierarchy, or not built into the kernel)", path, needed[i]);
			return EXIT_CGROUP;
		}
	agent_resolve_devices(a);
	log_info("self-check passed: configuration %s valid", a->config_file);
	return EXIT_OK;
}

/* 3-6. The dump cgroup, its budget, the runtime directory, the kernel's knobs; -1 once ready. */
static int start(struct agent *a)
{
	char w[24];
	int r;

	if (agent_setup_cgroup(a) < 0)
		return EXIT_CGROUP;
	agent_budget_reset(a);
	agent_resolve_devices(a);
	(void)agent_apply_io(a);	/* logged; the tick tries again */
	if (setup_runtime(a) < 0) {
		unit_detach(a);
		return EXIT_RUNTIME_DIR;
	}
	/* listening before core_pattern names the socket: no dump finds it missing */
	r = sock_setup(a);
	if (r < 0) {
		unit_detach(a);
		return r == -EOPNOTSUPP ? EXIT_KERNEL : r == -EROFS ? EXIT_CONFIG : EXIT_RUNTIME_DIR;
	}
	/* the originals are saved first */
	if (agent_apply_sysctls(a, true) < 0) {
		sock_close(a);
		agent_restore(a);
		unit_detach(a);
		return EXIT_SYSCTL;
	}
	pressure_setup(a);
	a->incomplete_since = time(NULL);
	snprintf(a->last_reload, sizeof(a->last_reload), "ok");

	log_info("ready event=ready mode=%s cgroup=%s write_bps=%s concurrency=%u devices=%zu kernel=%s",
		 coredam_mode_str(a->cfg.mode), a->cfg.cgroup, format_bps_field(w, sizeof(w), a->budget.wbps),
		 a->budget.concurrency, a->n_devs,
		 a->m.kernel_full ? "patched" : a->sock.active ? "stock, @@ socket" : "stock");
	sd_notifyf(0, "READY=1\nSTATUS=%s mode, cgroup %s%s", coredam_mode_str(a->cfg.mode), a->cfg.cgroup,
		   a->m.kernel_full ? "" : " (kernel lacks coredam support)");
	return -1;
}

int main(int argc, char **argv)
{
	static struct agent agent = {
		.roots = COREDAM_ROOTS_DEFAULT,
		.cgroot_fd = -1, .cg_fd = -1, .sig_fd = -1, .ctl_fd = -1, .events_fd = -1,
		.sock.listen_fd = -1,
	};
	struct agent *a = &agent;
	struct options o = { .pattern_mode = "self" };
	int r;

	log_setup("coredamd", LOG_TARGET_AUTO);
	r = parse_options(a, &o, argc, argv);
	if (r >= 0)
		return r;
	r = load_config(a, &o);
	if (r >= 0)
		return r;
	if (!strcmp(o.pattern_mode, "install") || !strcmp(o.pattern_mode, "socket") ||
	    !strcmp(o.pattern_mode, "restore") || !strcmp(o.pattern_mode, "restore-socket"))
		return core_pattern_switch(a, o.pattern_mode);
	a->pattern_external = !strcmp(o.pattern_mode, "external");

	/* 2. self-check: kernel, cgroup v2 */
	r = agent_check_kernel(a);
	if (r == -EOPNOTSUPP)
		return EXIT_KERNEL;
	if (r < 0)
		return EXIT_GENERIC;
	if (o.check)
		return self_check(a);

	r = start(a);
	if (r >= 0)
		return r;
	r = agent_loop(a);

	sd_notify(0, "STOPPING=1");
	/* core_pattern back first: no new dump connects to a socket about to close */
	agent_restore(a);
	/* the slice's own limits back: nobody manages its budget any more */
	unit_detach(a);
	sock_close(a);
	pressure_close(a);
	unlink(a->cfg.control_socket);
	/* a scraper sees the agent gone, not the last values it wrote */
	if (unlink(a->cfg.metrics_file) < 0 && errno != ENOENT)
		log_warning_errno(-errno, "cannot remove %s, ignoring: %m", a->cfg.metrics_file);
	return r < 0 ? EXIT_GENERIC : EXIT_OK;
}
