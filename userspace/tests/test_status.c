// SPDX-License-Identifier: LGPL-2.1-or-later
/* The STATUS answer between coredamd and coredamctl, and coredamctl of other versions. */
#include <inttypes.h>
#include <math.h>

#include "control.h"
#include "json-util.h"
#include "status.h"
#include "test.h"
#include "macro.h"

/* What a daemon of this version says, field for field as loop.c's formatter of old wrote it. */
static const char today[] =
	"agent_pid=4242\nconfig=/etc/coredam/coredam.conf\nlast_reload=ok\nmode=adaptive\ncgroup=/coredump.slice\n"
	"write_bps=20000000\nread_bps=0\nconcurrency=2\nqueue_cap=64\nwait_timeout_ms=30000\n"
	"floor_bps=5000000\nceiling_bps=200000000\nbusy_ceiling_bps=50000000\nforeground_pressure=0.1234\n"
	"core_pattern=|/usr/libexec/coredam/coredam-pipe /var/lib/coredam/cores %P %u %g %s %t %c %d %e\n"
	"destination=/var/lib/coredam/cores\npipe_helper=inactive\nstats_source=kernel\n"
	"space_below=0\nfree_bytes=1073741824\nfloor_bytes=536870912\n"
	"device=8:0 sda disk\ndevice=253:1 dm-1 dm\n"
	"budget_changes=7\nreloads=1\nreload_failures=0\n"
	"waiting_memory=1610612736\ndumper_memory=209715200\n"
	"limits_through=systemd coredump.slice\nunit_calls=3\n";

static const char *format(const struct coredam_status *s)
{
	static char buf[COREDAM_CTL_RESP_MAX];
	struct strbuf sb = STRBUF_INIT(buf, sizeof(buf));

	coredam_status_format(s, &sb);
	return strbuf_done(&sb) >= 0 ? buf : "(ENOBUFS)";
}

TEST(status_round_trip)
{
	static struct coredam_status s, again;

	CHECK_EQ_INT(coredam_status_parse(today, &s), COREDAM_STATUS_N_FIELDS);
	CHECK_EQ_INT(s.have, COREDAM_STATUS_ALL);
	CHECK_EQ_INT(s.agent_pid, 4242);
	CHECK_STREQ(s.mode, "adaptive");
	CHECK(s.write_bps == 20000000 && s.busy_ceiling_bps == 50000000 && s.free_bytes == 1073741824);
	CHECK(fabs(s.foreground_pressure - 0.1234) < 1e-9);
	CHECK_STREQ(s.core_pattern, "|/usr/libexec/coredam/coredam-pipe /var/lib/coredam/cores %P %u %g %s %t %c %d %e");
	CHECK_EQ_INT(s.n_devices, 2);
	CHECK(s.devices[1].major == 253 && s.devices[1].minor == 1);
	CHECK_STREQ(s.devices[1].name, "dm-1");
	CHECK_STREQ(s.devices[1].kind, "dm");
	CHECK_EQ_INT(s.reloads, 1);
	CHECK(s.waiting_memory == 1610612736 && s.dumper_memory == 209715200);
	CHECK_STREQ(s.limits_through, "systemd coredump.slice");
	CHECK_EQ_INT(s.unit_calls, 3);
	/* the wire format is the one every coredamctl reads */
	CHECK_STREQ(format(&s), today);
	CHECK_EQ_INT(coredam_status_parse(format(&s), &again), COREDAM_STATUS_N_FIELDS);
	CHECK(memcmp(&s, &again, sizeof(s)) == 0);
}

/* A newer daemon's keys are skipped; an older daemon's missing ones are absent, not zero. */
TEST(status_unknown_and_missing_keys)
{
	static struct coredam_status s;

	CHECK_EQ_INT(coredam_status_parse("OK\nagent_pid=7\nshiny_new_thing=1\nmode=fixed\nwrite_bps=10\n"
					  "device=8:16 sdb partition extra words\nnot a line\n=\nmode_x=1\n", &s), 4);
	CHECK(coredam_status_has(&s, COREDAM_STATUS_AGENT_PID) && s.agent_pid == 7);
	CHECK(coredam_status_has(&s, COREDAM_STATUS_MODE));
	CHECK_STREQ(s.mode, "fixed");
	CHECK(coredam_status_has(&s, COREDAM_STATUS_DEVICES) && s.n_devices == 1);
	CHECK_STREQ(s.devices[0].kind, "partition");
	CHECK(!coredam_status_has(&s, COREDAM_STATUS_BUSY_CEILING_BPS));
	CHECK(!coredam_status_has(&s, COREDAM_STATUS_FOREGROUND_PRESSURE));
	CHECK(!coredam_status_has(&s, COREDAM_STATUS_LAST_RELOAD));
	/* only what was there is formatted again */
	CHECK_STREQ(format(&s), "agent_pid=7\nmode=fixed\nwrite_bps=10\ndevice=8:16 sdb partition\n");
	/* a field for people, as the wire spells it */
	{
		char v[32];

		CHECK_EQ_INT(coredam_status_value(&s, COREDAM_STATUS_WRITE_BPS, v, sizeof(v)), 2);
		CHECK_STREQ(v, "10");
		CHECK_ERRNO(coredam_status_value(&s, COREDAM_STATUS_BUSY_CEILING_BPS, v, sizeof(v)), -ENOENT);
		CHECK_ERRNO(coredam_status_value(&s, COREDAM_STATUS_DEVICES, v, sizeof(v)), -EINVAL);
		CHECK_ERRNO(coredam_status_value(&s, COREDAM_STATUS_MODE, v, 3), -ENOBUFS);
	}
	CHECK_EQ_INT(coredam_status_parse("", &s), 0);
	CHECK_EQ_INT(s.have, 0);
	CHECK_STREQ(coredam_status_key(COREDAM_STATUS_DEVICES), "device");
	CHECK_STREQ(coredam_status_key(COREDAM_STATUS_BUSY_CEILING_BPS), "busy_ceiling_bps");
}

/* A number that does not parse is absent, never a made-up value; a key met twice keeps its first. */
TEST(status_bad_values)
{
	static struct coredam_status s;

	CHECK_EQ_INT(coredam_status_parse("agent_pid=12x\nwrite_bps=-1\nfloor_bps=\nforeground_pressure=nan\n"
					  "read_bps=99999999999999999999\nspace_below=1\nspace_below=0\n"
					  "device=8:0 sda\ndevice=x:0 sda disk\ndevice=8:0\n"
					  "free_bytes=5\nfree_bytes=6\n", &s), 2);
	CHECK(coredam_status_has(&s, COREDAM_STATUS_SPACE_BELOW) && s.space_below == 1);
	CHECK(coredam_status_has(&s, COREDAM_STATUS_FREE_BYTES) && s.free_bytes == 5);
	CHECK(!coredam_status_has(&s, COREDAM_STATUS_DEVICES) && s.n_devices == 0);
	CHECK(!coredam_status_has(&s, COREDAM_STATUS_AGENT_PID));
	/* a string too long for its field is cut, not spilled */
	{
		char text[64 + sizeof(s.mode)];

		snprintf(text, sizeof(text), "mode=%0*d\n", (int)sizeof(s.mode) + 10, 0);
		coredam_status_parse(text, &s);
		CHECK_EQ_INT(strlen(s.mode), sizeof(s.mode) - 1);
	}
}

/*
 * The configuration's path, the reload error and core_pattern are anyone's
 * text to the parser: a newline in one would have started a key of its own
 * ("space_below=1" in a path made every coredamctl report a full disk).
 */
TEST(status_hostile_strings)
{
	static struct coredam_status s, back;
	const char *text;

	s.have = COREDAM_STATUS_ALL;
	snprintf(s.config, sizeof(s.config), "/tmp/x\nspace_below=1\nagent_pid=1");
	snprintf(s.last_reload, sizeof(s.last_reload), "coredam.conf:3: bad value\nkept the running configuration");
	snprintf(s.core_pattern, sizeof(s.core_pattern), "|/x \\n \033]0;t\007 \xff\xc0 caf\xc3\xa9");
	snprintf(s.mode, sizeof(s.mode), "fixed");
	s.n_devices = 1;
	snprintf(s.devices[0].name, sizeof(s.devices[0].name), "sd a");
	snprintf(s.devices[0].kind, sizeof(s.devices[0].kind), "disk");
	text = format(&s);
	CHECK(strstr(text, "\nconfig=/tmp/x\\nspace_below=1\\nagent_pid=1\n") != NULL);
	CHECK(strstr(text, "\nlast_reload=coredam.conf:3: bad value\\nkept the running configuration\n") != NULL);
	CHECK(strstr(text, "\ncore_pattern=|/x \\\\n \\x1b]0;t\\x07 \\xff\\xc0 caf\xc3\xa9\n") != NULL);
	CHECK(strstr(text, "\ndevice=0:0 sd\\x20a disk\n") != NULL);
	/* shown to people escaped: a terminal gets no control character */
	{
		char v[256];

		CHECK(coredam_status_value(&s, COREDAM_STATUS_CORE_PATTERN, v, sizeof(v)) > 0);
		CHECK_STREQ(v, "|/x \\\\n \\x1b]0;t\\x07 \\xff\\xc0 caf\xc3\xa9");
	}
	CHECK_EQ_INT(coredam_status_parse(text, &back), COREDAM_STATUS_N_FIELDS);
	CHECK_EQ_INT(back.space_below, 0);
	CHECK_EQ_INT(back.agent_pid, 0);
	CHECK(memcmp(&s, &back, sizeof(s)) == 0);
}

/* For status --json: each field with its JSON type, nothing for what is absent. */
TEST(status_json_types)
{
	static struct coredam_status s;
	json_auto_t *pid = NULL, *bps = NULL, *pressure = NULL, *mode = NULL, *none = NULL;

	coredam_status_parse("agent_pid=7\nwrite_bps=18446744073709551615\nforeground_pressure=0.5000\n"
			     "mode=fix\\xffed\ndevice=8:0 sda disk\n", &s);
	pid = coredam_status_json(&s, COREDAM_STATUS_AGENT_PID);
	bps = coredam_status_json(&s, COREDAM_STATUS_WRITE_BPS);
	pressure = coredam_status_json(&s, COREDAM_STATUS_FOREGROUND_PRESSURE);
	mode = coredam_status_json(&s, COREDAM_STATUS_MODE);
	none = coredam_status_json(&s, COREDAM_STATUS_READ_BPS);
	CHECK(json_is_integer(pid) && json_integer_value(pid) == 7);
	CHECK(json_is_real(bps));	/* beyond jansson's signed integers: still a number */
	CHECK(json_is_real(pressure) && json_real_value(pressure) == 0.5);
	CHECK(json_is_string(mode) && strcmp(json_string_value(mode), "fix\xc3\xbf" "ed") == 0);
	CHECK(none == NULL);
	CHECK(coredam_status_json(&s, COREDAM_STATUS_DEVICES) == NULL);
}
