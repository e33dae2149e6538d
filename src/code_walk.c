#include "code_walk.h"

size_t code_walk_insn_end(const uint8_t *bits, size_t off, size_t stop)
{
	size_t end = off + 1;

	if (end >= stop)
		return end;
	/* A byte of the map at a time, not a bit: every proof walks every
	 * instruction of every function, a few bytes each. */
	for (;;) {
		unsigned starts = bits[end / 8] >> (end % 8);
		if (starts) {
			end += (size_t)__builtin_ctz(starts);
			return end < stop ? end : stop;
		}
		end = (end | 7) + 1;
		if (end >= stop)
			return stop;
	}
}

int32_t code_walk_rel32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* code_walk.h's table of what each byte is to code_walk_branch(). */
const uint8_t code_walk_byte[256] = {
    [0x0F] = WALK_OP,
    [0x26] = WALK_PREFIX,
    [0x2E] = WALK_PREFIX,
    [0x36] = WALK_PREFIX,
    [0x3E] = WALK_PREFIX,
    [0x40 ... 0x4F] = WALK_REX,
    [0x64 ... 0x67] = WALK_PREFIX,
    [0x70 ... 0x7F] = WALK_OP,
    [0xC2 ... 0xC3] = WALK_OP,
    [0xCA ... 0xCD] = WALK_OP,
    [0xCF] = WALK_OP,
    [0xE0 ... 0xE3] = WALK_OP,
    [0xE9 ... 0xEB] = WALK_OP,
    [0xF0] = WALK_PREFIX,
    [0xF2 ... 0xF3] = WALK_PREFIX,
    [0xF4] = WALK_OP,
    [0xFF] = WALK_OP,
};

enum code_branch code_walk_branch(const uint8_t *code, size_t off, size_t end, int64_t *target,
				  bool *uncond)
{
	size_t p = off;

	*uncond = false;
	/* Most instructions, first. */
	if (off < end && code_walk_plain_bytes(code, off, off + 1 < end))
		return CODE_BRANCH_NONE;
	while (p < end && (code_walk_byte[code[p]] & WALK_PREFIX))
		p++;
	if (p < end && (code[p] & 0xF0) == 0x40)
		p++; /* REX */
	if (p >= end)
		return CODE_BRANCH_OTHER;
	uint8_t op = code[p];
	if ((op >= 0x70 && op <= 0x7F) || op == 0xEB || (op >= 0xE0 && op <= 0xE3)) {
		if (p + 2 != end)
			return CODE_BRANCH_OTHER;
		*target = (int64_t)end + (int8_t)code[p + 1];
		*uncond = op == 0xEB;
		return CODE_BRANCH_DIRECT;
	}
	if (op == 0xE9 ||
	    (op == 0x0F && p + 1 < end && code[p + 1] >= 0x80 && code[p + 1] <= 0x8F)) {
		size_t at = op == 0xE9 ? p + 1 : p + 2;
		if (at + 4 != end)
			return CODE_BRANCH_OTHER;
		*target = (int64_t)end + code_walk_rel32(code + at);
		*uncond = op == 0xE9;
		return CODE_BRANCH_DIRECT;
	}
	if (op == 0xFF && p + 1 < end) {
		unsigned reg = (code[p + 1] >> 3) & 7;
		if (reg == 4 || reg == 5)
			return CODE_BRANCH_INDIRECT;
		return CODE_BRANCH_NONE; /* an indirect call returns here */
	}
	if (op == 0xC2 || op == 0xC3 || op == 0xCA || op == 0xCB || op == 0xCC || op == 0xCD ||
	    op == 0xCF || op == 0xEA || op == 0xF4)
		return CODE_BRANCH_OTHER;
	if (op == 0x0F && p + 1 < end &&
	    (code[p + 1] == 0x05 || code[p + 1] == 0x07 || code[p + 1] == 0x0B ||
	     code[p + 1] == 0x34 || code[p + 1] == 0x35))
		return CODE_BRANCH_OTHER;
	return CODE_BRANCH_NONE;
}

bool code_walk_no_fall(const uint8_t *code, size_t off, size_t end)
{
	size_t n = end - off;

	return (n == 1 && (code[off] == 0xC3 || code[off] == 0xCC)) ||
	       (n == 3 && code[off] == 0xC2) ||
	       (n == 2 && code[off] == 0x0F && code[off + 1] == 0x0B);
}

bool code_walk_call(const uint8_t *code, size_t off, size_t end, int64_t *target)
{
	if (end - off != 5 || code[off] != 0xE8)
		return false;
	*target = (int64_t)end + code_walk_rel32(code + off + 1);
	return true;
}
