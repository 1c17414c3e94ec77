/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAMCTL_H
#define COREDAMCTL_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>

#include "config.h"
#include "control.h"
#include "dumps.h"
#include "pipe-state.h"
#include "repeats.h"
#include "roots.h"
#include "status.h"
#include "sysctl.h"

/*
 * Exit codes, documented in coredamctl(1); those of an agent that does not
 * answer are coredam_ctl_reach()'s verdicts, systemctl status's.
 */
enum {
	CTL_EXIT_OK = 0,
	CTL_EXIT_FAIL = 1,			/* the request failed, or doctor found a problem */
	CTL_EXIT_USAGE = 2,
	CTL_EXIT_NO_AGENT = COREDAM_CTL_NOT_RUNNING,	/* 3: set, reload, status: the agent is not running */
	CTL_EXIT_NO_ACCESS = COREDAM_CTL_DENIED,	/* 4: set, reload, status: the agent's socket is root's */
};

struct ctl {
	struct coredam_roots roots;
	char config_file[PATH_MAX], socket[PATH_MAX];
	bool socket_given;			/* --socket=: the configuration does not name it */
	struct coredam_dropin_dirs dropins;	/* dir[0]: the site's, where set --persist writes */
	struct coredam_config cfg;
	bool cfg_ok;
	char cfg_error[700];
};

/* What status and watch show. */
struct ctl_status {
	struct coredam_kernel_support kern;
	bool have_stats;
	int stats_error;		/* why kernel.core_dump_stats could not be read, -errno */
	struct coredam_stats stats;
	bool stats_from_pipe;		/* stock kernel: counters of coredam-pipe, or of coredamd's socket */
	bool stats_from_socket;		/* ... of coredamd's socket: core_pattern is "@..." */
	struct coredam_pipe_stats pipe;	/* valid with stats_from_pipe */
	char core_pattern[1024], core_cgroup[PATH_MAX];
	bool agent_running;		/* the agent answered STATUS */
	struct coredam_status agent;	/* its answer */
	enum coredam_ctl_reach agent_reach;	/* COREDAM_CTL_REACHED with an answer, else why not */
	char agent_error[1024];		/* and in words */
	char cgroup[PATH_MAX];
	char io_max[2048];
	char memory_high[32];
	struct coredam_dump *dumps;
	size_t n_dumps;
	double *rates;			/* bytes/s per dump, sampled over a short interval */
	struct coredam_repeats *repeats;	/* coredam-pipe's crash signatures, most skipped first; NULL: none */
	int repeats_error;		/* why they could not be read (-EACCES for a user), -errno */
};

/*
 * An option of the command @cmd it does not handle itself: 'h' prints the
 * command's help (CTL_EXIT_OK), anything else is a usage error getopt has
 * named (CTL_EXIT_USAGE).
 */
int ctl_option_exit(const char *cmd, int opt);
/* "coredamctl CMD: message" and where the command's help is; CTL_EXIT_USAGE. */
int ctl_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Say that @arg is one argument too many for the command @cmd; CTL_EXIT_USAGE. */
int ctl_unexpected_arg(const char *cmd, const char *arg);
/*
 * The options of a command that takes no argument: -h/--help, and the one
 * flag --@flag_long/-@flag_short (NULL: none) setting *@ret. -1 to go on,
 * else the exit code (the help, a usage error, an argument too many).
 */
int ctl_flag_only(const char *cmd, const char *flag_long, int flag_short, int argc, char **argv, bool *ret);
/* Fill @s; on failure say so on stderr and release @s. */
int ctl_collect(struct ctl *c, struct ctl_status *s, int rate_ms);
void ctl_status_free(struct ctl_status *s);
/*
 * Send @request to the agent and read its answer into @answer: the
 * verdict of coredam_ctl_reach() (the configuration's error counts when it
 * named the socket), anything but COREDAM_CTL_REACHED with why in @why.
 */
enum coredam_ctl_reach ctl_ask(const struct ctl *c, const char *request, char *answer, size_t size, char *why,
			       size_t why_size);

/*
 * The agent's field @f in @buf, for people: a number, or a string escaped
 * (the agent's strings are anyone's text); @none when it did not send it.
 */
const char *ctl_agent_field(const struct ctl_status *s, enum coredam_status_field f, const char *none, char *buf,
			    size_t size);

int cmd_status(struct ctl *c, int argc, char **argv);
int cmd_watch(struct ctl *c, int argc, char **argv);
int cmd_set(struct ctl *c, int argc, char **argv);
int cmd_reload(struct ctl *c, int argc, char **argv);
int cmd_doctor(struct ctl *c, int argc, char **argv);
int cmd_list(struct ctl *c, int argc, char **argv);
int cmd_info(struct ctl *c, int argc, char **argv);
int cmd_dump(struct ctl *c, int argc, char **argv);
int cmd_gdb(struct ctl *c, int argc, char **argv);
int cmd_vacuum(struct ctl *c, int argc, char **argv);

#endif
