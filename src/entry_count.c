#include "entry_count.h"

#include <string.h>

#include "code_walk.h"
#include "gopclntab.h"

/* A call to a runtime function that never returns (funcs_never_returns). */
static bool calls_no_return(const struct func_index *idx, const struct func_info *f,
			    const uint8_t *code, size_t off, size_t end)
{
	int64_t target;

	return idx && code_walk_call(code, off, end, &target) &&
	       funcs_never_returns(idx, f->entry + (uint64_t)target);
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

	if (start <= 0 || (size_t)start >= stop || !code_walk_starts(bits, (size_t)start))
		return -1;
	for (int n = 0; n < 32 && off < stop; n++) {
		size_t end = code_walk_insn_end(bits, off, stop);
		int64_t target = 0;
		bool uncond;
		enum code_branch k = code_walk_branch(code, off, end, &target, &uncond);
		if (k == CODE_BRANCH_DIRECT && uncond && target == 0)
			return (int64_t)off;
		if (k != CODE_BRANCH_NONE)
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
		size_t end = code_walk_insn_end(bits, probe_off, stop);
		bool uncond;
		if (code_walk_branch(code, probe_off, end, &rstart, &uncond) != CODE_BRANCH_DIRECT || uncond)
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
		size_t end = code_walk_insn_end(bits, off, stop);
		int64_t target = 0;
		bool uncond;
		int32_t delta;
		enum code_branch k = code_walk_branch(code, off, end, &target, &uncond);
		/* The nop after a call that never returns falls into nothing. */
		bool dead_nop = end - off == 1 && code[off] == 0x90 && prev_end == off &&
				calls_no_return(idx, f, code, prev, off);
		if (k == CODE_BRANCH_DIRECT && target >= 0 && target <= probe_off &&
		    (int64_t)off != trailer)
			return false;
		if (k == CODE_BRANCH_DIRECT && off > probe_off && rstart >= 0 && target >= rstart &&
		    target <= trailer)
			return false;
		/* Before the probe only the prologue's other check: taken, it
		 * restarts the call too; it may go nowhere else. */
		if (k == CODE_BRANCH_DIRECT && off < probe_off &&
		    (rstart < 0 || target < rstart || target > trailer))
			return false;
		if ((int64_t)end == rstart &&
		    !(k == CODE_BRANCH_INDIRECT || (k == CODE_BRANCH_DIRECT && uncond) ||
		      code_walk_no_fall(code, off, end) || dead_nop))
			return false;
		if (k == CODE_BRANCH_INDIRECT && (!pcsp_at(idx, f, off, &delta) || delta == 0))
			return false;
		prev = off;
		prev_end = end;
		off = end;
	}
	return true;
}
