#include "entry_probe.h"

#include <string.h>

#include "code_walk.h"
#include "retsites.h"
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

/* Mnemonics a leaf's first instructions may have before its probe: they
 * compute in registers only, never branch, never trap (no memory operand,
 * no division); and the operands may not name SP or R14 (the pairing key
 * at the probe is then the entry's). */
static bool leaf_plain(const char *text)
{
	static const char *const ok[] = {"mov",	  "movzx", "movsx", "movsxd", "lea",  "xor",
					 "add",	  "sub",   "and",   "or",     "shl",  "shr",
					 "sar",	  "rol",   "ror",   "imul",   "inc",  "dec",
					 "neg",	  "not",   "test",  "cmp",    "bswap"};
	size_t mlen = strcspn(text, " ");

	if (strchr(text, '[') || strstr(text, "sp") || strstr(text, "r14"))
		return false;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strlen(ok[i]) == mlen && !strncmp(text, ok[i], mlen))
			return true;
	return !strncmp(text, "cmov", 4);
}

uint8_t entry_probe_leaf(struct retsites_engine *eng, const uint8_t *code, const uint8_t *bits,
			 size_t stop, uint64_t flat_end, uint64_t addr)
{
	size_t off = 0, probe = 0;
	char text[96];

	/* The first instruction the kernel emulates, a few plain ones in. */
	for (int n = 0; n < ENTRY_PROBE_LEAF_MAX && off < stop; n++) {
		size_t end = code_walk_insn_end(bits, off, stop);
		if (end <= off || end > stop)
			return 0;
		if (uprobe_insn_emulated(code + off, end - off)) {
			probe = off;
			break;
		}
		if (retsites_disasm_one(eng, code + off, end - off, addr + off, text,
					sizeof(text)) <= 0 ||
		    !leaf_plain(text))
			return 0;
		off = end;
	}
	size_t pend = probe ? code_walk_insn_end(bits, probe, stop) : 0;
	if (!probe || probe > UINT8_MAX || pend > flat_end ||
	    uprobe_insn_check(code + probe, pend - probe))
		return 0;
	/* Every call reaches the probe once: nothing jumps back to it or
	 * before it, and no jump could land anywhere (indirect). */
	for (size_t o = 0; o < stop;) {
		size_t end = code_walk_insn_end(bits, o, stop);
		int64_t target = 0;
		bool uncond;
		enum code_branch k = code_walk_branch(code, o, end, &target, &uncond);
		if (k == CODE_BRANCH_INDIRECT ||
		    (k == CODE_BRANCH_DIRECT && target >= 0 && (size_t)target <= probe))
			return 0;
		if (end <= o)
			return 0;
		o = end;
	}
	return (uint8_t)probe;
}
