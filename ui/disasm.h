/* A function's instructions for the detail view, decoded on the worker
 * thread: capstone over a large function takes longer than a frame. */
#ifndef RETOP_UI_DISASM_H
#define RETOP_UI_DISASM_H

#include <stddef.h>
#include <stdint.h>

struct func_info;
struct elf_image;
struct retsites_engine;

struct disasm_insn {
	uint32_t off; /* from the function entry */
	char text[80];
};

struct disasm {
	const struct func_info *f; /* NULL: nothing decoded */
	struct disasm_insn *insns;
	size_t n;
	char err[128]; /* why there is no disassembly, or "" */
};

/* Decode f from its entry over size bytes; on failure out->err says why.
 * eng may be NULL (no capstone): that is an err too. */
void disasm_function(struct retsites_engine *eng, const struct elf_image *img,
		     const struct func_info *f, uint64_t size, struct disasm *out);
void disasm_free(struct disasm *d);

#endif
