// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The journal record of a stored core, as coredumpctl reads it: a core
 * stored by the writer, its record read back from a datagram socket that
 * stands where journald's would, and parsed as journald parses the
 * native protocol.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "config.h"
#include "core-build.h"
#include "core-journal.h"
#include "core-store.h"
#include "log.h"
#include "test.h"
#include "macro.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

/* a comm with a newline, valid UTF-8 beyond ASCII (é) and a byte that is not UTF-8 */
#define COMM "evil\ncomm\xc3\xa9\xff"
#define EXE "/opt/bad\nname\xff"

/*
 * A 64-bit x86-64 core: a note segment (NT_PRSTATUS, NT_AUXV with
 * AT_ENTRY in the executable EXE, NT_FILE mapping it), then one load of
 * 8 KiB at 4096. The whole core is 12288 bytes.
 */
#define CORE_SIZE (4096 + 8192)
static void make_core(unsigned char *buf)
{
	unsigned char desc[512] = { 0 };
	const char names[] = EXE;
	size_t pos = 64 + 2 * 56;

	memset(buf, 0, CORE_SIZE);
	memcpy(buf, ELFMAG, SELFMAG);
	buf[EI_CLASS] = ELFCLASS64;
	buf[EI_DATA] = ELFDATA2LSB;
	buf[EI_VERSION] = EV_CURRENT;
	core_put(buf + offsetof(Elf64_Ehdr, e_type), 2, ET_CORE, false);
	core_put(buf + offsetof(Elf64_Ehdr, e_machine), 2, EM_X86_64, false);
	core_put(buf + offsetof(Elf64_Ehdr, e_phoff), 8, 64, false);
	core_put(buf + offsetof(Elf64_Ehdr, e_ehsize), 2, 64, false);
	core_put(buf + offsetof(Elf64_Ehdr, e_phentsize), 2, 56, false);
	core_put(buf + offsetof(Elf64_Ehdr, e_phnum), 2, 2, false);
	core_put(buf + 64 + offsetof(Elf64_Phdr, p_type), 4, PT_NOTE, false);
	core_put(buf + 64 + offsetof(Elf64_Phdr, p_offset), 8, pos, false);

	core_put(desc + 112 + 16 * 8, 8, 0x400040, false);	/* the pc, in the executable */
	pos = core_note(buf, pos, false, "CORE", NT_PRSTATUS, desc, 336);
	memset(desc, 0, sizeof(desc));
	core_put(desc, 8, AT_ENTRY, false);
	core_put(desc + 8, 8, 0x401000, false);
	pos = core_note(buf, pos, false, "CORE", NT_AUXV, desc, 32);
	memset(desc, 0, sizeof(desc));
	core_put(desc, 8, 1, false);
	core_put(desc + 8, 8, 4096, false);
	core_put(desc + 16, 8, 0x400000, false);
	core_put(desc + 24, 8, 0x410000, false);
	memcpy(desc + 40, names, sizeof(names));
	pos = core_note(buf, pos, false, "CORE", NT_FILE, desc, 40 + sizeof(names));
	core_put(buf + 64 + offsetof(Elf64_Phdr, p_filesz), 8, pos - (64 + 2 * 56), false);

	core_put(buf + 120 + offsetof(Elf64_Phdr, p_type), 4, PT_LOAD, false);
	core_put(buf + 120 + offsetof(Elf64_Phdr, p_offset), 8, 4096, false);
	core_put(buf + 120 + offsetof(Elf64_Phdr, p_filesz), 8, 8192, false);
	core_put(buf + 120 + offsetof(Elf64_Phdr, p_memsz), 8, 8192, false);
	memset(buf + 4096, 0xcd, 8192);
}

/* A field of a record as journald reads it. */
struct field {
	char name[64];
	const unsigned char *value;
	size_t len;
	bool binary;
};

/*
 * Parse @n bytes of the native protocol: "NAME=value\n", or "NAME\n", a
 * 64-bit little-endian length, that many bytes and "\n". The number of
 * fields, or -1 when the datagram breaks the protocol (journald would
 * drop it or read fields that were not sent).
 */
static int parse(const unsigned char *b, size_t n, struct field *f, size_t max)
{
	size_t pos = 0;
	int k = 0;

	while (pos < n) {
		const unsigned char *name = b + pos;
		const unsigned char *nl = memchr(name, '\n', n - pos);
		const unsigned char *eq = memchr(name, '=', n - pos);
		size_t nlen;

		if (!nl || (size_t)k >= max)
			return -1;
		if (eq && eq < nl) {
			nlen = (size_t)(eq - name);
			f[k].value = eq + 1;
			f[k].len = (size_t)(nl - (eq + 1));
			f[k].binary = false;
			pos = (size_t)(nl - b) + 1;
		} else {
			uint64_t l = 0;

			nlen = (size_t)(nl - name);
			pos = (size_t)(nl - b) + 1;
			if (n - pos < 8)
				return -1;
			for (int i = 0; i < 8; i++)
				l |= (uint64_t)b[pos + i] << (8 * i);
			pos += 8;
			if (l >= n - pos || b[pos + l] != '\n')
				return -1;
			f[k].value = b + pos;
			f[k].len = l;
			f[k].binary = true;
			pos += l + 1;
		}
		/* a name journald takes: A-Z, 0-9 and '_', not starting with '_' */
		if (nlen == 0 || nlen >= sizeof(f[k].name) || name[0] == '_')
			return -1;
		for (size_t i = 0; i < nlen; i++)
			if (!((name[i] >= 'A' && name[i] <= 'Z') || (name[i] >= '0' && name[i] <= '9') || name[i] == '_'))
				return -1;
		memcpy(f[k].name, name, nlen);
		f[k].name[nlen] = '\0';
		k++;
	}
	return k;
}

static const struct field *get(const struct field *f, int n, const char *name)
{
	const struct field *found = NULL;

	for (int i = 0; i < n; i++)
		if (strcmp(f[i].name, name) == 0) {
			CHECK(!found);	/* each field once */
			found = &f[i];
		}
	return found;
}

/* The field @name holds exactly @value. */
static bool is(const struct field *f, int n, const char *name, const char *value)
{
	const struct field *x = get(f, n, name);

	if (!x) {
		fprintf(stderr, "  no %s=\n", name);
		return false;
	}
	if (x->len != strlen(value) || memcmp(x->value, value, x->len) != 0) {
		fprintf(stderr, "  %s=%.*s, expected %s\n", name, (int)x->len, (const char *)x->value, value);
		return false;
	}
	return true;
}

/* Receive one record from @fd into @buf and parse it; -1 when there is none or it is malformed. */
static int receive(int fd, unsigned char *buf, size_t size, struct field *f, size_t max)
{
	ssize_t n = recv(fd, buf, size, MSG_DONTWAIT);

	if (n <= 0)
		return -1;
	return parse(buf, (size_t)n, f, max);
}

/* Every value sent in the plain form is printable ASCII: nothing in it can end the field. */
static bool plain_is_printable(const struct field *f, int n)
{
	for (int i = 0; i < n; i++)
		for (size_t j = 0; !f[i].binary && j < f[i].len; j++)
			if (f[i].value[j] < 0x20 || f[i].value[j] >= 0x7f)
				return false;
	return true;
}

/* A datagram socket where journald's would be, the logger pointed at it: its fd. */
static int journal_listen(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", tpath("journal.sock"));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	log_journal_socket = tkeep("journal.sock");
	log_close();
	return fd;
}

TEST(core_journal_record_of_a_stored_core)
{
	static unsigned char core[CORE_SIZE], buf[65536];
	struct coredam_pipe_args a = {
		.pid = 4242, .uid = 1000, .gid = 1001, .signal = SIGSEGV, .time = 1700000000,
		.rlimit = 1 << 20, .have_rlimit = true, .dumpable = 1,
	};
	struct coredam_core_meta m;
	struct coredam_core_stored st;
	struct coredam_repeat_entry rep = { .kept = 2, .skipped = 5 };
	struct coredam_config cfg;
	struct coredam_error e;
	struct field f[LOG_FIELDS_MAX + 4];
	const struct field *x;
	char path[PATH_MAX + 64];
	_cleanup_close_ int dirfd = -1, jfd = -1;
	int in, n;

	make_core(core);
	coredam_config_init(&cfg);
	CHECK(cfg.pipe_journal);	/* on by default */
	mkdirs("cores");
	dirfd = open(tpath("cores"), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	snprintf(a.dir, sizeof(a.dir), "%s", tpath("cores"));
	snprintf(a.comm, sizeof(a.comm), "%s", COMM);

	jfd = journal_listen();
	log_setup("coredam-pipe", LOG_TARGET_STDERR);

	/* a whole core: every field coredumpctl lists, shows and dumps by */
	m = (struct coredam_core_meta){ .pid = a.pid, .comm = a.comm, .rlimit = a.rlimit, .compression = "none",
					.dumpable = 1, .waited_ms = 7 };
	in = core_stream(core, sizeof(core));
	CHECK_OK(coredam_core_store(in, NULL, 0, &cfg, &a, dirfd, 0, &m, &st, &e));
	close(in);
	CHECK_OK(coredam_core_journal_stored(&cfg, &a, &m, &st, &rep));
	n = receive(jfd, buf, sizeof(buf), f, ELEMENTSOF(f));
	CHECK(n > 20);
	if (n < 0)
		n = 0;
	CHECK(is(f, n, "MESSAGE_ID", "fc2e22bc6ee647b6b90729ab34a250b1"));
	CHECK(is(f, n, "COREDUMP_PID", "4242"));
	CHECK(is(f, n, "COREDUMP_UID", "1000"));
	CHECK(is(f, n, "COREDUMP_GID", "1001"));
	CHECK(is(f, n, "COREDUMP_SIGNAL", "11"));
	CHECK(is(f, n, "COREDUMP_SIGNAL_NAME", "SIGSEGV"));
	CHECK(is(f, n, "COREDUMP_TIMESTAMP", "1700000000000000"));
	CHECK(is(f, n, "COREDUMP_RLIMIT", "1048576"));
	CHECK(is(f, n, "COREDUMP_DUMPABLE", "1"));
	snprintf(path, sizeof(path), "%s/%s", a.dir, st.final);
	CHECK(is(f, n, "COREDUMP_FILENAME", path));
	CHECK(access(path, R_OK) == 0);
	CHECK(get(f, n, "COREDUMP_TRUNCATED") == NULL);
	/* the crashed process's bytes, verbatim, in the binary form */
	CHECK(is(f, n, "COREDUMP_COMM", COMM));
	x = get(f, n, "COREDUMP_COMM");
	CHECK(x && x->binary);
	/* the executable from the core's own notes, verbatim too */
	CHECK(is(f, n, "COREDUMP_EXE", EXE));
	x = get(f, n, "COREDUMP_EXE");
	CHECK(x && x->binary);
	/* the message escaped: one line, no byte that is not UTF-8 */
	CHECK(is(f, n, "MESSAGE", "Process 4242 (evil\\ncomm\xc3\xa9\\xff) of user 1000 dumped core."));
	CHECK(is(f, n, "PRIORITY", "2"));
	CHECK(is(f, n, "SYSLOG_IDENTIFIER", "coredam-pipe"));
	/* coredam's own */
	CHECK(is(f, n, "COREDAM_STATE", "complete"));
	x = get(f, n, "COREDAM_SIGNATURE");
	CHECK(x && x->len == 16 && strspn((const char *)x->value, "0123456789abcdef") >= 16);
	CHECK(is(f, n, "COREDAM_REPEAT_KEPT", "2"));
	CHECK(is(f, n, "COREDAM_REPEAT_SKIPPED", "5"));
	CHECK(is(f, n, "COREDAM_SIZE", "12288"));
	CHECK(is(f, n, "COREDAM_COMPRESSION", "none"));
	CHECK(is(f, n, "COREDAM_WAITED_MS", "7"));
	CHECK(plain_is_printable(f, n));
	/* nothing made up: no field coredam does not know */
	CHECK(get(f, n, "COREDUMP_HOSTNAME") == NULL && get(f, n, "COREDUMP_UNIT") == NULL &&
	      get(f, n, "COREDUMP_CMDLINE") == NULL && get(f, n, "COREDUMP_CGROUP") == NULL);

	/* cut short by the kernel: kept incomplete, and said so; no %c: no RLIMIT_CORE */
	a.time++;
	a.have_rlimit = false;
	m.rlimit = UINT64_MAX;
	in = core_stream(core, 6000);
	CHECK_OK(coredam_core_store(in, NULL, 0, &cfg, &a, dirfd, 0, &m, &st, &e));
	close(in);
	CHECK_OK(coredam_core_journal_stored(&cfg, &a, &m, &st, NULL));
	n = receive(jfd, buf, sizeof(buf), f, ELEMENTSOF(f));
	CHECK(n > 0);
	if (n < 0)
		n = 0;
	snprintf(path, sizeof(path), "%s/%s", a.dir, st.final);
	CHECK(is(f, n, "COREDUMP_FILENAME", path));
	CHECK(strstr(path, ".incomplete") != NULL);
	CHECK(is(f, n, "COREDUMP_TRUNCATED", "1"));
	CHECK(is(f, n, "COREDAM_STATE", "incomplete"));
	CHECK(is(f, n, "COREDAM_EXPECTED_SIZE", "12288"));
	CHECK(is(f, n, "COREDAM_SIZE", "6000"));
	CHECK(get(f, n, "COREDUMP_RLIMIT") == NULL);
	CHECK(get(f, n, "COREDAM_REPEAT_KEPT") == NULL);
	x = get(f, n, "MESSAGE");
	CHECK(x && memmem(x->value, x->len, "kept incomplete: 6000 of the 12288 bytes", 40) != NULL);

	/* compressed: the name coredumpctl decompresses by */
	a.time++;
	cfg.pipe_compress = true;
	m.compression = "zstd";
	in = core_stream(core, sizeof(core));
	CHECK_OK(coredam_core_store(in, NULL, 0, &cfg, &a, dirfd, 0, &m, &st, &e));
	close(in);
	CHECK_OK(coredam_core_journal_stored(&cfg, &a, &m, &st, NULL));
	n = receive(jfd, buf, sizeof(buf), f, ELEMENTSOF(f));
	CHECK(n > 0);
	if (n < 0)
		n = 0;
	x = get(f, n, "COREDUMP_FILENAME");
	CHECK(x && x->len > 4 && memcmp(x->value + x->len - 4, ".zst", 4) == 0);
	CHECK(is(f, n, "COREDAM_COMPRESSION", "zstd"));

	/* [Pipe] Journal=no: nothing */
	cfg.pipe_journal = false;
	CHECK_OK(coredam_core_journal_stored(&cfg, &a, &m, &st, NULL));
	CHECK(recv(jfd, buf, sizeof(buf), MSG_DONTWAIT) < 0 && errno == EAGAIN);

	/* no journal: nothing breaks, nothing is written elsewhere */
	cfg.pipe_journal = true;
	log_journal_socket = tkeep("no-journal.sock");
	log_close();
	CHECK_ERRNO(coredam_core_journal_stored(&cfg, &a, &m, &st, NULL), -ENOTCONN);
	CHECK(access(tpath("no-journal.sock"), F_OK) < 0 && errno == ENOENT);

	log_journal_socket = "/run/systemd/journal/socket";
	log_close();
}

TEST(core_journal_record_of_a_skipped_repeat)
{
	static unsigned char core[CORE_SIZE], buf[65536];
	struct coredam_pipe_args a = {
		.pid = 77, .uid = 0, .gid = 0, .signal = SIGABRT, .time = 1700000000, .rlimit = UINT64_MAX,
		.dumpable = -1,
	};
	struct coredam_core_meta m = { .rlimit = UINT64_MAX };
	struct coredam_core_site site;
	struct coredam_repeat_key key;
	struct coredam_repeat_entry e = { .kept = 2, .skipped = 4 };
	struct coredam_config cfg;
	struct field f[LOG_FIELDS_MAX + 4];
	const struct field *x;
	_cleanup_close_ int jfd = -1;
	char sig[17];
	int n;

	make_core(core);
	coredam_config_init(&cfg);
	snprintf(a.dir, sizeof(a.dir), "%s", tpath("cores"));
	snprintf(a.comm, sizeof(a.comm), "%s", COMM);
	CHECK_OK(coredam_elf_core_site(core, sizeof(core), &site));
	coredam_repeat_key(&site, a.signal, a.comm, &key);

	jfd = journal_listen();
	log_setup("coredam-pipe", LOG_TARGET_STDERR);

	CHECK_OK(coredam_core_journal_repeat(&cfg, &a, &m, &site, &key, &e));
	n = receive(jfd, buf, sizeof(buf), f, ELEMENTSOF(f));
	CHECK(n > 0);
	if (n < 0)
		n = 0;
	CHECK(is(f, n, "MESSAGE_ID", "fc2e22bc6ee647b6b90729ab34a250b1"));
	CHECK(is(f, n, "COREDUMP_PID", "77"));
	CHECK(is(f, n, "COREDUMP_SIGNAL_NAME", "SIGABRT"));
	CHECK(is(f, n, "COREDUMP_COMM", COMM));
	CHECK(is(f, n, "COREDUMP_EXE", EXE));
	/* no core: coredumpctl lists the crash with none */
	CHECK(get(f, n, "COREDUMP_FILENAME") == NULL);
	/* unknown: no %d, no RLIMIT_CORE */
	CHECK(get(f, n, "COREDUMP_DUMPABLE") == NULL && get(f, n, "COREDUMP_RLIMIT") == NULL);
	CHECK(is(f, n, "COREDAM_STATE", "skipped-repeat"));
	snprintf(sig, sizeof(sig), "%016llx", (unsigned long long)key.hash);
	CHECK(is(f, n, "COREDAM_SIGNATURE", sig));
	CHECK(is(f, n, "COREDAM_SIGNATURE_LABEL", key.label));
	CHECK(is(f, n, "COREDAM_REPEAT_KEPT", "2"));
	CHECK(is(f, n, "COREDAM_REPEAT_SKIPPED", "4"));
	x = get(f, n, "MESSAGE");
	CHECK(x && memmem(x->value, x->len, "not stored: a repeat of /opt/bad\\nname\\xff SIGABRT", 49) != NULL);
	CHECK(x && memchr(x->value, '\n', x->len) == NULL && memchr(x->value, 0xff, x->len) == NULL);
	CHECK(plain_is_printable(f, n));

	log_journal_socket = "/run/systemd/journal/socket";
	log_close();
}
