/* The governor's insides: govern.c (the clock: measure, plan, apply)
 * carries the sampled modes out through govern_slices.c. */
#ifndef RETOP_GOVERN_INTERNAL_H
#define RETOP_GOVERN_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "govern.h"

struct session;
struct session_func;

/* How early the probes go in before a sampled slice (an attach takes about
 * a millisecond). */
#define GOVERN_LEAD_NS 5000000ull

double govern_rand(struct govern *b);
/* Calls counted exactly so far: timed at their RET, counted at their entry
 * (not timing), and those whose timing was given up. */
uint64_t govern_counted(const struct govern_func *gf, const struct retop_func_stats *st);
/* The RET probes out once the timed calls drained (or the deadline). */
void govern_drain(struct session *s, struct session_func *sf, uint64_t now);

uint64_t govern_slice_of(const struct govern_func *gf, uint64_t now);
/* ns of [t0, t1) with the entry probe in (as far as the log reaches: a
 * slice is read within a few of its probes' comings and goings). */
uint64_t govern_covered(const struct govern_func *gf, uint64_t t0, uint64_t t1);
/* Slices over by now read into the ledger; partial: the one under way too,
 * up to now. */
void govern_read_slices(struct session *s, struct session_func *sf, uint64_t now, bool partial);
void govern_run_estimate(struct session *s, struct session_func *sf, uint64_t now);
void govern_enter_estimate(struct session *s, struct session_func *sf);
/* The brake found it in a sampled slice at a rate its plan did not
 * expect: the slice ends now, and those not begun are drawn again at the
 * new share. */
void govern_cut_slice(struct session *s, struct session_func *sf, double share, uint64_t now);
/* Only in a sampled slice with the entry probe in. */
void govern_leave_estimate(struct session *s, struct session_func *sf, uint64_t now);

#endif
