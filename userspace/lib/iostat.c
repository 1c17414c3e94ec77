// SPDX-License-Identifier: LGPL-2.1-or-later
/* A cgroup's io.stat: how many requests it made to some devices. */
#include <inttypes.h>

#include "iostat.h"
#include "fileio.h"
#include "macro.h"
#include "parse-util.h"
#include "string-util.h"

static bool dev_listed(const struct coredam_devnum *devs, size_t n_devs, unsigned int major, unsigned int minor)
{
	for (size_t i = 0; i < n_devs; i++)
		if (devs[i].major == major && devs[i].minor == minor)
			return true;
	return false;
}

/* The rios, wios and dios of one line's "key=value" fields, summed. */
static int line_ios(char *fields, uint64_t *ret)
{
	char *tok, *save = NULL;
	uint64_t sum = 0;

	for (tok = strtok_r(fields, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t v;

		if (!eq || eq == tok)
			return -EBADMSG;
		*eq = '\0';
		if (strcmp(tok, "rios") != 0 && strcmp(tok, "wios") != 0 && strcmp(tok, "dios") != 0)
			continue;
		if (parse_u64(eq + 1, &v) < 0 || v > UINT64_MAX - sum)
			return -EBADMSG;
		sum += v;
	}
	*ret = sum;
	return 0;
}

int coredam_iostat_ios(const char *text, const struct coredam_devnum *devs, size_t n_devs, uint64_t *ret)
{
	uint64_t total = 0;
	const char *line = text;

	while (*line) {
		size_t len = strcspn(line, "\n");
		unsigned int major, minor;
		char buf[1024];
		int n = 0, r;
		uint64_t ios;

		if (len >= sizeof(buf))
			return -EBADMSG;
		memcpy(buf, line, len);
		buf[len] = '\0';
		line += len;
		if (*line)
			line++;
		if (len == 0)
			continue;
		if (sscanf(buf, "%u:%u%n", &major, &minor, &n) != 2 || (buf[n] != ' ' && buf[n] != '\0'))
			return -EBADMSG;
		r = line_ios(buf + n, &ios);
		if (r < 0)
			return r;
		if (dev_listed(devs, n_devs, major, minor)) {
			if (ios > UINT64_MAX - total)
				return -EBADMSG;
			total += ios;
		}
	}
	*ret = total;
	return 0;
}

int coredam_iostat_read_ios(int dirfd, const char *path, const struct coredam_devnum *devs, size_t n_devs,
			    uint64_t *ret)
{
	_cleanup_free_ char *s = NULL;
	int r;

	r = read_file_at(dirfd, path, 64 * 1024, &s);
	if (r < 0)
		return r;
	return coredam_iostat_ios(s, devs, n_devs, ret);
}
