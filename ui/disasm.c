/* Decoding for the detail view (see disasm.h). */
#include "disasm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/elf_image.h"
#include "../src/funcs.h"
#include "../src/retsites.h"

#define DISASM_MAX_CODE (1u << 20)

void disasm_free(struct disasm *d)
{
	free(d->insns);
	memset(d, 0, sizeof(*d));
}

void disasm_function(struct retsites_engine *eng, const struct elf_image *img,
		     const struct func_info *f, uint64_t size, struct disasm *out)
{
	uint8_t *code;

	memset(out, 0, sizeof(*out));
	out->f = f;
	if (!eng || size == 0 || size > DISASM_MAX_CODE) {
		snprintf(out->err, sizeof(out->err), "no disassembly (size %llu%s)",
			 (unsigned long long)size, eng ? "" : ", no decoder");
		return;
	}
	code = malloc(size);
	out->insns = calloc(size, sizeof(*out->insns));
	if (!code || !out->insns || elf_image_read_code(img, f->entry, code, size) != 0) {
		snprintf(out->err, sizeof(out->err), "cannot read the code of %s", f->name);
		free(out->insns);
		out->insns = NULL;
		free(code);
		return;
	}
	for (uint64_t off = 0; off < size;) {
		struct disasm_insn *in = &out->insns[out->n];
		int len = retsites_disasm_one(eng, code + off, size - off, f->entry + off, in->text,
					      sizeof(in->text));
		if (len <= 0)
			break;
		in->off = (uint32_t)off;
		out->n++;
		off += (uint64_t)len;
	}
	free(code);
}
