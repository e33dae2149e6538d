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

/* RET, int3 or ud2 at code[off..end): nothing runs after it in line. */
bool code_walk_no_fall(const uint8_t *code, size_t off, size_t end);

/* A direct call (E8 rel32) at code[off..end): its target, relative to
 * code, in *target. */
bool code_walk_call(const uint8_t *code, size_t off, size_t end, int64_t *target);

/* The little-endian int32 at p. */
int32_t code_walk_rel32(const uint8_t *p);

#endif
