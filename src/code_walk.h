/* Reading the control flow of decoded x86-64 code, from its bytes and the
 * instruction starts the decoder found (retsites_boundaries): where an
 * instruction ends, and what a branch does.  Shared by the proofs that
 * walk a function's code (entry_count, inline_marks). */
#ifndef RETOP_CODE_WALK_H
#define RETOP_CODE_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a branch at an instruction start does, from its bytes. */
enum code_branch { CODE_BRANCH_NONE, CODE_BRANCH_DIRECT, CODE_BRANCH_INDIRECT, CODE_BRANCH_OTHER };

/* Whether an instruction starts at off (bit off of bits). */
static inline bool code_walk_starts(const uint8_t *bits, uint64_t off)
{
	return bits[off / 8] & (1u << (off % 8));
}

/* The end of the instruction at off: the next start, or stop. */
size_t code_walk_insn_end(const uint8_t *bits, size_t off, size_t stop);

/* The instruction code[off..end): a direct jump (its target, relative to
 * code, in *target; *uncond for jmp), an indirect jump, a way out of the
 * function that is not a call (RET, int3, ud2, syscall...), or none of
 * these (an indirect call returns: none). */
enum code_branch code_walk_branch(const uint8_t *code, size_t off, size_t end, int64_t *target,
				  bool *uncond);

/* What code_walk_branch() makes of a byte: a legacy prefix it skips, a REX
 * it skips after them, an opcode it looks at further; anything else, as
 * an opcode, is no branch. */
enum { WALK_PREFIX = 1, WALK_REX = 2, WALK_OP = 4 };
extern const uint8_t code_walk_byte[256];

/* No branch, from the first bytes of the instruction at off (second: it
 * has a byte after the first): no prefix, at most a REX, and an opcode
 * that neither branches nor leaves.  Most instructions. */
static inline bool code_walk_plain_bytes(const uint8_t *code, size_t off, bool second)
{
	uint8_t k = code_walk_byte[code[off]];

	return !k || (k == WALK_REX && second && !(code_walk_byte[code[off + 1]] & WALK_OP));
}

/* Whether code_walk_branch() says CODE_BRANCH_NONE of the instruction
 * starting at off (below stop) from its first bytes, without its end:
 * most instructions, which a walk for branches can pass by. */
static inline bool code_walk_plain(const uint8_t *code, const uint8_t *bits, size_t off,
				   size_t stop)
{
	return code_walk_plain_bytes(code, off, off + 1 < stop && !code_walk_starts(bits, off + 1));
}

/* RET, int3 or ud2 at code[off..end): nothing runs after it in line. */
bool code_walk_no_fall(const uint8_t *code, size_t off, size_t end);

/* A direct call (E8 rel32) at code[off..end): its target, relative to
 * code, in *target. */
bool code_walk_call(const uint8_t *code, size_t off, size_t end, int64_t *target);

/* The little-endian int32 at p. */
int32_t code_walk_rel32(const uint8_t *p);

#endif
