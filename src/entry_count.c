#include "entry_count.h"

#include <string.h>

#include "gopclntab.h"

/* What a branch at an instruction start does, from its bytes. */
enum branch_kind { BRANCH_NONE, BRANCH_DIRECT, BRANCH_INDIRECT, BRANCH_OTHER };

static bool bit_at(const uint8_t *bits, uint64_t off)
{
	return bits[off / 8] & (1u << (off % 8));
}

static size_t insn_end(const uint8_t *bits, size_t off, size_t stop)
{
	size_t end = off + 1;

	while (end < stop && !bit_at(bits, end))
		end++;
	return end;
}

static int32_t rel32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* The instruction code[off..end): a direct jump (its target in *target,
 * *uncond for jmp), an indirect jump, a way out of the function that is
 * not a call (RET, int3, ud2, syscall...), or none of these. */
static enum branch_kind branch_at(const uint8_t *code, size_t off, size_t end, int64_t *target,
				  bool *uncond)
{
	size_t p = off;

	*uncond = false;
	while (p < end && (code[p] == 0x26 || code[p] == 0x2E || code[p] == 0x36 ||
			   code[p] == 0x3E || code[p] == 0x64 || code[p] == 0x65 ||
			   code[p] == 0x66 || code[p] == 0x67 || code[p] == 0xF0 ||
			   code[p] == 0xF2 || code[p] == 0xF3))
		p++;
	if (p < end && (code[p] & 0xF0) == 0x40)
		p++; /* REX */
	if (p >= end)
		return BRANCH_OTHER;
	uint8_t op = code[p];
	if ((op >= 0x70 && op <= 0x7F) || op == 0xEB || (op >= 0xE0 && op <= 0xE3)) {
		if (p + 2 != end)
			return BRANCH_OTHER;
		*target = (int64_t)end + (int8_t)code[p + 1];
		*uncond = op == 0xEB;
		return BRANCH_DIRECT;
	}
	if (op == 0xE9 || (op == 0x0F && p + 1 < end && code[p + 1] >= 0x80 && code[p + 1] <= 0x8F)) {
		size_t at = op == 0xE9 ? p + 1 : p + 2;
		if (at + 4 != end)
			return BRANCH_OTHER;
		*target = (int64_t)end + rel32(code + at);
		*uncond = op == 0xE9;
		return BRANCH_DIRECT;
	}
	if (op == 0xFF && p + 1 < end) {
		unsigned reg = (code[p + 1] >> 3) & 7;
		if (reg == 4 || reg == 5)
			return BRANCH_INDIRECT;
		return BRANCH_NONE; /* an indirect call returns here */
	}
	if (op == 0xC2 || op == 0xC3 || op == 0xCA || op == 0xCB || op == 0xCC || op == 0xCD ||
	    op == 0xCF || op == 0xEA || op == 0xF4)
		return BRANCH_OTHER;
	if (op == 0x0F && p + 1 < end &&
	    (code[p + 1] == 0x05 || code[p + 1] == 0x07 || code[p + 1] == 0x0B ||
	     code[p + 1] == 0x34 || code[p + 1] == 0x35))
		return BRANCH_OTHER;
	return BRANCH_NONE;
}

/* RET, int3 or ud2: nothing runs after it in line. */
static bool no_fall(const uint8_t *code, size_t off, size_t end)
{
	size_t n = end - off;

	return (n == 1 && (code[off] == 0xC3 || code[off] == 0xCC)) ||
	       (n == 3 && code[off] == 0xC2) || (n == 2 && code[off] == 0x0F && code[off + 1] == 0x0B);
}

/* A call to a runtime function that never returns (a panic or a throw):
 * Go puts a nop after it, so that its return address is inside the
 * caller, and that nop is never run. */
static bool calls_no_return(const struct func_index *idx, const struct func_info *f,
			    const uint8_t *code, size_t off, size_t end)
{
	static const char *const prefixes[] = {"runtime.panic", "runtime.goPanic", "runtime.throw",
					       "runtime.fatal"};
	const struct func_info *callee;

	if (!idx || end - off != 5 || code[off] != 0xE8)
		return false;
	callee = funcs_by_addr(idx, f->entry + end + (int64_t)rel32(code + off + 1));
	if (!callee || callee->entry != f->entry + end + (int64_t)rel32(code + off + 1))
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(callee->name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* The SP delta the pc-to-SP table gives at off; false when it says nothing. */
static bool pcsp_at(const struct func_index *idx, const struct func_info *f, uint64_t off,
		    int32_t *delta)
{
	struct gopclntab_pciter it;
	uint64_t s, e;
	int32_t v;

	if (!idx || !idx->pcln || gopclntab_pcsp(idx->pcln, f->pcln_index, &it) != 0)
		return false;
	while (gopclntab_pciter_next(&it, &s, &e, &v) == 1)
		if (off >= s && off < e) {
			*delta = v;
			return true;
		}
	return false;
}

/* The taken path of the prologue's jump at jcc_end + rel: a straight line
 * of at most 32 instructions (spills, the call to morestack, reloads) that
 * ends in a jump back to the entry.  Returns that jump's offset, or -1. */
static int64_t restart_path(const uint8_t *code, const uint8_t *bits, size_t stop, int64_t start)
{
	size_t off = (size_t)start;

	if (start <= 0 || (size_t)start >= stop || !bit_at(bits, (size_t)start))
		return -1;
	for (int n = 0; n < 32 && off < stop; n++) {
		size_t end = insn_end(bits, off, stop);
		int64_t target = 0;
		bool uncond;
		enum branch_kind k = branch_at(code, off, end, &target, &uncond);
		if (k == BRANCH_DIRECT && uncond && target == 0)
			return (int64_t)off;
		if (k != BRANCH_NONE)
			return -1;
		off = end;
	}
	return -1;
}

bool entry_count_check(const struct func_index *idx, const struct func_info *f,
		       const uint8_t *code, const uint8_t *bits, size_t stop, uint8_t probe_off,
		       uint8_t *cc)
{
	int64_t trailer = -1, rstart = -1;

	*cc = ENTRY_COUNT_NO_CC;
	if (probe_off) {
		/* The jump the probe sits on, and where it goes when taken. */
		size_t end = insn_end(bits, probe_off, stop);
		bool uncond;
		if (branch_at(code, probe_off, end, &rstart, &uncond) != BRANCH_DIRECT || uncond)
			return false;
		trailer = restart_path(code, bits, stop, rstart);
		if (trailer < 0)
			return false;
		*cc = code[probe_off] == 0x0F ? code[probe_off + 1] & 0xF : code[probe_off] & 0xF;
	}
	/* No other way back to the probe: no branch to it or before it (the
	 * restart path's jump to the entry excepted), none into the restart
	 * path but the probe's own (a second stack check after the probe, as
	 * big frames have, would restart a call the probe saw begin), no fall
	 * into it, and no indirect jump where SP is the entry's (jumps
	 * elsewhere keep their SP delta, and the probe's is 0). */
	for (size_t off = 0, prev = 0, prev_end = 0; off < stop;) {
		size_t end = insn_end(bits, off, stop);
		int64_t target = 0;
		bool uncond;
		int32_t delta;
		enum branch_kind k = branch_at(code, off, end, &target, &uncond);
		/* The nop after a call that never returns falls into nothing. */
		bool dead_nop = end - off == 1 && code[off] == 0x90 && prev_end == off &&
				calls_no_return(idx, f, code, prev, off);
		if (k == BRANCH_DIRECT && target >= 0 && target <= probe_off &&
		    (int64_t)off != trailer)
			return false;
		if (k == BRANCH_DIRECT && off > probe_off && rstart >= 0 && target >= rstart &&
		    target <= trailer)
			return false;
		/* Before the probe only the prologue's other check: taken, it
		 * restarts the call too; it may go nowhere else. */
		if (k == BRANCH_DIRECT && off < probe_off &&
		    (rstart < 0 || target < rstart || target > trailer))
			return false;
		if ((int64_t)end == rstart && !(k == BRANCH_INDIRECT || (k == BRANCH_DIRECT && uncond) ||
						 no_fall(code, off, end) || dead_nop))
			return false;
		if (k == BRANCH_INDIRECT && (!pcsp_at(idx, f, off, &delta) || delta == 0))
			return false;
		prev = off;
		prev_end = end;
		off = end;
	}
	return true;
}
