// SPDX-License-Identifier: LGPL-2.1-or-later
/* A cgroup's io.stat: the requests it made to the dump devices. */
#include <stdint.h>

#include "iostat.h"
#include "test.h"
#include "macro.h"

TEST(iostat_counts_requests_on_the_dump_devices)
{
	const struct coredam_devnum vda = { 254, 0 }, both[] = { { 254, 0 }, { 8, 16 } };
	uint64_t ios = 1;

	/* reads, writes and discards of the listed devices; other keys skipped */
	CHECK_OK(coredam_iostat_ios("8:16 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n"
				    "254:0 rbytes=0 wbytes=8192 rios=3 wios=2 dbytes=0 dios=1 "
				    "use_delay=0 delay_nsec=0 cost.vrate=100.00\n",
				    &vda, 1, &ios));
	CHECK_EQ_INT(ios, 6);
	CHECK_OK(coredam_iostat_ios("8:16 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n"
				    "254:0 rbytes=0 wbytes=8192 rios=3 wios=2 dbytes=0 dios=1\n",
				    both, 2, &ios));
	CHECK_EQ_INT(ios, 7);
	/* no line for the device: no request; an empty file: none at all */
	CHECK_OK(coredam_iostat_ios("8:16 rbytes=4096 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n", &vda, 1, &ios));
	CHECK_EQ_INT(ios, 0);
	CHECK(coredam_iostat_ios("", &vda, 1, &ios) == 0 && ios == 0);
	/* what is not io.stat is refused, the result untouched */
	ios = 42;
	CHECK_ERRNO(coredam_iostat_ios("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", &vda, 1, &ios), -EBADMSG);
	CHECK_ERRNO(coredam_iostat_ios("254:0 rios=x\n", &vda, 1, &ios), -EBADMSG);
	CHECK_ERRNO(coredam_iostat_ios("254:0 rios\n", &vda, 1, &ios), -EBADMSG);
	CHECK_ERRNO(coredam_iostat_ios("254:0x rios=1\n", &vda, 1, &ios), -EBADMSG);
	CHECK_ERRNO(coredam_iostat_ios("254:0 rios=18446744073709551615 wios=1\n", &vda, 1, &ios), -EBADMSG);
	CHECK_EQ_INT(ios, 42);
}
