// SPDX-License-Identifier: LGPL-2.1-or-later
/* Text appended in a fixed buffer and checked once. */
#include "string-util.h"
#include "test.h"
#include "macro.h"

TEST(strbuf_appends_until_the_first_failure)
{
	char buf[16];
	struct strbuf sb = STRBUF_INIT(buf, sizeof(buf));

	strbuf_printf(&sb, "%s=%d\n", "a", 1);
	strbuf_printf(&sb, "%s", "bcdefgh");
	CHECK_EQ_INT(strbuf_done(&sb), 11);
	CHECK(strcmp(buf, "a=1\nbcdefgh") == 0);
	/* 16 bytes hold 15 and the NUL: one more is a failure that sticks */
	strbuf_printf(&sb, "%s", "ijkl");
	CHECK_EQ_INT(strbuf_done(&sb), 15);
	strbuf_printf(&sb, "m");
	CHECK_ERRNO(strbuf_done(&sb), -ENOBUFS);
	strbuf_printf(&sb, "%s", "");
	CHECK_ERRNO(strbuf_done(&sb), -ENOBUFS);
	CHECK_EQ_INT(sb.len, 15);

	/* after a failure, an append that would fit is not made: no text with a hole in it */
	sb = STRBUF_INIT(buf, sizeof(buf));
	strbuf_printf(&sb, "%s", "a=1\nbcdefgh");
	strbuf_printf(&sb, "%s", "ijklm");
	strbuf_printf(&sb, "%s", "z");
	CHECK_ERRNO(strbuf_done(&sb), -ENOBUFS);
	CHECK_EQ_INT(sb.len, 11);
	CHECK(strncmp(buf, "a=1\nbcdefgh", 11) == 0 && !strchr(buf, 'z'));
}
