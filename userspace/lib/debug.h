/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Debug logging of the library; off unless the front end turns it on. */
#ifndef COREDAM_DEBUG_H
#define COREDAM_DEBUG_H

#include "macro.h"

extern bool coredam_debug;
void coredam_log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define log_debug(...) do { if (coredam_debug) coredam_log_debug(__VA_ARGS__); } while (0)

#endif
