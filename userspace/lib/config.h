/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_CONFIG_H
#define COREDAM_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

enum coredam_mode {
	COREDAM_MODE_FIXED,
	COREDAM_MODE_ADAPTIVE,
};

/*
 * The agent's configuration. Rates are bytes (or I/Os) per second, 0 meaning
 * "no limit"; sizes are bytes; durations microseconds. The defaults are in
 * coredam_config_init() and documented in coredam.conf(5).
 */
/* A size, or a percentage of some total (the memory, a file system); both 0: "infinity". */
struct coredam_share {
	uint64_t bytes;
	uint32_t percent;	/* 1..100, when bytes is 0 */
};

struct coredam_config {
	/* [Agent] */
	enum coredam_mode mode;
	bool require_kernel_support;
	char metrics_file[PATH_MAX];
	char control_socket[PATH_MAX];
	uint64_t interval_usec;

	/* [Cgroup] */
	char cgroup[PATH_MAX];
	char kernel_leaf[1024];		/* "auto", "none" or a child of cgroup */
	uint64_t memory_high;
	bool set_through_systemd;	/* a loaded slice: its limits as systemd unit properties */

	/* [Devices] */
	char destination[PATH_MAX];	/* "" = from core_pattern */
	char devices[1024];		/* extra devices, space separated */

	/* [Limits] */
	uint64_t write_bps, read_bps, write_iops, read_iops;
	uint32_t concurrency;
	uint32_t queue_cap;
	int dump_nice;			/* -20..19, or COREDAM_NICE_KEEP */
	uint64_t wait_timeout_usec;
	struct coredam_share waiting_memory;	/* the waiting dumpers' memory, at most */
	uint64_t writeback_window;

	/* [Adaptive] */
	uint64_t floor_bps, ceiling_bps;	/* ceiling 0 = auto */
	uint64_t busy_ceiling_bps;		/* 0 = auto: the floor */
	uint32_t concurrency_floor, concurrency_ceiling;
	double pressure_target;			/* fraction of time stalled, 0..1 */
	uint64_t pressure_window_usec;
	uint64_t step_bps;			/* 0 = (ceiling - floor) / 4 */
	double backoff;				/* multiply on pressure, 0..1 */
	uint32_t hold_intervals;
	bool lift_when_idle;
	char pressure_cgroups[1024];		/* "auto", "system", or cgroup paths */

	/* [Space] */
	uint64_t free_floor_bytes;
	uint32_t free_floor_percent;
	/*
	 * Retention of the cores [Pipe] Directory= keeps (retention.h). Each
	 * limit given holds: MaxUse= "4G 10%" is the smaller of the two (0 and
	 * 0: infinity), KeepFree= "2G 5%" the larger (0 and 0: none, auto:
	 * twice FreeSpaceFloor=).
	 */
	uint64_t max_use_bytes;
	uint32_t max_use_percent;
	uint64_t keep_free_bytes;
	uint64_t max_age_usec;		/* kept cores older than this are removed; 0 = none */
	uint32_t keep_free_percent;
	bool keep_free_auto;
	bool mark_incomplete;

	/* [Pipe]: the core_pattern helper coredam-pipe(8) for stock kernels */
	bool pipe_set_core_pattern;	/* coredamd points core_pattern at it */
	char pipe_program[PATH_MAX];
	char pipe_directory[PATH_MAX];	/* where it writes cores */
	bool pipe_compress;		/* zstd */
	uint32_t pipe_compress_level;
	uint64_t pipe_size_max;		/* bytes of one core read at most; 0 = no cap */
	uint64_t pipe_time_max_usec;	/* time one core is read for at most; 0 = no cap */
	bool pipe_sandbox;		/* confine the helper before it reads (sandbox.h) */
	bool pipe_journal;		/* a systemd-coredump record for each core (core-journal.h) */

	/* [Repeats]: the cores of one crash signature kept per interval (repeats.h) */
	uint32_t repeat_keep;		/* 0 = every one */
	uint64_t repeat_interval_usec;
	/*
	 * [Socket]: coredamd serves core_pattern "@@<Listen>" (Linux 6.17 and
	 * later), storing cores as the helper does ([Pipe] Directory=,
	 * Compress=, CompressLevel=, CoreSizeMax=, CoreTimeMax=)
	 */
	bool sock_set_core_pattern;
	char sock_listen[PATH_MAX];
	/*
	 * How much of each core a writer reads into memory as fast as the
	 * kernel sends it, ahead of the paced writes: the crashed process
	 * is gone that much sooner (at most an eighth of MemAvailable at
	 * the writer's start); 0 = none
	 */
	uint64_t sock_read_ahead;
};

void coredam_config_init(struct coredam_config *cfg);

/*
 * Where drop-ins are read from, most important first: the site's
 * (coredam.conf.d beside the main file), and for the installed main file
 * also the runtime's (/run/coredam/coredam.conf.d) and the package's
 * (PREFIX/lib/coredam/coredam.conf.d). @list is NULL-terminated.
 */
struct coredam_dropin_dirs {
	char dir[3][PATH_MAX];
	const char *list[4];
};

/*
 * Fill @d for @main_file; @site, if not NULL, is the site's directory in
 * place of the one beside @main_file.
 */
void coredam_config_dropin_dirs(const char *main_file, const char *site, struct coredam_dropin_dirs *d);

/*
 * Load @main_file (absent is fine: defaults) and then every "*.conf" in
 * the directories @dropin_dirs (NULL-terminated, most important first;
 * absent directories are fine), in lexical order of their names across
 * all of them. A name in a more important directory hides the same name
 * in the others, so a link to /dev/null, which reads as empty, masks it
 * (as systemd's drop-ins). Later assignments win, but each assignment to a
 * list key (Devices=, PressureCgroups=) adds to it; an empty assignment
 * ("Key=") resets the key to its default. On failure *reterr names the
 * file, line (0: not tied to a line) and problem, and *ret is untouched.
 */
int coredam_config_load(const char *main_file, const char *const *dropin_dirs,
			struct coredam_config *ret, struct coredam_error *reterr);

/*
 * With COREDAM_CONFIG_LENIENT, what a client such as coredamctl needs: a
 * bad line (or a whole file that cannot be read) is left out and loading
 * goes on; *ret is set to everything that did load, and the first problem
 * is returned and named in *reterr as above.
 */
#define COREDAM_CONFIG_LENIENT 1U
int coredam_config_load_full(const char *main_file, const char *const *dropin_dirs, unsigned int flags,
			     struct coredam_config *ret, struct coredam_error *reterr);

/*
 * Parse one "Key=value" of [Section] into @cfg (used by "coredamctl set"
 * too); for a list key, add to it.
 */
int coredam_config_set(struct coredam_config *cfg, const char *section, const char *key,
		       const char *value, struct coredam_error *reterr);

/* @share of @total bytes: its size, or its percentage of @total; 0 for "infinity". */
uint64_t coredam_share_bytes(const struct coredam_share *share, uint64_t total);

/* Absolute free-space floor for a filesystem of @total bytes: the larger of both. */
uint64_t coredam_config_free_floor(const struct coredam_config *cfg, uint64_t total);
/* [Space] MaxUse= for a filesystem of @total bytes: the smaller of both; UINT64_MAX for infinity. */
uint64_t coredam_config_max_use(const struct coredam_config *cfg, uint64_t total);
/* [Space] KeepFree= for a filesystem of @total bytes: the larger of both (auto: twice the floor); 0 none. */
uint64_t coredam_config_keep_free(const struct coredam_config *cfg, uint64_t total);

const char *coredam_mode_str(enum coredam_mode m);

/*
 * Set Section.Key=value in the drop-in @path (created if missing),
 * keeping every other assignment in it (the last of each key; comments
 * are dropped); written atomically. -EINVAL if @path does not parse,
 * -E2BIG if the assignment would not fit on a line of its own or the file
 * holds too many keys.
 */
int coredam_dropin_set(const char *path, const char *section, const char *key, const char *value);

/* Render the effective configuration as INI (for "coredamd --dump-config"). */
int coredam_config_format(const struct coredam_config *cfg, char *buf, size_t size);

/*
 * For config-file.c: the index of Section.Name among the keys (-ENOENT if
 * there is none), and the name of the key at index @i (NULL past the last).
 */
int coredam_config_key_index(const char *section, const char *name);
bool coredam_config_key_is_list(const char *section, const char *name);
const char *coredam_config_key_name(size_t i);

#endif
