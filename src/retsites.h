/* RET sites: where a function returns, found by decoding its instructions
 * with Zydis from the entry, one instruction at a time (never by byte
 * search: 0xC3 appears inside other instructions).  capstone prints the
 * disassembly text.
 */
#ifndef RETOP_RETSITES_H
#define RETOP_RETSITES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum traceable { TRACEABLE_FULL = 0, TRACEABLE_ENTRY_ONLY, TRACEABLE_NO };

/* Most Go functions have one or two RETs: those are kept in place. */
#define RETSITES_INLINE 2

struct ret_site {
	uint32_t offset; /* from the function's entry */
	int32_t line;	 /* source line, 0 until the caller sets it */
};

/* One per function of the index: kept small. */
struct retsites {
	/* Ascending by offset: read them with retsites_at(). */
	union {
		struct ret_site *heap; /* count > RETSITES_INLINE */
		struct ret_site in_place[RETSITES_INLINE];
	} sites;
	char *reason; /* why not full: NULL when full (most functions), read it
		       * with retsites_reason() */
	uint64_t code_size; /* end of the last instruction that is not int3 padding */
	uint32_t count;
	enum traceable traceable;
};

struct retsites_engine;

int retsites_engine_open(struct retsites_engine **out, char *err);
void retsites_engine_close(struct retsites_engine *eng);

/* Decode code[0..size) loaded at addr.  size may include trailing int3
 * padding; code_size reports where the function really ends. */
int retsites_find(struct retsites_engine *eng, const uint8_t *code, size_t size, uint64_t addr,
		  struct retsites *out);
void retsites_free(struct retsites *r);
/* RET site i (i < r->count). */
const struct ret_site *retsites_get(const struct retsites *r, size_t i);
void retsites_set_line(struct retsites *r, size_t i, int32_t line);
/* Keep only the first count sites. */
void retsites_truncate(struct retsites *r, uint32_t count);
/* Why the function is not fully traceable; "" when it is. */
const char *retsites_reason(const struct retsites *r);
/* Replace the reason; -ENOMEM leaves none. */
int retsites_set_reason(struct retsites *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* True when off is the start of a decoded instruction in code[0..size). */
bool retsites_is_boundary(struct retsites_engine *eng, const uint8_t *code, size_t size,
			  uint64_t addr, uint64_t off);

/* Mark in bits (one bit per byte of code[0..size), bit i set when an
 * instruction starts at offset i; size / 8 + 1 bytes, zeroed by the caller)
 * every instruction start decoded linearly from offset 0.  Returns the
 * offset where decoding stopped: size when every instruction decoded, else
 * the offset of the first one that does not decode.  Right after
 * retsites_find() on the same bytes, its decode is reused. */
size_t retsites_boundaries(struct retsites_engine *eng, const uint8_t *code, size_t size,
			   uint64_t addr, uint8_t *bits);

/* One line of disassembly: "mov rax, qword ptr [rsp + 8]" (capstone), or
 * "vpermb zmm0, zmm0, zmm4" (Zydis) where capstone 4 cannot print what
 * Zydis decodes.  Returns the instruction length, 0 at the end, -EINVAL
 * when it does not decode, -ENOMEM when capstone cannot be opened. */
int retsites_disasm_one(struct retsites_engine *eng, const uint8_t *code, size_t size,
			uint64_t addr, char *text, size_t text_len);

const char *traceable_name(enum traceable t);

#endif
