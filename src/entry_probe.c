#include "entry_probe.h"

#include <string.h>

#include "code_walk.h"
#include "uprobe_insn.h"

/* Go's stack-check prologue before its conditional jump: each form writes
 * only R12 or the flags, never SP or R14 (so the pairing key at the jump
 * is the entry's), and never branches.  Returns the form's length if
 * code[0..n) starts with one, else 0. */
static size_t prologue_insn(const uint8_t *c, size_t n)
{
	static const struct {
		uint8_t len, cmp_len; /* cmp_len: the fixed bytes; the rest is an immediate */
		uint8_t bytes[5];
	} forms[] = {
	    {4, 4, {0x49, 0x3b, 0x66, 0x10}}, /* cmp rsp, [r14+0x10] (stackguard0) */
	    {4, 4, {0x49, 0x3b, 0x66, 0x18}}, /* cmp rsp, [r14+0x18] (stackguard1) */
	    {4, 4, {0x4d, 0x3b, 0x66, 0x10}}, /* cmp r12, [r14+0x10] */
	    {4, 4, {0x4d, 0x3b, 0x66, 0x18}}, /* cmp r12, [r14+0x18] */
	    {5, 4, {0x4c, 0x8d, 0x64, 0x24}}, /* lea r12, [rsp+disp8] */
	    {8, 4, {0x4c, 0x8d, 0xa4, 0x24}}, /* lea r12, [rsp+disp32] */
	    {3, 3, {0x49, 0x89, 0xe4}},	      /* mov r12, rsp */
	    {7, 3, {0x49, 0x81, 0xec}},	      /* sub r12, imm32 */
	    {4, 3, {0x49, 0x83, 0xec}},	      /* sub r12, imm8 */
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++)
		if (n >= forms[i].len && !memcmp(c, forms[i].bytes, forms[i].cmp_len))
			return forms[i].len;
	return 0;
}

/* jcc rel8 or jcc rel32, no prefix: emulated by the kernel in one trap. */
static size_t cond_jump_len(const uint8_t *c, size_t n)
{
	if (n >= 2 && c[0] >= 0x70 && c[0] <= 0x7f)
		return 2;
	if (n >= 6 && c[0] == 0x0f && c[1] >= 0x80 && c[1] <= 0x8f)
		return 6;
	return 0;
}

/* A hit on the entry instruction (a compare or a lea) is single-stepped out
 * of line: two traps.  The prologue's conditional jump, a straight line of
 * at most three such instructions further, is emulated: one trap, at the
 * same SP and g, so the same key (docs/UPROBES.md).  Every path into the
 * function starts at the entry and runs that line, and the morestack path
 * jumps back to the entry.  The offset of that jump when the decode, the
 * pc-to-SP table and the kernel's rules all agree; else 0, the entry. */
uint8_t entry_probe_place(const uint8_t *code, const uint8_t *bits, size_t stop, uint64_t flat_end)
{
	size_t off = 0, len;

	for (int i = 0; i < 3; i++) {
		if (!(len = prologue_insn(code + off, stop - off)) || off + len >= stop ||
		    !code_walk_starts(bits, off + len))
			return 0;
		off += len;
		if ((len = cond_jump_len(code + off, stop - off)))
			break;
	}
	/* Big frames check twice (SP - frame underflows, then the guard):
	 * the probe goes on the last jump, which every call passes once. */
	size_t next = off + len, cl;
	if (len && next + 4 < stop && code_walk_starts(bits, next) &&
	    (cl = prologue_insn(code + next, stop - next)) == 4 && code[next + 1] == 0x3b &&
	    code_walk_starts(bits, next + cl)) {
		size_t l2 = cond_jump_len(code + next + cl, stop - next - cl);
		if (l2) {
			off = next + cl;
			len = l2;
		}
	}
	if (!len || off + len > stop || (off + len < stop && !code_walk_starts(bits, off + len)) ||
	    off + len > flat_end || uprobe_insn_check(code + off, len) || off > UINT8_MAX)
		return 0;
	return (uint8_t)off;
}
