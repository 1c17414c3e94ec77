// SPDX-License-Identifier: LGPL-2.1-or-later
/* JSON through jansson: any bytes in, a valid printable-ASCII document out. */
#include <stdint.h>

#include "json-util.h"
#include "test.h"
#include "macro.h"

/* @s as a dumped JSON string */
static const char *dumped(const char *s)
{
	static char buf[1024];
	json_auto_t *j = coredam_json_text(s);

	if (!j || coredam_json_dumpb(j, JSON_ENCODE_ANY, buf, sizeof(buf)) < 0)
		return "(failed)";
	return buf;
}

/* jansson refuses bytes that are not UTF-8: they come through as their Latin-1 characters */
TEST(json_text_takes_any_bytes)
{
	json_auto_t *j = coredam_json_text("a\xff" "b\xc3\xa9\xc0\xaf");

	CHECK(j && json_is_string(j));
	CHECK(j && strcmp(json_string_value(j), "a\xc3\xbf" "b\xc3\xa9\xc3\x80\xc2\xaf") == 0);
	CHECK_STREQ(dumped("a\xff" "b\xc3\xa9\xc0\xaf"), "\"a\\u00FFb\\u00E9\\u00C0\\u00AF\"");
	CHECK_STREQ(dumped(""), "\"\"");
	CHECK_STREQ(dumped("/usr/local/bin/crasher"), "\"/usr/local/bin/crasher\"");
}

/*
 * status --json emitted the raw bytes: invalid UTF-8, a document no parser
 * takes. Through jansson, a byte that is not UTF-8 is its Latin-1 character.
 */
TEST(json_valid_utf8_no_controls)
{
	CHECK_STREQ(dumped("\033]0;x\007"), "\"\\u001B]0;x\\u0007\"");
	CHECK_STREQ(dumped("a\n<0>b"), "\"a\\n<0>b\"");
	CHECK_STREQ(dumped("\xff\xc0\xaf"), "\"\\u00FF\\u00C0\\u00AF\"");
	CHECK_STREQ(dumped("\xc2\x9b" "x\x7f"), "\"\\u009Bx\\u007F\"");
	CHECK_STREQ(dumped("q\"b\\"), "\"q\\\"b\\\\\"");
}

/* DEL is the one control character jansson leaves alone; the dumps escape it too */
TEST(json_dump_escapes_del)
{
	CHECK_STREQ(dumped("a\x7f" "b\x7f"), "\"a\\u007Fb\\u007F\"");
	CHECK_STREQ(dumped("\x7f\x7f"), "\"\\u007F\\u007F\"");
}

TEST(json_dump_buffer_and_numbers)
{
	json_auto_t *o = json_object();
	char buf[64];

	CHECK(o != NULL);
	CHECK(json_object_set_new(o, "a", coredam_json_u64(UINT64_C(9223372036854775807))) == 0);
	CHECK(json_object_set_new(o, "b", coredam_json_u64(UINT64_MAX)) == 0);
	CHECK_EQ_INT(coredam_json_dumpb(o, JSON_COMPACT, buf, sizeof(buf)), 51);
	CHECK_STREQ(buf, "{\"a\":9223372036854775807,\"b\":1.8446744073709552e19}");
	/* too small: -ENOBUFS and an empty string, never a cut document */
	CHECK_ERRNO(coredam_json_dumpb(o, JSON_COMPACT, buf, 51), -ENOBUFS);
	CHECK_STREQ(buf, "");
	CHECK_EQ_INT(coredam_json_dumpb(o, JSON_COMPACT, buf, 52), 51);
}
