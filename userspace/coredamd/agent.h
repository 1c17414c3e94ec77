/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAMD_AGENT_H
#define COREDAMD_AGENT_H

#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "budget.h"
#include "config.h"
#include "devices.h"
#include "dumps.h"
#include "error.h"
#include "escape.h"
#include "laps.h"
#include "metrics.h"
#include "roots.h"
#include "slice.h"
#include "sock-admit.h"
#include "sock-proto.h"
#include "space.h"
#include "sysctl.h"
#include "tick.h"
#include "time-util.h"

/* Exit codes, documented in coredamd(8). */
enum {
	EXIT_OK = 0,
	EXIT_GENERIC = 1,
	EXIT_USAGE = 2,
	EXIT_CONFIG = 3,
	EXIT_KERNEL = 4,
	EXIT_CGROUP = 5,
	EXIT_SYSCTL = 6,
	EXIT_RUNTIME_DIR = 7,
};

#define MAX_DEVS 8
#define MAX_PSI 16
#define MAX_WATCH 64
#define MAX_HELD 32
#define MAX_TRACKED 256

struct tracked_dump {
	pid_t pid;
	enum coredam_dump_state state;
	char exe[COREDAM_ESCAPE_SIZE(255)];	/* escaped: one word of a log line */
	uint64_t first_usec, admitted_usec, bytes, syscw;
	bool seen;
};

/* One connection of the coredump socket, in arrival order (socket.c). */
enum sock_conn_state {
	SOCK_CONN_REQ,		/* accepted, its request not read yet */
	SOCK_CONN_WAITING,	/* held before the ack */
	SOCK_CONN_WRITING,	/* acked COREDUMP_KERNEL, its writer streams it */
};

struct sock_conn {
	enum sock_conn_state state;
	int fd;
	struct coredam_sock_req req;
	struct coredam_sock_peer peer;	/* peer.pidfd owned, -1 before it is known */
	uint64_t serial;		/* arrival number: the metadata's ticket */
	uint64_t arrived_usec, admitted_usec;
	uint64_t time;			/* seconds since the epoch at arrival */
	char comm[16];			/* as /proc gave it: only for the file name, sanitized there */
	char exe[COREDAM_ESCAPE_SIZE(255)];	/* escaped: one word of a log line */
	uint64_t rlimit;		/* its RLIMIT_CORE: the kernel applies none to a socket */
	/* read once: a task the kernel holds in its dump neither frees memory nor moves */
	uint64_t anon_bytes;		/* RssAnon */
	char cgroup[1024];		/* its v2 cgroup, or an ancestor when longer; "" unknown */
	pid_t writer;
	int writer_pidfd;
};

/* coredamd serving core_pattern "@@<Listen>" ([Socket] SetCorePattern=yes) */
struct sock_server {
	bool active;
	int listen_fd;
	bool inherited;			/* listen_fd is systemd's (coredamd.socket): it outlives us */
	int backlog;
	char pattern[PATH_MAX + 2];	/* "@@<Listen>" */
	struct sock_conn *conns;
	size_t n, cap;
	uint64_t serial;
	uint32_t writing, waiting;
	struct coredam_sock_grants grants;	/* the sources of the last slots given */
	uint64_t dropped;		/* connections that were no dump, or broke the protocol */
	bool stopping;			/* the agent stops: what arrives now is rejected */
	int kmsg_fd;			/* /dev/kmsg, read for the crashes that never connected */
	uint64_t kmsg_next;		/* the next record's sequence number to count */
	bool kmsg_polled;		/* the last sock_poll_fill() put kmsg_fd last */
	bool kmsg_overrun_said;
};

/*
 * The dump cgroup as a systemd slice (unit.c): while active, its limits go
 * to systemd as runtime unit properties, not to cgroupfs.
 */
struct slice_unit {
	struct sd_bus *bus;		/* PID 1's private socket, or the system bus */
	char name[256];			/* "coredump.slice" */
	char object[512];		/* its D-Bus object */
	bool active;
	bool have_sent;
	struct coredam_slice_want sent;	/* what systemd was last told */
	struct coredam_slice_limits saved;	/* the slice's own limits, put back at stop */
	uint64_t calls;			/* SetUnitProperties calls made */
};

struct psi_source {
	char path[PATH_MAX];	/* absolute path of the pressure file */
	char cgroup[PATH_MAX];	/* its cgroup ("/system.slice"); "" for the system's */
	int trigger_fd;
	uint64_t last_total;
	bool have_total;
	uint64_t last_ios;	/* requests to the dump devices, from io.stat */
	bool have_ios;
	bool held;		/* held a dumper at the last look: not counted */
};

struct agent {
	struct coredam_roots roots;
	char config_file[PATH_MAX];
	struct coredam_dropin_dirs dropins;
	struct coredam_config cfg;
	char last_reload[600];

	struct coredam_kernel_support kern;
	int cgroot_fd, cg_fd;
	char cg_path[PATH_MAX];
	char kernel_path[PATH_MAX];	/* kernel.core_cgroup: cg_path or a leaf under it */

	char core_pattern[4096];
	struct coredam_core_pattern cp;
	char dest[PATH_MAX];
	bool dest_known;
	struct coredam_dev_info devs[MAX_DEVS];
	size_t n_devs;

	struct coredam_budget_params params;
	struct coredam_budget budget;
	struct coredam_admission adm;
	bool adm_applied;
	uint64_t mem_total;		/* MemTotal, for WaitingMemoryMax=N%; 0 unknown */
	uint64_t pin_bytes;		/* the most one dumper holds (RssAnon), now or lately; 0 none */
	uint64_t pin_seen_usec;		/* when a dumper was last seen holding memory */
	bool sysctls_touched;
	bool pipe_active;	/* core_pattern points at coredam-pipe (stock kernel, [Pipe] SetCorePattern=yes) */
	bool pattern_external;	/* --core-pattern=external: ExecStartPre= installs it, not us */
	bool stats_from_pipe;	/* counters come from coredam-pipe's state file */

	struct psi_source psi[MAX_PSI];
	size_t n_psi;
	/* cgroups holding a dumper or a pipe helper at the last look */
	char held[MAX_HELD][1024];
	size_t n_held;
	/* watched in place of a source that holds one: its dumper-free cgroups */
	struct psi_source watch[MAX_WATCH];
	size_t n_watch;
	bool triggered;
	uint64_t last_tick_usec;

	/* what the tick remembers: the cgroup lost, the disk's rate, the space guard */
	struct coredam_tick_state tick;

	struct coredam_metrics m;
	struct coredam_stats last_stats;
	bool have_last_stats;
	time_t incomplete_since;

	int nice_err;			/* the last failure of DumpNice=, not logged again */
	struct tracked_dump dumps[MAX_TRACKED];
	size_t n_dumps;

	struct sock_server sock;
	struct slice_unit unit;

	int sig_fd, ctl_fd, events_fd;
	bool quit, reload;

	/* the loop's current busy stretch, from poll() returning to poll() again */
	struct coredam_laps laps;
};

/* The loop's time since the last lap goes to @name (logged when the stretch is slow). */
static inline void agent_lap(struct agent *a, const char *name)
{
	coredam_laps_mark(&a->laps, name, now_usec(CLOCK_MONOTONIC));
}

/* agent.c: setup and applying state to the kernel */
int agent_check_kernel(struct agent *a);
int agent_setup_cgroup(struct agent *a);
void agent_resolve_devices(struct agent *a);
/*
 * Where cores go under the core_pattern @pat: Destination=, else the
 * directory the pattern names (@cp as read, zeroed when not read; its
 * note says how the directory was found, or why not). False: unknown.
 */
bool agent_pattern_dest(const struct agent *a, const char *pat, struct coredam_core_pattern *cp, char *buf,
			size_t size);
int agent_apply_io(struct agent *a);
bool agent_io_in_force(struct agent *a);
bool agent_cgroup_gone(struct agent *a);
int agent_apply_core_cgroup(struct agent *a);
int agent_apply_sysctls(struct agent *a, bool first);
int agent_apply_admission(struct agent *a);
void agent_restore(struct agent *a);
/*
 * --core-pattern=install, =socket and =restore: the switch the units'
 * commands outside the daemon's sandbox make
 */
int agent_core_pattern_install(struct agent *a);
int agent_core_pattern_socket(struct agent *a);
/* Does core_pattern name a coredump socket ("@@..."), as coredam-socket.service sets it? */
bool agent_core_pattern_is_socket(struct agent *a);
int agent_core_pattern_restore(struct agent *a);
void agent_budget_reset(struct agent *a);
int agent_reload(struct agent *a);
/* SET NAME VALUE of the control socket, put in force; on failure *reterr says why. */
int agent_set(struct agent *a, const char *name, const char *value, struct coredam_error *reterr);

/* unit.c: the slice's limits through systemd */
/*
 * Under systemd, with [Cgroup] SetThroughSystemd=yes, when a->cg_path is
 * the cgroup of a slice systemd has loaded: connect, keep the slice's own
 * limits (in the state directory too) and mark a->unit active; else leave
 * it inactive. Logged; never fatal.
 */
void unit_attach(struct agent *a);
/*
 * Tell systemd the properties of @want that differ from what it was last
 * told, in one SetUnitProperties call (runtime). On failure it connects
 * again and tries once more; a second failure is returned.
 */
int unit_apply(struct agent *a, const struct coredam_slice_want *want);
/*
 * Stop setting them through systemd after unit_apply() failed: the saved
 * copy stays for the next start only if something was set.
 */
void unit_fallback(struct agent *a);
/* Put the slice's own limits back, forget the saved copy, disconnect. */
void unit_detach(struct agent *a);
/*
 * Ask systemd to reload unit @name if it is active or reloading (a job
 * queued, not waited for): 1 asked, 0 not (stopping, stopped), or -errno.
 */
int unit_reload_active(struct agent *a, const char *name);

/* socket.c: the coredump socket's server */
/* The core_pattern that names [Socket] Listen=, "@@<Listen>", at @buf */
int sock_pattern(const struct agent *a, char *buf, size_t size);
/* Listen on [Socket] Listen=; false when the socket is not served. Dumps the
 * last server held when it ended are counted lost first. */
int sock_setup(struct agent *a);
/*
 * [Pipe] Directory= for the socket's writers: created if missing, and
 * refused (-EROFS, @reterr says why and what to do) when it is read-only
 * to coredamd, as the unit's ProtectSystem=strict makes every path it does
 * not name in ReadWritePaths=: each core would be lost there.
 */
int sock_check_directory(const struct agent *a, struct coredam_error *reterr);
/* The core_pattern that names the socket, once sock_setup() listens */
int sock_install_pattern(struct agent *a);
/*
 * After core_pattern changed: if the socket is served and the pattern no
 * longer names it, apply it again (coredam-socket.service's reload under
 * the units, the daemon's own write run by hand), logged once a change.
 */
void sock_pattern_check(struct agent *a);
/*
 * The dumps the server holds or streams, as read from /proc when each
 * connected: WRITING once answered COREDUMP_KERNEL, WAITING before.
 * Served on the socket, these are all the dumps there are (but for
 * crashes still in the listen backlog), so the agent's look goes no
 * further.
 */
int sock_dumps_list(const struct agent *a, struct coredam_dump **ret, size_t *ret_n);
/* Stop: REJECT every dump still held, close the socket; the writers finish on their own */
void sock_close(struct agent *a);
/* The socket's fds to poll, at @p (room for sock_poll_max()), and when to wake at the latest */
size_t sock_poll_max(const struct agent *a);
size_t sock_poll_fill(struct agent *a, struct pollfd *p, uint64_t *deadline_usec);
/* Handle what poll() said of the fds sock_poll_fill() gave, then admit */
void sock_poll_handle(struct agent *a, const struct pollfd *p, size_t n);

/* pressure.c */
void pressure_setup(struct agent *a);
void pressure_close(struct agent *a);
void pressure_sample(struct agent *a, uint64_t now, struct coredam_pressure_sample *ret);
/* @cgroup ("" for the system) holds a dumper or a pipe helper at the last look */
bool pressure_holds_dumper(const struct agent *a, const char *cgroup);
/* Mark a pressure source as holding a dumper or not, logging a change (event=pressure-source) */
void pressure_set_held(struct psi_source *s, bool held);

/* loop.c */
int agent_loop(struct agent *a);
void track_dumps(struct agent *a, bool full);

#endif
