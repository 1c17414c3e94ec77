// SPDX-License-Identifier: LGPL-2.1-or-later
/* The kernel log read for the crashes the coredump socket never saw. */
#include <errno.h>

#include "kmsg.h"
#include "test.h"

#define SOCK "/run/coredam/coredump/socket"

static struct coredam_kmsg_record parse(const char *rec, int *ret)
{
	struct coredam_kmsg_record r = { .seq = 999, .loss = 99, .count = 99 };

	*ret = coredam_kmsg_parse(rec, strlen(rec), SOCK, &r);
	return r;
}

TEST(kmsg_losses_of_this_socket)
{
	struct coredam_kmsg_record r;
	int ret;

	r = parse("4,1234,56789,-;coredump: 812(crasher): Coredump socket " SOCK " receive queue full\n", &ret);
	CHECK_EQ_INT(ret, 0);
	CHECK_EQ_INT(r.seq, 1234);
	CHECK_EQ_INT(r.loss, COREDAM_KMSG_BACKLOG);
	CHECK_EQ_INT(r.count, 1);
	/* 5.x and later may add fields to the prefix; continuation lines follow */
	r = parse("4,77,1,-,caller=T12;coredump: 9(a b): Coredump socket connection " SOCK " failed -111\n"
		  " SUBSYSTEM=x\n", &ret);
	CHECK_EQ_INT(ret, 0);
	CHECK_EQ_INT(r.seq, 77);
	CHECK_EQ_INT(r.loss, COREDAM_KMSG_CONNECT);
	CHECK_EQ_INT(r.count, 1);
	r = parse("4,78,1,-;coredump_sock_connect: 17 callbacks suppressed\n", &ret);
	CHECK_EQ_INT(r.loss, COREDAM_KMSG_SUPPRESSED);
	CHECK_EQ_INT(r.count, 17);
}

TEST(kmsg_others_are_no_loss)
{
	static const char *const none[] = {
		/* another socket, or a prefix of this one's path */
		"4,1,1,-;coredump: 1(x): Coredump socket /run/other receive queue full\n",
		"4,1,1,-;coredump: 1(x): Coredump socket " SOCK "2 receive queue full\n",
		"4,1,1,-;coredump: 1(x): Coredump socket connection /run/coredam/coredump/socke failed -2\n",
		/* written by userspace: the kernel gives it the user facility */
		"12,1,1,-;coredump: 1(x): Coredump socket " SOCK " receive queue full\n",
		/* a crashed process names itself: its comm stays inside the parentheses */
		"4,1,1,-;coredump: 1(receive queue full): Coredump socket /x receive queue full\n",
		"4,1,1,-;coredump: 1(x): Core dump to |" SOCK " receive queue full disabled\n",
		"4,1,1,-;other: Coredump socket " SOCK " receive queue full\n",
		"4,1,1,-;coredump: x(y): Coredump socket " SOCK " receive queue full\n",
		"4,1,1,-;coredump: 1(x): Coredump socket connection " SOCK " failed \n",
		"4,1,1,-;coredump: 1(x): Coredump socket connection " SOCK " failed -\n",
		"4,1,1,-;coredump: 1(x) Coredump socket " SOCK " receive queue full\n",
		"4,1,1,-;vfs_coredump: 3 callbacks suppressed\n",
		"4,1,1,-;coredump_sock_connect: 3 callbacks suppressed twice\n",
		"4,1,1,-;coredump_sock_connect: callbacks suppressed\n",
		"6,1,1,-;Linux version 7.3.4\n",
	};
	struct coredam_kmsg_record r;
	int ret;

	for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++) {
		r = parse(none[i], &ret);
		CHECK_EQ_INT(ret, 0);
		CHECK_EQ_INT(r.seq, 1);
		if (r.loss != COREDAM_KMSG_NONE || r.count != 0)
			fprintf(stderr, "  counted: %s", none[i]);
		CHECK_EQ_INT(r.loss, COREDAM_KMSG_NONE);
		CHECK_EQ_INT(r.count, 0);
	}
	/* a hostile comm holding "): " still leaves the line whole */
	r = parse("4,5,1,-;coredump: 1(a): b): Coredump socket " SOCK " receive queue full\n", &ret);
	CHECK_EQ_INT(r.loss, COREDAM_KMSG_BACKLOG);
}

TEST(kmsg_malformed)
{
	static const char *const bad[] = {
		"", "4", "4,", "4,x,1,-;m\n", ",1,1,-;m\n", "4,1,1,-", "4,1 1;m\n",
		"4,99999999999999999999,1,-;m\n",
	};
	int ret;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		parse(bad[i], &ret);
		CHECK_EQ_INT(ret, -EBADMSG);
	}
}
