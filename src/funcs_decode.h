/* Decoding the index's functions: each one's RET sites, found by
 * decoding its code (retsites.h) and mapped to source lines, one function
 * or all of them on every core.  Each function decoded goes, on the thread
 * that decoded it and with the bytes still at hand, to a judge that the
 * layer above supplies (the interlock, interlock.h): the index never calls
 * what judges it. */
#ifndef RETOP_FUNCS_DECODE_H
#define RETOP_FUNCS_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "funcs.h"
#include "retsites.h"

/* A function's code as its decode leaves it for the judge. */
struct funcs_code {
	/* The decoder that read it: right after the decode its instruction
	 * starts are at hand (retsites_boundaries). */
	struct retsites_engine *eng;
	const uint8_t *code; /* from the entry up to the next function's entry */
	size_t code_end;     /* what was decoded: the pc-to-SP table's span */
	size_t span;	     /* bytes in code */
	uint8_t *bits;	     /* scratch for the judge: span / 8 + 1 bytes */
};

/* The verdict on f, from its code: a refusal sets f->rets.traceable to
 * TRACEABLE_NO with the reason.  Returns 0, or -ENOMEM, which leaves f
 * unresolved. */
struct funcs_judge {
	int (*judge)(const void *ctx, const struct func_index *idx, struct func_info *f,
		     const struct funcs_code *c);
	const void *ctx;
};

/* Decode f's RET sites (once), map them to source lines and hand them to
 * j; f->rets_resolved once j said 0.  A function that exists only inlined
 * has no code: -ENOENT, and err says so. */
int funcs_decode(struct func_index *idx, struct func_info *f, const struct funcs_judge *j,
		 char *err);

/* Decode every function on nthreads threads, each handed to j on its
 * thread (errors leave a function unresolved, to be reported when it is
 * asked for). */
void funcs_decode_all(struct func_index *idx, unsigned nthreads, const struct funcs_judge *j);

#endif
