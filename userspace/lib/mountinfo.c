// SPDX-License-Identifier: LGPL-2.1-or-later
/* One line of /proc/PID/mountinfo. */
#include <stdio.h>
#include <string.h>

#include "macro.h"
#include "mountinfo.h"
#include "parse-util.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo: undo it in place */
static void unescape_octal(char *s)
{
	char *w = s;

	for (char *p = s; *p; p++) {
		if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] >= '0' && p[2] <= '7' && p[3] >= '0' &&
		    p[3] <= '7') {
			*w++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
			p += 3;
		} else {
			*w++ = *p;
		}
	}
	*w = '\0';
}

/* copy @src into @dst[@size] unescaped; false when it does not fit */
static bool field(char *dst, size_t size, const char *src)
{
	if (strlen(src) >= size)
		return false;
	strcpy(dst, src);
	unescape_octal(dst);
	return true;
}

bool coredam_mountinfo_line(const char *line, size_t len, struct coredam_mount *ret)
{
	_cleanup_free_ char *buf = strndup(line, len);
	char *f[6], *tok, *save = NULL, *fstype, *source;
	unsigned int major, minor;
	size_t n = 0;

	if (!buf)
		return false;
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS */
	for (tok = strtok_r(buf, " ", &save); tok && n < ELEMENTSOF(f); tok = strtok_r(NULL, " ", &save))
		f[n++] = tok;
	if (n < ELEMENTSOF(f) || parse_devnum(f[2], &major, &minor) < 0)
		return false;
	while (tok && strcmp(tok, "-") != 0)
		tok = strtok_r(NULL, " ", &save);
	fstype = tok ? strtok_r(NULL, " ", &save) : NULL;
	source = fstype ? strtok_r(NULL, " ", &save) : NULL;
	if (!source || !field(ret->mountpoint, sizeof(ret->mountpoint), f[4]) ||
	    !field(ret->fstype, sizeof(ret->fstype), fstype) || !field(ret->source, sizeof(ret->source), source))
		return false;
	ret->major = major;
	ret->minor = minor;
	return true;
}
