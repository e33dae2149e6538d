/* RET sites: where a function returns, found by decoding its instructions
 * with capstone from the entry, one instruction at a time (never by byte
 * search: 0xC3 appears inside other instructions).
 */
#ifndef RETOP_RETSITES_H
#define RETOP_RETSITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RETSITES_REASON_LEN 96

enum traceable { TRACEABLE_FULL = 0, TRACEABLE_ENTRY_ONLY, TRACEABLE_NO };

struct retsites {
	uint32_t *offsets; /* RET offsets from the entry, ascending */
	size_t count;
	uint64_t code_size; /* end of the last instruction that is not int3 padding */
	enum traceable traceable;
	char reason[RETSITES_REASON_LEN]; /* why not full; "" when full */
};

struct retsites_engine;

int retsites_engine_open(struct retsites_engine **out, char *err);
void retsites_engine_close(struct retsites_engine *eng);

/* Decode code[0..size) loaded at addr.  size may include trailing int3
 * padding; code_size reports where the function really ends. */
int retsites_find(struct retsites_engine *eng, const uint8_t *code, size_t size, uint64_t addr,
		  struct retsites *out);
void retsites_free(struct retsites *r);

/* True when off is the start of a decoded instruction in code[0..size). */
bool retsites_is_boundary(struct retsites_engine *eng, const uint8_t *code, size_t size,
			  uint64_t addr, uint64_t off);

/* One line of disassembly: "mov rax, qword ptr [rsp + 8]".  Returns the
 * instruction length, 0 at the end, -EINVAL when it does not decode. */
int retsites_disasm_one(struct retsites_engine *eng, const uint8_t *code, size_t size,
			uint64_t addr, char *text, size_t text_len);

const char *traceable_name(enum traceable t);

#endif
