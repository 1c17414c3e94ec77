// SPDX-License-Identifier: LGPL-2.1-or-later
/* Repeated crashes: see repeats.h. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "alloc-util.h"
#include "escape.h"
#include "fileio.h"
#include "macro.h"
#include "pipe-state.h"
#include "repeats.h"
#include "string-util.h"
#include "time-util.h"

/* FNV-1a, 64 bits, over @len bytes and then a separator */
static uint64_t fnv(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	h ^= 0xff;	/* no byte of a string: "ab"+"c" differs from "a"+"bc" */
	return h * 0x100000001b3ULL;
}

void coredam_repeat_key(const struct coredam_core_site *site, int signal, const char *comm,
			struct coredam_repeat_key *ret)
{
	const char *exe = site && site->exe[0] ? site->exe : comm ? comm : "";
	bool in_file = site && site->have_pc && site->file[0];
	const char *sig = sigabbrev_np(signal);
	char signame[16];
	uint64_t h = 0xcbf29ce484222325ULL;
	int32_t s = signal;

	if (sig)
		snprintf(signame, sizeof(signame), "SIG%s", sig);
	else
		snprintf(signame, sizeof(signame), "signal %d", signal);
	h = fnv(h, exe, strlen(exe));
	h = fnv(h, &s, sizeof(s));
	if (in_file) {
		h = fnv(h, site->file, strlen(site->file));
		h = fnv(h, &site->offset, sizeof(site->offset));
		snprintf(ret->label, sizeof(ret->label), "%s %s at %s+0x%" PRIx64, exe, signame, site->file,
			 site->offset);
	} else {
		snprintf(ret->label, sizeof(ret->label), "%s %s", exe, signame);
	}
	ret->hash = h;
}

int coredam_repeats_parse(const char *text, struct coredam_repeats *ret)
{
	struct coredam_repeats t = { 0 };
	const char *line = text;

	while (*line && t.n < COREDAM_REPEATS_MAX) {
		const char *eol = strchrnul(line, '\n');
		struct coredam_repeat_entry e = { 0 };
		char tmp[8 * COREDAM_REPEAT_LABEL_MAX];
		size_t len = (size_t)(eol - line);
		int label = -1;

		if (len < sizeof(tmp)) {
			memcpy(tmp, line, len);
			tmp[len] = '\0';
			if (sscanf(tmp, "%" SCNx64 " %" SCNu64 " %" SCNu64 " %" SCNu32 " %" SCNu64 " %" SCNu64 " %n",
				   &e.hash, &e.window_start, &e.last, &e.window_kept, &e.kept, &e.skipped, &label) == 6 &&
			    label > 0) {
				coredam_unescape(tmp + label, len - (size_t)label, e.label, sizeof(e.label));
				t.e[t.n++] = e;
			}
		}
		line = *eol ? eol + 1 : eol;
	}
	*ret = t;
	return 0;
}

int coredam_repeats_format(const struct coredam_repeats *t, char *buf, size_t size)
{
	struct strbuf sb = STRBUF_INIT(buf, size);

	for (size_t i = 0; i < t->n; i++) {
		const struct coredam_repeat_entry *e = &t->e[i];
		char label[COREDAM_ESCAPE_SIZE(COREDAM_REPEAT_LABEL_MAX)];

		strbuf_printf(&sb, "%016" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu32 " %" PRIu64 " %" PRIu64 " %s\n",
			      e->hash, e->window_start, e->last, e->window_kept, e->kept, e->skipped,
			      coredam_escape(e->label, 0, label, sizeof(label)));
	}
	return strbuf_done(&sb);
}

bool coredam_repeats_decide(struct coredam_repeats *t, const struct coredam_repeat_key *k, uint64_t now,
			    uint32_t keep, uint64_t interval_usec, const struct coredam_repeat_entry **ret_entry)
{
	struct coredam_repeat_entry *e = NULL;
	bool kept;

	for (size_t i = 0; i < t->n && !e; i++)
		if (t->e[i].hash == k->hash)
			e = &t->e[i];
	if (!e) {
		if (t->n < COREDAM_REPEATS_MAX) {
			e = &t->e[t->n++];
		} else {
			e = &t->e[0];
			for (size_t i = 1; i < t->n; i++)
				if (t->e[i].last < e->last)
					e = &t->e[i];
		}
		*e = (struct coredam_repeat_entry){ .hash = k->hash, .window_start = now };
		snprintf(e->label, sizeof(e->label), "%s", k->label);
	}
	/* a new window once the interval has passed (or the clock went back: another boot's file) */
	if (now < e->window_start || now - e->window_start >= interval_usec) {
		e->window_start = now;
		e->window_kept = 0;
	}
	kept = keep == 0 || e->window_kept < keep;
	if (kept) {
		e->window_kept++;
		e->kept++;
	} else {
		e->skipped++;
	}
	e->last = now;
	*ret_entry = e;
	return kept;
}

static int repeats_read_at(int dirfd, struct coredam_repeats *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = read_file_at(dirfd, COREDAM_REPEATS_FILE, COREDAM_REPEATS_MAX * 8 * COREDAM_REPEAT_LABEL_MAX, &s);
	if (r < 0)
		return r;
	return coredam_repeats_parse(s, ret);
}

int coredam_repeats_read(const char *state_dir, struct coredam_repeats *ret)
{
	_cleanup_close_ int dfd = -1;
	int r;

	r = coredam_pipe_dir_open(state_dir, false, &dfd);
	if (r < 0)
		return r;
	return repeats_read_at(dfd, ret);
}

int coredam_repeats_check(const char *state_dir, const struct coredam_repeat_key *k, uint32_t keep,
			  uint64_t interval_usec, struct coredam_repeat_entry *ret_entry)
{
	_cleanup_close_ int dfd = -1, lfd = -1;
	_cleanup_free_ struct coredam_repeats *t = NULL;
	_cleanup_free_ char *buf = NULL;
	const struct coredam_repeat_entry *e;
	size_t size = COREDAM_REPEATS_MAX * (96 + COREDAM_ESCAPE_SIZE(COREDAM_REPEAT_LABEL_MAX));
	bool kept;
	int r;

	t = calloc(1, sizeof(*t));
	buf = malloc(size);
	if (!t || !buf)
		return -ENOMEM;
	r = coredam_pipe_dir_open(state_dir, true, &dfd);
	if (r < 0)
		return r;
	r = coredam_pipe_dir_lock(dfd, LOCK_EX, &lfd);
	if (r < 0)
		return r;
	r = repeats_read_at(dfd, t);
	if (r < 0)
		memset(t, 0, sizeof(*t));	/* missing or damaged: start over rather than block a dump */
	kept = coredam_repeats_decide(t, k, now_usec(CLOCK_BOOTTIME), keep, interval_usec, &e);
	*ret_entry = *e;
	r = coredam_repeats_format(t, buf, size);
	if (r < 0)
		return r;
	r = write_file_atomic_at(dfd, COREDAM_REPEATS_FILE, buf, (size_t)r, 0600);
	if (r < 0)
		return r;
	return kept;
}
