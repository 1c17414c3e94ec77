// SPDX-License-Identifier: LGPL-2.1-or-later
/* The cores kept in a destination, read back from their metadata. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "corelist.h"
#include "meta.h"
#include "path-util.h"
#include "test.h"
#include "macro.h"

static void put(const char *dir, const char *name, const char *text)
{
	char p[PATH_MAX];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	CHECK(f != NULL);
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static void keep(const char *dir, const char *core, pid_t pid, uint64_t time, const char *compression,
		 bool truncated, bool with_core)
{
	struct coredam_core_meta m = { .core = core, .pid = pid, .uid = 1000, .gid = 1000, .signal = 11,
				       .time = time, .comm = "crash\ner", .size = 8192, .disk_size = 4096,
				       .compression = compression, .truncated = truncated, .rlimit = UINT64_MAX,
				       .dumpable = 1 };
	char buf[4096], name[NAME_MAX + 1];

	CHECK(coredam_meta_format(&m, buf, sizeof(buf)) > 0);
	snprintf(name, sizeof(name), "%s.json", core);
	put(dir, name, buf);
	if (with_core)
		put(dir, core, "ELF");
}

TEST(corelist_reads_what_the_helper_wrote)
{
	const char *dir = tkeep("kept");
	_cleanup_free_ struct coredam_kept_core *v = NULL;
	const struct coredam_kept_core *c;
	size_t n = 0, damaged = 0;
	int dfd;
	char p[PATH_MAX];

	mkdirs("kept");
	keep(dir, "core.b.20.200", 20, 200, "none", false, true);
	keep(dir, "core.a.10.100.zst", 10, 100, "zstd", false, true);
	keep(dir, "core.a.10.300.incomplete", 10, 300, "none", true, true);
	keep(dir, "core.gone.30.50", 30, 50, "none", false, false);
	/* renamed .incomplete by the agent after its metadata was written */
	keep(dir, "core.r.40.400", 40, 400, "none", false, false);
	put(dir, "core.r.40.400.incomplete", "ELF");
	/* metadata naming another file, not JSON, a symbolic link, a writer's temporary */
	put(dir, "core.evil.1.1.json", "{\"core\":\"../../etc/shadow\",\"pid\":1,\"uid\":0,\"gid\":0,\"signal\":11,"
	    "\"time\":1,\"comm\":\"x\",\"size\":1,\"disk_size\":1,\"compression\":\"none\",\"truncated\":false}\n");
	put(dir, "core.junk.2.2.json", "not json");
	snprintf(p, sizeof(p), "%s/core.b.20.200.json", dir);
	CHECK_OK(symlink(p, tpath("kept/core.link.3.3.json")));
	put(dir, ".core.t.4.4.json.tmp", "{}");

	CHECK_OK(open_dir_at(AT_FDCWD, dir, &dfd));
	CHECK_OK(coredam_cores_list(dfd, &v, &n, &damaged));
	close(dfd);
	CHECK_EQ_INT(n, 5);
	CHECK_EQ_INT(damaged, 3);
	if (n != 5)
		return;
	/* oldest first */
	CHECK_STREQ(v[0].core, "core.gone.30.50");
	CHECK_STREQ(coredam_kept_core_state(&v[0]), "missing");
	CHECK_STREQ(v[1].core, "core.a.10.100.zst");
	CHECK(v[1].zstd && v[1].present);
	CHECK_STREQ(coredam_kept_core_state(&v[1]), "complete");
	CHECK_STREQ(v[1].comm, "crash\ner");	/* raw: the caller escapes */
	CHECK_EQ_INT(v[1].uid, 1000);
	CHECK_EQ_INT(v[1].signal, 11);
	CHECK_EQ_INT(v[1].size, 8192);
	CHECK_EQ_INT(v[1].disk_size, 4096);
	CHECK_STREQ(coredam_kept_core_state(&v[3]), "incomplete");
	CHECK_STREQ(v[4].core, "core.r.40.400.incomplete");
	CHECK_STREQ(coredam_kept_core_state(&v[4]), "incomplete");

	/* by name, or by pid: its newest core */
	c = coredam_cores_find(v, n, "core.b.20.200");
	CHECK(c == &v[2]);
	c = coredam_cores_find(v, n, "10");
	CHECK(c == &v[3]);
	CHECK(coredam_cores_find(v, n, "11") == NULL);
	CHECK(coredam_cores_find(v, n, "../core.b.20.200") == NULL);
}

TEST(corelist_meta_refused)
{
	struct coredam_kept_core c;

	CHECK_ERRNO(coredam_meta_parse("", "x", &c), -EBADMSG);
	CHECK_ERRNO(coredam_meta_parse("[]", "x", &c), -EBADMSG);
	/* a field of the wrong type, a negative pid, an unknown compression, a duplicate key */
	CHECK_ERRNO(coredam_meta_parse("{\"core\":\"x\",\"pid\":\"1\",\"uid\":0,\"gid\":0,\"signal\":11,\"time\":1,"
				       "\"comm\":\"x\",\"size\":1,\"disk_size\":1,\"compression\":\"none\","
				       "\"truncated\":false}", "x", &c), -EBADMSG);
	CHECK_ERRNO(coredam_meta_parse("{\"core\":\"x\",\"pid\":-1,\"uid\":0,\"gid\":0,\"signal\":11,\"time\":1,"
				       "\"comm\":\"x\",\"size\":1,\"disk_size\":1,\"compression\":\"none\","
				       "\"truncated\":false}", "x", &c), -EBADMSG);
	CHECK_ERRNO(coredam_meta_parse("{\"core\":\"x\",\"pid\":1,\"uid\":0,\"gid\":0,\"signal\":11,\"time\":1,"
				       "\"comm\":\"x\",\"size\":1,\"disk_size\":1,\"compression\":\"lz4\","
				       "\"truncated\":false}", "x", &c), -EBADMSG);
	CHECK_ERRNO(coredam_meta_parse("{\"core\":\"x\",\"core\":\"x\",\"pid\":1,\"uid\":0,\"gid\":0,\"signal\":11,"
				       "\"time\":1,\"comm\":\"x\",\"size\":1,\"disk_size\":1,\"compression\":\"none\","
				       "\"truncated\":false}", "x", &c), -EBADMSG);
	CHECK_OK(coredam_meta_parse("{\"core\":\"x\",\"pid\":1,\"uid\":0,\"gid\":0,\"signal\":11,\"time\":1,"
				    "\"comm\":\"x\",\"size\":1,\"disk_size\":1,\"compression\":\"none\","
				    "\"truncated\":true}", "x", &c));
	CHECK(c.truncated);
}
