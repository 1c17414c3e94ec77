// SPDX-License-Identifier: LGPL-2.1-or-later
/* The journal record of a kept or skipped core, as systemd-coredump writes one (see core-journal.h). */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "core-journal.h"
#include "escape.h"
#include "log.h"
#include "macro.h"
#include "pipe-outcome.h"

/* One record's fields and the text they point at. */
struct record {
	struct log_field f[LOG_FIELDS_MAX];
	size_t n;
	char num[20][24];	/* numbers as text */
	size_t nn;
	char signame[24];
	char hash[17];
	char filename[PATH_MAX + NAME_MAX + 2];
	char comm[COREDAM_ESCAPE_SIZE(sizeof(((struct coredam_pipe_args *)0)->comm))];
	char label[COREDAM_ESCAPE_SIZE(COREDAM_REPEAT_LABEL_MAX)];
	char message[2048];
	struct coredam_repeat_key key;
};

static void add(struct record *r, const char *name, const char *value)
{
	if (r->n < ELEMENTSOF(r->f))
		r->f[r->n++] = (struct log_field){ name, value };
}

static void add_u64(struct record *r, const char *name, uint64_t v)
{
	if (r->nn >= ELEMENTSOF(r->num))
		return;
	snprintf(r->num[r->nn], sizeof(r->num[0]), "%" PRIu64, v);
	add(r, name, r->num[r->nn++]);
}

/*
 * What both records say of the crash, each only when known: the kernel's
 * %P %u %g %s %t, RLIMIT_CORE (%c, or read by the helper), %d and %e
 * (COREDUMP_COMM: the crashed process's bytes, verbatim), the executable
 * from the core's notes (the NT_FILE mapping holding AT_ENTRY; left out
 * when its name filled the field and may have been cut), and the
 * signature the repeat table knows the crash by (@key, or made from
 * @site as the helper makes it).
 */
static void crash_fields(struct record *r, const struct coredam_pipe_args *a, const struct coredam_core_meta *m,
			 const struct coredam_core_site *site, const struct coredam_repeat_key *key)
{
	const char *abbrev = sigabbrev_np(a->signal);

	add(r, "MESSAGE_ID", COREDAM_COREDUMP_MESSAGE_ID);
	add_u64(r, "COREDUMP_PID", (uint64_t)a->pid);
	add_u64(r, "COREDUMP_UID", (uint64_t)a->uid);
	add_u64(r, "COREDUMP_GID", (uint64_t)a->gid);
	add_u64(r, "COREDUMP_SIGNAL", (uint64_t)a->signal);
	if (abbrev) {
		snprintf(r->signame, sizeof(r->signame), "SIG%s", abbrev);
		add(r, "COREDUMP_SIGNAL_NAME", r->signame);
	}
	/* microseconds, as systemd-coredump expands %t */
	if (a->time <= UINT64_MAX / 1000000)
		add_u64(r, "COREDUMP_TIMESTAMP", a->time * 1000000);
	if (a->have_rlimit || m->rlimit != UINT64_MAX)
		add_u64(r, "COREDUMP_RLIMIT", m->rlimit);
	if (a->dumpable >= 0)
		add_u64(r, "COREDUMP_DUMPABLE", (uint64_t)a->dumpable);
	add(r, "COREDUMP_COMM", a->comm);
	if (site && site->exe[0] && strlen(site->exe) < sizeof(site->exe) - 1)
		add(r, "COREDUMP_EXE", site->exe);

	if (key)
		r->key = *key;
	else
		coredam_repeat_key(site, a->signal, a->comm, &r->key);
	snprintf(r->hash, sizeof(r->hash), "%016" PRIx64, r->key.hash);
	add(r, "COREDAM_SIGNATURE", r->hash);
	add(r, "COREDAM_SIGNATURE_LABEL", r->key.label);
	coredam_escape(a->comm, 0, r->comm, sizeof(r->comm));
	coredam_escape(r->key.label, 0, r->label, sizeof(r->label));
}

static void repeat_fields(struct record *r, const struct coredam_repeat_entry *e)
{
	if (!e)
		return;
	add_u64(r, "COREDAM_REPEAT_KEPT", e->kept);
	add_u64(r, "COREDAM_REPEAT_SKIPPED", e->skipped);
}

static int send_record(struct record *r, int prio, pid_t pid)
{
	int ret = log_journal_send(prio, r->f, r->n);

	if (ret < 0 && ret != -ENOTCONN)
		log_full(LOG_WARNING, "core of pid %d: no journal record for coredumpctl: %s", (int)pid, strerror(-ret));
	return ret;
}

int coredam_core_journal_stored(const struct coredam_config *cfg, const struct coredam_pipe_args *a,
				const struct coredam_core_meta *m, const struct coredam_core_stored *st,
				const struct coredam_repeat_entry *rep)
{
	const struct coredam_pipe_copy_result *res = &st->res;
	struct record r = { .n = 0 };
	size_t dl = strlen(a->dir);

	if (!cfg->pipe_journal)
		return 0;
	crash_fields(&r, a, m, &st->site, NULL);
	snprintf(r.filename, sizeof(r.filename), "%s%s%s", a->dir, dl && a->dir[dl - 1] == '/' ? "" : "/",
		 st->final);
	add(&r, "COREDUMP_FILENAME", r.filename);
	if (m->truncated)
		add(&r, "COREDUMP_TRUNCATED", "1");
	add(&r, "COREDAM_STATE", m->truncated ? "incomplete" : "complete");
	add_u64(&r, "COREDAM_SIZE", res->in_bytes);
	add_u64(&r, "COREDAM_DISK_SIZE", res->out_bytes);
	if (m->compression)
		add(&r, "COREDAM_COMPRESSION", m->compression);
	if (m->truncated && !res->truncated && st->expected)
		add_u64(&r, "COREDAM_EXPECTED_SIZE", st->expected);
	add_u64(&r, "COREDAM_WAITED_MS", m->waited_ms);
	add_u64(&r, "COREDAM_WRITE_MS", m->write_ms);
	repeat_fields(&r, rep);

	if (!m->truncated)
		snprintf(r.message, sizeof(r.message), "Process %d (%s) of user %u dumped core.", (int)a->pid, r.comm,
			 (unsigned int)a->uid);
	else if (res->truncated)
		snprintf(r.message, sizeof(r.message),
			 "Process %d (%s) of user %u dumped core; kept incomplete: %" PRIu64 " bytes%s.", (int)a->pid,
			 r.comm, (unsigned int)a->uid, res->in_bytes, coredam_pipe_cut_reason(res, m->rlimit));
	else
		snprintf(r.message, sizeof(r.message),
			 "Process %d (%s) of user %u dumped core; kept incomplete: %" PRIu64 " of the %" PRIu64
			 " bytes its ELF headers declare (process killed while dumping?).",
			 (int)a->pid, r.comm, (unsigned int)a->uid, res->in_bytes, st->expected);
	add(&r, "MESSAGE", r.message);
	return send_record(&r, LOG_CRIT, a->pid);
}

int coredam_core_journal_repeat(const struct coredam_config *cfg, const struct coredam_pipe_args *a,
				const struct coredam_core_meta *m, const struct coredam_core_site *site,
				const struct coredam_repeat_key *key, const struct coredam_repeat_entry *e)
{
	struct record r = { .n = 0 };

	if (!cfg->pipe_journal)
		return 0;
	crash_fields(&r, a, m, site, key);
	add(&r, "COREDAM_STATE", "skipped-repeat");
	repeat_fields(&r, e);
	snprintf(r.message, sizeof(r.message),
		 "Process %d (%s) of user %u dumped core; not stored: a repeat of %s; %" PRIu64 " kept, %" PRIu64
		 " skipped as repeats so far ([Repeats] Keep=%" PRIu32 ").",
		 (int)a->pid, r.comm, (unsigned int)a->uid, r.label, e->kept, e->skipped, cfg->repeat_keep);
	add(&r, "MESSAGE", r.message);
	return send_record(&r, LOG_NOTICE, a->pid);
}
