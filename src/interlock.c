#include "interlock.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "elf_image.h"
#include "entry_count.h"
#include "gopclntab.h"
#include "log.h"

/* ---- what the kernel does with the probed instruction (docs/UPROBES.md) */

/* One-byte opcodes that arch/x86/kernel/uprobes.c leaves out of
 * good_insns_64: attaching there fails (uprobe_init_insn). */
static bool opcode_refused(uint8_t op)
{
	switch (op) {
	case 0x06:
	case 0x07:
	case 0x0e:
	case 0x16:
	case 0x17:
	case 0x1e:
	case 0x1f:
	case 0x27:
	case 0x2f:
	case 0x37:
	case 0x3f:
	case 0x60:
	case 0x61:
	case 0x62:
	case 0x6c:
	case 0x6d:
	case 0x6e:
	case 0x6f:
	case 0x82:
	case 0x9a:
	case 0xcc:
	case 0xcd:
	case 0xce:
	case 0xcf:
	case 0xd4:
	case 0xd5:
	case 0xd6:
	case 0xe4:
	case 0xe5:
	case 0xe6:
	case 0xe7:
	case 0xea:
	case 0xec:
	case 0xed:
	case 0xee:
	case 0xef:
	case 0xf1:
	case 0xf4:
	case 0xfa:
	case 0xfb:
		return true;
	default:
		return false;
	}
}

/* Two-byte opcodes (0f xx) outside good_2byte_insns. */
static bool opcode2_refused(uint8_t op)
{
	switch (op) {
	case 0x00:
	case 0x01:
	case 0x05:
	case 0x06:
	case 0x07:
	case 0x08:
	case 0x09:
	case 0x0b:
	case 0x30:
	case 0x34:
	case 0x35:
	case 0x37:
	case 0x78:
	case 0x79:
	case 0xae:
		return true;
	default:
		return false;
	}
}

static bool is_branch(uint8_t op)
{
	return op == 0xe8 || op == 0xe9 || op == 0xeb || (op >= 0x70 && op <= 0x7f);
}

const char *interlock_kernel_check(const uint8_t *insn, size_t len)
{
	size_t i = 0;
	bool p66 = false;
	uint8_t rex = 0;

	for (; i < len; i++) {
		uint8_t b = insn[i];
		if (b == 0x26 || b == 0x2e || b == 0x36 || b == 0x3e)
			return "segment-override prefix: the kernel refuses it (is_prefix_bad)";
		if (b == 0xf0)
			return "lock prefix: the kernel refuses it (is_prefix_bad)";
		if (b == 0x66)
			p66 = true;
		else if (b != 0x64 && b != 0x65 && b != 0x67 && b != 0xf2 && b != 0xf3)
			break;
	}
	if (i < len && (insn[i] & 0xf0) == 0x40)
		rex = insn[i++];
	if (i >= len)
		return "instruction truncated";
	uint8_t op = insn[i];
	if (op == 0xc4 || op == 0xc5)
		return "VEX-encoded instruction: not one retop checks against the kernel's tables";
	if (op == 0x0f) {
		if (i + 1 >= len)
			return "instruction truncated";
		uint8_t op2 = insn[i + 1];
		if (opcode2_refused(op2))
			return "system or trapping instruction: the kernel refuses it "
			       "(good_2byte_insns)";
		if (op2 == 0x1f)
			return "multi-byte NOP: newer kernels rewrite it into a call that writes "
			       "below SP (arch_uprobe_optimize)";
		if (op2 >= 0x80 && op2 <= 0x8f && p66)
			return "branch with a 0x66 prefix: the kernel refuses it "
			       "(branch_setup_xol_ops)";
		return NULL;
	}
	if (opcode_refused(op))
		return "the kernel refuses this opcode (good_insns_64)";
	/* mov ss / pop ss mask the single-step trap (insn_masking_exception). */
	if (op == 0x8e && i + 1 < len && ((insn[i + 1] >> 3) & 7) == 2)
		return "mov to ss: the kernel refuses it (insn_masking_exception)";
	if (op == 0x90 && (rex & 1))
		return "xchg with r8-r15 (REX.B 0x90): the kernel runs every 0x90 as a NOP "
		       "(branch_setup_xol_ops), the exchange would be lost";
	if (p66 && is_branch(op))
		return "branch with a 0x66 prefix: the kernel refuses it (branch_setup_xol_ops)";
	return NULL;
}

bool interlock_kernel_emulates(const uint8_t *insn, size_t len)
{
	/* branch_setup_xol_ops() and push_setup_xol_ops() of
	 * arch/x86/kernel/uprobes.c, without prefixes (Go emits none there;
	 * a prefixed form is counted as single-stepped: the dearer). */
	if (len < 1)
		return false;
	uint8_t op = insn[0];
	if (op == 0xeb || op == 0xe9 || op == 0xe8 || op == 0x90 || (op >= 0x70 && op <= 0x7f) ||
	    (op >= 0x50 && op <= 0x57))
		return true;
	if (len >= 2 && op == 0x0f && insn[1] >= 0x80 && insn[1] <= 0x8f)
		return true;
	/* push r8..r15: REX.B 0x41 only. */
	return len >= 2 && op == 0x41 && insn[1] >= 0x50 && insn[1] <= 0x57;
}

/* ---- runtime functions that run without g in R14 or off the goroutine
 * stack: the pairing key {g, g.stack.hi - SP} means nothing there. */

struct runtime_rule {
	const char *name;
	bool prefix;
	const char *why;
};

static const struct runtime_rule runtime_rules[] = {
    {"runtime.gcWriteBarrier", true,
     "write barrier: entered from inside pointer writes with its own register convention"},
    {"runtime.morestack", true, "stack growth: runs while the goroutine's stack is switched"},
    {"runtime.systemstack_switch", false, "a return-address marker for tracebacks, never called"},
    {"runtime.systemstack", false, "switches to the g0 stack"},
    {"runtime.gosave_systemstack_switch", false, "saves state for a stack switch"},
    {"runtime.mcall", false, "switches to the g0 stack and does not return to its caller"},
    /* What mcall runs on g0: each ends in schedule() and never returns, and
     * the next one on the thread begins in the same g0 frame. */
    {"runtime.park_m", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.gosched_m", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.goschedguarded_m", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.gopreempt_m", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.preemptPark", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.goyield_m", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.goexit0", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.exitsyscall0", false, "runs on g0 through mcall and never returns (schedule)"},
    {"runtime.coroswitch_m", false, "runs on g0 through mcall and never returns"},
    {"runtime.schedule", false, "runs on g0 and never returns: it switches to a goroutine"},
    {"runtime.mstart0", false, "thread start on g0: never returns"},
    {"runtime.mstart1", false, "thread start on g0: never returns"},
    {"runtime.mexit", false, "thread exit on g0: never returns"},
    {"runtime.gogo", false, "jumps into another goroutine: never returns"},
    {"runtime.goexit", false, "the bottom frame of every goroutine: entered by a return"},
    {"runtime.rt0_go", false, "process start: runs before g exists"},
    {"_rt0_", true, "process start: runs before g exists"},
    {"runtime.mstart", false, "thread start: runs before g is in R14"},
    {"runtime.asminit", false, "thread start: runs before g is in R14"},
    {"runtime.settls", false, "sets up thread-local storage before g exists"},
    {"runtime.clone", false, "the new thread starts inside it without g"},
    {"runtime.asmcgocall", true, "switches to the g0 stack to call C"},
    {"runtime.cgocallback", false, "entered from C: no g in R14"},
    {"crosscall2", false, "entered from C: no g in R14"},
    {"runtime.setg_gcc", false, "sets g for C code"},
    {"runtime.load_g", false, "loads g for C code"},
    {"runtime.save_g", false, "saves g for C code"},
    {"runtime.sigtramp", false, "signal handler: entered by the kernel, R14 is not g"},
    {"runtime.cgoSigtramp", false, "signal handler: entered by the kernel, R14 is not g"},
    {"runtime.sigprofNonGo", true, "signal handler on a thread without g"},
    {"runtime.sigreturn", true, "returns from a signal through the kernel: never returns"},
    {"runtime.asyncPreempt", false, "entered by a signal at any instruction: R14 may not hold g"},
    {"runtime.debugCallV", true, "debugger call injection: entered at any instruction"},
    {"runtime.duffzero", false,
     "entered in the middle (Duff's device): entries and returns do not pair"},
    {"runtime.duffcopy", false,
     "entered in the middle (Duff's device): entries and returns do not pair"},
    {"runtime.nanotime1", false, "calls the vDSO on the g0 stack"},
    {"runtime.walltime", false, "calls the vDSO on the g0 stack"},
    {"runtime.vgetrandom1", false, "calls the vDSO on the g0 stack"},
    {"runtime.abort", false, "crashes the process on purpose"},
    {"runtime.racecall", true, "switches to the g0 stack to call the race runtime"},
};

const char *interlock_runtime_check(const char *name, uint8_t flags)
{
	for (size_t i = 0; i < sizeof(runtime_rules) / sizeof(runtime_rules[0]); i++) {
		const struct runtime_rule *r = &runtime_rules[i];
		if (r->prefix ? !strncmp(name, r->name, strlen(r->name)) : !strcmp(name, r->name))
			return r->why;
	}
	/* runtime.debugCall32 ... debugCall65536: frames for injected calls. */
	if (!strncmp(name, "runtime.debugCall", 17) && name[17] >= '0' && name[17] <= '9')
		return "debugger call injection: entered at any instruction";
	/* What the toolchain itself knows, for the releases and functions the
	 * list above does not name. */
	if (flags & GOPCLNTAB_FLAG_TOPFRAME)
		return "the bottom frame of a stack (TOPFRAME): no caller to return to";
	if (flags & GOPCLNTAB_FLAG_SPWRITE)
		return "writes SP (SPWRITE): entry and return may be on different stacks";
	return NULL;
}

/* "r14", "r14d", "r14w", "r14b" of length n. */
static bool is_r14(const char *s, size_t n)
{
	return n >= 3 && !strncmp(s, "r14", 3) &&
	       (n == 3 || (n == 4 && (s[3] == 'd' || s[3] == 'w' || s[3] == 'b')));
}

/* Any operand of ops that is R14 itself (not a memory operand using it). */
static bool any_operand_r14(const char *ops)
{
	while (*ops) {
		while (*ops == ' ' || *ops == ',')
			ops++;
		size_t n = strcspn(ops, ",");
		size_t m = n;
		while (m > 0 && ops[m - 1] == ' ')
			m--;
		if (is_r14(ops, m))
			return true;
		ops += n;
	}
	return false;
}

bool interlock_writes_r14(const char *text)
{
	const char *ops = strchr(text, ' ');
	size_t mlen = ops ? (size_t)(ops - text) : strlen(text);

	if (!ops)
		return false;
	ops++;
	if ((mlen == 4 && !strncmp(text, "xchg", 4)) || (mlen == 4 && !strncmp(text, "xadd", 4)) ||
	    (mlen >= 7 && !strncmp(text, "cmpxchg", 7)))
		return any_operand_r14(ops);
	size_t n = strcspn(ops, ",");
	while (n > 0 && ops[n - 1] == ' ')
		n--;
	if (!is_r14(ops, n))
		return false;
	/* The first operand is the destination, except for these. */
	static const char *const readers[] = {"cmp", "test", "push", "bt", "call", "jmp"};
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++)
		if (strlen(readers[i]) == mlen && !strncmp(text, readers[i], mlen))
			return false;
	return true;
}

/* ---- the verdict on the function's own bytes */

static bool bit_at(const uint8_t *bits, uint64_t off)
{
	return bits[off / 8] & (1u << (off % 8));
}

/* Length of the instruction at off: up to the next boundary, or stop. */
static size_t insn_len(const uint8_t *bits, uint64_t off, size_t stop)
{
	uint64_t end = off + 1;

	while (end < stop && !bit_at(bits, end))
		end++;
	return (size_t)(end - off);
}

static int refuse(struct func_info *f, const char *why)
{
	f->rets.traceable = TRACEABLE_NO;
	return retsites_set_reason(&f->rets, "%s", why);
}

/* What the pc-to-SP table says, checked against the decode. */
struct pcsp_facts {
	uint64_t end;	   /* the table's span: the end of the last instruction */
	uint64_t flat_end; /* the end of the first range, SP delta 0 */
	char why[160];
};

static void pcsp_walk(const struct func_index *idx, const struct func_info *f, const uint8_t *bits,
		      size_t stop, struct pcsp_facts *out)
{
	struct gopclntab_pciter it;
	uint64_t s, e;
	int32_t v;
	int n = gopclntab_pcsp(idx->pcln, f->pcln_index, &it);
	size_t ri = 0;

	out->end = out->flat_end = 0;
	out->why[0] = '\0';
	if (n) {
		snprintf(out->why, sizeof(out->why), "%s",
			 n == -ENOENT ? "no pc-to-SP table" : "pc-to-SP table corrupt");
		return;
	}
	for (bool first = true; (n = gopclntab_pciter_next(&it, &s, &e, &v)) == 1; first = false) {
		if (first && v != 0) {
			snprintf(out->why, sizeof(out->why),
				 "pc-to-SP table: SP delta %d at the entry", v);
			return;
		}
		if (first)
			out->flat_end = e;
		if (e > stop) {
			snprintf(out->why, sizeof(out->why),
				 "pc-to-SP table runs to +0x%llx, past the decoded code (+0x%zx)",
				 (unsigned long long)e, stop);
			return;
		}
		if (s < e && !bit_at(bits, s)) {
			snprintf(out->why, sizeof(out->why),
				 "pc-to-SP table: change at +0x%llx is not an instruction boundary",
				 (unsigned long long)s);
			return;
		}
		for (; ri < f->rets.count && retsites_get(&f->rets, ri)->offset < e; ri++)
			if (v != 0) {
				snprintf(out->why, sizeof(out->why),
					 "pc-to-SP table: SP delta %d at the RET at +0x%x", v,
					 retsites_get(&f->rets, ri)->offset);
				return;
			}
		out->end = e;
	}
	if (n < 0)
		snprintf(out->why, sizeof(out->why), "pc-to-SP table corrupt");
	else if (ri < f->rets.count)
		snprintf(out->why, sizeof(out->why), "RET at +0x%x past the pc-to-SP table",
			 retsites_get(&f->rets, ri)->offset);
}

/* ---- where the entry probe sits */

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
uint8_t interlock_entry_probe(const uint8_t *code, const uint8_t *bits, size_t stop,
			      uint64_t flat_end)
{
	size_t off = 0, len;

	if (getenv("RETOP_ENTRY_PROBE") && !strcmp(getenv("RETOP_ENTRY_PROBE"), "first"))
		return 0;
	for (int i = 0; i < 3; i++) {
		if (!(len = prologue_insn(code + off, stop - off)) || off + len >= stop ||
		    !bit_at(bits, off + len))
			return 0;
		off += len;
		if ((len = cond_jump_len(code + off, stop - off)))
			break;
	}
	/* Big frames check twice (SP - frame underflows, then the guard):
	 * the probe goes on the last jump, which every call passes once. */
	size_t next = off + len, cl;
	if (len && next + 4 < stop && bit_at(bits, next) && (cl = prologue_insn(code + next, stop - next)) == 4 &&
	    code[next + 1] == 0x3b && bit_at(bits, next + cl)) {
		size_t l2 = cond_jump_len(code + next + cl, stop - next - cl);
		if (l2) {
			off = next + cl;
			len = l2;
		}
	}
	if (!len || off + len > stop || (off + len < stop && !bit_at(bits, off + len)) ||
	    off + len > flat_end || interlock_kernel_check(code + off, len) || off > UINT8_MAX)
		return 0;
	return (uint8_t)off;
}

/* .symtab and DWARF, each on its own, against the table's code size. */
static const char *check_sources(const struct func_index *idx, const struct func_info *f,
				 uint64_t table_size, char *buf, size_t len)
{
	const struct elf_symbol *syms, *sym;
	size_t nsyms = elf_image_func_symbols(idx->img, &syms);

	if (nsyms > 0) {
		if (!(sym = elf_symbol_at(syms, nsyms, f->entry)))
			return "no .symtab function at the entry .gopclntab gives";
		if (sym->size && sym->size != table_size) {
			snprintf(
			    buf, len,
			    "size 0x%llx in .symtab disagrees with the pc-to-SP table's 0x%llx",
			    (unsigned long long)sym->size, (unsigned long long)table_size);
			return buf;
		}
	}
	if (f->dwarf && f->dwarf->high_pc > f->dwarf->low_pc &&
	    f->dwarf->high_pc - f->dwarf->low_pc != table_size) {
		snprintf(buf, len,
			 "size 0x%llx in DWARF disagrees with the pc-to-SP table's 0x%llx",
			 (unsigned long long)(f->dwarf->high_pc - f->dwarf->low_pc),
			 (unsigned long long)table_size);
		return buf;
	}
	return NULL;
}

/* The evidence that names no other function: one reason, or NULL. */
static const char *check_own(const struct func_index *idx, struct retsites_engine *eng,
			     const struct func_info *f, const uint8_t *code, const uint8_t *bits,
			     size_t stop, const struct pcsp_facts *pcsp, char *buf, size_t len)
{
	const char *why;

	if ((why = interlock_kernel_check(code, insn_len(bits, 0, stop)))) {
		snprintf(buf, len, "entry: %s", why);
		return buf;
	}
	for (size_t i = 0; i < f->rets.count; i++) {
		uint32_t off = retsites_get(&f->rets, i)->offset;
		if (off >= stop || !bit_at(bits, off)) {
			snprintf(buf, len, "RET at +0x%x is not an instruction boundary", off);
			return buf;
		}
		if ((why = interlock_kernel_check(code + off, insn_len(bits, off, stop)))) {
			snprintf(buf, len, "RET at +0x%x: %s", off, why);
			return buf;
		}
	}
	if (pcsp->why[0])
		return pcsp->why;
	if (pcsp->end != f->size) {
		snprintf(buf, len, "size 0x%llx (%s) disagrees with the pc-to-SP table's 0x%llx",
			 (unsigned long long)f->size, func_source_name(f->source),
			 (unsigned long long)pcsp->end);
		return buf;
	}
	if (f->size == 0 || stop < f->size || (f->size < stop && !bit_at(bits, f->size))) {
		snprintf(buf, len,
			 "the decode from the entry does not end at +0x%llx on a boundary",
			 (unsigned long long)f->size);
		return buf;
	}
	return check_sources(idx, f, pcsp->end, buf, len);
}

/* Assembly may use R14 as a scratch register: then the key read at a RET
 * is not the one read at the entry. */
static const char *check_r14(struct retsites_engine *eng, const struct func_info *f,
			     const uint8_t *code, const uint8_t *bits, char *buf, size_t len)
{
	char text[96];

	for (uint64_t off = 0; off < f->size; off++) {
		if (!bit_at(bits, off))
			continue;
		if (retsites_disasm_one(eng, code + off, f->size - off, f->entry + off, text,
					sizeof(text)) <= 0)
			return "assembly that does not decode";
		if (interlock_writes_r14(text)) {
			snprintf(buf, len,
				 "assembly that writes R14, the g register (+0x%llx: %.80s)",
				 (unsigned long long)off, text);
			return buf;
		}
	}
	return NULL;
}

/* The first direct jmp (E9 rel32, EB rel8, at an instruction start) out of
 * [0, size): a tail jump.  Its calls leave by another function's RET, with
 * a key this function's RET probes never see.  -1 when there is none. */
int64_t interlock_tail_jump(const uint8_t *code, const uint8_t *bits, uint64_t size,
			    int64_t *target)
{
	for (uint64_t off = 0; off < size; off++) {
		int64_t rel;
		uint64_t len;
		if (!bit_at(bits, off) || (code[off] != 0xE9 && code[off] != 0xEB))
			continue;
		if (code[off] == 0xEB && off + 2 <= size) {
			rel = (int8_t)code[off + 1];
			len = 2;
		} else if (code[off] == 0xE9 && off + 5 <= size) {
			int32_t r;
			memcpy(&r, code + off + 1, 4);
			rel = r;
			len = 5;
		} else
			continue;
		*target = (int64_t)(off + len) + rel;
		if (*target < 0 || (uint64_t)*target >= size)
			return (int64_t)off;
	}
	return -1;
}

int interlock_check(const struct func_index *idx, struct retsites_engine *eng, struct func_info *f,
		    const uint8_t *code, size_t code_end, size_t span, uint8_t *bits)
{
	struct pcsp_facts pcsp;
	char buf[200];
	const char *why;
	uint8_t flags = 0;

	memset(bits, 0, span / 8 + 1);
	size_t stop = retsites_boundaries(eng, code, code_end, f->entry, bits);
	pcsp_walk(idx, f, bits, stop, &pcsp);
	/* The evidence the next function needs: the decode ends exactly where
	 * the table says the code does, and only int3 padding follows up to
	 * the next entry. */
	f->interlock = INTERLOCK_CHECKED;
	uint64_t k = code_end;
	while (k < span && code[k] == 0xCC)
		k++;
	if (stop == code_end && k == span)
		f->interlock |= INTERLOCK_TAIL_CLEAN;
	if (f->rets.traceable == TRACEABLE_NO)
		return 0; /* already refused, with its own reason */
	/* Markers such as go:textfipsstart name an address in the padding
	 * between functions: no instruction of theirs runs. */
	if (code_end == 0 || code[0] == 0xCC)
		return refuse(f, "no code: a linker marker, not a function");
	/* The bytes first: their reason says the most about the harm. */
	if ((why = check_own(idx, eng, f, code, bits, stop, &pcsp, buf, sizeof(buf))))
		return refuse(f, why);
	/* Enough for a watcher's entry probe (interlock_approve_watch). */
	f->interlock |= INTERLOCK_BYTES_OK;
	gopclntab_func_flags(idx->pcln, f->pcln_index, &flags);
	if ((why = interlock_runtime_check(f->name, flags)))
		return refuse(f, why);
	if ((flags & GOPCLNTAB_FLAG_ASM) && (why = check_r14(eng, f, code, bits, buf, sizeof(buf))))
		return refuse(f, why);
	f->entry_probe_off = interlock_entry_probe(code, bits, stop, pcsp.flat_end);
	f->entry_emulated = interlock_kernel_emulates(code + f->entry_probe_off,
						      stop - f->entry_probe_off);
	f->entry_counts_calls =
	    entry_count_check(idx, f, code, bits, stop, f->entry_probe_off, &f->entry_jcc_cc);
	/* Calls that leave through a tail jump never reach one of its RETs:
	 * they would stay in flight for ever. */
	int64_t tail_target, tail = interlock_tail_jump(code, bits, f->size, &tail_target);
	if (f->rets.count > 0 && tail >= 0) {
		const struct func_info *to = funcs_by_addr(idx, f->entry + (uint64_t)tail_target);
		f->rets.traceable = TRACEABLE_ENTRY_ONLY;
		return retsites_set_reason(&f->rets,
					   "leaves through a tail jump too (+0x%llx to %s): those "
					   "calls never reach its RETs; calls counted, no duration",
					   (unsigned long long)tail, to ? to->name : "another function");
	}
	/* The BPF side counts hits per RET site in a fixed array. */
	if (f->rets.count > RETOP_MAX_RET_SITES) {
		f->rets.traceable = TRACEABLE_ENTRY_ONLY;
		return retsites_set_reason(&f->rets,
					   "%u RET sites, more than %d: durations unavailable",
					   f->rets.count, RETOP_MAX_RET_SITES);
	}
	/* A body that is one RET (a method returning its receiver): an entry
	 * and a return probe at one address; the entry alone counts calls. */
	if (f->rets.count > 0 && retsites_get(&f->rets, 0)->offset == 0) {
		f->rets.traceable = TRACEABLE_ENTRY_ONLY;
		return retsites_set_reason(
		    &f->rets, "its only instruction is its RET: calls counted, no duration");
	}
	return 0;
}

struct func_info *interlock_prev(const struct func_index *idx, const struct func_info *f)
{
	size_t k = (size_t)(f - idx->funcs);

	/* Zero-size entries share the address of the function that follows. */
	while (k > 0 && idx->funcs[k - 1].entry == f->entry)
		k--;
	return k > 0 ? &idx->funcs[k - 1] : NULL;
}

int interlock_check_prev(const struct func_index *idx, struct func_info *f)
{
	struct func_info *prev = interlock_prev(idx, f);
	char why[200];

	if (!prev || f->rets.traceable == TRACEABLE_NO)
		return 0;
	if ((prev->interlock & INTERLOCK_TAIL_CLEAN))
		return 0;
	snprintf(why, sizeof(why), "the code of %s before it does not end cleanly at this entry",
		 prev->name);
	return refuse(f, why);
}

/* ---- at attach time */

static uint64_t seal_of(const struct interlock_verdict *v)
{
	static const char key;
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)(uintptr_t)&key;
	const uint8_t *p = (const uint8_t *)v;
	size_t n = offsetof(struct interlock_verdict, seal);

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

bool interlock_sealed(const struct interlock_verdict *v)
{
	return v && v->f && v->seal == seal_of(v);
}

/* The descriptor is the file that was indexed (funcs_load checked it);
 * what can still change is its content, written in place. */
static int check_identity(const struct func_index *idx, struct interlock_verdict *v, char *err)
{
	int fd = elf_image_fd(idx->img);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) != 0)
		return err_set(err, fd < 0 ? EBADF : errno, "%s: %s", idx->path,
			       strerror(fd < 0 ? EBADF : errno));
	if ((uint64_t)st.st_dev != idx->file_dev || (uint64_t)st.st_ino != idx->file_ino ||
	    (uint64_t)st.st_size != idx->file_size ||
	    (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec != idx->file_mtime_ns)
		return err_set(err, ESTALE,
			       "%s was written in place since it was indexed: refusing to attach "
			       "(retop indexes a binary again only when a new file replaces it)",
			       idx->path);
	funcs_file_path(idx, v->path, sizeof(v->path));
	v->dev = idx->file_dev;
	v->ino = idx->file_ino;
	v->image = idx->image;
	return 0;
}

int interlock_approve(const struct func_index *idx, const struct func_info *f,
		      struct interlock_verdict *v, char *err)
{
	int ret;

	memset(v, 0, sizeof(*v));
	if (f->inline_only) {
		/* No code of its own: only its inline marks, added by
		 * interlock_approve_marks(), go in. */
		if ((ret = check_identity(idx, v, err)) != 0) {
			memset(v, 0, sizeof(*v));
			return ret;
		}
		v->f = f;
		v->entry_only = true;
		v->marks_only = true;
		v->seal = seal_of(v);
		return 0;
	}
	if (!f->rets_resolved || !(f->interlock & INTERLOCK_CHECKED))
		return err_set(err, EINVAL, "%s: not checked by the interlock", f->name);
	if (f->rets.traceable == TRACEABLE_NO)
		return err_set(err, EINVAL, "%s: not traceable: %s", f->name,
			       retsites_reason(&f->rets));
	if (f->file_offset == 0)
		return err_set(err, EINVAL, "%s: entry 0x%llx is not in an executable segment",
			       f->name, (unsigned long long)f->entry);
	ret = check_identity(idx, v, err);
	if (ret) {
		memset(v, 0, sizeof(*v));
		return ret;
	}
	v->f = f;
	v->entry_offset = f->file_offset + f->entry_probe_off;
	v->entry_only =
	    f->rets.traceable == TRACEABLE_ENTRY_ONLY || f->rets.count > RETOP_MAX_RET_SITES;
	v->entry_counts_calls = f->entry_counts_calls;
	v->entry_site = RETOP_ENTRY_SITE(
	    (v->entry_only ? RETOP_ENTRY_ONLY : 0) |
		(f->entry_counts_calls && f->entry_jcc_cc < 16 ? RETOP_ENTRY_JCC : 0) |
		(f->entry_emulated ? 0 : RETOP_ENTRY_STEPPED),
	    f->entry_jcc_cc < 16 ? f->entry_jcc_cc : 0);
	if (v->entry_only && f->rets.count > RETOP_MAX_RET_SITES)
		err_set(err, 0, "%u RET sites, more than %d: durations unavailable", f->rets.count,
			RETOP_MAX_RET_SITES);
	else if (v->entry_only)
		err_set(err, 0, "%s", retsites_reason(&f->rets));
	for (size_t i = 0; !v->entry_only && i < f->rets.count; i++) {
		uint32_t off = retsites_get(&f->rets, i)->offset;
		if (off == 0 || off >= f->size) {
			memset(v, 0, sizeof(*v));
			return err_set(err, EINVAL, "%s: RET site +0x%x outside the function",
				       f->name, off);
		}
		v->ret_offsets[v->nrets++] = f->file_offset + off;
	}
	v->seal = seal_of(v);
	return 0;
}

int interlock_approve_watch(const struct func_index *idx, const struct func_info *f,
			    struct interlock_verdict *v, char *err)
{
	const struct func_info *prev = interlock_prev(idx, f);
	int ret;

	memset(v, 0, sizeof(*v));
	if (f->inline_only || !f->rets_resolved || !(f->interlock & INTERLOCK_CHECKED))
		return err_set(err, EINVAL, "%s: not checked by the interlock", f->name);
	if (!(f->interlock & INTERLOCK_BYTES_OK))
		return err_set(err, EINVAL, "%s: not watchable: %s", f->name,
			       retsites_reason(&f->rets));
	if (prev && !(prev->interlock & INTERLOCK_TAIL_CLEAN))
		return err_set(err, EINVAL,
			       "%s: not watchable: the code of %s before it does not end cleanly "
			       "at its entry",
			       f->name, prev->name);
	if (f->file_offset == 0)
		return err_set(err, EINVAL, "%s: entry 0x%llx is not in an executable segment",
			       f->name, (unsigned long long)f->entry);
	if ((ret = check_identity(idx, v, err)) != 0) {
		memset(v, 0, sizeof(*v));
		return ret;
	}
	v->f = f;
	v->entry_offset = f->file_offset;
	v->entry_only = true;
	v->entry_site = RETOP_ENTRY_SITE(RETOP_ENTRY_ONLY | RETOP_ENTRY_STEPPED, 0);
	v->seal = seal_of(v);
	return 0;
}

int interlock_approve_marks(const struct func_index *idx, const struct func_info *f,
			    struct interlock_verdict *v, size_t *sites, size_t *counted, char *why,
			    char *err)
{
	struct inline_marks *m;
	int ret;

	*sites = *counted = 0;
	if (why)
		why[0] = '\0';
	if (!interlock_sealed(v) || v->f != f)
		return err_set(err, EINVAL, "%s: inline marks without the function's approval",
			       f->name);
	if (!idx->inl_known || f->inlined_sites == 0)
		goto none;
	if (!(m = malloc(sizeof(*m))))
		return err_set(err, ENOMEM, "%s: out of memory", f->name);
	char perr[ERR_LEN];
	ret = inline_marks_prove(idx, f, m, perr);
	if (ret == -ENOMEM) {
		free(m);
		return ret;
	}
	v->nmarks = 0;
	for (size_t i = 0; !ret && i < m->n; i++) {
		struct inline_mark_site *site = &m->site[i];
		uint64_t off;
		if (!site->counted)
			continue;
		/* The byte the kernel sees through the descriptor is the one
		 * proven (the file is unchanged: check_identity). */
		if (elf_image_vaddr_to_offset(idx->img, site->addr, &off) != 0 || off == 0) {
			site->counted = false;
			snprintf(site->why, sizeof(site->why),
				 "its mark at 0x%llx is not in an executable segment",
				 (unsigned long long)site->addr);
			m->counted--;
			continue;
		}
		v->mark_offsets[v->nmarks++] = off;
	}
	*sites = f->inlined_sites;
	*counted = v->nmarks;
	const char *first = inline_marks_why(m);
	if (why && first)
		snprintf(why, INLINE_MARKS_WHY_LEN, "%s", first);
	else if (why && f->inlined_sites > m->counted)
		snprintf(why, INLINE_MARKS_WHY_LEN, "more than %d marks proven: the first %d count",
			 INLINE_MARKS_MAX, INLINE_MARKS_MAX);
	free(m);
	if (ret == 0) {
		v->seal = seal_of(v);
		if (v->nmarks > 0 || !v->marks_only)
			return 0;
	} else if (!v->marks_only) {
		v->seal = seal_of(v);
		return 0;
	} else if (why) {
		snprintf(why, INLINE_MARKS_WHY_LEN, "%.190s", perr);
	}
none:
	if (!v->marks_only)
		return 0;
	memset(v, 0, sizeof(*v));
	return err_set(err, ENOENT,
		       "%s: exists only inlined (%u sites): none of its inlined calls can be "
		       "counted%s%s",
		       f->name, f->inlined_sites, why && why[0] ? ": " : "", why ? why : "");
}

int interlock_copy_marks(const struct interlock_verdict *proven, struct interlock_verdict *v,
			 char *err)
{
	if (!interlock_sealed(proven) || !interlock_sealed(v) || proven->f != v->f ||
	    proven->dev != v->dev || proven->ino != v->ino || proven->image != v->image)
		return err_set(err, EINVAL, "%s: no earlier proof of its inline marks in this file",
			       v && v->f ? v->f->name : "?");
	memcpy(v->mark_offsets, proven->mark_offsets, sizeof(v->mark_offsets));
	v->nmarks = proven->nmarks;
	v->seal = seal_of(v);
	return 0;
}
