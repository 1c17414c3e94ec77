/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Numbers, sizes, rates, durations and booleans as the config and the CLI spell them. */
#ifndef COREDAM_PARSE_UTIL_H
#define COREDAM_PARSE_UTIL_H

#include "macro.h"

/* Strict unsigned decimal; no sign, no trailing junk. */
int parse_u64(const char *s, uint64_t *ret);
int parse_u32(const char *s, uint32_t *ret);
/* The same with an optional leading '-'. */
int parse_i32(const char *s, int32_t *ret);

/* A device number as the kernel writes it, "MAJ:MIN": two strict decimals, nothing else. */
int parse_devnum(const char *s, unsigned int *ret_major, unsigned int *ret_minor);

/*
 * "50M", "1G", "4096", "512K": @base is 1024 for sizes (memory, space)
 * and 1000 for rates (bandwidth), following systemd's conventions.
 * Suffixes K M G T, optional trailing "B" ("10MB") and, for rates, "/s".
 */
int parse_size(const char *s, uint64_t base, uint64_t *ret);

/* "30s", "500ms", "2min", "1h", "250us"; a bare number is seconds. Result in microseconds. */
int parse_duration(const char *s, uint64_t *ret_usec);

/* yes/no/true/false/on/off/1/0 */
int parse_bool(const char *s, bool *ret);

/*
 * For people: a size in base 1024 with IEC units ("9.5MiB"), a rate in
 * base 1000 as the configuration reads it ("10.0MB/s" for 10M).
 */
const char *format_size(char *buf, size_t size, uint64_t v);
const char *format_rate(char *buf, size_t size, uint64_t bps);
/* For a log line's key=value field: bytes a second, or "max" for 0 (no limit). */
const char *format_bps_field(char *buf, size_t size, uint64_t bps);

#endif
