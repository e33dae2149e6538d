/* libFuzzer target: the input is a .gopclntab section.
 *
 * Whatever the bytes, opening, listing and looking up must not crash or read
 * out of bounds, and whatever is returned must be consistent.
 */
#include "gopclntab.h"
#include "log.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TEXT_START 0x401000u
#define MAX_FUNCS 4096 /* keeps each run fast on huge nfunc */

static void check_line(const struct gopclntab *tab, size_t i, uint64_t pc)
{
	const char *file = NULL;
	int line = 0;

	if (gopclntab_line(tab, i, pc, &file, &line) == 0 && !file)
		abort();
	if (file)
		(void)strlen(file); /* ASan checks it stays in the table */
}

static void check_find(const struct gopclntab *tab, uint64_t pc)
{
	struct gopclntab_func f;
	long j = gopclntab_find(tab, pc);

	if (j < 0)
		return;
	if ((size_t)j >= gopclntab_count(tab))
		abort();
	/* Entry and end come from the functab, which open validated. */
	if (gopclntab_func(tab, (size_t)j, &f, NULL) == 0 && (pc < f.entry || pc >= f.end))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gopclntab *tab;
	char err[ERR_LEN];

	/* A header text start other than TEXT_START is refused: then the
	 * header's own is used, so both paths are fuzzed. */
	if (gopclntab_open(data, size, TEXT_START, &tab, err) &&
	    gopclntab_open(data, size, 0, &tab, err)) {
		if (!memchr(err, 0, sizeof(err)))
			abort();
		return 0;
	}
	size_t n = gopclntab_count(tab);
	uint64_t prev_end = TEXT_START;
	int prev_ok = 0;
	for (size_t i = 0; i < n && i < MAX_FUNCS; i++) {
		struct gopclntab_func f;
		if (gopclntab_func(tab, i, &f, err) != 0) {
			/* A bad name must not stop line lookups: entry is the
			 * previous function's end. */
			check_line(tab, i, prev_end);
			prev_ok = 0;
			continue;
		}
		if (f.index != i || f.end < f.entry || (prev_ok && f.entry != prev_end))
			abort();
		(void)strlen(f.name);
		prev_end = f.end;
		prev_ok = 1;
		check_line(tab, i, f.entry);
		check_line(tab, i, f.entry + (f.end - f.entry) / 2);
		if (f.end > f.entry)
			check_line(tab, i, f.end - 1);
		check_line(tab, i, f.end);
		check_find(tab, f.entry);
		if (f.end > f.entry)
			check_find(tab, f.end - 1);
	}
	check_find(tab, 0);
	check_find(tab, TEXT_START);
	check_find(tab, UINT64_MAX);
	gopclntab_close(tab);

	/* The building blocks, straight on the raw bytes. */
	uint32_t v;
	int32_t val;
	gopclntab_varint(data, size, &v);
	gopclntab_pcvalue(data, size, TEXT_START, TEXT_START + 0x40, 1, &val);
	return 0;
}
