/* The overhead budget: retop's probes may slow the target down by at most
 * PCT % (--budget): their traps take at most PCT/(100+PCT) of one CPU; and
 * they make at most RFD 061's 10,000 probe hits a second.
 * The cost is estimated as probe hits x the calibrated cost of one hit.
 * Over budget, whole functions are duty-cycled: all their probes (entry
 * and every RET) are removed for part of each cycle and put back together,
 * never half; counts and rates are then scaled by the time the probes
 * were in and marked as estimates. */
#ifndef RETOP_BUDGET_H
#define RETOP_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#define BUDGET_DEFAULT_PCT 1.0
/* RFD 061: the production default rate limit, in probe hits a second. */
#define BUDGET_MAX_HITS_PER_S 10000.0

struct session;
struct session_func;
struct snapshot_func;

struct budget {
	double pct;	 /* of one CPU; 0: no budget */
	double hit_ns;	 /* calibrated cost of one probe hit */
	double fraction; /* the duty cycle now (1: every probe in) */
};

/* Per traced function. */
struct budget_func {
	bool paused;	       /* probes removed by the duty cycle */
	uint64_t attached_ns;  /* when tracing began */
	uint64_t switch_ns;    /* when the duty cycle changes it next */
	uint64_t on_since_ns;  /* when its probes last came back */
	uint64_t on_ns;	       /* probe time since tracing began */
	uint64_t on_ns_sample; /* on_ns at the last snapshot */
	uint64_t hits_on;      /* probe hits when they last came back */
	uint64_t rate_since_ns; /* when the attach that brought them back returned */
	double rate;	       /* probe hits a second with every probe in */
	bool remeasure;	       /* the rate rose: the next window is the shortest */
	double fraction;       /* its duty cycle now (1: every probe in) */
};

/* Time a burst of hits on a uprobe at a RET instruction (single-stepped,
 * like a Go function's entry compare and its RETs) in retop's own process:
 * the cost of one hit in ns.  0 and a reason on failure. */
double budget_calibrate(char *err);

/* Probe hits a second the budget lets all functions make together. */
double budget_allowed_hits(const struct budget *b);

/* A function was just attached. */
void budget_func_start(struct budget_func *bf, uint64_t now_ns);
/* Measure, and pause or resume functions as the duty cycle says.  Returns
 * when it wants to run next (tracer_now_ns() clock). */
uint64_t budget_tick(struct session *s, uint64_t now_ns);
/* Scale counts and rates of a duty-cycled function; interval_ns since the
 * last snapshot. */
void budget_scale(struct session_func *sf, uint64_t now_ns, uint64_t interval_ns,
		  struct snapshot_func *out);

#endif
