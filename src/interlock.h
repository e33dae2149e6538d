/* The safety interlock: the one place that decides whether a function's
 * probe addresses may be handed to the kernel.
 *
 * No table is trusted alone, not even .gopclntab.  For every probe address
 * (the entry, every RET site) independent evidence must agree, else the
 * function is refused with a one-line reason and every other function still
 * traces:
 *   - the linear decode from the entry reaches the site on a boundary;
 *   - the pc-to-SP table says SP delta 0 at the entry and at every RET, and
 *     each of its change points is a decoded boundary;
 *   - the previous function's code ends exactly at this entry, with only
 *     int3 padding in between;
 *   - .symtab and DWARF agree with .gopclntab where they exist;
 *   - the kernel executes the probed instruction correctly under a uprobe
 *     (docs/UPROBES.md);
 *   - the function runs with g in R14 on its goroutine's stack (the
 *     pairing key), which rules out parts of the runtime.
 *
 * The index is built, then judged, then attached.  interlock_judge() takes
 * the verdict on a function's own bytes as the index decodes them
 * (funcs_decode.h hands each decoded function to the judge, on the thread
 * that decoded it), so `retop -l` and the browser show it;
 * interlock_approve() repeats the cheap checks at attach time and is the
 * only maker of the approval that tracer_attach() requires.
 */
#ifndef RETOP_INTERLOCK_H
#define RETOP_INTERLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"
#include "funcs.h"
#include "inline_marks.h"

/* Bits of func_info.interlock. */
#define INTERLOCK_CHECKED 0x1	 /* judged on its bytes (interlock_judge) */
#define INTERLOCK_TAIL_CLEAN 0x2 /* code ends on a boundary, then int3 only */

/* What tracer_attach() may attach: file offsets that passed the interlock,
 * in the one file they were approved for.  The tracer attaches through
 * path, the index's own descriptor (/proc/self/fd/N), never through a name
 * that a rename or a symlink could point elsewhere in between. */
struct interlock_verdict {
	const struct func_info *f;
	char path[32];	   /* /proc/self/fd/N of the indexed file */
	uint64_t dev, ino; /* its identity, as fstat() saw it when approved */
	unsigned image;	   /* its number in the session (func_index.image) */
	uint64_t entry_offset;
	uint64_t ret_offsets[RETOP_MAX_RET_SITES];
	size_t nrets;
	bool entry_only; /* reason in the approving call's err */
	/* The entry probe's cookie bits (RETOP_ENTRY_*), and whether each call
	 * hits it once (entry_count.h): then calls are counted without RETs. */
	uint32_t entry_site;
	bool entry_counts_calls;
	/* Inline marks proven to run once per inlined call of the function
	 * (inline_marks.h), added by interlock_approve_marks(); marks_only: a
	 * function that exists only inlined (no entry, no RETs). */
	uint64_t mark_offsets[INLINE_MARKS_MAX];
	bool mark_stepped[INLINE_MARKS_MAX]; /* the kernel single-steps it (not a NOP) */
	size_t nmarks;
	bool marks_only;
	uint64_t seal; /* set by interlock_approve() only */
};

/* How functions are judged: set up once, for a session or a listing. */
struct interlock_opts {
	/* Every entry probe on the function's first instruction, not on the
	 * stack-check prologue's jump (RETOP_ENTRY_PROBE=first: for
	 * comparisons, docs/UPROBES.md). */
	bool entry_probe_first;
};

/* Decode f (once) and judge it on its bytes and on the previous
 * function's (decoded too when it was not): a refusal sets
 * f->rets.traceable to TRACEABLE_NO with the reason.  Returns 0 when f was
 * judged, else a negative errno with a one-line reason in err (a function
 * that exists only inlined has no code to judge).  o NULL: the defaults;
 * a function is judged once, so one index is judged with one o. */
int interlock_judge(struct func_index *idx, struct func_info *f, const struct interlock_opts *o,
		    char *err);

/* Judge every function of idx, each as it is decoded on one of nthreads
 * threads, then each against the function before it.  A function that
 * cannot be decoded stays unresolved, to be reported when it is asked for
 * (interlock_judge). */
void interlock_judge_all(struct func_index *idx, const struct interlock_opts *o, unsigned nthreads);

/* At attach time: f resolved and not refused, the indexed file unchanged
 * (same size and modification time through the index's descriptor).
 * Fills v with the approved file offsets and the file.  Returns 0, or a
 * negative errno with a one-line reason in err. */
int interlock_approve(const struct func_index *idx, const struct func_info *f,
		      struct interlock_verdict *v, char *err);
/* Add to v (from interlock_approve(), for f in idx) the file offsets of
 * the inline marks of f proven to count its inlined calls; the sites found
 * and counted in *sites and *counted, the first one not counted's reason
 * in why (may be NULL; "" when all are counted).  A function that exists
 * only inlined with no mark proven is refused (-ENOENT, err says why);
 * else 0, or -ENOMEM. */
int interlock_approve_marks(const struct func_index *idx, const struct func_info *f,
			    struct interlock_verdict *v, size_t *sites, size_t *counted, char *why,
			    char *err);
/* The marks an earlier verdict of the same function in the same file
 * (proven, from interlock_approve_marks()) approved, into v (just from
 * interlock_approve(), which found the file unchanged since it was
 * indexed): the proof holds as long as the bytes do.  -EINVAL when the
 * two verdicts are not of one function and file. */
int interlock_copy_marks(const struct interlock_verdict *proven, struct interlock_verdict *v,
			 char *err);
/* True when v came from interlock_approve() and was not altered since. */
bool interlock_sealed(const struct interlock_verdict *v);

/* A building block, exposed for unit tests on fixed bytes: the offset of the first direct jmp out
 * of [0, size) among the instruction starts in bits (its target, relative to the entry, in
 * *target); -1 when none. */
int64_t interlock_tail_jump(const uint8_t *code, const uint8_t *bits, uint64_t size,
			    int64_t *target);

#endif
