// SPDX-License-Identifier: LGPL-2.1-or-later
/* One logger for every program (see log.h). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>

#include "escape.h"
#include "log.h"
#include "macro.h"

#define MAX_FIELDS 24

int log_max_prio = LOG_INFO;
const char *log_journal_socket = "/run/systemd/journal/socket";

static const char *program = "coredam";
static enum log_target target = LOG_TARGET_STDERR;
static bool to_tty;			/* KMSG: stderr is a terminal, write there too */
static int kmsg_fd = -2;		/* -2 not opened yet, -1 cannot be */
static int journal_fd = -2;

void log_setup(const char *name, enum log_target t)
{
	program = name;
	if (t == LOG_TARGET_AUTO)
		t = getenv("JOURNAL_STREAM") ? LOG_TARGET_JOURNAL : LOG_TARGET_STDERR;
	target = t;
	to_tty = fcntl(STDERR_FILENO, F_GETFD) >= 0 && isatty(STDERR_FILENO);
}

/*
 * /dev/kmsg, opened once: the kernel rate-limits what one open file writes
 * there, so a storm of helpers each logging many lines cannot flood the
 * log through fresh opens.
 */
static void kmsg_open(void)
{
	if (kmsg_fd == -2)
		kmsg_fd = open("/dev/kmsg", O_WRONLY | O_CLOEXEC | O_NOCTTY);
}

static void journal_open(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (journal_fd != -2)
		return;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", log_journal_socket);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		fd = -1;
	}
	journal_fd = fd;
}

void log_open(void)
{
	if (target == LOG_TARGET_KMSG)
		kmsg_open();
	else if (target == LOG_TARGET_JOURNAL)
		journal_open();
}

/*
 * The journal's native protocol: "NAME=value\n" a field, or, for a value
 * with a newline in it, "NAME\n", its length as 64-bit little endian, the
 * value and "\n".
 */
static size_t journal_field(struct iovec *iov, char *head, size_t headsize, uint64_t *len, const char *name,
			    const char *value)
{
	size_t n = 0;

	if (!strchr(value, '\n')) {
		snprintf(head, headsize, "%s=", name);
		iov[n++] = (struct iovec){ head, strlen(head) };
	} else {
		uint64_t l = strlen(value);

		snprintf(head, headsize, "%s\n", name);
		iov[n++] = (struct iovec){ head, strlen(head) };
		for (int i = 0; i < 8; i++)
			((unsigned char *)len)[i] = (unsigned char)(l >> (8 * i));
		iov[n++] = (struct iovec){ len, 8 };
	}
	iov[n++] = (struct iovec){ (char *)value, strlen(value) };
	iov[n++] = (struct iovec){ (char *)"\n", 1 };
	return n;
}

/* One record: MESSAGE=, PRIORITY=, SYSLOG_IDENTIFIER= and the COREDAM_ fields of @msg. */
static int journal_send(int prio, const char *msg)
{
	struct coredam_log_field f[MAX_FIELDS];
	struct iovec iov[4 * (3 + MAX_FIELDS)];
	char heads[3 + MAX_FIELDS][sizeof(f[0].name) + 24], pr[4];
	uint64_t lens[3 + MAX_FIELDS];
	size_t n = coredam_log_fields(msg, f, MAX_FIELDS), k = 0, h = 0;
	struct msghdr mh = { .msg_iov = iov };

	journal_open();
	if (journal_fd < 0)
		return -ENOTCONN;
	snprintf(pr, sizeof(pr), "%d", prio);
	k += journal_field(iov + k, heads[h], sizeof(heads[h]), &lens[h], "MESSAGE", msg), h++;
	k += journal_field(iov + k, heads[h], sizeof(heads[h]), &lens[h], "PRIORITY", pr), h++;
	k += journal_field(iov + k, heads[h], sizeof(heads[h]), &lens[h], "SYSLOG_IDENTIFIER", program), h++;
	for (size_t i = 0; i < n; i++, h++)
		k += journal_field(iov + k, heads[h], sizeof(heads[h]), &lens[h], f[i].name, f[i].value);
	mh.msg_iovlen = k;
	if (sendmsg(journal_fd, &mh, MSG_NOSIGNAL) < 0)
		return -errno;
	return 0;
}

static void kmsg_send(int prio, const char *msg)
{
	char line[1200];
	int n;

	/* the kernel log is there from the first second of boot and lands in dmesg and the journal */
	n = snprintf(line, sizeof(line), "<%d>%s[%d]: %s\n", LOG_DAEMON | prio, program, (int)getpid(), msg);
	if (n > 0 && (size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	kmsg_open();
	if (kmsg_fd >= 0 && write(kmsg_fd, line, (size_t)n) < 0) {
		/* nothing else to tell it to */
	}
	if (to_tty || kmsg_fd < 0)
		fprintf(stderr, "%s: %s\n", program, msg);
}

int log_internal(int prio, int r, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	if (prio > log_max_prio)
		return r;
	if (r < 0)
		errno = -r;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	switch (target) {
	case LOG_TARGET_KMSG:
		kmsg_send(prio, msg);
		break;
	case LOG_TARGET_JOURNAL:
		if (journal_send(prio, msg) >= 0)
			break;
		fprintf(stderr, "<%d>%s\n", prio, msg);
		fflush(stderr);
		break;
	default:
		fprintf(stderr, "%s: %s\n", program, msg);
		fflush(stderr);
		break;
	}
	return r;
}
