/* Where the compiler inlined each function of the index, from every
 * function's inline tree, and the functions that exist only inlined (rows
 * of their own, no code).  Read once, on first use: a session that traces
 * no inlined call never pays for it. */
#ifndef RETOP_FUNCS_INLINE_H
#define RETOP_FUNCS_INLINE_H

#include "funcs.h"

/* Read every function's inline tree (once): inlined_sites, and the
 * inline-only functions in idx->inl_only.  Without inline facts (Go <
 * 1.18, a layout retop does not know) inl_known stays false.  A no-op
 * after the first call; safe from several threads. */
void funcs_inline_scan(struct func_index *idx);

#endif
