/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The journal record of a crash coredam kept (or skipped as a repeat), in
 * the form systemd-coredump writes its own, so that coredumpctl list,
 * info, dump and debug find the cores in [Pipe] Directory=: MESSAGE_ID=
 * fc2e22bc6ee647b6b90729ab34a250b1 and the COREDUMP_* fields coredumpctl
 * reads, with only what coredam knows (the kernel's %-specifiers, the
 * core's own notes, what the writer did; nothing from /proc/PID), and
 * COREDAM_* fields of its own. Sent through the logger's one journal
 * sender (log_journal_send()): the crashed process's strings go verbatim
 * in the protocol's binary form, and escaped in MESSAGE=. [Pipe]
 * Journal=no sends nothing; without a journal nothing is sent anywhere.
 * docs/pipe-helper.md lists the fields.
 */
#ifndef COREDAM_CORE_JOURNAL_H
#define COREDAM_CORE_JOURNAL_H

#include "config.h"
#include "core-store.h"
#include "elfcore.h"
#include "meta.h"
#include "pipe-args.h"
#include "repeats.h"

/* systemd's SD_MESSAGE_COREDUMP: what coredumpctl matches */
#define COREDAM_COREDUMP_MESSAGE_ID "fc2e22bc6ee647b6b90729ab34a250b1"

/*
 * The record of the core of @a stored as @st (complete or kept
 * incomplete, @m as written beside it), with the repeat table's counts of
 * its signature @rep when the helper checked it (NULL: not checked). A
 * failure to send is logged (a warning), never fatal; returns 0 when sent
 * or not meant to be, else the -errno (-ENOTCONN: no journal, not logged).
 */
int coredam_core_journal_stored(const struct coredam_config *cfg, const struct coredam_pipe_args *a,
				const struct coredam_core_meta *m, const struct coredam_core_stored *st,
				const struct coredam_repeat_entry *rep);

/*
 * The record of a crash not stored because it repeats @key (@e its
 * entry in the repeat table after this crash, @site where it crashed
 * when read; NULL: unknown): no COREDUMP_FILENAME, so coredumpctl lists
 * it with no core. The caller rate-limits it as it does its log line.
 */
int coredam_core_journal_repeat(const struct coredam_config *cfg, const struct coredam_pipe_args *a,
				const struct coredam_core_meta *m, const struct coredam_core_site *site,
				const struct coredam_repeat_key *key, const struct coredam_repeat_entry *e);

#endif
