// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The expected size of a piped core, and who its process was, from the
 * start of the stream the kernel sends: coredam_elf_core_size(),
 * coredam_elf_core_creds() and coredam_elf_head_want().
 *
 * Properties: nothing past @size is read; the writer is never asked to
 * keep fewer bytes than it has, nor more than COREDAM_ELF_KEEP_MAX; a
 * size is only ever given once the headers are whole, and the same size
 * whatever follows them; an empty or short stream is "unknown"; ids read
 * from the notes stay the same whatever follows, and none is given when
 * the notes are not whole.
 */
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "elfcore.h"
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct coredam_core_creds creds, creds2;
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
	FUZZ_CHECK(want == size || want <= COREDAM_ELF_KEEP_MAX);
	r = coredam_elf_core_size(copy, size, &got);
	FUZZ_CHECK(r == 0 || r == -EMEDIUMTYPE || r == -ENODATA);
	if (size < sizeof(Elf32_Ehdr))
		FUZZ_CHECK(r < 0);
	if (r == 0) {
		/* whole headers: the same answer with more after them (the writer may still want the notes) */
		longer = malloc(size + 64);
		if (longer) {
			memcpy(longer, copy, size);
			memset(longer + size, 0xff, 64);
			FUZZ_CHECK(coredam_elf_core_size(longer, size + 64, &again) == 0 && again == got);
			free(longer);
		}
	}
	r = coredam_elf_core_creds(copy, size, &creds);
	FUZZ_CHECK(r == 0 || r == -EMEDIUMTYPE || r == -ENODATA);
	if (r < 0) {
		FUZZ_CHECK(creds.uid == COREDAM_ELF_NO_ID && creds.gid == COREDAM_ELF_NO_ID &&
			   creds.at_uid == COREDAM_ELF_NO_ID && creds.at_euid == COREDAM_ELF_NO_ID &&
			   creds.at_gid == COREDAM_ELF_NO_ID && creds.at_egid == COREDAM_ELF_NO_ID &&
			   creds.at_secure == COREDAM_ELF_NO_ID);
	} else {
		/* from the notes the writer keeps, and the same with more after them */
		FUZZ_CHECK(size >= sizeof(Elf32_Ehdr));
		longer = malloc(size + 64);
		if (longer) {
			memcpy(longer, copy, size);
			memset(longer + size, 0xff, 64);
			FUZZ_CHECK(coredam_elf_core_creds(longer, size + 64, &creds2) == 0 &&
				   memcmp(&creds, &creds2, sizeof(creds)) == 0);
			free(longer);
		}
	}
	free(copy);
	return 0;
}
