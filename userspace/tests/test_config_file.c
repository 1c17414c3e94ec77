// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * coredam.conf and its drop-ins read: the syntax, every error named with
 * its file and line, systemd's drop-in layers, the lenient load, and the
 * drop-in that set --persist edits.
 */
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "config.h"
#include "test.h"
#include "macro.h"
#include "paths.h"

/* one drop-in directory */
#define DIRS(dir) ((const char *const[]){ (dir), NULL })

TEST(config_dropin_order)
{
	struct coredam_config c;
	struct coredam_error e;

	mkfile("c/coredam.conf", "[Limits]\nWriteBandwidth=20M\nConcurrency=3\n");
	mkfile("c/coredam.conf.d/50-b.conf", "[Limits]\nWriteBandwidth=40M\n");
	mkfile("c/coredam.conf.d/10-a.conf", "[Limits]\nWriteBandwidth=30M\nQueueCap=5\n");
	mkfile("c/coredam.conf.d/90-c.conf", "[Limits]\nQueueCap=\n"); /* reset to default */
	mkfile("c/coredam.conf.d/99-ignored.conf.disabled", "garbage\n");
	mkfile("c/coredam.conf.d/.hidden.conf", "garbage\n");
	CHECK_OK(coredam_config_load(tpath("c/coredam.conf"), DIRS(tpath("c/coredam.conf.d")), &c, &e));
	CHECK_EQ_INT(c.write_bps, 40000000);
	CHECK_EQ_INT(c.concurrency, 3);
	CHECK_EQ_INT(c.queue_cap, 64);
}

static void expect_error(const char *content, int line, const char *needle)
{
	struct coredam_config c, before;
	struct coredam_error e;

	mkfile("bad/coredam.conf", content);
	memset(&c, 0x5a, sizeof(c));
	before = c;
	CHECK(coredam_config_load(tpath("bad/coredam.conf"), NULL, &c, &e) < 0);
	CHECK(memcmp(&c, &before, sizeof(c)) == 0); /* untouched */
	CHECK_STREQ(e.where, tpath("bad/coredam.conf"));
	CHECK_EQ_INT(e.line, line);
	if (!strstr(e.msg, needle)) {
		fprintf(stderr, "  message \"%s\" lacks \"%s\"\n", e.msg, needle);
		test_failed_checks++;
	}
}

TEST(config_bad)
{
	expect_error("[Limits]\nWriteBandwidth=fast\n", 2, "WriteBandwidth=fast: not a rate");
	expect_error("[Limits]\n\nConcurrency=-1\n", 3, "Concurrency=-1");
	expect_error("[Agent]\nMode=turbo\n", 2, "\"fixed\" or \"adaptive\"");
	expect_error("[Agent]\nColour=blue\n", 2, "unknown key Colour=");
	expect_error("[Nope]\nA=b\n", 2, "unknown section [Nope]");
	expect_error("[Limits]\nthis line has no equals\n", 2, "syntax error");
	expect_error("[Limits]\nWaitTimeout=soon\n", 2, "not a duration");
	expect_error("[Cgroup]\nPath=/\n", 2, "cgroup path");
	expect_error("[Cgroup]\nPath=relative\n", 2, "cgroup path");
	expect_error("[Cgroup]\nPath=/a/../b\n", 2, "cgroup path");
	expect_error("[Cgroup]\nMemoryHigh=lots\n", 2, "not a size");
	expect_error("[Devices]\nDestination=var/crash\n", 2, "absolute path");
	expect_error("[Adaptive]\nPressureTarget=150%\n", 2, "percentage");
	expect_error("[Adaptive]\nConcurrencyFloor=0\n", 2, "positive");
	expect_error("[Space]\nFreeSpaceFloor=200%\n", 2, "percentage");
	expect_error("[Adaptive]\nFloor=50M\nCeiling=20M\n", 2, "Floor= is above Ceiling=");
	expect_error("[Adaptive]\nFloor=20M\nCeilingWhenBusy=15M\n", 2, "Floor= is above CeilingWhenBusy=");
	expect_error("[Adaptive]\nPressureWindow=20s\n", 2, "PressureWindow");
	expect_error("[Space]\nMarkIncomplete=perhaps\n", 2, "yes or no");
	expect_error("[Limits]\nDumpNice=20\n", 2, "DumpNice=20: expected a nice value from -20 to 19, or \"keep\"");
	expect_error("[Limits]\nDumpNice=-21\n", 2, "DumpNice=-21: expected a nice value");
	expect_error("[Limits]\nDumpNice=low\n", 2, "DumpNice=low: expected a nice value");
}

TEST(config_bad_dropin_named)
{
	struct coredam_config c;
	struct coredam_error e;

	mkfile("c/coredam.conf", "[Limits]\nWriteBandwidth=20M\n");
	mkfile("c/coredam.conf.d/10-ok.conf", "[Limits]\nConcurrency=3\n");
	mkfile("c/coredam.conf.d/20-bad.conf", "[Limits]\nConcurrency=3\nQueueCap=many\n");
	CHECK(coredam_config_load(tpath("c/coredam.conf"), DIRS(tpath("c/coredam.conf.d")), &c, &e) < 0);
	CHECK_STREQ(e.where, tpath("c/coredam.conf.d/20-bad.conf"));
	CHECK_EQ_INT(e.line, 3);
}

/* A main file that does not exist is the defaults; one that cannot be read is an error saying why. */
TEST(config_missing_and_unreadable)
{
	struct coredam_config c;
	struct coredam_error e;

	CHECK_OK(coredam_config_load(tpath("none/coredam.conf"), DIRS(tpath("none/coredam.conf.d")), &c, &e));
	CHECK_EQ_INT(c.concurrency, 2);
	mkdirs("dir/coredam.conf");
	CHECK_EQ_INT(coredam_config_load(tpath("dir/coredam.conf"), NULL, &c, &e), -EISDIR);
	CHECK_STREQ(e.where, tpath("dir/coredam.conf"));
	CHECK_STREQ(e.msg, "cannot read: Is a directory");
}

TEST(config_dropin_set)
{
	struct coredam_config c;
	struct coredam_error e;
	char *s;

	CHECK_OK(coredam_dropin_set(tpath("c/coredam.conf.d/50-coredamctl.conf"), "Limits", "WriteBandwidth", "25M"));
	CHECK_OK(coredam_dropin_set(tpath("c/coredam.conf.d/50-coredamctl.conf"), "Agent", "Mode", "adaptive"));
	CHECK_OK(coredam_dropin_set(tpath("c/coredam.conf.d/50-coredamctl.conf"), "Limits", "WriteBandwidth", "35M"));
	s = slurp("c/coredam.conf.d/50-coredamctl.conf");
	CHECK(s && strstr(s, "[Limits]\nWriteBandwidth=35M\n") && strstr(s, "[Agent]\nMode=adaptive\n"));
	free(s);
	CHECK_OK(coredam_config_load(tpath("c/coredam.conf"), DIRS(tpath("c/coredam.conf.d")), &c, &e));
	CHECK_EQ_INT(c.write_bps, 35000000);
	CHECK_EQ_INT(c.mode, COREDAM_MODE_ADAPTIVE);
}

/* Write @len bytes, NULs included, to the temporary tree. */
static void mkfile_bytes(const char *rel, const char *data, size_t len)
{
	FILE *f;

	mkfile(rel, "");
	f = fopen(tpath(rel), "w");
	CHECK(f && fwrite(data, 1, len, f) == len);
	if (f)
		fclose(f);
}

TEST(config_long_lines_and_nul_bytes)
{
	struct coredam_config c;
	struct coredam_error e;
	static const char nul[] = "[Agent]\nMode=fixed\0Mode=adaptive\n";
	size_t big = 70000;
	char *text = malloc(big + 64);

	CHECK(text != NULL);
	if (!text)
		return;
	/* a line is one line however long: a long comment hides nothing after it */
	snprintf(text, big + 64, "[Agent]\n# %0*dMode=adaptive\nInterval=2s\n", 10000, 0);
	mkfile("ok.conf", text);
	CHECK_OK(coredam_config_load(tpath("ok.conf"), NULL, &c, &e));
	CHECK_EQ_INT(c.mode, COREDAM_MODE_FIXED);
	CHECK_EQ_INT(c.interval_usec, 2000000);
	/* a long value (the lists take 1023 characters) on one line */
	snprintf(text, big + 64, "[Adaptive]\nPressureCgroups=%0*d\n", 1000, 0);
	text[strlen("[Adaptive]\nPressureCgroups=")] = '/';
	mkfile("ok.conf", text);
	CHECK_OK(coredam_config_load(tpath("ok.conf"), NULL, &c, &e));
	CHECK_EQ_INT(strlen(c.pressure_cgroups), 1000);
	/* past 64 KiB a line is refused, not cut */
	snprintf(text, big + 64, "[Agent]\n# %0*d\n", (int)big, 0);
	expect_error(text, 2, "line too long (at most 65536 characters");
	free(text);
	/* a last line without its newline counts */
	mkfile("ok.conf", "[Agent]\nMode=adaptive");
	CHECK_OK(coredam_config_load(tpath("ok.conf"), NULL, &c, &e));
	CHECK_EQ_INT(c.mode, COREDAM_MODE_ADAPTIVE);
	/* a UTF-8 byte order mark, CR LF line ends and white space around = */
	mkfile("ok.conf", "\xef\xbb\xbf[Agent]\r\n  Mode = adaptive \r\n\t; comment\r\n[Limits]\r\nConcurrency=\t3\r\n");
	CHECK_OK(coredam_config_load(tpath("ok.conf"), NULL, &c, &e));
	CHECK_EQ_INT(c.mode, COREDAM_MODE_ADAPTIVE);
	CHECK_EQ_INT(c.concurrency, 3);
	/* what is not a section, an assignment or a comment */
	expect_error("[Agent]\nMode adaptive\n", 2, "syntax error");
	expect_error("[Agent\nMode=adaptive\n", 1, "syntax error");
	expect_error("[]\n", 1, "syntax error");
	expect_error("[Agent]\n=adaptive\n", 2, "syntax error");

	/* a NUL byte would hide the rest of its line */
	mkfile_bytes("nul.conf", nul, sizeof(nul) - 1);
	CHECK_ERRNO(coredam_config_load(tpath("nul.conf"), NULL, &c, &e), -EINVAL);
	CHECK_EQ_INT(e.line, 2);
	CHECK(strstr(e.msg, "NUL byte") != NULL);
}

/* systemd's rules for drop-ins: /etc over /run over the package's, masks, lists that add up. */
TEST(config_dropin_layers_masks_and_lists)
{
	struct coredam_config c;
	struct coredam_error e;
	char etc[PATH_MAX], run[PATH_MAX], lib[PATH_MAX];
	const char *const dirs[] = { etc, run, lib, NULL };

	/* copies: tpath() hands out a ring of buffers that mkfile() uses too */
	snprintf(etc, sizeof(etc), "%s", tpath("y/etc.d"));
	snprintf(run, sizeof(run), "%s", tpath("y/run.d"));
	snprintf(lib, sizeof(lib), "%s", tpath("y/lib.d"));

	mkfile("y/coredam.conf", "[Limits]\nConcurrency=2\n[Devices]\nDevices=/dev/vda\n");
	/* the package's: one hidden by /run, one masked by /etc, one read */
	mkfile("y/lib.d/10-vendor.conf", "[Limits]\nConcurrency=9\nQueueCap=5\n");
	mkfile("y/lib.d/20-masked.conf", "[Limits]\nWaitTimeout=5s\n");
	mkfile("y/lib.d/30-read.conf", "[Agent]\nMode=adaptive\n[Devices]\nDevices=/dev/vdb 8:16\n");
	mkfile("y/run.d/10-vendor.conf", "[Limits]\nConcurrency=4\n");
	/* sorted by name across the layers: 40-site.conf comes after 30-read.conf */
	mkfile("y/etc.d/40-site.conf", "[Devices]\nDevices=/dev/vdc\n[Adaptive]\nPressureCgroups=/a.slice\n"
				      "PressureCgroups=/b.slice /c.slice\n");
	(void)unlink(tpath("y/etc.d/20-masked.conf"));
	CHECK(symlink("/dev/null", tpath("y/etc.d/20-masked.conf")) == 0);
	CHECK_OK(coredam_config_load(tpath("y/coredam.conf"), dirs, &c, &e));
	CHECK_EQ_INT(c.concurrency, 4);
	CHECK_EQ_INT(c.queue_cap, 64);	/* a hidden file is hidden whole, not merged */
	CHECK_EQ_INT(c.wait_timeout_usec, 30ULL * 60 * 1000000);
	CHECK_EQ_INT(c.mode, COREDAM_MODE_ADAPTIVE);
	CHECK_STREQ(c.devices, "/dev/vda /dev/vdb 8:16 /dev/vdc");
	/* the default keyword is replaced by the first list, not added to */
	CHECK_STREQ(c.pressure_cgroups, "/a.slice /b.slice /c.slice");

	/* an empty assignment empties a list (to its default); a keyword replaces it */
	mkfile("y/etc.d/50-reset.conf", "[Devices]\nDevices=\nDevices=/dev/vdd\n[Adaptive]\nPressureCgroups=system\n");
	CHECK_OK(coredam_config_load(tpath("y/coredam.conf"), dirs, &c, &e));
	CHECK_STREQ(c.devices, "/dev/vdd");
	CHECK_STREQ(c.pressure_cgroups, "system");
	mkfile("y/etc.d/60-after.conf", "[Adaptive]\nPressureCgroups=/d.slice\n");
	CHECK_OK(coredam_config_load(tpath("y/coredam.conf"), dirs, &c, &e));
	CHECK_STREQ(c.pressure_cgroups, "/d.slice");
	/* --dump-config writes a list as one assignment that reads back the same */
	{
		char buf[65536];
		struct coredam_config d;

		CHECK(coredam_config_format(&c, buf, sizeof(buf)) > 0);
		mkfile("y/dump.conf", buf);
		CHECK_OK(coredam_config_load(tpath("y/dump.conf"), NULL, &d, &e));
		CHECK_STREQ(d.devices, c.devices);
		CHECK_STREQ(d.pressure_cgroups, c.pressure_cgroups);
	}
	/* a list that grows past what it takes is refused, with its line */
	{
		char text[1200];

		snprintf(text, sizeof(text), "[Devices]\nDevices=/dev/%0600d\nDevices=/dev/%0600d\n", 0, 1);
		expect_error(text, 3, "the list is too long");
	}

	/* the installed file has the three layers, another only its own */
	{
		struct coredam_dropin_dirs d;

		coredam_config_dropin_dirs("/srv/x/coredam.conf", NULL, &d);
		CHECK_STREQ(d.list[0], "/srv/x/coredam.conf.d");
		CHECK(d.list[1] == NULL);
		coredam_config_dropin_dirs("/srv/x/coredam.conf", "/srv/y", &d);
		CHECK_STREQ(d.list[0], "/srv/y");
		coredam_config_dropin_dirs(COREDAM_CONF_FILE, NULL, &d);
		CHECK_STREQ(d.list[0], COREDAM_CONF_DIR "/coredam.conf.d");
		CHECK_STREQ(d.list[1], "/run/coredam/coredam.conf.d");
		CHECK_STREQ(d.list[2], COREDAM_PKGLIBDIR "/coredam.conf.d");
		CHECK(d.list[3] == NULL);
	}
}

TEST(config_dropin_set_keeps_meaning)
{
	struct coredam_config c;
	struct coredam_error e;
	char text[2048], value[1100], *s;
	size_t o = 0;

	/* more assignments than the editor keeps, but only a few keys: found by fuzz_config */
	o += snprintf(text + o, sizeof(text) - o, "[Limits]\n");
	for (int i = 0; i < 70; i++)
		o += snprintf(text + o, sizeof(text) - o, "Concurrency=%d\n", i);
	mkfile("c/coredam.conf.d/50-coredamctl.conf", text);
	CHECK_OK(coredam_dropin_set(tpath("c/coredam.conf.d/50-coredamctl.conf"), "Agent", "Mode", "adaptive"));
	CHECK_OK(coredam_config_load(tpath("c/coredam.conf"), DIRS(tpath("c/coredam.conf.d")), &c, &e));
	CHECK_EQ_INT(c.concurrency, 69);
	CHECK_EQ_INT(c.mode, COREDAM_MODE_ADAPTIVE);

	/* a value longer than any key takes is refused, the file left as it was */
	s = slurp("c/coredam.conf.d/50-coredamctl.conf");
	memset(value, 'a', sizeof(value) - 1);
	value[0] = '/';
	value[sizeof(value) - 1] = '\0';
	CHECK_ERRNO(coredam_dropin_set(tpath("c/coredam.conf.d/50-coredamctl.conf"), "Devices", "Destination", value),
		    -E2BIG);
	{
		char *t = slurp("c/coredam.conf.d/50-coredamctl.conf");

		CHECK(s && t && strcmp(s, t) == 0);
		free(t);
	}
	free(s);

	/* a drop-in that does not parse is not rewritten */
	mkfile("c/coredam.conf.d/50-coredamctl.conf", "[Limits]\nno equals here\n");
	CHECK_ERRNO(coredam_dropin_set(tpath("c/coredam.conf.d/50-coredamctl.conf"), "Agent", "Mode", "fixed"), -EINVAL);
}

/* coredamctl's load: a bad line is left out, everything else counts, the first problem is named. */
TEST(config_lenient_keeps_every_good_line)
{
	struct coredam_config c;
	struct coredam_error e;

	mkfile("l/coredam.conf", "[Agent]\nControlSocket=/run/elsewhere.sock\n[Limits]\nWriteBandwidth=fast\n"
				 "Concurrency=5\n");
	mkfile("l/coredam.conf.d/10-a.conf", "[Limits]\nnot a line\nQueueCap=9\n");
	mkfile("l/coredam.conf.d/20-b.conf", "[Limits]\nWaitTimeout=0\nQueueCap=7\n");
	/* strict, as coredamd loads: refused, the first problem named */
	coredam_config_init(&c);
	CHECK(coredam_config_load(tpath("l/coredam.conf"), DIRS(tpath("l/coredam.conf.d")), &c, &e) < 0);
	CHECK_EQ_INT(e.line, 4);
	CHECK_STREQ(c.control_socket, "/run/coredam/control.sock");
	/* lenient */
	CHECK(coredam_config_load_full(tpath("l/coredam.conf"), DIRS(tpath("l/coredam.conf.d")), COREDAM_CONFIG_LENIENT,
				       &c, &e) < 0);
	CHECK(strstr(e.where, "l/coredam.conf") != NULL);
	CHECK_EQ_INT(e.line, 4);
	CHECK(strstr(e.msg, "WriteBandwidth=fast") != NULL);
	CHECK_STREQ(c.control_socket, "/run/elsewhere.sock");
	CHECK_EQ_INT(c.write_bps, 10000000);
	CHECK_EQ_INT(c.concurrency, 5);
	/* 10-a.conf stops at its syntax error; 20-b.conf still counts */
	CHECK_EQ_INT(c.queue_cap, 7);
	CHECK_EQ_INT(c.wait_timeout_usec, 0);
}
