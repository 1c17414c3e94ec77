/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Shared by the libFuzzer targets: the input as a string, a scratch
 * directory for parsers that read files, property checks.
 */
#ifndef COREDAM_FUZZ_H
#define COREDAM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property of the code under test does not hold: say which, abort(). */
#define FUZZ_CHECK(cond)                                               \
	do {                                                           \
		if (!(cond))                                           \
			fuzz_fail(__FILE__, __LINE__, #cond);          \
	} while (0)

void fuzz_fail(const char *file, int line, const char *what) __attribute__((noreturn));

/* @data NUL-terminated, in a malloc()ed copy (a NUL inside ends the string). */
char *fuzz_string(const uint8_t *data, size_t size);

/*
 * A scratch directory under $TMPDIR (or /tmp) for the whole run, removed
 * at exit; fuzz_path() names a file in it (static ring of 8 buffers).
 */
const char *fuzz_dir(void);
const char *fuzz_path(const char *rel);

/* Replace fuzz_dir()/@rel with @size bytes of @data; parents are created. */
void fuzz_write(const char *rel, const void *data, size_t size);

/* Remove every entry of the directory fuzz_dir()/@rel (not the directory). */
void fuzz_empty_dir(const char *rel);

#endif
