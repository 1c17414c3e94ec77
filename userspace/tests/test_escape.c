// SPDX-License-Identifier: LGPL-2.1-or-later
/* Strings from crashed processes on their way to logs, terminals and JSON. */
#include <stdint.h>
#include <stdlib.h>

#include "dumps.h"
#include "escape.h"
#include "json-util.h"
#include "test.h"
#include "macro.h"

static const char *esc(const char *s, unsigned int flags)
{
	static char buf[1024];

	return coredam_escape(s, flags, buf, sizeof(buf));
}

/* @s as a JSON string, as status --json and the cores' metadata write it */
static const char *json(const char *s)
{
	static char buf[1024];
	json_auto_t *j = coredam_json_text(s);

	if (!j || coredam_json_dumpb(j, JSON_ENCODE_ANY, buf, sizeof(buf)) < 0)
		return "(failed)";
	return buf;
}

/* valid UTF-8 throughout, and not one control character (C0, DEL, C1) */
static bool safe_text(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = coredam_utf8_len(p);

		if (n == 0 || (n == 1 && (*p < 0x20 || *p == 0x7f)) || (n == 2 && p[0] == 0xc2 && p[1] < 0xa0))
			return false;
		p += n;
	}
	return true;
}

/* Ordinary paths read as before: VM tests and people grep for them. */
TEST(escape_keeps_ordinary_text)
{
	CHECK_STREQ(esc("/usr/local/bin/crasher", COREDAM_ESCAPE_WORD), "/usr/local/bin/crasher");
	CHECK_STREQ(esc("/opt/caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac/\xf0\x9f\x92\xa5", COREDAM_ESCAPE_WORD),
		    "/opt/caf\xc3\xa9/\xe6\x97\xa5\xe6\x9c\xac/\xf0\x9f\x92\xa5");
	CHECK_STREQ(esc("a b \"c\"", 0), "a b \"c\"");
	CHECK_STREQ(esc("", COREDAM_ESCAPE_WORD), "");
	CHECK_STREQ(json("/usr/local/bin/crasher"), "\"/usr/local/bin/crasher\"");
	/* JSON keeps to ASCII: what is not ASCII is spelt \uXXXX, and decodes to the same text */
	CHECK_STREQ(json("/opt/caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x92\xa5"), "\"/opt/caf\\u00E9 \\u20AC \\uD83D\\uDCA5\"");
}

/*
 * An executable named with a newline and "<0>" forged an emergency-level
 * record in the kernel log and the journal, and a space let it forge
 * "outcome=completed" inside the agent's dump-end record.
 */
TEST(escape_log_forgery)
{
	const char *evil = "/tmp/x\n<0>coredamd: dump ended event=dump-end pid=1 exe=/bin/true outcome=completed";
	const char *e = esc(evil, COREDAM_ESCAPE_WORD);

	CHECK(!strchr(e, '\n'));
	CHECK(!strchr(e, ' '));
	CHECK_STREQ(esc("/tmp/x\n<0>boom", COREDAM_ESCAPE_WORD), "/tmp/x\\n<0>boom");
	CHECK_STREQ(esc("/tmp/x outcome=completed", COREDAM_ESCAPE_WORD), "/tmp/x\\x20outcome=completed");
	CHECK_STREQ(esc("a\"b\tc\rd", COREDAM_ESCAPE_WORD), "a\\x22b\\tc\\rd");
	/* a backslash is doubled, so that a name cannot spell an escape of its own */
	CHECK_STREQ(esc("a\\nb", 0), "a\\\\nb");
	/* the form a log reader sees: one record, one exe= word */
	{
		struct coredam_dump d = { .pid = 1 };
		char buf[COREDAM_ESCAPE_SIZE(sizeof(d.exe))];

		snprintf(d.exe, sizeof(d.exe), "%s", evil);
		CHECK(!strpbrk(coredam_dump_name(&d, COREDAM_ESCAPE_WORD, buf, sizeof(buf)), " \n"));
		d.exe[0] = '\0';
		snprintf(d.comm, sizeof(d.comm), "cr\033[2Jash");
		CHECK_STREQ(coredam_dump_name(&d, 0, buf, sizeof(buf)), "cr\\x1b[2Jash");
	}
}

/* coredamctl status/watch passed OSC and CSI sequences to the terminal */
TEST(escape_terminal_sequences)
{
	CHECK_STREQ(esc("\033]0;owned\007x", 0), "\\x1b]0;owned\\x07x");
	CHECK_STREQ(esc("\033]52;c;ZWNobyBoaQ==\033\\", 0), "\\x1b]52;c;ZWNobyBoaQ==\\x1b\\\\");
	CHECK_STREQ(esc("\033[2J\033[H", 0), "\\x1b[2J\\x1b[H");
	CHECK_STREQ(esc("a\x7f" "b", 0), "a\\x7fb");
	/* C1 controls in their UTF-8 form: U+009B is CSI, U+009D is OSC */
	CHECK_STREQ(esc("\xc2\x9b" "2J\xc2\x9d", 0), "\\xc2\\x9b2J\\xc2\\x9d");
	CHECK_STREQ(esc("\xc2\xa0", 0), "\xc2\xa0");	/* U+00A0 is text */
}

TEST(escape_invalid_utf8)
{
	CHECK_STREQ(esc("\xff\xfe", 0), "\\xff\\xfe");
	CHECK_STREQ(esc("\xc0\xaf", 0), "\\xc0\\xaf");			/* overlong "/" */
	CHECK_STREQ(esc("\xe0\x80\xaf", 0), "\\xe0\\x80\\xaf");		/* overlong "/" */
	CHECK_STREQ(esc("\xf0\x80\x80\xaf", 0), "\\xf0\\x80\\x80\\xaf");	/* overlong "/" */
	CHECK_STREQ(esc("\xed\xa0\x80", 0), "\\xed\\xa0\\x80");		/* a surrogate */
	CHECK_STREQ(esc("\xf4\x90\x80\x80", 0), "\\xf4\\x90\\x80\\x80");	/* beyond U+10FFFF */
	CHECK_STREQ(esc("\xe2\x82", 0), "\\xe2\\x82");			/* cut short */
	CHECK_STREQ(esc("\x80" "a", 0), "\\x80a");				/* a stray continuation */
	CHECK_STREQ(esc("\xe2\x82\xac\xff", 0), "\xe2\x82\xac\\xff");
}

/* Cut where it does not fit, never in the middle of an escape or a character. */
TEST(escape_truncates_whole)
{
	char buf[6];

	CHECK_STREQ(coredam_escape("\n\n", 0, buf, 4), "\\n");
	CHECK_STREQ(coredam_escape("ab\xff", 0, buf, 6), "ab");
	CHECK_STREQ(coredam_escape("a\xe2\x82\xac", 0, buf, 4), "a");
	CHECK_STREQ(coredam_escape("abc", 0, buf, 1), "");
}

/*
 * Every string of two bytes, and random strings of up to 8 bytes, come out
 * of both escapes as valid UTF-8 without a control character.
 */
TEST(escape_every_short_input_is_safe)
{
	unsigned char in[9];
	unsigned int seed = 1;
	int bad = 0;

	for (int a = 1; a < 256; a++)
		for (int b = 0; b < 256; b++) {
			in[0] = (unsigned char)a;
			in[1] = (unsigned char)b;
			in[2] = '\0';
			if (!safe_text(esc((char *)in, 0)) || !safe_text(esc((char *)in, COREDAM_ESCAPE_WORD)) ||
			    !safe_text(json((char *)in)))
				bad++;
		}
	for (int i = 0; i < 200000; i++) {
		int n = 1 + (int)(rand_r(&seed) % 8);

		for (int j = 0; j < n; j++)
			in[j] = (unsigned char)(1 + rand_r(&seed) % 255);
		in[n] = '\0';
		if (!safe_text(esc((char *)in, 0)) || !safe_text(json((char *)in)))
			bad++;
	}
	CHECK_EQ_INT(bad, 0);
}

/* What coredam_escape() wrote reads back as it was: the STATUS answer's strings travel escaped. */
TEST(unescape_undoes_escape)
{
	char in[9], e[COREDAM_ESCAPE_SIZE(sizeof(in))], back[sizeof(in)];
	unsigned int seed = 7;
	int bad = 0;

	CHECK_STREQ(coredam_unescape("a\\nb\\\\n\\x1b\\xFF", SIZE_MAX, back, sizeof(back)), "a\nb\\n\x1b\xff");
	/* a backslash that starts no escape is kept, "\x00" too: it would end the string */
	CHECK_STREQ(coredam_unescape("\\q\\x0g\\x00\\", SIZE_MAX, e, sizeof(e)), "\\q\\x0g\\x00\\");
	/* @len bytes only, an escape cut by it included; cut to @size */
	CHECK_STREQ(coredam_unescape("ab\\x41\ncd", 6, e, sizeof(e)), "abA");
	CHECK_STREQ(coredam_unescape("ab\\x41", 5, e, sizeof(e)), "ab\\x4");
	CHECK_STREQ(coredam_unescape("abcdef", SIZE_MAX, e, 4), "abc");
	for (int i = 0; i < 300000; i++) {
		int n = i < 65536 ? 2 : 1 + (int)(rand_r(&seed) % 8);

		for (int j = 0; j < n; j++)
			in[j] = (char)(i < 65536 ? (j ? i & 0xff : i >> 8) : rand_r(&seed) % 256);
		in[n] = '\0';
		for (unsigned int flags = 0; flags <= COREDAM_ESCAPE_WORD; flags += COREDAM_ESCAPE_WORD) {
			coredam_escape(in, flags, e, sizeof(e));
			if (strcmp(coredam_unescape(e, SIZE_MAX, back, sizeof(back)), in) != 0)
				bad++;
		}
	}
	CHECK_EQ_INT(bad, 0);
}

/* The journal's fields of a log line: from "event=" on, each key=value word. */
TEST(log_fields_for_the_journal)
{
	struct coredam_log_field f[8];
	char esc[COREDAM_ESCAPE_SIZE(64)], line[512];
	size_t n;

	n = coredam_log_fields("core_pattern set to the pipe helper event=pipe-helper "
			       "core_pattern=\"|/usr/libexec/coredam/coredam-pipe /var/lib/coredam/cores %P\"", f, 8);
	CHECK_EQ_INT(n, 2);
	CHECK_STREQ(f[0].name, "COREDAM_EVENT");
	CHECK_STREQ(f[0].value, "pipe-helper");
	CHECK_STREQ(f[1].name, "COREDAM_CORE_PATTERN");
	CHECK_STREQ(f[1].value, "|/usr/libexec/coredam/coredam-pipe /var/lib/coredam/cores %P");
	/* words before event= are the message; words that are no field are skipped */
	n = coredam_log_fields("a=1 ready event=ready Mode=x mode=fixed junk write_bps=10", f, 8);
	CHECK_EQ_INT(n, 3);
	CHECK_STREQ(f[0].name, "COREDAM_EVENT");
	CHECK_STREQ(f[1].name, "COREDAM_MODE");
	CHECK_STREQ(f[1].value, "fixed");
	CHECK_STREQ(f[2].name, "COREDAM_WRITE_BPS");
	CHECK_EQ_INT(coredam_log_fields("no fields here", f, 8), 0);
	/* a hostile executable name stays one field, and cannot add one */
	coredam_escape("/tmp/x\n<0>event=dump-end outcome=completed \"q", COREDAM_ESCAPE_WORD, esc, sizeof(esc));
	snprintf(line, sizeof(line), "dump ended event=dump-end pid=7 exe=%s outcome=failed", esc);
	n = coredam_log_fields(line, f, 8);
	CHECK_EQ_INT(n, 4);
	CHECK_STREQ(f[2].name, "COREDAM_EXE");
	CHECK(!strchr(f[2].value, '\n') && !strchr(f[2].value, ' '));
	CHECK_STREQ(f[3].name, "COREDAM_OUTCOME");
	CHECK_STREQ(f[3].value, "failed");
	/* at most @max */
	CHECK_EQ_INT(coredam_log_fields(line, f, 2), 2);
}
