/* libFuzzer target: the input is a whole binary.
 *
 * retop opens binaries by path, so the bytes go to a memfd and the index is
 * loaded from /proc/self/fd/N, through the same mmap and pread paths as a
 * real file.  Whatever the bytes: open either fails with one NUL-terminated
 * message or yields an index whose RET search stays inside the file, and
 * every RET site found lies inside its function.
 */
#define _GNU_SOURCE
#include "elf_image.h"
#include "funcs.h"
#include "gopclntab.h"
#include "interlock.h"
#include "log.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MAX_FUNCS 4096 /* keeps each run fast on a huge nfunc */
#define MAX_SITES 64   /* each boundary check decodes from the entry */

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

/* The safety property: every RET site is an instruction boundary of the
 * decode from the entry, inside the function, and decodes as a ret. */
static void check_sites(struct func_index *idx, const struct func_info *f)
{
	struct gopclntab_func gf;
	uint8_t *code;
	size_t span;
	char text[160];

	if (f->rets.count == 0)
		return;
	if (gopclntab_func(idx->pcln, f->pcln_index, &gf, NULL) != 0 ||
	    gf.end - gf.entry > (1u << 24))
		abort(); /* interlock_judge() succeeded on this very function */
	/* A decoder of its own: the check must not share the index's state. */
	static struct retsites_engine *eng;
	if (!eng && retsites_engine_open(&eng, NULL) != 0)
		abort();
	span = gf.end - gf.entry;
	code = malloc(span);
	if (!code || elf_image_read_code(idx->img, f->entry, code, span) != 0)
		abort();
	for (size_t i = 0; i < f->rets.count && i < MAX_SITES; i++) {
		uint32_t off = retsites_get(&f->rets, i)->offset;
		if (off >= f->size || (i && off <= retsites_get(&f->rets, i - 1)->offset))
			abort();
		if (!retsites_is_boundary(eng, code, span, f->entry, off))
			abort();
		if (retsites_disasm_one(eng, code + off, span - off, f->entry + off, text,
					sizeof(text)) <= 0 ||
		    !(strncmp(text, "ret", 3) == 0 || strstr(text, " ret")))
			abort();
	}
	free(code);
}

static void check_rets(struct func_index *idx, struct func_info *f)
{
	char err[ERR_LEN];

	if (interlock_judge(idx, f, NULL, err) != 0) {
		if (!memchr(err, 0, sizeof(err)))
			abort();
		return;
	}
	if (f->rets.traceable != TRACEABLE_FULL && !retsites_reason(&f->rets)[0])
		abort(); /* not traceable in full must say why */
	check_sites(idx, f);
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
