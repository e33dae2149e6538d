/* The overhead governor: the engine module that carries out the budget's
 * plan (budget.h).  On the engine's clock, every 100 ms slice, it reads
 * each traced function's counters (mmapped: no syscall), measures its
 * demand, asks the policy for a plan, and moves probes and BPF's gates to
 * match it; it keeps each function's ledger of calls (estimate.h).  The
 * runtime watchers (goexit1, recovery) count in the budget and are in only
 * while that fits. */
#ifndef RETOP_GOVERN_H
#define RETOP_GOVERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"
#include "budget.h"
#include "estimate.h"

#define GOVERN_RING 10	/* slices of history: rates over the last second */
#define GOVERN_IN_LOG 8 /* the entry probe's last times in, per function */

struct session;
struct session_func;
struct snapshot_func;
struct interlock_verdict;
struct retop_func_stats;

struct govern {
	double pct;	   /* --budget PCT%: of one CPU; 0: no CPU cap */
	double hits_per_s; /* --budget N/s, or the default; 0: no budget at all */
	double hit_ns;	   /* timed cost of one probe hit: a RET's (with pct only) */
	uint64_t next_ns;  /* the governor's next tick: a slice, or a look */
	/* The next slice: measures and a plan.  Ticks before it only look
	 * (govern_look): probes in and out on the estimates' clocks, drains;
	 * the rings stay a slice each. */
	uint64_t slice_due_ns;
	uint64_t watch_hits, watch_ring[GOVERN_RING]; /* the runtime watchers' hits */
	/* When watch_hits was read, and how long the last slice of watch_ring
	 * lasted: after a quiet second it holds that second's hits. */
	uint64_t watch_read_ns;
	double watch_slice_s;
	uint64_t slice; /* slices since tracing began */
	/* How far apart, at least, each timed function's runs start, from
	 * the functions the last plan timed (budget_run_every_s; 0: the
	 * least). */
	double run_every_s;
	/* When each slice of the rings ended, and the time the rings cover:
	 * a tick runs late while the sweep reads many calls in flight, so ten
	 * slices can cover more than a second.  At least 1 s. */
	uint64_t slice_end_ns[GOVERN_RING];
	double ring_s;
	/* BPF's count of the budget's hits as each slice ended (govern_spent). */
	uint64_t hits_end[GOVERN_RING];
	/* Quiet slices (govern_go_quiet): the engine's clock waits on the
	 * session's wake fd too (session_run), so a slice may last a second
	 * while BPF watches the hits; quiet_until_ns is that second's end.
	 * After a wake, or an attach, slices are 100 ms until loud_until_ns. */
	bool quiet;
	uint64_t quiet_until_ns, loud_until_ns;
	/* The brake (govern_brake): loud, BPF wakes the engine mid-slice
	 * once the slice's hits pass what is left of the last second's
	 * budget; the brakes of this slice so far. */
	bool brake_due;
	unsigned brakes;
	uint64_t cpu_ns;	  /* the targets' CPU time at the last slice; 0: unknown */
	uint64_t watch_off_until; /* the watchers cost too much: out until then */
	bool watch_warned;
	uint64_t rng;
	/* govern_tick's per-function buffers, kept across slices: ten slices
	 * a second must not allocate (and fault in) a counters copy each. */
	struct retop_func_stats *tick_st;
	struct budget_demand *tick_demand;
	struct budget_decision *tick_plan;
	struct session_func **tick_sf;
	size_t *tick_order;
	struct budget_brake_in *tick_brake; /* what each did, for the brake */
	size_t tick_cap;
	/* The functions a look between slices visits (s->funcs indices):
	 * those estimated or draining as the last slice ended.  A thousand
	 * traced, most in full, cost a look nothing. */
	size_t *look;
	size_t nlook;
};

/* Per traced function. */
struct govern_func {
	/* First (next to session_func's slot): at rest as the last slice it
	 * was planned in ended, the next passes it by while its counters stay
	 * (govern_at_rest).  Demand: probe hits and calls begun, per slice,
	 * over the last second. */
	bool at_rest;
	uint64_t last_begun, last_entries, last_rets, last_inlined, last_hits;
	enum budget_mode mode;
	bool counts_at_entry; /* the entry is proven to count calls */
	bool entry_only;
	uint64_t attached_ns, mode_since_ns;
	/* Its hold in a cheaper mode (budget_hold_after), and when it last
	 * went to a dearer one (0: never). */
	uint64_t hold_ns, up_ns;
	/* Slices in a row in which none of its counters moved: from
	 * GOVERN_RING on, its rings hold nothing (govern_at_rest). */
	unsigned still_slices;
	double slice_trap_ns; /* what the last slice's hits cost, each kind at its cost */
	uint64_t hits_ring[GOVERN_RING], begun_ring[GOVERN_RING];
	double calls_per_s; /* calls begun in the last second (estimated: a second,
			     * from its sampled slices) */
	double rate_per_s;  /* the same as a rate, over the time measured */
	/* The highest rate lately, for the plan: halved every
	 * GOVERN_PEAK_HALF_NS, so that a function whose calls come in bursts
	 * (a scrape a second, a query) is planned for its bursts, not for the
	 * quiet between them, and is not put back in full to spend a whole
	 * burst before the next slice sees it. */
	double peak_per_s;
	uint64_t peak_ns;
	double share;	      /* planned share of time with its probes in */
	double slice_cost;    /* estimated: hits of a sampled slice over its calls' */
	unsigned timing_left; /* timing: slices left in the run of timed ones */
	/* The RET probes stay until then while timed calls drain. */
	uint64_t drain_until_ns;
	uint64_t drained;     /* timed calls left in flight at the deadline: untimed */
	unsigned drain_quick; /* looks left a millisecond apart (govern_drain) */
	struct ledger ledger; /* exact periods and the estimate's slices */
	/* Left full mode since its counters began: its probes were out for a
	 * time, so its hits inside its callers' calls are a sample. */
	bool ever_shed;
	/* Estimated: the slices' plan (k % RETOP_GATE_RING; p 0: never
	 * planned) and read cursor (slice k_read read up to read_from, its
	 * calls so far slice_n); when the entry probe went in and out. */
	uint64_t gate_base, k_read, k_plan, read_from, slice_n;
	uint64_t cut_k; /* slice cut_k - 1 was cut short (0: none) */
	double slice_p[RETOP_GATE_RING];
	bool slice_on[RETOP_GATE_RING];
	uint64_t in_since, in_log[GOVERN_IN_LOG][2];
	unsigned in_n;
	bool probes_were_in; /* its entry probe was in during the last slice */
	/* Inline marks (tracer_marks_in): their hits count in the budget; they
	 * are out while the function is estimated, and its inlined calls
	 * are then not exact.  marks_only: a function that exists only
	 * inlined, in full or out. */
	bool marks_only, marks_missed, marks_failed;
	uint64_t inl_ring[GOVERN_RING];
	double inlined_per_s; /* mark hits a second, as last measured with them in */
	double lower_shown;   /* the largest lower end of its calls shown */
};

/* A function was just attached, every probe in. */
void govern_func_start(struct govern *b, struct govern_func *gf, const struct interlock_verdict *v,
		       uint64_t now_ns);
/* The function's counters were reset: its ledger starts again. */
void govern_func_reset(struct govern_func *gf);
/* s->funcs[gone] left the session, and the last one (index last) took its
 * place: the look's list of indices follows (else it would visit the
 * cleared entry past the end, and miss the one moved). */
void govern_func_moved(struct govern *b, size_t gone, size_t last);
/* The governor's clock: measure, plan, move probes.  Returns when it wants
 * to run next (clock_now_ns() clock). */
uint64_t govern_tick(struct session *s, uint64_t now_ns);
/* BPF woke the engine (why: RETOP_WAKE_* bits): the next tick is now. */
void govern_wake(struct govern *b, unsigned why);
/* Probe hits a second the budget lets all functions make together. */
double govern_allowed_hits(const struct govern *b);
/* Before a sample: the estimated functions' slices read up to now, the one
 * under way included, so that the snapshot (the last one, at exit, too)
 * has every call counted so far. */
void govern_sample(struct session *s, uint64_t now_ns);
/* A function's counts as the governor knows them: calls (exact, or the
 * estimate with its interval), its mode and share. */
void govern_fill(struct session_func *sf, struct snapshot_func *out);
/* The slices' buffers. */
void govern_close(struct govern *b);

#endif
