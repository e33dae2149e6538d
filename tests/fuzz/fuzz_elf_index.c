/* libFuzzer target: the input is a whole binary.
 *
 * retop opens binaries by path, so the bytes go to a memfd and the index is
 * loaded from /proc/self/fd/N, through the same mmap and pread paths as a
 * real file.  Whatever the bytes: open either fails with one NUL-terminated
 * message or yields an index whose RET search stays inside the file, and
 * every RET site found lies inside its function.
 */
#define _GNU_SOURCE
#include "funcs.h"
#include "log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_FUNCS 4096 /* keeps each run fast on a huge nfunc */

static int memfd = -1;

static int write_input(const uint8_t *data, size_t size)
{
	/* One memfd for the whole run: a new one per input costs a syscall
	 * and an fd, and truncating resets it just as well. */
	if (memfd < 0 && (memfd = memfd_create("fuzz_elf_index", MFD_CLOEXEC)) < 0)
		abort();
	if (ftruncate(memfd, 0) != 0 || lseek(memfd, 0, SEEK_SET) != 0)
		abort();
	for (size_t done = 0; done < size;) {
		ssize_t n = write(memfd, data + done, size - done);
		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	return memfd;
}

static void check_rets(struct func_index *idx, struct func_info *f)
{
	char err[ERR_LEN];

	if (funcs_resolve_rets(idx, f, err) != 0) {
		if (!memchr(err, 0, sizeof(err)))
			abort();
		return;
	}
	if (f->rets.count > 0 && f->rets.traceable == TRACEABLE_NO)
		abort();
	for (size_t i = 0; i < f->rets.count; i++)
		if (f->rets.offsets[i] >= f->size || (i && f->rets.offsets[i] <= f->rets.offsets[i - 1]))
			abort();
	(void)strlen(f->rets.reason);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct func_index *idx;
	char path[64], err[ERR_LEN];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", write_input(data, size));
	if (funcs_load(path, FUNCS_NO_DWARF, &idx, err) != 0) {
		if (!memchr(err, 0, sizeof(err)))
			abort();
		return 0;
	}
	for (size_t i = 0; i < idx->count && i < MAX_FUNCS; i++) {
		struct func_info *f = &idx->funcs[i];
		(void)strlen(f->name);
		if (i && f->entry < idx->funcs[i - 1].entry)
			abort();
		if (funcs_find(idx, f->name) == NULL)
			abort();
		check_rets(idx, f);
	}
	funcs_free(idx);
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	/* Corrupt inputs are the point: their warnings are noise. */
	log_set_level(LOG_ERROR);
	return 0;
}
