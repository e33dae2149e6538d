/* The overhead budget (--budget): retop's probes make at most N hits a
 * second (RFD 061: 10,000 by default), and with --budget PCT% their traps
 * take at most PCT/(100+PCT) of one CPU (the cost of a hit is timed).
 *
 * The governor keeps every count exact for as long as it can:
 *   full       every probe in: every call counted and timed;
 *   timing     the entry probe in, the RET probes (the single-stepped,
 *              costly half) only in random slices of time: every call is
 *              counted at its entry, and the calls begun in a slice are
 *              timed to their RET, however long (the RETs stay until they
 *              drained); needs an entry proven to count calls (entry_count.h);
 *   estimated  even the entries do not fit: every probe only in random
 *              slices; calls are estimated from the slices sampled
 *              (Horvitz-Thompson), with a 95% interval.
 * The cheapest functions are traced in full first.  The runtime watchers
 * (goexit1, recovery) count in the budget and are in only while timed
 * calls are in flight. */
#ifndef RETOP_BUDGET_H
#define RETOP_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"

/* RFD 061: the production default rate limit, in probe hits a second. */
#define BUDGET_DEFAULT_HITS_PER_S 10000.0
/* A slice of the governor's clock, and of the random sampling. */
#define BUDGET_SLICE_NS 100000000ull
#define BUDGET_RING 10 /* slices of history: rates over the last second */
#define BUDGET_CAL_RING 1024 /* timed probe hits kept per kind */

struct probe_set;
struct session;
struct session_func;
struct tracer;
struct snapshot_func;
struct interlock_verdict;

enum budget_mode { BUDGET_FULL, BUDGET_TIMING, BUDGET_ESTIMATED };

struct budget {
	double pct;	   /* --budget PCT%: of one CPU; 0: no CPU cap */
	double hits_per_s; /* --budget N/s, or the default; 0: no budget at all */
	double hit_ns;	   /* timed cost of one probe hit: a RET's (with pct only) */
	/* The kernel's cost of a hit of each kind (RETOP_HIT_*), timed at the
	 * start; 0: not timed. */
	double trap_ns[RETOP_HIT_KINDS];
	/* The calibration's probes and their tracer (NULL: none), the
	 * unprobed call's time, and the last timed hits, per kind. */
	struct probe_set *cal_ps[RETOP_HIT_KINDS];
	struct tracer *cal_tracer;
	double cal_bare[RETOP_HIT_KINDS];
	uint64_t cal_ring[RETOP_HIT_KINDS][BUDGET_CAL_RING];
	size_t cal_n[RETOP_HIT_KINDS];
	uint64_t next_ns;  /* the governor's next slice */
	uint64_t watch_hits, watch_ring[BUDGET_RING]; /* the runtime watchers' hits */
	uint64_t slice;	   /* slices since tracing began */
	/* When each slice of the rings ended, and the time the rings cover:
	 * a tick runs late while the sweep reads many calls in flight, so ten
	 * slices can cover more than a second.  At least 1 s. */
	uint64_t slice_end_ns[BUDGET_RING];
	double ring_s;
	/* Quiet slices (budget_go_quiet): the face waits on the session's
	 * wake fd too (wakeable), so a slice may last a second while BPF
	 * watches the hits; quiet_until_ns is that second's end.  After a
	 * wake, or an attach, slices are 100 ms until loud_until_ns. */
	bool wakeable, quiet;
	uint64_t quiet_until_ns, loud_until_ns;
	uint64_t cpu_ns;   /* the targets' CPU time at the last slice; 0: unknown */
	uint64_t watch_off_until; /* the watchers cost too much: out until then */
	bool watch_warned;
	uint64_t rng;
	/* budget_tick's per-function buffers, kept across slices: ten slices
	 * a second must not allocate (and fault in) a counters copy each. */
	struct retop_func_stats *tick_st;
	struct budget_need *tick_need;
	enum budget_mode *tick_to;
	size_t tick_cap;
};

/* Per traced function. */
struct budget_func {
	enum budget_mode mode;
	bool counts_at_entry; /* the entry is proven to count calls */
	bool entry_only;
	uint64_t attached_ns, mode_since_ns;
	/* Demand: probe hits and calls begun, per slice, over the last second. */
	uint64_t last_hits, last_begun;
	uint64_t hits_ring[BUDGET_RING], begun_ring[BUDGET_RING];
	double calls_per_s;  /* calls begun in the last second (estimated: a second,
			      * from its sampled slices) */
	double rate_per_s;   /* the same as a rate, over the time measured */
	double share;	     /* planned share of time with its probes in */
	double slice_cost;   /* estimated: hits of a sampled slice over its calls' */
	/* The RET probes stay until then while timed calls drain. */
	uint64_t drain_until_ns;
	uint64_t drained; /* timed calls left in flight at the deadline: untimed */
	/* The ledger of calls: exact periods and the estimate's slices. */
	uint64_t exact_base;	  /* calls of closed exact periods */
	uint64_t period_start;	  /* counted calls when this exact period began */
	double ht_sum, ht_var;	  /* the estimate since, and its variance */
	double ht_seen;		  /* the calls its slices saw: a floor */
	unsigned ht_slices_with_calls; /* sampled slices (chance < 1) that saw calls */
	unsigned ht_partial;	       /* slices read with a chance below 1 */
	bool ever_estimated;
	/* Left full mode since its counters began: its probes were out for a
	 * time, so its hits inside its callers' calls are a sample. */
	bool ever_shed;
	/* Estimated: the slices' plan (k % RETOP_GATE_RING) and read cursor. */
	uint64_t gate_base, k_read, k_plan;
	double slice_p[4];
	bool slice_on[4];
	/* While its probes were in: their traps (hits x the timed cost of a
	 * hit) against the targets' CPU time.  Traps slow what they count:
	 * the estimate's upper bound widens by their share. */
	bool probes_were_in;
	double trap_ns, cpu_ns;
	/* Inline marks (tracer_marks_in): their hits count in the budget; they
	 * are out while the function is estimated, and its inlined calls
	 * are then not exact.  marks_only: a function that exists only
	 * inlined, in full or out. */
	bool marks_only, marks_missed, marks_failed;
	uint64_t last_inlined, inl_ring[BUDGET_RING];
	double inlined_per_s; /* mark hits a second, as last measured with them in */
	bool stopped; /* an estimate that could not go on: frozen, reason said */
	char why[160];
};

/* Time hits on uprobes in retop's own process, with t's programs and link
 * type, one instruction of each kind (RETOP_HIT_*: the prologue's jump,
 * emulated; an entry compare and a RET, single-stepped): b->trap_ns[k],
 * what the kernel's trap and the program's dispatch cost a hit of kind k,
 * the median of single hits.  The probes stay (they cost nothing
 * untouched) for budget_calibrate_more().  A negative errno and a reason on
 * failure. */
int budget_calibrate(struct budget *b, struct tracer *t, char *err);
/* A few more hits of each kind into the mean: the cost follows the load of
 * the machine.  Stops timing (and says so) on failure. */
void budget_calibrate_more(struct budget *b);
void budget_calibrate_close(struct budget *b);
/* The face waits on the session's wake fd too (on): slices may go quiet.
 * budget_wake(): BPF woke the engine, the next tick is now. */
void budget_wakeable(struct budget *b, bool on);
void budget_wake(struct budget *b);
/* Everything the budget holds: the calibration and the slices' buffers. */
void budget_close(struct budget *b);

/* Probe hits a second the budget lets all functions make together; 0: no
 * budget. */
double budget_allowed_hits(const struct budget *b);

/* A function was just attached, every probe in. */
void budget_func_start(struct budget *b, struct budget_func *bf, const struct interlock_verdict *v,
		       uint64_t now_ns);
/* The function's counters were reset: its ledger starts again. */
void budget_func_reset(struct budget_func *bf);
/* The governor's clock: measure, plan, move probes.  Returns when it wants
 * to run next (tracer_now_ns() clock). */
uint64_t budget_tick(struct session *s, uint64_t now_ns);
/* A function's counts as the governor knows them: calls (exact, or the
 * estimate with its interval), its mode and share. */
void budget_fill(struct session_func *sf, struct snapshot_func *out);

#endif
