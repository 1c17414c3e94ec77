// SPDX-License-Identifier: LGPL-2.1-or-later
/* coredam.conf's keys: their defaults, units and values, what is refused, --dump-config. */
#include "config.h"
#include "sched-util.h"
#include "test.h"
#include "macro.h"

/* one drop-in directory */
#define DIRS(dir) ((const char *const[]){ (dir), NULL })

TEST(config_defaults)
{
	struct coredam_config c;
	struct coredam_error e;

	/* no file, no drop-in dir: the documented defaults */
	CHECK_OK(coredam_config_load(tpath("none.conf"), DIRS(tpath("none.d")), &c, &e));
	CHECK_STREQ(c.cgroup, "/coredump.slice");
	CHECK_EQ_INT(c.mode, COREDAM_MODE_FIXED);
	CHECK_EQ_INT(c.write_bps, 10000000);
	CHECK_EQ_INT(c.read_bps, 0);
	CHECK_EQ_INT(c.concurrency, 2);
	CHECK_EQ_INT(c.queue_cap, 64);
	CHECK(c.wait_timeout_usec == 30ULL * 60 * 1000000);	/* bounded: no dump waits for ever */
	CHECK_EQ_INT(c.memory_high, 256ULL << 20);
	CHECK_EQ_INT(c.floor_bps, 10000000);
	CHECK_EQ_INT(c.ceiling_bps, 0);
	CHECK_EQ_INT(c.busy_ceiling_bps, 0);	/* auto: the floor */
	CHECK_EQ_INT(c.free_floor_bytes, 1ULL << 30);
	CHECK_EQ_INT(c.writeback_window, 1 << 20);
	CHECK_EQ_INT(c.dump_nice, 19);
	CHECK(c.lift_when_idle);
	CHECK_STREQ(c.metrics_file, "/run/coredam/metrics.prom");
	CHECK_STREQ(c.control_socket, "/run/coredam/control.sock");
	CHECK_STREQ(c.destination, "");
	CHECK(!c.require_kernel_support);
}

TEST(config_good_and_every_unit)
{
	struct coredam_config c;
	struct coredam_error e;

	mkfile("c/coredam.conf",
	       "# comment\n; other comment\n\n"
	       "[Agent]\nMode = adaptive\nRequireKernelSupport=yes\nInterval=500ms\n"
	       "MetricsFile=/var/lib/node/coredam.prom\n"
	       "[Cgroup]\nPath=/system.slice/coredump.slice\nMemoryHigh=1.5G\n"
	       "[Devices]\nDestination=/var/crash\nDevices=/dev/sdb 8:32\n"
	       "[Limits]\nWriteBandwidth=50M\nReadBandwidth=max\nWriteIOPS=2K\nReadIOPS=100\n"
	       "Concurrency=4\nQueueCap=0\nWaitTimeout=2min\nWritebackWindow=512K\n"
	       "[Adaptive]\nFloor=5M\nCeiling=40MB/s\nConcurrencyFloor=1\nConcurrencyCeiling=8\n"
	       "PressureTarget=20%\nPressureWindow=2s\nStep=1M\nBackoff=0.25\nHoldIntervals=3\n"
	       "PressureCgroups=/system.slice /user.slice\n"
	       "[Space]\nFreeSpaceFloor=2G 10%\nMarkIncomplete=no\n");
	CHECK_OK(coredam_config_load(tpath("c/coredam.conf"), DIRS(tpath("c/coredam.conf.d")), &c, &e));
	CHECK_EQ_INT(c.mode, COREDAM_MODE_ADAPTIVE);
	CHECK(c.require_kernel_support);
	CHECK_EQ_INT(c.interval_usec, 500000);
	CHECK_STREQ(c.cgroup, "/system.slice/coredump.slice");
	CHECK_EQ_INT(c.memory_high, 3ULL << 29);
	CHECK_STREQ(c.destination, "/var/crash");
	CHECK_STREQ(c.devices, "/dev/sdb 8:32");
	CHECK_EQ_INT(c.write_bps, 50000000);
	CHECK_EQ_INT(c.read_bps, 0);
	CHECK_EQ_INT(c.write_iops, 2000);
	CHECK_EQ_INT(c.read_iops, 100);
	CHECK_EQ_INT(c.concurrency, 4);
	CHECK_EQ_INT(c.queue_cap, 0);
	CHECK_EQ_INT(c.wait_timeout_usec, 120000000);
	CHECK_EQ_INT(c.writeback_window, 512 * 1024);
	CHECK_EQ_INT(c.floor_bps, 5000000);
	CHECK_EQ_INT(c.ceiling_bps, 40000000);
	CHECK_EQ_INT(c.concurrency_ceiling, 8);
	CHECK(c.pressure_target > 0.199 && c.pressure_target < 0.201);
	CHECK_EQ_INT(c.pressure_window_usec, 2000000);
	CHECK_EQ_INT(c.step_bps, 1000000);
	CHECK(c.backoff > 0.249 && c.backoff < 0.251);
	CHECK_EQ_INT(c.hold_intervals, 3);
	CHECK_STREQ(c.pressure_cgroups, "/system.slice /user.slice");
	CHECK_EQ_INT(c.free_floor_bytes, 2ULL << 30);
	CHECK_EQ_INT(c.free_floor_percent, 10);
	CHECK(!c.mark_incomplete);
	/* the larger of the two floors */
	CHECK_EQ_INT(coredam_config_free_floor(&c, 100ULL << 30), 10ULL << 30);
	CHECK_EQ_INT(coredam_config_free_floor(&c, 10ULL << 30), 2ULL << 30);
}

/* Set [section] key=value on @c; the result and the message. */
static int set1(struct coredam_config *c, const char *section, const char *key, const char *value,
		struct coredam_error *reterr)
{
	*reterr = (struct coredam_error){ 0 };
	return coredam_config_set(c, section, key, value, reterr);
}

/* 0 where it is the stored "none" would read as "nothing at all": refused, as systemd does. */
TEST(config_zero_is_refused_where_none_is_spelled_out)
{
	struct coredam_config c;
	struct coredam_error err;

	coredam_config_init(&c);
	CHECK_ERRNO(set1(&c, "Limits", "WriteBandwidth", "0", &err), -ERANGE);
	CHECK(strstr(err.msg, "WriteBandwidth=0: 0 is not allowed; max means no limit") != NULL);
	CHECK_EQ_INT(c.write_bps, 10000000);
	CHECK_ERRNO(set1(&c, "Cgroup", "MemoryHigh", "0", &err), -ERANGE);
	CHECK_ERRNO(set1(&c, "Limits", "WriteIOPS", "0", &err), -ERANGE);
	CHECK_ERRNO(set1(&c, "Pipe", "CoreSizeMax", "0K", &err), -ERANGE);
	CHECK_ERRNO(set1(&c, "Adaptive", "Ceiling", "0", &err), -ERANGE);
	CHECK(strstr(err.msg, "auto means chosen by the agent") != NULL);
	CHECK_ERRNO(set1(&c, "Adaptive", "Floor", "0", &err), -ERANGE);
	CHECK(strstr(err.msg, "must be more than 0") != NULL);
	/* each key takes only its own word for none, and says which */
	CHECK(set1(&c, "Adaptive", "Floor", "max", &err) < 0);
	CHECK_STREQ(err.msg, "Floor=max: not a rate (use e.g. 50M)");
	/* a number past 64 bits is too large, not 0 */
	CHECK_ERRNO(set1(&c, "Limits", "WriteBandwidth", "99999999999999999999", &err), -EOVERFLOW);
	CHECK_STREQ(err.msg, "WriteBandwidth=99999999999999999999: too large");
	CHECK_ERRNO(set1(&c, "Cgroup", "MemoryHigh", "17179869184G", &err), -EOVERFLOW);
	CHECK(set1(&c, "Limits", "WriteIOPS", "many", &err) < 0);
	CHECK_STREQ(err.msg, "WriteIOPS=many: not a count of operations a second (use e.g. 500, 2K), or max");
	CHECK(set1(&c, "Limits", "WriteBandwidth", "auto", &err) < 0);
	CHECK(set1(&c, "Adaptive", "Ceiling", "max", &err) < 0);
	/* infinity, as systemd spells it, and max */
	CHECK_OK(set1(&c, "Limits", "WriteBandwidth", "infinity", &err));
	CHECK_EQ_INT(c.write_bps, 0);
	CHECK_OK(set1(&c, "Cgroup", "MemoryHigh", "max", &err));
	CHECK_EQ_INT(c.memory_high, 0);
	CHECK_OK(set1(&c, "Adaptive", "Ceiling", "auto", &err));
	CHECK_EQ_INT(c.ceiling_bps, 0);
	CHECK_EQ_INT(c.busy_ceiling_bps, 0);	/* auto: the floor */
	/* where 0 means off, not none, it stays */
	CHECK_OK(set1(&c, "Limits", "WritebackWindow", "0", &err));
	CHECK_EQ_INT(c.writeback_window, 0);
	/*
	 * The counts and durations whose 0 is the kernel knob's "none" take
	 * infinity, and still take the 0 that configurations wrote for it.
	 */
	CHECK_OK(set1(&c, "Limits", "Concurrency", "infinity", &err));
	CHECK_EQ_INT(c.concurrency, 0);
	CHECK_OK(set1(&c, "Limits", "QueueCap", "infinity", &err));
	CHECK_EQ_INT(c.queue_cap, 0);
	CHECK_OK(set1(&c, "Limits", "QueueCap", "0", &err));
	CHECK_EQ_INT(c.queue_cap, 0);
	CHECK_OK(set1(&c, "Limits", "WaitTimeout", "infinity", &err));
	CHECK(c.wait_timeout_usec == 0);
	CHECK_OK(set1(&c, "Pipe", "CoreTimeMax", "infinity", &err));
	CHECK(c.pipe_time_max_usec == 0);
	CHECK(set1(&c, "Limits", "QueueCap", "lots", &err) < 0);
	CHECK_STREQ(err.msg, "QueueCap=lots: expected an unsigned integer, or infinity");
	CHECK(set1(&c, "Limits", "WaitTimeout", "never", &err) < 0);
	CHECK_STREQ(err.msg, "WaitTimeout=never: not a duration (use e.g. 30s, 500ms, 2min), or infinity");
	/* and only those: a count or a duration whose 0 means something else has no infinity */
	CHECK(set1(&c, "Adaptive", "HoldIntervals", "infinity", &err) < 0);
	CHECK(set1(&c, "Agent", "Interval", "infinity", &err) < 0);
}

/* --dump-config names every key, and reads back as the same configuration. */
TEST(config_format_roundtrip)
{
	struct coredam_config c, d;
	struct coredam_error e;
	static char buf[16384], again[16384];
	char line[128];

	mkfile("c/coredam.conf",
	       "[Agent]\nMode=adaptive\nInterval=250ms\n[Cgroup]\nKernelLeaf=dumps\nMemoryHigh=max\n"
	       "[Limits]\nWriteBandwidth=infinity\nWriteIOPS=2K\nConcurrency=0\nWritebackWindow=0\nDumpNice=keep\n"
	       "[Adaptive]\nFloor=5M\nCeiling=auto\nPressureTarget=12.5%\nBackoff=0.25\nLiftWhenIdle=no\n"
	       "[Space]\nFreeSpaceFloor=2G 5%\nMarkIncomplete=no\n[Pipe]\nCoreSizeMax=max\nCompress=yes\n");
	CHECK_OK(coredam_config_load(tpath("c/coredam.conf"), NULL, &c, &e));
	CHECK(coredam_config_format(&c, buf, sizeof(buf)) > 0);
	for (size_t i = 0; coredam_config_key_name(i); i++) {
		snprintf(line, sizeof(line), "\n%s=", coredam_config_key_name(i));
		if (!strstr(buf, line)) {
			fprintf(stderr, "  --dump-config lacks %s\n", line + 1);
			test_failed_checks++;
		}
	}
	CHECK(strstr(buf, "\nKernelLeaf=dumps\n") && strstr(buf, "\nMemoryHigh=max\n"));
	CHECK(strstr(buf, "\nWriteBandwidth=max\n") && strstr(buf, "\nPressureTarget=12.5%\n"));
	CHECK(strstr(buf, "\nDumpNice=keep\n") && strstr(buf, "\nLiftWhenIdle=no\n"));
	/* "none" as systemd spells it, for the keys that read the old 0 as none too */
	CHECK(strstr(buf, "\nConcurrency=infinity\n") && strstr(buf, "\nWaitTimeout=1800000ms\n"));
	mkfile("rt.conf", buf);
	CHECK_OK(coredam_config_load(tpath("rt.conf"), NULL, &d, &e));
	CHECK(coredam_config_format(&d, again, sizeof(again)) > 0);
	CHECK_STREQ(again, buf);
	CHECK_STREQ(d.kernel_leaf, "dumps");
	CHECK_EQ_INT(d.memory_high, 0);
	CHECK_EQ_INT(d.dump_nice, COREDAM_NICE_KEEP);
	CHECK(d.pressure_target == c.pressure_target && d.backoff == c.backoff);
}

TEST(pipe_config_keys)
{
	struct coredam_config c;
	struct coredam_error err;

	coredam_config_init(&c);
	CHECK(!c.pipe_set_core_pattern && !c.pipe_compress);
	CHECK_STREQ(c.pipe_program, "/usr/libexec/coredam/coredam-pipe");
	CHECK_STREQ(c.pipe_directory, "/var/lib/coredam/cores");
	CHECK_EQ_INT(c.pipe_compress_level, 3);
	/* one core is read for at most 32 GiB and one hour: no dump holds a slot for ever */
	CHECK(c.pipe_size_max == 32ULL << 30);
	CHECK(c.pipe_time_max_usec == 3600ULL * 1000000);
	/* confined unless the operator says otherwise */
	CHECK(c.pipe_sandbox);
	CHECK(coredam_config_set(&c, "Pipe", "Sandbox", "no", &err) == 0 && !c.pipe_sandbox);
	CHECK(coredam_config_set(&c, "Pipe", "CoreSizeMax", "max", &err) == 0 && c.pipe_size_max == 0);
	CHECK(coredam_config_set(&c, "Pipe", "CoreTimeMax", "0", &err) == 0 &&
	      c.pipe_time_max_usec == 0);
	CHECK(coredam_config_set(&c, "Pipe", "CoreTimeMax", "forever", &err) < 0);
	CHECK(coredam_config_set(&c, "Pipe", "SetCorePattern", "yes", &err) == 0 &&
	      c.pipe_set_core_pattern);
	CHECK_ERRNO(coredam_config_set(&c, "Pipe", "Directory", "cores", &err), -EINVAL);
	CHECK(coredam_config_set(&c, "Pipe", "CompressLevel", "0", &err) < 0);

	mkfile("c.conf", "[Pipe]\nCompressLevel=20\n");
	{
		struct coredam_error e;

		CHECK_ERRNO(coredam_config_load(tpath("c.conf"), NULL, &c, &e), -EINVAL);
		CHECK(strstr(e.msg, "CompressLevel") != NULL && e.line == 2);
	}
	mkfile("d.conf", "[Pipe]\nDirectory=/var/my cores\n");
	{
		struct coredam_error e;

		CHECK_ERRNO(coredam_config_load(tpath("d.conf"), NULL, &c, &e), -EINVAL);
		CHECK(strstr(e.msg, "white space") != NULL);
	}
}

TEST(socket_config_keys)
{
	static const char *const bad[] = {
		"[Socket]\nListen=/run/a b/socket\n",			/* white space: core_pattern splits there */
		"[Socket]\nListen=/run/%p/socket\n",			/* a specifier */
		"[Socket]\nListen=/run/coredam/../socket\n",		/* the kernel refuses ".." */
		"[Socket]\nListen=/socket\n",				/* no directory of its own */
		"[Socket]\nListen=/run/coredam/\n",			/* no name */
		"[Socket]\nListen=/run/coredam/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n",
		"[Pipe]\nSetCorePattern=yes\n[Socket]\nSetCorePattern=yes\n",	/* both want core_pattern */
	};
	struct coredam_config c;
	struct coredam_error e;

	coredam_config_init(&c);
	CHECK(!c.sock_set_core_pattern);
	CHECK_STREQ(c.sock_listen, "/run/coredam/coredump/socket");
	mkfile("s.conf", "[Socket]\nSetCorePattern=yes\nListen=/run/cd/sock\n");
	CHECK_OK(coredam_config_load(tpath("s.conf"), NULL, &c, &e));
	CHECK(c.sock_set_core_pattern);
	CHECK_STREQ(c.sock_listen, "/run/cd/sock");
	for (size_t i = 0; i < ELEMENTSOF(bad); i++) {
		mkfile("s.conf", bad[i]);
		CHECK_ERRNO(coredam_config_load(tpath("s.conf"), NULL, &c, &e), -EINVAL);
	}
}

/* [Space] MaxUse=, KeepFree=: their spellings, what is refused, and KeepFree= at or above the floor. */
TEST(config_retention_keys)
{
	struct coredam_config c;
	struct coredam_error e;
	char buf[65536];

	coredam_config_init(&c);
	CHECK_EQ_INT(c.max_use_bytes, 4ULL << 30);
	CHECK_EQ_INT(c.max_use_percent, 10);
	CHECK(c.keep_free_auto);
	CHECK_OK(set1(&c, "Space", "MaxUse", "500M", &e));
	CHECK_EQ_INT(c.max_use_bytes, 500ULL << 20);
	CHECK_EQ_INT(c.max_use_percent, 0);
	CHECK_OK(set1(&c, "Space", "MaxUse", "20%", &e));
	CHECK_EQ_INT(c.max_use_bytes, 0);
	CHECK_EQ_INT(c.max_use_percent, 20);
	/* 0 would keep nothing: refused, infinity is no cap */
	CHECK_ERRNO(set1(&c, "Space", "MaxUse", "0", &e), -ERANGE);
	CHECK(strstr(e.msg, "MaxUse=0: 0 is not allowed; infinity means no limit") != NULL);
	CHECK_ERRNO(set1(&c, "Space", "MaxUse", "0%", &e), -ERANGE);
	CHECK_ERRNO(set1(&c, "Space", "MaxUse", "4G 0%", &e), -ERANGE);
	CHECK_ERRNO(set1(&c, "Space", "MaxUse", "", &e), 0);	/* back to the default */
	CHECK_EQ_INT(c.max_use_bytes, 4ULL << 30);
	CHECK_ERRNO(set1(&c, "Space", "MaxUse", "lots", &e), -EINVAL);
	CHECK_ERRNO(set1(&c, "Space", "MaxUse", "101%", &e), -EINVAL);
	CHECK_OK(set1(&c, "Space", "KeepFree", "3G 15%", &e));
	CHECK(!c.keep_free_auto);
	CHECK_EQ_INT(c.keep_free_bytes, 3ULL << 30);
	CHECK_EQ_INT(c.keep_free_percent, 15);
	CHECK_EQ_INT(coredam_config_keep_free(&c, 10ULL << 30), 3ULL << 30);
	CHECK_OK(set1(&c, "Space", "KeepFree", "auto", &e));
	CHECK(c.keep_free_auto);
	CHECK_EQ_INT(coredam_config_keep_free(&c, 10ULL << 30), 2ULL << 30);

	/* --dump-config writes what reads back the same */
	CHECK_OK(set1(&c, "Space", "MaxUse", "2G 5%", &e));
	CHECK_OK(set1(&c, "Space", "KeepFree", "1G 1%", &e));
	CHECK(coredam_config_format(&c, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "MaxUse=2147483648 5%\n") != NULL);
	CHECK(strstr(buf, "KeepFree=1073741824 1%\n") != NULL);
	CHECK_OK(set1(&c, "Space", "MaxUse", "infinity", &e));
	CHECK(coredam_config_format(&c, buf, sizeof(buf)) > 0);
	CHECK(strstr(buf, "MaxUse=infinity\n") != NULL);

	/* KeepFree= below the floor would vacuum only once dumps are skipped: refused, with the line */
	mkfile("r/coredam.conf", "[Space]\nFreeSpaceFloor=1G 5%\nKeepFree=2G\n");
	CHECK_ERRNO(coredam_config_load(tpath("r/coredam.conf"), DIRS(tpath("r/none.d")), &c, &e), -EINVAL);
	CHECK(strstr(e.msg, "KeepFree= is below FreeSpaceFloor=") != NULL);
	CHECK_EQ_INT(e.line, 3);
	mkfile("r/coredam.conf", "[Space]\nFreeSpaceFloor=1G\nKeepFree=512M\n");
	CHECK_ERRNO(coredam_config_load(tpath("r/coredam.conf"), DIRS(tpath("r/none.d")), &c, &e), -EINVAL);
	/* at the floor, above it, 0 (MaxUse= only) and auto are fine */
	mkfile("r/coredam.conf", "[Space]\nFreeSpaceFloor=1G 5%\nKeepFree=1G 5%\n");
	CHECK_OK(coredam_config_load(tpath("r/coredam.conf"), DIRS(tpath("r/none.d")), &c, &e));
	mkfile("r/coredam.conf", "[Space]\nFreeSpaceFloor=1G\nKeepFree=0\n");
	CHECK_OK(coredam_config_load(tpath("r/coredam.conf"), DIRS(tpath("r/none.d")), &c, &e));
	CHECK_EQ_INT(coredam_config_keep_free(&c, 10ULL << 30), 0);
	mkfile("r/coredam.conf", "[Space]\nFreeSpaceFloor=3G\n");
	CHECK_OK(coredam_config_load(tpath("r/coredam.conf"), DIRS(tpath("r/none.d")), &c, &e));
	CHECK_EQ_INT(coredam_config_keep_free(&c, 10ULL << 30), 6ULL << 30);
}

TEST(config_waiting_memory_max)
{
	struct coredam_config c;
	struct coredam_error e = {};

	coredam_config_init(&c);
	CHECK(c.waiting_memory.percent == 50 && c.waiting_memory.bytes == 0);
	CHECK_OK(coredam_config_set(&c, "Limits", "WaitingMemoryMax", "4G", &e));
	CHECK(c.waiting_memory.bytes == 4ULL << 30 && c.waiting_memory.percent == 0);
	CHECK(coredam_share_bytes(&c.waiting_memory, 100ULL << 30) == 4ULL << 30);
	CHECK_OK(coredam_config_set(&c, "Limits", "WaitingMemoryMax", "25%", &e));
	CHECK(coredam_share_bytes(&c.waiting_memory, 100ULL << 30) == 25ULL << 30);
	CHECK_OK(coredam_config_set(&c, "Limits", "WaitingMemoryMax", "infinity", &e));
	CHECK(coredam_share_bytes(&c.waiting_memory, 8ULL << 30) == 0);
	/* 0 would read as "no waiter at all"; both parts, as which? */
	CHECK(coredam_config_set(&c, "Limits", "WaitingMemoryMax", "0", &e) < 0);
	CHECK(coredam_config_set(&c, "Limits", "WaitingMemoryMax", "0%", &e) < 0);
	CHECK(coredam_config_set(&c, "Limits", "WaitingMemoryMax", "4G 50%", &e) < 0);
	CHECK(strstr(e.msg, "expected a size (e.g. 4G), a percentage (e.g. 50%) or infinity") != NULL);
	CHECK(coredam_config_set(&c, "Limits", "WaitingMemoryMax", "101%", &e) < 0);
	CHECK(coredam_config_set(&c, "Limits", "WaitingMemoryMax", "lots", &e) < 0);
}
