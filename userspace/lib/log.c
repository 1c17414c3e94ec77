// SPDX-License-Identifier: LGPL-2.1-or-later
/* One logger for every program (see log.h). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <sys/time.h>
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

/*
 * The journal's socket, connected once. A send waits at most
 * JOURNAL_SEND_TIMEOUT_SEC for room in journald's queue: a journald that
 * stopped reading must not stall a helper or the agent's loop for ever
 * (a line then goes to stderr, a record is lost and said so).
 */
#define JOURNAL_SEND_TIMEOUT_SEC 5
static void journal_open(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = JOURNAL_SEND_TIMEOUT_SEC };
	int fd;

	if (journal_fd != -2)
		return;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", log_journal_socket);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		fd = -1;
	}
	if (fd >= 0)
		(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	journal_fd = fd;
}

void log_open(void)
{
	if (target == LOG_TARGET_KMSG)
		kmsg_open();
	/* the target's, or the one log_journal_send() writes records to */
	journal_open();
}

void log_close(void)
{
	if (kmsg_fd >= 0)
		close(kmsg_fd);
	if (journal_fd >= 0)
		close(journal_fd);
	kmsg_fd = journal_fd = -2;
}

/*
 * A value the plain form cannot carry as it is: a newline would end it,
 * and any other control byte or byte outside ASCII (a crashed process's
 * name, its path) goes in the binary form too, whose length says where
 * it ends whatever it holds.
 */
static bool journal_binary(const char *value)
{
	for (const unsigned char *p = (const unsigned char *)value; *p; p++)
		if (*p < 0x20 || *p >= 0x7f)
			return true;
	return false;
}

/*
 * The journal's native protocol: "NAME=value\n" a field, or, for a value
 * journal_binary() says needs it, "NAME\n", its length as 64-bit little
 * endian, the value and "\n".
 */
static size_t journal_field(struct iovec *iov, char *head, size_t headsize, uint64_t *len, const char *name,
			    const char *value)
{
	size_t n = 0;

	if (!journal_binary(value)) {
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

/*
 * Every kind of event the programs log ("event=NAME" in the message), with
 * the MESSAGE_ID its journal records carry, so that journalctl
 * MESSAGE_ID=... finds one kind across versions and wordings. An ID never
 * changes; a new event gets a new one. docs/agent.md lists them.
 */
static const struct {
	const char *event, *id;
} log_events[] = {
	{ "budget", "05fdb23647be415ab401c45b41f82d5b" },
	{ "cgroup-lost", "b015d9d7ec204d58b01d09a0138984cb" },
	{ "cgroup-ready", "0ee75fcf00e14404b7b64dd2bb70cdb8" },
	{ "cgroup-recreated", "295a4316d07e4cb3b5026c4776cb076c" },
	{ "core-pattern-changed", "26278fea0cd046219fac1e479b5855ba" },
	{ "core-pattern-restored", "cefc191da08d41099dee0e721f19630a" },
	{ "device-resolved", "a981117737404d5d953e14477075b69e" },
	{ "dump-admitted", "4af64dba656541f688bd3526004389b5" },
	{ "dump-end", "6160d3c4fbee470995d27901fdf5bd30" },
	{ "dump-start", "6ea78632667d4e59aa5725e0755de8f0" },
	{ "incomplete-marked", "1806eabee58648e9bf0b2570851c6afb" },
	{ "io-max-restored", "876e1ee372f74a278a16ca0b1c0a95be" },
	{ "kernel-leaf", "b2fe586f01b24e0f90038e2a73bce482" },
	{ "pipe-helper", "8a9c91abd6c847aa90c71a4a8d5fdbdc" },
	{ "pressure-source", "695943733e2343e1a4a0b1427ec651eb" },
	{ "queue-memory", "a28eed6092944cb2a5615cfa8b3c5793" },
	{ "ready", "fbbfb22a23bd472ba82c75a731b8661e" },
	{ "retention", "6e9589fefd0e4f51a1dfdff04990ca26" },
	{ "reload-failed", "8c88551ff2174d279a85e2a580307008" },
	{ "reloaded", "207f6df8c15f403286bb0f95bb0e4707" },
	{ "set", "9cd28f92f39b4559bb29409ddfff3dd5" },
	{ "slice-fallback", "86140043583f49eda58a9b029933346a" },
	{ "slice-restored", "2c216bff90aa45dcbe6c3cc98aad2474" },
	{ "slice-unit", "6e6c2f767c094a4ea5f949c8529ad2e5" },
	{ "slow-loop", "8c6ba57eb198479484fe6618b42f6c5c" },
	{ "socket", "0a79f4bfa58a48e68cc5ff113f4e3f54" },
	{ "socket-lost", "964e92983f274a9896fc48844b46cc93" },
	{ "socket-pattern-taken", "4e1d48799b9d4ec19b903390f33b0f37" },
	{ "socket-refused", "530e3fa0378849b1a884bb6bf6c44b27" },
	{ "socket-reject", "56099302859b470d98dc71c344bfc0a3" },
	{ "space-low", "3996a24d14144a4ebb8a4554f962ac77" },
	{ "space-ok", "24db1b86426147f0b17d3c321a32e542" },
	{ "sysctls-restored", "9a729a0945d0413ba87caf6b96f40b9e" },
};

const char *log_message_id(const char *event)
{
	for (size_t i = 0; i < ELEMENTSOF(log_events); i++)
		if (strcmp(log_events[i].event, event) == 0)
			return log_events[i].id;
	return NULL;
}

/*
 * One record: @f, PRIORITY= and SYSLOG_IDENTIFIER=, in one datagram, with
 * writev(): to the connected socket's one peer, and a call the confined
 * helper may make (sandbox.c allows no sendmsg(), which could name
 * another socket).
 */
int log_journal_send(int prio, const struct log_field *f, size_t n)
{
	struct iovec iov[4 * (2 + LOG_FIELDS_MAX)];
	char heads[2 + LOG_FIELDS_MAX][64], pr[4];
	uint64_t lens[2 + LOG_FIELDS_MAX];
	size_t k = 0, h = 0;
	ssize_t w;

	if (n > LOG_FIELDS_MAX)
		return -E2BIG;
	journal_open();
	if (journal_fd < 0)
		return -ENOTCONN;
	snprintf(pr, sizeof(pr), "%d", prio);
	for (size_t i = 0; i < n; i++, h++) {
		if (strlen(f[i].name) >= sizeof(heads[0]) - 2)
			return -EINVAL;
		k += journal_field(iov + k, heads[h], sizeof(heads[h]), &lens[h], f[i].name, f[i].value);
	}
	k += journal_field(iov + k, heads[h], sizeof(heads[h]), &lens[h], "PRIORITY", pr), h++;
	k += journal_field(iov + k, heads[h], sizeof(heads[h]), &lens[h], "SYSLOG_IDENTIFIER", program), h++;
	w = writev(journal_fd, iov, (int)k);
	if (w < 0)
		return -errno;
	return 0;
}

/* A line: MESSAGE=, the COREDAM_ fields of @msg, and MESSAGE_ID= of its event. */
static int journal_send(int prio, const char *msg)
{
	struct coredam_log_field cf[MAX_FIELDS];
	struct log_field f[2 + MAX_FIELDS];
	const char *id = NULL;
	size_t n = coredam_log_fields(msg, cf, MAX_FIELDS), k = 0;

	f[k++] = (struct log_field){ "MESSAGE", msg };
	for (size_t i = 0; i < n; i++) {
		f[k++] = (struct log_field){ cf[i].name, cf[i].value };
		if (strcmp(cf[i].name, "COREDAM_EVENT") == 0)
			id = log_message_id(cf[i].value);
	}
	if (id)
		f[k++] = (struct log_field){ "MESSAGE_ID", id };
	return log_journal_send(prio, f, k);
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
