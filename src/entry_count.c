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

/* The start of the instruction of the walk before at (at > 0): the last
 * start below it, or 0, where the walk begins. */
static size_t start_before(const uint8_t *bits, size_t at)
{
	do
		at--;
	while (at > 0 && !code_walk_starts(bits, at));
	return at;
}

/* Whether the instruction that ends at rstart (a start, in the code)
 * cannot fall into the restart path. */
static bool no_fall_into(const struct func_index *idx, const struct func_info *f,
			 const uint8_t *code, const uint8_t *bits, size_t stop, size_t rstart)
{
	size_t off = start_before(bits, rstart);
	size_t prev = off > 0 ? start_before(bits, off) : 0;
	size_t end = code_walk_insn_end(bits, off, stop);
	int64_t target = 0;
	bool uncond;
	enum code_branch k = code_walk_branch(code, off, end, &target, &uncond);
	/* The nop after a call that never returns falls into nothing. */
	bool dead_nop = end - off == 1 && code[off] == 0x90 && calls_no_return(idx, f, code, prev, off);

	return k == CODE_BRANCH_INDIRECT || (k == CODE_BRANCH_DIRECT && uncond) ||
	       code_walk_no_fall(code, off, end) || dead_nop;
}

/* No branch in code[0..stop) that leads back to the probe but the restart
 * path's jump to the entry (trailer): none to it or before it, none into
 * the restart path [rstart, trailer] but the probe's own (a second stack
 * check after the probe, as big frames have, would restart a call the
 * probe saw begin), and no indirect jump where SP is the entry's (jumps
 * elsewhere keep their SP delta, and the probe's is 0).  The instructions
 * that are no branch at a glance are passed by: most of them. */
static bool branches_ok(const struct func_index *idx, const struct func_info *f,
			const uint8_t *code, const uint8_t *bits, size_t stop, uint8_t probe_off,
			int64_t rstart, int64_t trailer)
{
	/* The walk's instructions start at 0 and at every start after it. */
	for (size_t base = 0; base < stop; base += 8)
		for (unsigned starts = bits[base / 8] | (base == 0); starts; starts &= starts - 1) {
			size_t off = base + (size_t)__builtin_ctz(starts);
			if (off >= stop)
				return true;
			if (code_walk_plain(code, bits, off, stop))
				continue;
			size_t end = code_walk_insn_end(bits, off, stop);
			int64_t target = 0;
			bool uncond;
			int32_t delta;
			enum code_branch k = code_walk_branch(code, off, end, &target, &uncond);
			if (k == CODE_BRANCH_DIRECT && target >= 0 && target <= probe_off &&
			    (int64_t)off != trailer)
				return false;
			if (k == CODE_BRANCH_DIRECT && off > probe_off && rstart >= 0 &&
			    target >= rstart && target <= trailer)
				return false;
			/* Before the probe only the prologue's other check: taken,
			 * it restarts the call too; it may go nowhere else. */
			if (k == CODE_BRANCH_DIRECT && off < probe_off &&
			    (rstart < 0 || target < rstart || target > trailer))
				return false;
			if (k == CODE_BRANCH_INDIRECT && (!pcsp_at(idx, f, off, &delta) || delta == 0))
				return false;
		}
	return true;
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
	/* No fall into the restart path either. */
	if (rstart > 0 && !no_fall_into(idx, f, code, bits, stop, (size_t)rstart))
		return false;
	return branches_ok(idx, f, code, bits, stop, probe_off, rstart, trailer);
}
