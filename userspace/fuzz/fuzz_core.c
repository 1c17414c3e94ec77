// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The ELF completeness check behind MarkIncomplete=: the input is a file in
 * the core destination, read for its ELF header and program headers by
 * coredam_core_incomplete() and coredam_mark_incomplete(), or decompressed
 * to its end when it is a zstd stream.
 *
 * Properties: an empty file is a core that never got its first byte
 * (incomplete); a file shorter than an ELF identification is no core; at
 * most the one file is renamed, to <name>.incomplete, and only when the
 * check calls it incomplete.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

#include "fuzz.h"
#include "space.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool incomplete = false;
	int r, n;

	fuzz_empty_dir("cores");
	fuzz_write("cores/core.prog.42.1700000000", data, size);
	r = coredam_core_incomplete(AT_FDCWD, fuzz_path("cores/core.prog.42.1700000000"), &incomplete);
	if (size == 0)
		FUZZ_CHECK(r == 0 && incomplete);
	else if (size < EI_NIDENT)
		FUZZ_CHECK(r == -EMEDIUMTYPE);
	n = coredam_mark_incomplete(fuzz_path("cores"), 0);
	FUZZ_CHECK(n == (r == 0 && incomplete ? 1 : 0));
	FUZZ_CHECK((access(fuzz_path("cores/core.prog.42.1700000000.incomplete"), F_OK) == 0) == (n == 1));
	return 0;
}
