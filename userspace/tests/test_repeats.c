// SPDX-License-Identifier: LGPL-2.1-or-later
/* Repeated crashes: where a core says it crashed, its signature, the table and its decisions. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elfcore.h"
#include "pipe-writer.h"
#include "core-build.h"
#include "repeats.h"
#include "test.h"
#include "macro.h"

#ifndef NT_FILE
#define NT_FILE 0x46494c45
#endif

/*
 * A 64-bit little-endian core of @machine as Linux starts one: the
 * dumping thread's NT_PRSTATUS with @pc, NT_AUXV with AT_ENTRY, and
 * NT_FILE mapping /usr/sbin/apache2 (its text at 0x555500000000, file
 * page 1 on) and a library (0x7f0000000000..0x7f0000100000, from file
 * page 16). Returns the length of headers and notes.
 */
#define EXE_START 0x555500000000ULL
#define LIB_START 0x7f0000000000ULL
static size_t make_core(unsigned char *buf, size_t size, unsigned int machine, uint64_t pc)
{
	unsigned char desc[1024] = { 0 };
	const char names[] = "/usr/sbin/apache2\0/usr/lib/apache2/modules/libphp8.2.so";
	size_t pos = 64 + 56, n = 0;

	memset(buf, 0, size);
	memcpy(buf, ELFMAG, SELFMAG);
	buf[EI_CLASS] = ELFCLASS64;
	buf[EI_DATA] = ELFDATA2LSB;
	buf[EI_VERSION] = EV_CURRENT;
	core_put(buf + offsetof(Elf64_Ehdr, e_type), 2, ET_CORE, false);
	core_put(buf + offsetof(Elf64_Ehdr, e_machine), 2, machine, false);
	core_put(buf + offsetof(Elf64_Ehdr, e_phoff), 8, 64, false);
	core_put(buf + offsetof(Elf64_Ehdr, e_ehsize), 2, 64, false);
	core_put(buf + offsetof(Elf64_Ehdr, e_phentsize), 2, 56, false);
	core_put(buf + offsetof(Elf64_Ehdr, e_phnum), 2, 1, false);
	core_put(buf + 64 + offsetof(Elf64_Phdr, p_type), 4, PT_NOTE, false);
	core_put(buf + 64 + offsetof(Elf64_Phdr, p_offset), 8, pos, false);

	if (machine == EM_AARCH64) {
		core_put(desc + 112 + 32 * 8, 8, pc, false);
		pos = core_note(buf, pos, false, "CORE", NT_PRSTATUS, desc, 392);
	} else {
		core_put(desc + 112 + 16 * 8, 8, pc, false);
		pos = core_note(buf, pos, false, "CORE", NT_PRSTATUS, desc, 336);
	}
	memset(desc, 0, sizeof(desc));
	core_put(desc, 8, AT_PAGESZ, false);
	core_put(desc + 8, 8, 4096, false);
	core_put(desc + 16, 8, AT_ENTRY, false);
	core_put(desc + 24, 8, EXE_START + 0x1230, false);
	pos = core_note(buf, pos, false, "CORE", NT_AUXV, desc, 48);	/* ends with AT_NULL, 0 */
	memset(desc, 0, sizeof(desc));
	core_put(desc, 8, 2, false);
	core_put(desc + 8, 8, 4096, false);
	core_put(desc + 16, 8, EXE_START, false);
	core_put(desc + 24, 8, EXE_START + 0x10000, false);
	core_put(desc + 32, 8, 1, false);
	core_put(desc + 40, 8, LIB_START, false);
	core_put(desc + 48, 8, LIB_START + 0x100000, false);
	core_put(desc + 56, 8, 16, false);
	n = 64;
	memcpy(desc + n, names, sizeof(names));
	pos = core_note(buf, pos, false, "CORE", NT_FILE, desc, n + sizeof(names));
	core_put(buf + 64 + offsetof(Elf64_Phdr, p_filesz), 8, pos - (64 + 56), false);
	return pos;
}

TEST(repeats_site_from_notes)
{
	static unsigned char buf[4096];
	struct coredam_core_site s;
	size_t end;

	end = make_core(buf, sizeof(buf), EM_X86_64, LIB_START + 0x2345);
	CHECK_OK(coredam_elf_core_site(buf, end, &s));
	CHECK_STREQ(s.exe, "/usr/sbin/apache2");
	CHECK(s.have_pc);
	CHECK_STREQ(s.file, "/usr/lib/apache2/modules/libphp8.2.so");
	CHECK_EQ_INT(s.offset, 16 * 4096 + 0x2345);

	/* aarch64 keeps pc elsewhere; a pc in the executable */
	end = make_core(buf, sizeof(buf), EM_AARCH64, EXE_START + 0x40);
	CHECK_OK(coredam_elf_core_site(buf, end, &s));
	CHECK_STREQ(s.file, "/usr/sbin/apache2");
	CHECK_EQ_INT(s.offset, 4096 + 0x40);

	/* a pc in no file: known, but in no file */
	end = make_core(buf, sizeof(buf), EM_X86_64, 0x1000);
	CHECK_OK(coredam_elf_core_site(buf, end, &s));
	CHECK(s.have_pc);
	CHECK_STREQ(s.file, "");
	CHECK_STREQ(s.exe, "/usr/sbin/apache2");

	/* an architecture this does not read: the executable still */
	end = make_core(buf, sizeof(buf), EM_RISCV, LIB_START);
	CHECK_OK(coredam_elf_core_site(buf, end, &s));
	CHECK(!s.have_pc);
	CHECK_STREQ(s.exe, "/usr/sbin/apache2");

	/* cut inside NT_FILE: no names, nothing made up */
	end = make_core(buf, sizeof(buf), EM_X86_64, LIB_START);
	CHECK_OK(coredam_elf_core_site(buf, end - 30, &s));
	CHECK_STREQ(s.exe, "");
	CHECK_STREQ(s.file, "");
	/* cut inside the program headers; not a core */
	CHECK_ERRNO(coredam_elf_core_site(buf, 40, &s), -ENODATA);
	memset(buf, 0x5a, sizeof(buf));
	CHECK_ERRNO(coredam_elf_core_site(buf, sizeof(buf), &s), -EMEDIUMTYPE);
}

TEST(repeats_site_hostile_file_note)
{
	static unsigned char buf[4096];
	struct coredam_core_site s;
	size_t end = make_core(buf, sizeof(buf), EM_X86_64, LIB_START + 1);
	size_t file_desc = end - (64 + sizeof("/usr/sbin/apache2\0/usr/lib/apache2/modules/libphp8.2.so") + 3) / 4 * 4;

	/* the note as built is read; a count past what the note holds reads nothing */
	CHECK_OK(coredam_elf_core_site(buf, end, &s));
	CHECK_STREQ(s.file, "/usr/lib/apache2/modules/libphp8.2.so");
	core_put(buf + file_desc, 8, UINT64_MAX / 2, false);
	CHECK_OK(coredam_elf_core_site(buf, end, &s));
	CHECK_STREQ(s.exe, "");
	CHECK_STREQ(s.file, "");
	/* names without their NUL: the found one is not read past the note */
	make_core(buf, sizeof(buf), EM_X86_64, LIB_START + 1);
	buf[end - 1] = 'x', buf[end - 2] = 'x', buf[end - 3] = 'x';
	memset(buf + file_desc + 64, 'A', end - (file_desc + 64));
	CHECK_OK(coredam_elf_core_site(buf, end, &s));
	CHECK_STREQ(s.file, "");
}

TEST(repeats_key)
{
	struct coredam_core_site a = { .exe = "/usr/sbin/apache2", .file = "/usr/lib/libphp.so", .offset = 0x1234,
				       .pc = 7, .have_pc = true };
	struct coredam_core_site b = a;
	struct coredam_repeat_key ka, kb;

	coredam_repeat_key(&a, SIGSEGV, "apache2", &ka);
	CHECK_STREQ(ka.label, "/usr/sbin/apache2 SIGSEGV at /usr/lib/libphp.so+0x1234");
	b.pc = 99;	/* another address space, same place */
	coredam_repeat_key(&b, SIGSEGV, "apache2", &kb);
	CHECK(ka.hash == kb.hash);
	b.offset = 0x1238;	/* another place */
	coredam_repeat_key(&b, SIGSEGV, "apache2", &kb);
	CHECK(ka.hash != kb.hash);
	coredam_repeat_key(&a, SIGABRT, "apache2", &kb);	/* another signal */
	CHECK(ka.hash != kb.hash);
	/* a pc in no file: the place is left out, executable and signal stay */
	b = a;
	b.file[0] = '\0';
	coredam_repeat_key(&b, SIGSEGV, "apache2", &kb);
	CHECK_STREQ(kb.label, "/usr/sbin/apache2 SIGSEGV");
	b.offset = 1;
	coredam_repeat_key(&b, SIGSEGV, "apache2", &ka);
	CHECK(ka.hash == kb.hash);
	/* no core to read: the kernel's comm */
	coredam_repeat_key(NULL, SIGBUS, "php-fpm", &ka);
	CHECK_STREQ(ka.label, "php-fpm SIGBUS");
	coredam_repeat_key(NULL, 99, "x", &ka);
	CHECK_STREQ(ka.label, "x signal 99");
	/* the fields cannot run into each other */
	strcpy(a.exe, "/a");
	strcpy(a.file, "b");
	strcpy(b.exe, "/ab");
	b.file[0] = '\0';
	b.have_pc = false;
	coredam_repeat_key(&a, SIGSEGV, "", &ka);
	coredam_repeat_key(&b, SIGSEGV, "", &kb);
	CHECK(ka.hash != kb.hash);
}

TEST(repeats_decide)
{
	static struct coredam_repeats t;
	const struct coredam_repeat_entry *e;
	struct coredam_repeat_key k = { .hash = 42, .label = "x SIGSEGV" }, other = { .hash = 7, .label = "y" };
	const uint64_t hour = 3600ULL * 1000000;

	memset(&t, 0, sizeof(t));
	CHECK(coredam_repeats_decide(&t, &k, 1000, 2, hour, &e));
	CHECK(coredam_repeats_decide(&t, &k, 2000, 2, hour, &e));
	CHECK(!coredam_repeats_decide(&t, &k, 3000, 2, hour, &e));
	CHECK(!coredam_repeats_decide(&t, &k, 4000, 2, hour, &e));
	CHECK_EQ_INT(e->kept, 2);
	CHECK_EQ_INT(e->skipped, 2);
	/* another signature has its own count */
	CHECK(coredam_repeats_decide(&t, &other, 5000, 2, hour, &e));
	CHECK_EQ_INT(t.n, 2);
	/* a new window once the interval has passed since the window began */
	CHECK(!coredam_repeats_decide(&t, &k, 1000 + hour - 1, 2, hour, &e));
	CHECK(coredam_repeats_decide(&t, &k, 1000 + hour, 2, hour, &e));
	CHECK_EQ_INT(e->kept, 3);
	CHECK_EQ_INT(e->skipped, 3);
	CHECK_EQ_INT(e->window_kept, 1);
	/* keep 0: every one */
	for (int i = 0; i < 5; i++)
		CHECK(coredam_repeats_decide(&t, &other, 6000 + i, 0, hour, &e));
	/* full: a new signature replaces the one seen longest ago */
	memset(&t, 0, sizeof(t));
	for (uint64_t i = 0; i < COREDAM_REPEATS_MAX; i++) {
		struct coredam_repeat_key n = { .hash = 100 + i };

		CHECK(coredam_repeats_decide(&t, &n, 10 + (i == 5 ? 0 : i + 100), 1, hour, &e));
	}
	CHECK(coredam_repeats_decide(&t, &k, 500, 1, hour, &e));
	CHECK_EQ_INT(t.n, COREDAM_REPEATS_MAX);
	CHECK(e == &t.e[5]);
	CHECK_EQ_INT(e->hash, 42);
	CHECK_EQ_INT(e->kept, 1);
}

TEST(repeats_file_round_trip)
{
	static struct coredam_repeats t, u;
	const struct coredam_repeat_entry *e;
	struct coredam_repeat_key k = { .hash = 0xfedcba9876543210ULL };
	char buf[8192];
	int n;

	/* a label is the crashed user's bytes: a newline cannot start a line of its own */
	strcpy(k.label, "/tmp/evil\n0000000000000001 0 0 0 99 99 forged SIGSEGV");
	memset(&t, 0, sizeof(t));
	coredam_repeats_decide(&t, &k, 5, 1, 10, &e);
	coredam_repeats_decide(&t, &k, 6, 1, 10, &e);
	n = coredam_repeats_format(&t, buf, sizeof(buf));
	CHECK(n > 0);
	CHECK(strchr(buf, '\n') == buf + n - 1);
	CHECK_OK(coredam_repeats_parse(buf, &u));
	CHECK_EQ_INT(u.n, 1);
	CHECK(u.e[0].hash == k.hash);
	CHECK_EQ_INT(u.e[0].kept, 1);
	CHECK_EQ_INT(u.e[0].skipped, 1);
	CHECK_EQ_INT(u.e[0].window_start, 5);
	CHECK_EQ_INT(u.e[0].last, 6);
	CHECK_STREQ(u.e[0].label, k.label);
	/* damaged lines are skipped, the rest read */
	CHECK_OK(coredam_repeats_parse("garbage\n12 1 2 3 4\n00000000000000ab 1 2 1 4 5 ok\n", &u));
	CHECK_EQ_INT(u.n, 1);
	CHECK_EQ_INT(u.e[0].hash, 0xab);
	CHECK_STREQ(u.e[0].label, "ok");
}

TEST(repeats_check_in_the_state_dir)
{
	const char *state = tkeep("repeats-state");
	struct coredam_repeat_key k = { .hash = 1, .label = "a SIGSEGV" };
	struct coredam_repeat_entry e;
	static struct coredam_repeats t;
	struct stat st;
	char path[PATH_MAX];

	CHECK_ERRNO(coredam_repeats_read(state, &t), -ENOENT);
	CHECK_EQ_INT(coredam_repeats_check(state, &k, 2, 3600ULL * 1000000, &e), 1);
	CHECK_EQ_INT(coredam_repeats_check(state, &k, 2, 3600ULL * 1000000, &e), 1);
	CHECK_EQ_INT(coredam_repeats_check(state, &k, 2, 3600ULL * 1000000, &e), 0);
	CHECK_EQ_INT(e.kept, 2);
	CHECK_EQ_INT(e.skipped, 1);
	CHECK_OK(coredam_repeats_read(state, &t));
	CHECK_EQ_INT(t.n, 1);
	CHECK_EQ_INT(t.e[0].skipped, 1);
	/* it names other users' crashes: root's alone */
	snprintf(path, sizeof(path), "%s/pipe/repeats", state);
	CHECK_OK(stat(path, &st));
	CHECK_EQ_INT(st.st_mode & 07777, 0600);
	/* a damaged file starts over rather than failing the dump */
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f) {
		fputs("\x01\x02 not a table", f);
		fclose(f);
	}
	CHECK_EQ_INT(coredam_repeats_check(state, &k, 2, 3600ULL * 1000000, &e), 1);
	CHECK_EQ_INT(e.kept, 1);
}

/* The helper reads the core's start before it queues, and the writer stores it first. */
TEST(repeats_prefix_through_the_writer)
{
	static unsigned char core[3 * 4096 + 100];
	_cleanup_free_ void *pre = malloc(COREDAM_ELF_KEEP_MAX);
	_cleanup_free_ void *back = malloc(sizeof(core));
	size_t end, pre_len = 0;
	int in, out;
	FILE *f;

	CHECK(pre && back);
	if (!pre || !back)
		return;
	end = make_core(core, sizeof(core), EM_X86_64, LIB_START);
	memset(core + 4096, 0, 4096);	/* a zero page: a hole */
	memset(core + 2 * 4096, 0xab, sizeof(core) - 2 * 4096);
	f = fopen(tpath("prefix.in"), "w");
	CHECK(f != NULL);
	if (!f)
		return;
	fwrite(core, 1, sizeof(core), f);
	fclose(f);
	in = open(tpath("prefix.in"), O_RDONLY);
	CHECK_OK(coredam_pipe_read_head(in, pre, COREDAM_ELF_KEEP_MAX, 0, &pre_len));
	/* the headers and the notes, and no more */
	CHECK_EQ_INT(pre_len, end);

	struct coredam_pipe_copy_opts o = { .limit = UINT64_MAX, .prefix = pre, .prefix_len = pre_len };
	struct coredam_pipe_copy_result res = { 0 };

	out = open(tpath("prefix.out"), O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK_OK(coredam_pipe_copy(in, out, &o, &res));
	CHECK_EQ_INT(res.in_bytes, sizeof(core));
	CHECK(!res.truncated);
	CHECK_EQ_INT(pread(out, back, sizeof(core), 0), sizeof(core));
	CHECK(memcmp(back, core, sizeof(core)) == 0);
	CHECK_EQ_INT(lseek(out, 0, SEEK_HOLE), 4096);	/* the zero page after the prefix is still a hole */
	close(in);
	close(out);

	/* a limit inside the prefix cuts there */
	in = open(tpath("prefix.in"), O_RDONLY);
	CHECK_OK(coredam_pipe_read_head(in, pre, COREDAM_ELF_KEEP_MAX, 0, &pre_len));
	o.limit = 100;
	res = (struct coredam_pipe_copy_result){ 0 };
	out = open(tpath("prefix.out2"), O_RDWR | O_CREAT | O_EXCL, 0600);
	CHECK_OK(coredam_pipe_copy(in, out, &o, &res));
	CHECK_EQ_INT(res.in_bytes, 100);
	CHECK(res.truncated);
	close(in);
	close(out);
}
