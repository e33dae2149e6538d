/* The calls' ledger of a traced function under the overhead budget
 * (budget.h): exact periods, and the estimate of the periods when even its
 * entries did not fit, from random slices of time (Horvitz-Thompson), with
 * its 95% interval.  Numbers in, numbers out: no BPF, no session. */
#ifndef RETOP_ESTIMATE_H
#define RETOP_ESTIMATE_H

#include <stdbool.h>
#include <stdint.h>

/* Sampled slices with calls an estimate needs before its interval has an
 * upper end. */
#define ESTIMATE_MIN_SLICES 10

struct estimate {
	double sum, var;	    /* the estimate, and its variance */
	double seen;		    /* the calls its slices saw: a floor */
	unsigned slices_with_calls; /* sampled slices (chance < 1) that saw calls */
	unsigned partial;	    /* slices read with a chance below 1 */
	/* While its probes were in: their traps (hits x the timed cost of a
	 * hit) against the targets' CPU time.  Traps slow what they count:
	 * the upper bound widens by their share. */
	double trap_ns, cpu_ns;
	bool stopped; /* it could not go on: frozen, why said */
	char why[160];
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
};

/* Slice read: sampled (on) with chance p, n calls began in it. */
void estimate_slice(struct estimate *e, double p, bool on, uint64_t n);
/* The estimate cannot go on (the first reason is kept); true the first
 * time. */
bool estimate_stop(struct estimate *e, const char *why);

/* An estimated period begins: the exact one ends with counted calls (those
 * in flight included: the estimate counts every call at its entry). */
void ledger_enter_estimate(struct ledger *l, uint64_t counted);
/* It ends: part calls began in the slice under way, sampled for sure; the
 * exact period begins with counted calls (in flight included). */
void ledger_leave_estimate(struct ledger *l, uint64_t part, uint64_t counted);
/* The calls so far, counted calls exactly counted now, estimating or not. */
void ledger_view(const struct ledger *l, uint64_t counted, bool estimating,
		 struct ledger_view *out);

#endif
