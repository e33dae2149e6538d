/* Does the entry probe count calls?  One hit per call, proven from the
 * code: the overhead budget can then remove the RET probes (the costly,
 * single-stepped half) and still count every call at its entry.
 *
 * At the stack-check prologue's conditional jump, a taken jump grows the
 * stack and comes back to the entry: a restart of the same call, which BPF
 * tells apart by the jump's condition under the flags of the hit.  At the
 * first instruction of a function with no restart path, every hit is a
 * call.  Either way nothing else may lead back to the probe. */
#ifndef RETOP_ENTRY_COUNT_H
#define RETOP_ENTRY_COUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "funcs.h"

#define ENTRY_COUNT_NO_CC 0xFF

/* code[0..stop) is f's decoded code, bits its instruction starts, probe_off
 * where the entry probe sits (0 or the prologue's jump).  True when every
 * call hits the probe once, or once with the jump not taken (its condition
 * in *cc, else ENTRY_COUNT_NO_CC). */
bool entry_count_check(const struct func_index *idx, const struct func_info *f,
		       const uint8_t *code, const uint8_t *bits, size_t stop, uint8_t probe_off,
		       uint8_t *cc);

#endif
