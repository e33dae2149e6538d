#include "uprobe_insn.h"

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

const char *uprobe_insn_check(const uint8_t *insn, size_t len)
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

bool uprobe_insn_emulated(const uint8_t *insn, size_t len)
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
