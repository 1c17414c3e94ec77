// SPDX-License-Identifier: LGPL-2.1-or-later
/* PSI: the pressure files parsed, a trigger armed. */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "psi.h"
#include "test.h"
#include "macro.h"

TEST(psi_parse)
{
	struct coredam_psi p;

	CHECK_OK(coredam_psi_parse("some avg10=1.50 avg60=0.20 avg300=0.00 total=123456\n"
				   "full avg10=0.50 avg60=0.10 avg300=0.00 total=65432\n", &p));
	CHECK(p.some_avg10 > 1.49 && p.some_avg10 < 1.51);
	CHECK_EQ_INT(p.some_total, 123456);
	CHECK(p.has_full && p.full_total == 65432);
	CHECK_OK(coredam_psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=5\n", &p));
	CHECK(!p.has_full);
	CHECK_ERRNO(coredam_psi_parse("nonsense\n", &p), -EBADMSG);
	CHECK_ERRNO(coredam_psi_parse("", &p), -EBADMSG);
	CHECK(coredam_psi_fraction(1000, 251000, 1000000) > 0.249);
	CHECK(coredam_psi_fraction(1000, 251000, 1000000) < 0.251);
	CHECK(coredam_psi_fraction(5000, 1000, 1000000) == 0.0);
	CHECK(coredam_psi_fraction(0, 5000000, 1000000) == 1.0);
}

TEST(psi_trigger_validates)
{
	int fd = -1;

	mkfile("io.pressure", "");
	CHECK_ERRNO(coredam_psi_trigger_open(AT_FDCWD, tpath("io.pressure"), 100000, 100000, &fd), -EINVAL);
	CHECK_ERRNO(coredam_psi_trigger_open(AT_FDCWD, tpath("io.pressure"), 200000, 100000, &fd), -EINVAL);
	CHECK_OK(coredam_psi_trigger_open(AT_FDCWD, tpath("io.pressure"), 100000, 1000000, &fd));
	CHECK(fd >= 0);
	close(fd);
	{
		char *s = slurp("io.pressure");

		CHECK(s && strcmp(s, "some 100000 1000000") == 0);
		free(s);
	}
}
