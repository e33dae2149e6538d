/* What the kernel does with an instruction under a uprobe
 * (arch/x86/kernel/uprobes.c, docs/UPROBES.md): refuses it, emulates it in
 * one trap, or single-steps a copy out of line in two.  The kernel decides
 * once, at attach time, from the bytes alone; so does this, on the bytes
 * the decode found at a probe address. */
#ifndef RETOP_UPROBE_INSN_H
#define RETOP_UPROBE_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Why the kernel would refuse or mis-execute a uprobe on the instruction
 * at insn[0..len) (len: its decoded length), or NULL when it is safe. */
const char *uprobe_insn_check(const uint8_t *insn, size_t len);
/* True when the kernel emulates the instruction at insn[0..len) under a
 * uprobe (one trap a hit: a direct jmp, call or jcc, a one-byte NOP, push
 * of a register) rather than single-stepping it out of line (two traps). */
bool uprobe_insn_emulated(const uint8_t *insn, size_t len);

#endif
