/* The overhead budget's policy (--budget): retop's probes make at most N
 * hits a second (RFD 061: 10,000 by default), and with --budget PCT% their
 * traps take at most PCT/(100+PCT) of one CPU (the cost of a hit is timed,
 * hitcost.h).  Numbers in, decisions out: no session, no tracer, no BPF;
 * the governor (govern.h) measures the demand and carries the decisions
 * out.
 *
 * The plan keeps every count exact for as long as it can:
 *   full       every probe in: every call counted and timed;
 *   timing     the entry probe in, the RET probes (the single-stepped,
 *              costly half) only in random slices of time: every call is
 *              counted at its entry, and the calls begun in a slice are
 *              timed to their RET, however long (the RETs stay until they
 *              drained); needs an entry proven to count calls (entry_count.h);
 *   estimated  even the entries do not fit: every probe only in random
 *              slices; calls are estimated from the slices sampled
 *              (estimate.h), with a 95% interval.
 * The cheapest functions are traced in full first. */
#ifndef RETOP_BUDGET_H
#define RETOP_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* RFD 061: the production default rate limit, in probe hits a second. */
#define BUDGET_DEFAULT_HITS_PER_S 10000.0
/* A slice of the governor's clock, and of the random sampling. */
#define BUDGET_SLICE_NS 100000000ull
/* The budget is a ceiling, and demand is measured after the fact: aim
 * below it. */
#define BUDGET_AIM 0.9
/* A constrained function goes back to a dearer mode only when that fits
 * with room to spare (HEADROOM) and after its hold in its mode: no
 * flapping.  The hold is HOLD; it doubles, up to HOLD_MAX, each time the
 * function is sent back to a cheaper mode within HOLD_STAY of going
 * dearer (budget_hold_after): a function whose sampled rate fits but
 * whose rate with every probe in does not went up and down every 2.5 s,
 * each time its RET probes attached and closed. */
#define BUDGET_HOLD_NS 2000000000ull
#define BUDGET_HOLD_MAX_NS 64000000000ull
#define BUDGET_HOLD_STAY_NS 16000000000ull
#define BUDGET_HEADROOM 0.7
/* The timed keep their entries while those fit what is left, less a
 * fifth for the rest. */
#define BUDGET_ENTRY_ROOM 0.8
/* The least share of time an estimated function is sampled. */
#define BUDGET_MIN_SHARE 0.002

/* One function's sampled slice spends at most this share of the second's
 * budget: a query's burst at 500,000 calls a second would spend ten
 * budgets in a slice of 100 ms.  BPF wakes the engine at the cap, which
 * ends the slice (the calls counted stand for the time the probe was in). */
#define BUDGET_SLICE_FILL 0.05
#define BUDGET_SLICE_CAP_MIN 32

/* The timing mode's timed slices come in runs.  A run costs retop a probe
 * link made and closed, some 100-250 us of its CPU on a 2-core VM whatever
 * the sites it holds (a site adds some 2 us): a function's runs start
 * about once every budget_run_every_s() at most, and are longer the larger
 * its share, up to a second (the budget is hits in any second).  That is
 * BUDGET_RUN_EVERY_S, or longer where more functions are timed in runs
 * than BUDGET_RUNS_PER_S of them a second would start: a package's runs
 * move some BUDGET_RUNS_PER_S links a second, not one a function every
 * BUDGET_RUN_EVERY_S (37 of the demo's thousand, 7-8 a second). */
#define BUDGET_RUN_EVERY_S 5.0
#define BUDGET_RUNS_PER_S 4.0
#define BUDGET_RUN_MAX 10

/* Dearest first: a cheaper mode is a greater one. */
enum budget_mode { BUDGET_FULL, BUDGET_TIMING, BUDGET_ESTIMATED };

/* One traced function's demand, as the governor measured it. */
struct budget_demand {
	double hits;	      /* probe hits a second with every probe in */
	double calls_per_s;   /* calls begun in the last second */
	double rate_per_s;    /* the same as a rate, over the time measured */
	double inlined_per_s; /* inline mark hits a second, when they are in */
	double slice_cost;    /* estimated: hits of a sampled slice over its calls' */
	enum budget_mode mode;
	bool counts_at_entry; /* the entry is proven to count calls */
	bool entry_only;
	uint64_t mode_since_ns;
	uint64_t hold_ns; /* in a cheaper mode, held that long (0: BUDGET_HOLD_NS) */
};

/* The plan for one function: its mode, and the share of time its probes
 * (timing: its RETs) are in. */
struct budget_decision {
	enum budget_mode to;
	double share;
};

/* Probe hits a second the budget lets all functions make together: the
 * hits of --budget N/s (0: no budget at all, returns 0), lowered by
 * --budget PCT% (of one CPU; 0: no CPU cap) at hit_ns a hit. */
double budget_allowed_hits(double hits_per_s, double pct, double hit_ns);

/* The hold of a function sent to a cheaper mode at now_ns, after hold_ns
 * (0: none yet); up_ns: when it last went to a dearer mode (0: never).
 * Back within BUDGET_HOLD_STAY_NS: twice the hold, up to BUDGET_HOLD_MAX_NS;
 * else BUDGET_HOLD_NS. */
uint64_t budget_hold_after(uint64_t hold_ns, uint64_t up_ns, uint64_t now_ns);

/* How far apart, at least, each of `timed` functions timed in runs starts
 * one, in seconds: BUDGET_RUN_EVERY_S, or more for a package's. */
double budget_run_every_s(size_t timed);
/* The timing mode's run, in slices, for a share of slices timed and runs
 * every_s apart at least (budget_run_every_s). */
unsigned budget_run_slices(double share, double every_s);
/* One slice of the timing mode: timed or not.  *run_left carries the
 * slices left in the run under way (0: none) from slice to slice; u is a
 * uniform random number in [0, 1). */
bool budget_run_step(double share, double every_s, unsigned *run_left, double u);

/* The calls a sampled slice counts at most (0: no cap), for allowed hits
 * a second and slice_cost hits a call. */
uint64_t budget_slice_cap(double allowed, double slice_cost);
/* Whether the probes go in lead_ns before a sampled slice, so that its
 * start is seen: only while the calls of that lead, which trap uncounted,
 * cost under a quarter of the cap at the peak rate; else they go in as it
 * starts. */
bool budget_slice_lead(double peak_per_s, uint64_t cap, uint64_t lead_ns);

/* Share allowed hits a second among n functions (out[i] for d[i]); order
 * is room for n indices. */
void budget_plan(const struct budget_demand *d, size_t n, double allowed, uint64_t now_ns,
		 size_t *order, struct budget_decision *out);

/* The brake, mid-slice: the hits of the last second, up to now, passed
 * the budget, so a load rose between two plans (a function at rest called
 * at once, a query that runs a timed function ten times as often).  What
 * each function did, for the brake. */
struct budget_brake_in {
	double rate;	/* calls a second since the slice began (0: not measured) */
	double inlined; /* inlined calls a second since then, at the marks */
	double calls;	/* calls begun and inlined calls counted in the last
			 * second, up to now: what its entries and marks cost */
	double hits;	/* probe hits in the last second, up to now */
};

/* The plan at each function's rates since the slice began, its calls' and
 * its inlined calls', where those are more than its demand (raised in d):
 * what does not fit at the rate it runs at now goes at once, its entries
 * and marks too.  But a burst the second can
 * still pay for keeps its calls counted: of those the plan would
 * estimate, the ones whose entries count calls keep them, fewest calls in
 * the last second first, while those fit, as the plan's timed do, what
 * the last second's other hits left of the budget: those of the functions
 * in full or timed, and other_hits (the runtime watchers'); an estimated
 * function's slices yield to cheaper entries at the next plan, as in
 * budget_plan.  *kept: how many kept so (braked again if the hits go on).
 * Only a function whose rates rose past its demand goes, and only to a
 * cheaper mode (out[i].to is d[i].mode otherwise: the others, and dearer
 * modes, wait for the slice's plan).  *room: the calls the kept may still
 * make, at their entries, before they pass what the second left them (the
 * engine brakes again there: a query's burst of 40,000 calls begins as
 * one the second can pay for).  Returns how many go. */
size_t budget_brake(struct budget_demand *d, const struct budget_brake_in *in, size_t n,
		    double allowed, double other_hits, uint64_t now_ns, size_t *order,
		    struct budget_decision *out, size_t *kept, double *room);

/* The brake's other_hits: the runtime watchers' hits of the last second,
 * and what the second spent (by BPF's own count, overspent past the
 * budget of allowed) past a second's worth more, which no burst is paid
 * from.  A burst may spend a second's worth at once (1,000 goroutines
 * calling a function 5,000 times keep it counted); past twice the budget,
 * none.  The functions' rings leave out an estimated function's sampled
 * slices and a function at rest's first burst until its next slice: on
 * Prometheus's tsdb.*, brakes kept seven bursts with the second at five
 * budgets, then shed them one a brake, 18,000 hits in 100 ms. */
double budget_brake_others(double watched, double overspent, double allowed);

#endif
