/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The JSON the programs write (coredamctl status --json, coredam-pipe's
 * metadata beside each core), built with jansson.
 *
 * Its strings may hold anything: a crashed process's name, a path, a
 * cgroup. jansson takes only valid UTF-8, so coredam_json_text() first
 * turns each byte that is not part of valid UTF-8 into the character of
 * its Latin-1 reading (0xff becomes U+00FF): nothing is dropped or
 * replaced by U+FFFD, and the document is valid whatever the bytes were.
 * The dumps are printable ASCII: every control character and every
 * character outside ASCII is escaped (\n, \t, ... or \uXXXX, a surrogate
 * pair beyond U+FFFF), DEL too, which jansson alone would pass as it is.
 * (jansson's json_auto_t releases a tree when it goes out of scope.)
 */
#ifndef COREDAM_JSON_UTIL_H
#define COREDAM_JSON_UTIL_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* @s as a JSON string, bytes that are not UTF-8 read as Latin-1; NULL when out of memory. */
json_t *coredam_json_text(const char *s);

/* @v as a JSON integer; beyond INT64_MAX (jansson's integers are signed) a real. */
json_t *coredam_json_u64(uint64_t v);

/*
 * @j into @buf, NUL-terminated, with jansson's @flags (JSON_INDENT(),
 * JSON_REAL_PRECISION(), ...) and JSON_ENSURE_ASCII. Its length; -ENOBUFS
 * when it does not fit, -ENOMEM when jansson fails.
 */
int coredam_json_dumpb(const json_t *j, size_t flags, char *buf, size_t size);

/* The same to @f; 0, -EIO when writing fails. */
int coredam_json_dumpf(const json_t *j, size_t flags, FILE *f);

#endif
