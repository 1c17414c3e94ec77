// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The expected size of a piped core, from the start of the stream the
 * kernel sends: coredam_elf_core_size() and coredam_elf_head_want().
 *
 * Properties: nothing past @size is read; the writer is never asked to
 * keep fewer bytes than it has, nor more than COREDAM_ELF_HEAD_MAX; a
 * size is only ever given once the headers are whole, and the same size
 * whatever follows them; an empty or short stream is "unknown".
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elfcore.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t got = 0, again = 0;
	size_t want;
	uint8_t *copy, *longer;
	int r;

	/* an exact-size copy, so that ASan sees any read past the end */
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	want = coredam_elf_head_want(copy, size);
	FUZZ_CHECK(want >= size);
	FUZZ_CHECK(want == size || want <= COREDAM_ELF_HEAD_MAX);
	r = coredam_elf_core_size(copy, size, &got);
	FUZZ_CHECK(r == 0 || r == -EMEDIUMTYPE || r == -ENODATA);
	if (size < sizeof(Elf32_Ehdr))
		FUZZ_CHECK(r < 0);
	if (r == 0) {
		/* whole headers: asking for no more, and the same answer with more after them */
		FUZZ_CHECK(want == size);
		longer = malloc(size + 64);
		if (longer) {
			memcpy(longer, copy, size);
			memset(longer + size, 0xff, 64);
			FUZZ_CHECK(coredam_elf_core_size(longer, size + 64, &again) == 0 && again == got);
			free(longer);
		}
	}
	free(copy);
	return 0;
}
