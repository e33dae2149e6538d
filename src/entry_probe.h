/* Where the entry probe sits: on the first instruction, or on the
 * conditional jump of Go's stack-check prologue, which the kernel emulates
 * in one trap where it single-steps the first instruction in two, at the
 * same SP and g (docs/UPROBES.md, "Where the entry probe sits"). */
#ifndef RETOP_ENTRY_PROBE_H
#define RETOP_ENTRY_PROBE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where the entry probe goes in code[0..stop) (boundaries in bits, the
 * pc-to-SP table's first range, delta 0, ends at flat_end): the offset of
 * the stack-check prologue's conditional jump, or 0. */
uint8_t entry_probe_place(const uint8_t *code, const uint8_t *bits, size_t stop, uint64_t flat_end);

/* A function without that prologue (a frameless leaf): its first
 * instruction is single-stepped, and the step falls inside every call's
 * timed window (tens of us on a VM, with a spread that follows the load).
 * The first instruction the kernel emulates instead (a jmp or jcc, a NOP,
 * a push), at most ENTRY_PROBE_LEAF_MAX plain instructions in (registers
 * only, never SP or R14: the same key), when nothing jumps back to it or
 * before it and no jump is indirect: every call reaches it once.  Its
 * offset, or 0.  addr: code's address, for the decoder. */
#define ENTRY_PROBE_LEAF_MAX 4
struct retsites_engine;
uint8_t entry_probe_leaf(struct retsites_engine *eng, const uint8_t *code, const uint8_t *bits,
			 size_t stop, uint64_t flat_end, uint64_t addr);

#endif
