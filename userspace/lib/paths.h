/* SPDX-License-Identifier: LGPL-2.1-or-later */
#ifndef COREDAM_PATHS_H
#define COREDAM_PATHS_H

/*
 * Where an installed coredam looks for its files: the build writes
 * coredam-paths.h from SYSCONFDIR and LIBEXECDIR (userspace/Makefile).
 */
#include "coredam-paths.h"

#define COREDAM_CONF_DIR COREDAM_SYSCONFDIR "/coredam"
#define COREDAM_CONF_FILE COREDAM_CONF_DIR "/coredam.conf"
#define COREDAM_PIPE_PROGRAM COREDAM_LIBEXECDIR "/coredam/coredam-pipe"

#endif
