/* Counting a function's inlined calls: the proof that an instruction runs
 * once per inlined call.
 *
 * Go's compiler emits an inline mark where each inlined call begins: a
 * one-byte NOP (0x90) at the inline tree entry's parentPc.  When it can, it
 * reuses another instruction of the call's line as the mark instead and
 * emits no NOP; the proof is the same for it (what it does to the
 * registers does not matter: where it sits does), and the interlock then
 * checks that the kernel runs it right under a probe (single-stepped, a
 * dearer trap than the NOP's).  A site is counted only when:
 *   - the caller decodes linearly to its end;
 *   - parentPc is an instruction start, and no other inline entry names
 *     the same parentPc;
 *   - the mark is the caller's own code (the pc-to-entry table says the
 *     entry's parent there), not code of an inlined body;
 *   - its basic block holds code of the inlined body (Go 1.19 puts the
 *     mark first; later releases schedule part of the body before it);
 *   - the caller has no indirect jump (a jump table could land anywhere);
 *   - no edge from outside the body (a jump, or a fall-through) enters the
 *     body but on the mark or on code that runs straight into it, and no
 *     jump from inside the body comes back to it (a loop of the body would
 *     run the mark again).
 * A caller's loop coming back to the mark is another call: counted. */
#ifndef RETOP_INLINE_MARKS_H
#define RETOP_INLINE_MARKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "funcs.h"
#include "retsites.h"

/* Mark probes of one function, in one binary. */
#define INLINE_MARKS_MAX 128
#define INLINE_MARKS_WHY_LEN 200

/* An entry of the caller's inline tree. */
struct inline_marks_entry {
	uint32_t parent_pc; /* from the caller's entry */
	int32_t parent;	    /* -1 the caller; GOPCLNTAB_INL_PARENT_UNSAID: from the pc table */
	bool wanted;	    /* a call of the function whose calls are counted */
};

/* A run of the caller's pc-to-entry table: [start, end) belongs to entry
 * val (-1: the caller's own code). */
struct inline_marks_run {
	uint32_t start, end;
	int32_t val;
};

/* One caller: its code (loaded at addr), inline tree and pc table. */
struct inline_marks_code {
	const char *caller;
	const uint8_t *code;
	size_t size;
	uint64_t addr;
	const struct inline_marks_entry *entries;
	uint32_t nentries;
	const struct inline_marks_run *runs;
	size_t nruns;
	/* Whether the function at addr never returns (a panic): nothing runs
	 * after a call to it.  NULL: every call returns. */
	bool (*never_returns)(const void *ctx, uint64_t addr);
	const void *ctx;
};

/* A site where the function was inlined. */
struct inline_mark_site {
	uint64_t addr;			/* of the mark (vaddr) */
	uint32_t offset;		/* from the caller's entry */
	bool counted;			/* proven to run once per inlined call */
	bool reused;			/* the mark is not a NOP: an instruction of the call's line */
	uint8_t insn[16], insn_len;	/* the mark's instruction, as decoded */
	char why[INLINE_MARKS_WHY_LEN]; /* why not counted */
};

/* Judge every wanted entry of one caller, appending a site to out[*n]
 * (at most max).  -ENOMEM only. */
int inline_marks_find(struct retsites_engine *eng, const struct inline_marks_code *c,
		      struct inline_mark_site *out, size_t max, size_t *n);

/* The sites where f (by name) was inlined in idx, each judged, until
 * site[] is full: the counted ones, and the first refused one (its reason
 * for all).  nsites counts every site found. */
struct inline_marks {
	struct inline_mark_site site[INLINE_MARKS_MAX];
	size_t n;	/* in site[] */
	size_t nsites;	/* all the sites found (up to where site[] filled) */
	size_t counted; /* of site[], proven */
	size_t refused; /* sites judged and refused */
};

/* -ENOTSUP: the binary's inline trees cannot be read; -ENOMEM. */
int inline_marks_prove(const struct func_index *idx, const struct func_info *f,
		       struct inline_marks *out, char *err);
/* The first site not counted, or NULL. */
const char *inline_marks_why(const struct inline_marks *m);

#endif
