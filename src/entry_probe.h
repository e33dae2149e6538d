/* Where the entry probe sits: on the first instruction, or on the
 * conditional jump of Go's stack-check prologue, which the kernel emulates
 * in one trap where it single-steps the first instruction in two, at the
 * same SP and g (docs/UPROBES.md, "Where the entry probe sits"). */
#ifndef RETOP_ENTRY_PROBE_H
#define RETOP_ENTRY_PROBE_H

#include <stddef.h>
#include <stdint.h>

/* Where the entry probe goes in code[0..stop) (boundaries in bits, the
 * pc-to-SP table's first range, delta 0, ends at flat_end): the offset of
 * the stack-check prologue's conditional jump, or 0. */
uint8_t entry_probe_place(const uint8_t *code, const uint8_t *bits, size_t stop, uint64_t flat_end);

#endif
