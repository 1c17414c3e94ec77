// SPDX-License-Identifier: LGPL-2.1-or-later
/* The logger: the journal's native records, the errno variants. */
#include <sys/socket.h>
#include <sys/un.h>

#include "log.h"
#include "macro.h"
#include "test.h"

TEST(log_journal_record)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[8192];
	ssize_t n;
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tpath("journal.sock"));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	log_journal_socket = tkeep("journal.sock");
	log_setup("coredam-test", LOG_TARGET_JOURNAL);

	CHECK_ERRNO(log_warning_errno(-ENOSPC, "dump of %s: %m event=dump-end pid=42", "crasher"), -ENOSPC);
	n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);
	CHECK(n > 0);
	buf[n > 0 ? n : 0] = '\0';
	CHECK(strstr(buf, "MESSAGE=dump of crasher: No space left on device event=dump-end pid=42\n") == buf);
	CHECK(strstr(buf, "\nPRIORITY=4\n") != NULL);
	CHECK(strstr(buf, "\nSYSLOG_IDENTIFIER=coredam-test\n") != NULL);
	CHECK(strstr(buf, "\nCOREDAM_EVENT=dump-end\n") != NULL);
	CHECK(strstr(buf, "\nCOREDAM_PID=42\n") != NULL);
	/* the event's kind, for journalctl MESSAGE_ID= */
	CHECK(strstr(buf, "\nMESSAGE_ID=6160d3c4fbee470995d27901fdf5bd30\n") != NULL);
	CHECK_STREQ(log_message_id("dump-end"), "6160d3c4fbee470995d27901fdf5bd30");
	CHECK(log_message_id("no-such-event") == NULL);

	/* a newline in a value: the binary form, "NAME\n", 64-bit length, value, "\n" */
	log_info("two\nlines");
	n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
	CHECK(n > 8 + 9 && memcmp(buf, "MESSAGE\n\x09\0\0\0\0\0\0\0two\nlines\n", 8 + 8 + 9 + 1) == 0);
	/* no event, no MESSAGE_ID */
	buf[n > 0 ? n - 1 : 0] = '\0';
	CHECK(memmem(buf, (size_t)n, "MESSAGE_ID=", 11) == NULL);

	/* above the level: nothing sent, and the error still comes back */
	CHECK_ERRNO(log_debug_errno(-EIO, "not shown"), -EIO);
	CHECK(recv(fd, buf, sizeof(buf), MSG_DONTWAIT) < 0 && errno == EAGAIN);

	log_setup("coredam-test", LOG_TARGET_STDERR);
	close(fd);
}
