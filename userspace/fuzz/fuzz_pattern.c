// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kernel.core_pattern and what the kernel passes through it: the pattern
 * parser that finds the core destination, coredam-pipe's arguments (the
 * input split at spaces, as the kernel splits an expanded pipe pattern),
 * and the crashed process's name on its way into a file name, into the
 * JSON metadata beside the core, and into log lines and terminals.
 *
 * Properties: a destination found is absolute and free of '%' specifiers;
 * a sanitized name is 1 to 15 characters of [A-Za-z0-9._-], not starting
 * with '.'; a core name holds no '/'; the metadata is printable ASCII with
 * well-formed string escapes, and parses back to the name it was given;
 * an escaped name is valid UTF-8 with no control character (and, as a log
 * word, no space or '"', and exactly one journal field).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "fuzz.h"
#include "json-util.h"
#include "meta.h"
#include "pipe-args.h"
#include "sysctl.h"
#include "macro.h"

#define MAX_ARGS 32

static void check_pattern(const char *s)
{
	struct coredam_core_pattern cp;

	if (coredam_core_pattern_parse(s, &cp) < 0)
		return;
	if (cp.dir_known) {
		FUZZ_CHECK(cp.dir[0] == '/');
		FUZZ_CHECK(cp.kind != COREDAM_CORE_SOCKET);
		FUZZ_CHECK(!strchr(cp.dir, '%'));
	}
	FUZZ_CHECK(strlen(cp.note) < sizeof(cp.note));
}

static void check_name(const char *s)
{
	char out[64];
	size_t len;

	coredam_pipe_sanitize(s, out, sizeof(out));
	len = strlen(out);
	FUZZ_CHECK(len >= 1 && len <= 15);
	FUZZ_CHECK(out[0] != '.');
	FUZZ_CHECK(strspn(out, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == len);
}

static void check_args(char *s)
{
	char *argv[MAX_ARGS], *save = NULL, name[256];
	struct coredam_pipe_args a;
	int argc = 0;

	for (char *t = strtok_r(s, " ", &save); t && argc < MAX_ARGS; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	if (coredam_pipe_args_parse(argc, argv, &a) < 0)
		return;
	FUZZ_CHECK(a.dir[0] == '/');
	FUZZ_CHECK(a.pid > 0);
	FUZZ_CHECK(a.signal >= 0 && a.signal <= 255);
	FUZZ_CHECK(a.dumpable == COREDAM_DUMPABLE_UNKNOWN || (a.dumpable >= 0 && a.dumpable <= 2));
	FUZZ_CHECK(strlen(a.comm) < sizeof(a.comm));
	if (coredam_pipe_core_name(&a, true, name, sizeof(name)) >= 0) {
		FUZZ_CHECK(strncmp(name, "core.", 5) == 0);
		FUZZ_CHECK(!strchr(name, '/'));
	}
}

/* Printable ASCII, strings with valid escapes, one object, a newline. */
static void check_json(const char *j, size_t len)
{
	bool in_string = false;

	FUZZ_CHECK(len >= 3 && j[0] == '{' && j[len - 2] == '}' && j[len - 1] == '\n');
	for (size_t i = 0; i + 1 < len; i++) {
		unsigned char c = (unsigned char)j[i];

		FUZZ_CHECK(c >= 0x20 && c < 0x7f);
		if (!in_string) {
			in_string = c == '"';
			continue;
		}
		if (c == '"') {
			in_string = false;
		} else if (c == '\\') {
			FUZZ_CHECK(i + 2 < len);
			c = (unsigned char)j[++i];
			FUZZ_CHECK(strchr("\"\\/bfnrtu", c) && c);
			if (c == 'u') {
				FUZZ_CHECK(i + 5 < len);
				for (int k = 1; k <= 4; k++)
					FUZZ_CHECK(strchr("0123456789abcdefABCDEF", j[i + k]) && j[i + k]);
				i += 4;
			}
		}
	}
	FUZZ_CHECK(!in_string);
}

static void check_meta(const char *s)
{
	struct coredam_core_meta m = {
		.core = s, .pid = 1, .comm = s, .compression = "zstd", .rlimit = UINT64_MAX, .cgroup = s,
	};
	json_auto_t *doc = NULL, *want = NULL;
	static char buf[16384];
	int r;

	r = coredam_meta_format(&m, buf, sizeof(buf));
	if (r == -ENOBUFS)
		return;
	FUZZ_CHECK(r > 0 && (size_t)r == strlen(buf));
	check_json(buf, (size_t)r);
	/* it parses, and the name reads back as given (a byte that is not UTF-8 as its Latin-1 character) */
	doc = json_loads(buf, 0, NULL);
	want = coredam_json_text(s);
	FUZZ_CHECK(doc && want && json_equal(json_object_get(doc, "comm"), want));
}

static void check_escape(const char *s)
{
	static char buf[COREDAM_ESCAPE_SIZE(4096)];

	for (unsigned int flags = 0; flags <= COREDAM_ESCAPE_WORD; flags += COREDAM_ESCAPE_WORD) {
		coredam_escape(s, flags, buf, sizeof(buf));
		if (strlen(s) <= 4096)
			FUZZ_CHECK(strlen(buf) >= strlen(s));	/* nothing dropped when it fits */
		for (const unsigned char *p = (const unsigned char *)buf; *p;) {
			size_t n = coredam_utf8_len(p);

			FUZZ_CHECK(n > 0);
			FUZZ_CHECK(n > 1 || (*p >= 0x20 && *p != 0x7f));
			FUZZ_CHECK(!(n == 2 && p[0] == 0xc2 && p[1] < 0xa0));
			FUZZ_CHECK(!(flags & COREDAM_ESCAPE_WORD) || (*p != ' ' && *p != '"'));
			p += n;
		}
	}
	/* as a log word, it is one journal field of its own and no other */
	{
		static char line[sizeof(buf) + 64];
		struct coredam_log_field f[4];
		size_t n;

		coredam_escape(s, COREDAM_ESCAPE_WORD, buf, sizeof(buf));
		snprintf(line, sizeof(line), "x event=e exe=%s k=v", buf);
		n = coredam_log_fields(line, f, 4);
		FUZZ_CHECK(n == 3);
		FUZZ_CHECK(!strcmp(f[1].name, "COREDAM_EXE") && !strcmp(f[2].name, "COREDAM_K"));
		FUZZ_CHECK(!strchr(f[1].value, '\n'));
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_string(data, size);

	check_pattern(s);
	check_name(s);
	check_meta(s);
	check_escape(s);
	check_args(s);	/* last: splits @s in place */
	free(s);
	return 0;
}
