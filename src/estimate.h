/* The calls' ledger of a traced function under the overhead budget
 * (budget.h): exact periods, and the estimate of the periods when even its
 * entries did not fit, from random slices of time, with its 95% interval.
 * Numbers in, numbers out: no BPF, no session.
 *
 * Each slice of an estimated period was planned sampled (its probes in)
 * with a chance p, or not; a sampled slice counts the calls begun while
 * its entry probe was in, for the share `in` of its time it really was
 * (a slice's probes may go in late, behind other work).  A sampled slice
 * stands for n / in calls, weighted 1/p (Horvitz-Thompson): the time the
 * slices cover.  A slice nobody could account for (never planned: retop
 * fell behind its clock; or sampled with its probe never in) is a gap: its
 * calls are imputed at the rate of the covered time, and the interval
 * widens for it.  The estimate never stops: a late tick drops only what it
 * cannot account for. */
#ifndef RETOP_ESTIMATE_H
#define RETOP_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

/* Sampled slices with calls an estimate needs before its interval has an
 * upper end. */
#define ESTIMATE_MIN_SLICES 10

struct estimate {
	double sum, var;	    /* calls in the covered time, and the variance */
	double seen;		    /* the calls its slices saw: a floor */
	double covered_s;	    /* time the slices read account for */
	double gap_s;		    /* time no slice accounts for: imputed */
	unsigned slices_with_calls; /* sampled slices (chance < 1) that saw calls */
	unsigned partial;	    /* slices read with a chance below 1 */
	/* While its probes were in: their traps (hits x the timed cost of a
	 * hit) against the targets' CPU time.  Traps slow what they count:
	 * the upper bound widens by their share. */
	double trap_ns, cpu_ns;
};

struct ledger {
	uint64_t exact_base;   /* calls of closed exact periods */
	uint64_t period_start; /* counted calls when this exact period began */
	bool ever_estimated;
	struct estimate est; /* the estimated periods */
};

/* What the ledger says of the calls so far. */
struct ledger_view {
	uint64_t calls; /* exact, or the point estimate */
	bool estimated;
	double lo, hi;	   /* estimated: the 95% interval (hi INFINITY: unbounded) */
	double trap_share; /* estimated: share of the targets' CPU in its traps */
	double gap_s;	   /* estimated: time no slice accounted for, imputed */
};

/* A slice, or the part of one, len_s long, read: planned sampled (on)
 * with chance p (0: never planned), its entry probe in for the share in
 * (0..1) of it, n calls begun in it counted; last: the slice ends with
 * this part (a slice read in parts counts once among those with calls). */
void estimate_slice(struct estimate *e, double p, bool on, double in, double len_s, uint64_t n,
		    bool last);

/* An estimated period begins: the exact one ends with counted calls (those
 * in flight included: the estimate counts every call at its entry). */
void ledger_enter_estimate(struct ledger *l, uint64_t counted);
/* It ends in a sampled slice: the part of it so far, len_s long, its probe
 * in for the share in, counted part calls, sampled for sure; the exact
 * period begins with counted calls (in flight included). */
void ledger_leave_estimate(struct ledger *l, uint64_t part, double in, double len_s,
			   uint64_t counted);
/* The calls so far, counted calls exactly counted now, estimating or not. */
void ledger_view(const struct ledger *l, uint64_t counted, bool estimating,
		 struct ledger_view *out);

#endif
