/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* A minimal test harness: TEST() registers, CHECK() records, main() reports. */
#ifndef COREDAM_TEST_H
#define COREDAM_TEST_H

#include <stdio.h>
#include <string.h>

struct test {
	const char *name;
	void (*fn)(void);
};

void test_register(const char *name, void (*fn)(void));
extern int test_failed_checks;

#define TEST(name)                                                             \
	static void test_##name(void);                                         \
	__attribute__((constructor)) static void register_##name(void)         \
	{                                                                      \
		test_register(#name, test_##name);                             \
	}                                                                      \
	static void test_##name(void)

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, \
				__LINE__, #cond);                              \
			test_failed_checks++;                                  \
		}                                                              \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                     \
	do {                                                                   \
		long long _a = (long long)(a), _b = (long long)(b);            \
		if (_a != _b) {                                                \
			fprintf(stderr, "  %s:%d: %s == %lld, expected %lld\n", \
				__FILE__, __LINE__, #a, _a, _b);               \
			test_failed_checks++;                                  \
		}                                                              \
	} while (0)

#define CHECK_STREQ(a, b)                                                      \
	do {                                                                   \
		const char *_a = (a), *_b = (b);                               \
		if (strcmp(_a, _b) != 0) {                                     \
			fprintf(stderr, "  %s:%d: %s == \"%s\", expected \"%s\"\n", \
				__FILE__, __LINE__, #a, _a, _b);               \
			test_failed_checks++;                                  \
		}                                                              \
	} while (0)

/*
 * For the functions that return 0 (or a non-negative value) on success and
 * -errno on failure: a failure names the errno that came back.
 */
const char *test_errno_str(long long r, char *buf, size_t size);	/* "-ENOENT (No such file or directory)" */

#define CHECK_OK(expr)                                                         \
	do {                                                                   \
		long long _r = (long long)(expr);                              \
		if (_r < 0) {                                                  \
			char _b[128];                                          \
			fprintf(stderr, "  %s:%d: CHECK_OK(%s) failed: %s\n",  \
				__FILE__, __LINE__, #expr,                     \
				test_errno_str(_r, _b, sizeof(_b)));           \
			test_failed_checks++;                                  \
		}                                                              \
	} while (0)

/* @expr returns exactly @err, a -errno. */
#define CHECK_ERRNO(expr, err)                                                 \
	do {                                                                   \
		long long _r = (long long)(expr), _e = (long long)(err);       \
		if (_r != _e) {                                                \
			char _b[128], _be[128];                                \
			fprintf(stderr, "  %s:%d: %s == %s, expected %s\n",    \
				__FILE__, __LINE__, #expr,                     \
				test_errno_str(_r, _b, sizeof(_b)),            \
				test_errno_str(_e, _be, sizeof(_be)));         \
			test_failed_checks++;                                  \
		}                                                              \
	} while (0)

/* Fake trees under a fresh temporary directory. */
const char *tmp_root(void);			/* created once per test */
void mkfile(const char *rel, const char *content);	/* parents created */
void mklink(const char *rel, const char *target);
void mkdirs(const char *rel);
const char *tpath(const char *rel);		/* tmp_root()/rel, static buffer ring */
const char *tkeep(const char *rel);		/* tmp_root()/rel, valid until the test ends */
char *slurp(const char *rel);			/* malloc()ed content or NULL */

#endif
