/* The overhead governor (govern.h): measures, asks the budget's policy for
 * a plan, and carries it out. */
#include "govern_internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "interlock.h"
#include "log.h"
#include "procs.h"
#include "session_internal.h"
#include "snapshot.h"
#include "tracer.h"

#define GOVERN_FIRST_NS 20000000ull
/* Quiet: every function in full, and the last second's hits under a tenth
 * of the budget.  Then a slice lasts a second, and BPF wakes the engine
 * the moment the slice's hits reach a fifth of the budget (twice the rate
 * that let it go quiet): a burst of ten budgets a second spends a fifth of
 * one before the plan sees it, where a 100 ms slice spends a whole one;
 * and nine wake-ups a second fewer. */
#define GOVERN_QUIET_NS 1000000000ull
#define GOVERN_QUIET_SHARE 0.10
#define GOVERN_WAKE_SHARE 0.20
/* The brake (govern_brake): a slice spends at least its share of the
 * second's budget before it, and again after each one that took a
 * function to a cheaper mode; after three in a slice, a burst kept
 * counted is braked at its room only. */
#define GOVERN_BRAKE_SHARE 0.10
#define GOVERN_BRAKES_MAX 3
/* A function at rest is looked at one loud slice in five (govern_tick_now):
 * a call to it moves nothing the plan needs until it costs, and then the
 * brake, which reads every function, sees it first.  Most of a package's
 * thousand are at rest, and each look is two cache misses. */
#define GOVERN_REST_EVERY 5
/* A function's rate of late is halved every 10 s (govern_func.peak_per_s). */
#define GOVERN_PEAK_HALF_NS 10e9

void govern_func_start(struct govern *b, struct govern_func *gf, const struct interlock_verdict *v,
		       uint64_t now_ns)
{
	/* Its first measure soon: a load far over budget costs a slice at
	 * full rate before the plan sees it. */
	if (!b->slice_due_ns || b->slice_due_ns > now_ns + GOVERN_FIRST_NS)
		b->slice_due_ns = now_ns + GOVERN_FIRST_NS;
	if (b->next_ns > b->slice_due_ns)
		b->next_ns = b->slice_due_ns;
	/* Its demand is unknown: a second of 100 ms slices first. */
	b->loud_until_ns = now_ns + GOVERN_QUIET_NS;
	*gf = (struct govern_func){.mode = BUDGET_FULL,
				   .counts_at_entry = v->entry_counts_calls,
				   .entry_only = v->entry_only,
				   .marks_only = v->marks_only,
				   .attached_ns = now_ns,
				   .mode_since_ns = now_ns,
				   .slice_cost = 2.0,
				   .share = 1.0};
}

void govern_func_reset(struct govern_func *gf)
{
	/* Its counters start again from zero in BPF: so does the ledger, and
	 * the demand is measured afresh.  The mode and its probes stay, and
	 * so does its rate of late (the target's bursts did not change). */
	gf->last_hits = gf->last_begun = gf->last_entries = gf->last_rets = 0;
	gf->at_rest = false;
	memset(gf->hits_ring, 0, sizeof(gf->hits_ring));
	memset(gf->begun_ring, 0, sizeof(gf->begun_ring));
	gf->drained = gf->ledger.exact_base = gf->ledger.period_start = 0;
	gf->ledger.est.sum = gf->ledger.est.var = gf->ledger.est.seen = 0;
	gf->ledger.est.slices_with_calls = gf->ledger.est.partial = 0;
	gf->ledger.est.trap_ns = gf->ledger.est.cpu_ns = 0;
	gf->ledger.ever_estimated = gf->mode == BUDGET_ESTIMATED;
	gf->ever_shed = gf->mode != BUDGET_FULL;
	gf->last_inlined = 0;
	memset(gf->inl_ring, 0, sizeof(gf->inl_ring));
	gf->marks_missed = gf->mode != BUDGET_FULL && gf->mode != BUDGET_TIMING;
}

/* The marks in while the function's calls are all counted (full, timing),
 * out while it is estimated; the inlined calls of that time are missed. */
static void govern_marks(struct session *s, struct session_func *sf, bool want)
{
	struct govern_func *gf = &sf->gf;
	char err[ERR_LEN];

	if (!sf->inl_counted)
		return;
	if (!want)
		gf->marks_missed = true;
	if (want == tracer_marks_are_in(s->tracer, sf->slot) || (want && gf->marks_failed))
		return;
	if (session_marks(s, sf, want, err) != 0) {
		log_warn("budget", "%s: inline marks: %s", sf->f->name, err);
		gf->marks_failed = true;
		gf->marks_missed = true;
		session_marks(s, sf, false, err);
	}
}

/* The probe hits of the last second past the budget, by BPF's own count
 * (0: under it).  The brake pays no burst from those past a second's
 * worth more (budget_brake_others).
 * While there are any (govern_spent), no probe goes in that can wait: a
 * function stays in its mode rather than go dearer, and a timed one
 * starts no run of its RETs (its durations are then a sample of the calls
 * begun outside such seconds).  Under the load that spent it, a run's RETs
 * took 160 ms to go in on the 2-core VM, the brake waiting for them while
 * the entries of the functions around spent ten budgets.  An estimated
 * function's slices are left alone: drawn at a tenth of their chance while
 * spent, two estimates in ten on a steady load saw too few slices and were
 * lower bounds only. */
static double govern_overspent(const struct session *s, uint64_t now)
{
	const struct govern *b = &s->gov;
	size_t old = (b->slice + 1) % GOVERN_RING;

	if (b->hits_per_s <= 0 || !s->tracer)
		return 0;
	/* The ring covers a second, or more after quiet slices; before its
	 * first second, the hits since tracing began. */
	double span = b->slice_end_ns[old] && now > b->slice_end_ns[old]
			  ? (double)(now - b->slice_end_ns[old]) / 1e9
			  : 1.0;
	uint64_t hits = tracer_budget_hits(s->tracer);
	if (hits < b->hits_end[old])
		return 0; /* a BPF side loaded anew counts from 0 */
	double over =
	    (double)(hits - b->hits_end[old]) - govern_allowed_hits(b) * (span > 1.0 ? span : 1.0);
	return over > 0 ? over : 0;
}

/* The last second's hits passed the budget (govern_overspent). */
static bool govern_spent(const struct session *s, uint64_t now)
{
	return govern_overspent(s, now) > 0;
}

/* Move a function to the mode the plan gave it. */
static void govern_apply(struct session *s, struct session_func *sf, enum budget_mode to,
			 uint64_t now)
{
	struct govern_func *gf = &sf->gf;
	char err[ERR_LEN];

	if (gf->marks_only) {
		/* No entry, no RETs: its marks are in, or out. */
		gf->mode = to == BUDGET_FULL ? BUDGET_FULL : BUDGET_ESTIMATED;
		govern_marks(s, sf, gf->mode == BUDGET_FULL);
		return;
	}
	if (to != gf->mode) {
		if (gf->mode == BUDGET_ESTIMATED) {
			/* Leave on a sampled slice only, so no call goes unseen:
			 * the next one is sampled for sure. */
			uint64_t c = govern_slice_of(gf, now);
			if (!gf->slice_on[c % RETOP_GATE_RING] ||
			    !tracer_entry_is_in(s->tracer, sf->slot)) {
				gf->share = 1.0;
				govern_run_estimate(s, sf, now);
				return;
			}
			govern_leave_estimate(s, sf, now);
		}
		if (to == BUDGET_ESTIMATED)
			govern_enter_estimate(s, sf);
		log_debug("budget", "%s: %s -> %s", sf->f->name,
			  gf->mode == BUDGET_FULL     ? "full"
			  : gf->mode == BUDGET_TIMING ? "timing"
						      : "estimated",
			  to == BUDGET_FULL	? "full"
			  : to == BUDGET_TIMING ? "timing"
						: "estimated");
		/* Sent down soon after it went up: held longer (no flapping). */
		if (to > gf->mode)
			gf->hold_ns = budget_hold_after(gf->hold_ns, gf->up_ns, now);
		else
			gf->up_ns = now;
		gf->mode = to;
		gf->mode_since_ns = now;
		gf->timing_left = 0;
		gf->ever_shed |= to != BUDGET_FULL;
	}
	switch (gf->mode) {
	case BUDGET_FULL:
		if ((!tracer_entry_is_in(s->tracer, sf->slot) ||
		     (!gf->entry_only && !tracer_rets_are_in(s->tracer, sf->slot))) &&
		    session_probes_in(s, sf, true, !gf->entry_only, err) != 0)
			log_warn("budget", "%s", err);
		tracer_record(s->tracer, sf->slot, true);
		gf->drain_until_ns = 0;
		break;
	case BUDGET_TIMING: {
		/* This slice times calls or not, at random, in runs
		 * (budget_run_step): a run's RET probes move once. */
		bool timing = budget_run_step(gf->share, s->gov.run_every_s, &gf->timing_left,
					      govern_rand(&s->gov));
		if (timing && !tracer_rets_are_in(s->tracer, sf->slot)) {
			/* No run starts while the budget is spent: under a
			 * scrape's load a run's RETs took 160 ms to go in, while
			 * the entries of its neighbours spent ten budgets. */
			bool spent = govern_spent(s, now);
			if (spent || session_probes_in(s, sf, false, true, err) != 0) {
				if (!spent)
					log_warn("budget", "%s", err);
				timing = false;
				gf->timing_left = 0;
			}
		}
		tracer_record(s->tracer, sf->slot, timing);
		if (timing)
			gf->drain_until_ns = 0;
		else
			govern_drain(s, sf, now);
		break;
	}
	case BUDGET_ESTIMATED:
		govern_run_estimate(s, sf, now);
		break;
	}
	govern_marks(s, sf, gf->mode != BUDGET_ESTIMATED);
}

/* What sf's hits since the last slice cost the target, each kind at its
 * timed cost (an emulated entry is a third of a RET; uncalibrated, each
 * at the budget's assumed cost), for the traps' share of its CPU. */
static double govern_traps_ns(const struct session *s, const struct session_func *sf,
			      const struct retop_func_stats *st)
{
	const struct govern_func *gf = &sf->gf;
	uint64_t entries = st->entries - gf->last_entries, rets = st->rets - gf->last_rets;
	uint64_t marks = st->inlined - gf->last_inlined;

	if (s->hitcost.trap_ns[RETOP_HIT_RET] <= 0)
		return (double)(entries + rets + marks) * s->gov.hit_ns;
	return hitcost_traps_ns(&s->hitcost, sf->f->entry_emulated, entries, rets, marks);
}

/* Calls begun in the last second: the budget is hits in any second, so a
 * burst may spend a second's worth at once, and a load that rises past it
 * is seen within a slice. */
static void govern_measure(struct session *s, struct session_func *sf, uint64_t now,
			   const struct retop_func_stats *st)
{
	struct govern_func *gf = &sf->gf;
	uint64_t hits = st->entries + st->rets, begun = st->begun;
	size_t i = s->gov.slice % GOVERN_RING;

	hits += st->inlined;
	/* The marks' demand, measured while they are in; out, the last
	 * measure, halved every 2 s (0.966 a slice), so that a load that fell
	 * gets them back (and a load that did not, out again after a slice). */
	if (tracer_marks_are_in(s->tracer, sf->slot)) {
		uint64_t sum = 0;
		gf->inl_ring[i] = st->inlined - gf->last_inlined;
		for (size_t k = 0; k < GOVERN_RING; k++)
			sum += gf->inl_ring[k];
		gf->inlined_per_s = (double)sum / s->gov.ring_s;
	} else {
		gf->inlined_per_s *= 0.966;
		memset(gf->inl_ring, 0, sizeof(gf->inl_ring));
	}
	gf->slice_trap_ns = govern_traps_ns(s, sf, st);
	bool still = st->entries == gf->last_entries && st->rets == gf->last_rets &&
		     st->inlined == gf->last_inlined && begun == gf->last_begun;
	gf->still_slices = !still			    ? 0
			   : gf->still_slices < GOVERN_RING ? gf->still_slices + 1
							    : GOVERN_RING;
	gf->last_entries = st->entries;
	gf->last_rets = st->rets;
	gf->last_inlined = st->inlined;
	gf->hits_ring[i] = hits - gf->last_hits;
	gf->begun_ring[i] = begun - gf->last_begun;
	gf->last_hits = hits;
	gf->last_begun = begun;
	if (gf->mode == BUDGET_ESTIMATED) {
		/* Demand from its sampled slices (govern_read_slices).  What a
		 * sampled slice costs, against the slice itself: the entry goes
		 * in early, the RETs drain, the kernel takes time to remove
		 * them.  Measured over the last second, so the share follows. */
		uint64_t hits_1s = 0;
		for (size_t k = 0; k < GOVERN_RING; k++)
			hits_1s += gf->hits_ring[k];
		double planned = gf->share * gf->rate_per_s * (gf->entry_only ? 1 : 2);
		if (now - gf->mode_since_ns >= 1000000000ull && planned > 0) {
			double f = (double)hits_1s / s->gov.ring_s / planned;
			f = f < 1 ? 1 : f > 20 ? 20 : f;
			gf->slice_cost = 0.7 * gf->slice_cost + 0.3 * f;
		}
		return;
	}
	uint64_t sum = 0;
	for (size_t k = 0; k < GOVERN_RING; k++)
		sum += gf->begun_ring[k];
	/* Over the time the ring covers: late ticks stretch it. */
	gf->calls_per_s = (double)sum / s->gov.ring_s;
	/* The rate, for the shares: over the time the ring covers. */
	double covered = (double)(now - gf->attached_ns) / 1e9;
	gf->rate_per_s = covered > 0 && covered < 1 ? (double)sum / covered : gf->calls_per_s;
	if (gf->rate_per_s < gf->calls_per_s)
		gf->rate_per_s = gf->calls_per_s;
}

/* The CPU time of the targets, for the estimates' bounds. */
static uint64_t govern_target_cpu(struct session *s)
{
	uint64_t sum = 0;

	if (s->attach_pid > 0)
		return procs_cpu_ns(s->attach_pid);
	for (size_t i = 0; i < s->snap.npids; i++)
		sum += procs_cpu_ns(s->snap.pids[i]);
	return sum;
}

/* Traps against CPU time over the slice that ended (it began at t0; 0:
 * unknown), for the functions estimated with their probes in during it:
 * each one's hits against the target's CPU time while its entry probe was
 * in, not over the whole slice.  A sampled slice straddles two of the
 * governor's, and over the whole of each the traps' share read a half
 * or less of what it was: the slowdown they caused, and the estimate's
 * upper end, came out too low. */
static void govern_trap_share(struct session *s, struct session_func **sfs, size_t n, uint64_t t0,
			      uint64_t now)
{
	bool any = false;

	for (size_t j = 0; j < n; j++)
		any |= sfs[j]->gf.mode == BUDGET_ESTIMATED;
	if (!any) {
		s->gov.cpu_ns = 0;
		return;
	}
	uint64_t cpu = govern_target_cpu(s), last = s->gov.cpu_ns;
	s->gov.cpu_ns = cpu;
	if (!last || cpu < last)
		return; /* a thread's time left with it: this slice says nothing */
	for (size_t j = 0; j < n; j++) {
		struct govern_func *gf = &sfs[j]->gf;
		if (gf->mode != BUDGET_ESTIMATED || !gf->probes_were_in)
			continue;
		double in =
		    t0 && now > t0 ? (double)govern_covered(gf, t0, now) / (double)(now - t0) : 1;
		if (in <= 0)
			continue; /* the log does not reach back: this slice says nothing */
		gf->ledger.est.trap_ns += gf->slice_trap_ns;
		gf->ledger.est.cpu_ns += (double)(cpu - last) * in;
	}
}

#define GOVERN_WATCH_RETRY_NS 10000000000ull
/* any: some function is traced (the tick's scan saw one attached). */
static void govern_watchers(struct session *s, bool any, double allowed, uint64_t now)
{
	struct govern *b = &s->gov;
	bool in = tracer_watchers_in(s->tracer), want;
	uint64_t sum = 0, last = b->watch_ring[b->slice % GOVERN_RING];

	for (size_t i = 0; i < GOVERN_RING; i++)
		sum += b->watch_ring[i];
	/* The last slice's rate, over the time it lasted (a quiet one, a
	 * second: ten times its hits would be ten times too many). */
	double last_rate =
	    b->watch_slice_s > 0 ? (double)last / b->watch_slice_s : (double)last * GOVERN_RING;
	double rate = (double)sum / b->ring_s > last_rate ? (double)sum / b->ring_s : last_rate;
	if (!any)
		want = false;
	else if (b->hits_per_s <= 0)
		want = true;
	else if (in && rate > 0.5 * allowed) {
		want = false;
		b->watch_off_until = now + GOVERN_WATCH_RETRY_NS;
		if (!b->watch_warned)
			log_info("budget",
				 "the runtime watchers (runtime.goexit1, and Go's scheduler under "
				 "--time-split sched) trap %.0f times a second, over half the "
				 "budget: unwatched (calls of exited goroutines stay in flight "
				 "until other evidence, parked calls count whole), tried again "
				 "every %llu s",
				 rate, GOVERN_WATCH_RETRY_NS / 1000000000ull);
		b->watch_warned = true;
	} else
		want = in || now >= b->watch_off_until;
	if (want != in && tracer_watchers(s->tracer, want) != 0)
		log_debug("budget", "runtime watchers not attached");
	if (want != in)
		memset(b->watch_ring, 0, sizeof(b->watch_ring));
}

/* Loud, the brake armed for the slice that begins: BPF wakes the engine
 * once its hits pass what the last second's other slices left of the
 * budget (hits in any second), or the slice's own share of it, whichever
 * is more.  oldest: the hits of the ring's slice this one replaces. */
static void govern_brake_arm(struct session *s, double ring_hits, double oldest, double allowed)
{
	double room = allowed * s->gov.ring_s - (ring_hits - oldest);

	if (room < GOVERN_BRAKE_SHARE * allowed)
		room = GOVERN_BRAKE_SHARE * allowed;
	tracer_wake_arm(s->tracer, s->gov.hits_per_s > 0 ? (room < 1 ? 1 : (uint64_t)room) : 0);
}

/* End of a tick: go quiet (govern.h) when a second
 * passed since the last wake or attach, every function is in full with
 * nothing draining, and the last second's hits are under a tenth of the
 * budget.  Else the brake is armed. */
static void govern_go_quiet(struct session *s, struct session_func *const *sfs, size_t n,
			    double allowed, uint64_t now)
{
	struct govern *b = &s->gov;
	double hits = 0, oldest = 0;
	bool ok = now >= b->loud_until_ns && b->slice >= GOVERN_RING;
	size_t old = (b->slice + 1) % GOVERN_RING;

	for (size_t j = 0; j < n; j++) {
		const struct govern_func *gf = &sfs[j]->gf;
		ok = ok && gf->mode == BUDGET_FULL && !gf->drain_until_ns;
		for (size_t k = 0; k < GOVERN_RING; k++)
			hits += (double)gf->hits_ring[k];
		oldest += (double)gf->hits_ring[old];
	}
	for (size_t k = 0; k < GOVERN_RING; k++)
		hits += (double)b->watch_ring[k];
	oldest += (double)b->watch_ring[old];
	if (ok && b->hits_per_s > 0)
		ok = hits / b->ring_s < GOVERN_QUIET_SHARE * allowed;
	if (!ok) {
		govern_brake_arm(s, hits, oldest, allowed);
		return;
	}
	b->quiet = true;
	b->quiet_until_ns = now + GOVERN_QUIET_NS;
	b->next_ns = b->slice_due_ns = b->quiet_until_ns;
	double wake = GOVERN_WAKE_SHARE * allowed;
	tracer_wake_arm(s->tracer, b->hits_per_s > 0 ? (wake < 1 ? 1 : (uint64_t)wake) : 0);
}

/* A quiet slice ended: ten slices of the rings must not stand for ten
 * seconds once the load rises, so they start again from this slice. */
static void govern_rings_restart(struct session *s)
{
	struct govern *b = &s->gov;

	memset(b->slice_end_ns, 0, sizeof(b->slice_end_ns));
	memset(b->watch_ring, 0, sizeof(b->watch_ring));
	for (size_t i = 0; i < s->nfuncs; i++) {
		memset(s->funcs[i].gf.hits_ring, 0, sizeof(s->funcs[i].gf.hits_ring));
		memset(s->funcs[i].gf.begun_ring, 0, sizeof(s->funcs[i].gf.begun_ring));
		memset(s->funcs[i].gf.inl_ring, 0, sizeof(s->funcs[i].gf.inl_ring));
	}
}

void govern_wake(struct govern *b, unsigned why)
{
	/* Quiet: a slice now.  Loud: the brake, then the slice on time.  A
	 * sampled slice full only wants a look (govern_run_estimate). */
	if (why & RETOP_WAKE_BUDGET) {
		if (b->quiet)
			b->slice_due_ns = 0;
		else
			b->brake_due = true;
	}
	b->next_ns = 0;
}

/* govern_tick's buffers for cap functions, grown when more are traced. */
static int govern_tick_buffers(struct govern *b, size_t cap)
{
	if (cap <= b->tick_cap)
		return 0;
	struct retop_func_stats *st = realloc(b->tick_st, cap * sizeof(*st));
	if (st)
		b->tick_st = st;
	struct budget_demand *d = realloc(b->tick_demand, cap * sizeof(*d));
	if (d)
		b->tick_demand = d;
	struct budget_decision *plan = realloc(b->tick_plan, cap * sizeof(*plan));
	if (plan)
		b->tick_plan = plan;
	struct session_func **sfs = realloc(b->tick_sf, cap * sizeof(*sfs));
	if (sfs)
		b->tick_sf = sfs;
	size_t *order = realloc(b->tick_order, cap * sizeof(*order));
	if (order)
		b->tick_order = order;
	struct budget_brake_in *brake = realloc(b->tick_brake, cap * sizeof(*brake));
	if (brake)
		b->tick_brake = brake;
	size_t *look = realloc(b->look, cap * sizeof(*look));
	if (look)
		b->look = look;
	if (!st || !d || !plan || !sfs || !order || !brake || !look)
		return -ENOMEM;
	b->tick_cap = cap;
	return 0;
}

/* One function's demand, for the policy: at its rate of late (peak_per_s). */
static void govern_demand(struct govern_func *gf, uint64_t now, struct budget_demand *d)
{
	/* Calls in the last second (a new function's rate over its first
	 * moments would make a burst the budget allows a second's worth of
	 * into a rate it does not). */
	double rate = gf->calls_per_s;

	/* Estimated: at least the mean rate its slices estimate.  A rare
	 * sampled slice moves the running rate little, and a function whose
	 * calls come in bursts costs its mean, not its last slices'. */
	if (gf->mode == BUDGET_ESTIMATED && gf->ledger.est.covered_s >= 1.0 &&
	    gf->ledger.est.sum / gf->ledger.est.covered_s > rate)
		rate = gf->ledger.est.sum / gf->ledger.est.covered_s;

	if (gf->peak_ns && now > gf->peak_ns)
		gf->peak_per_s *= exp2(-(double)(now - gf->peak_ns) / GOVERN_PEAK_HALF_NS);
	gf->peak_ns = now;
	if (rate > gf->peak_per_s)
		gf->peak_per_s = rate;
	double peak = gf->peak_per_s;
	*d = (struct budget_demand){
	    .hits = peak * (gf->entry_only ? 1 : 2) + gf->inlined_per_s,
	    .calls_per_s = peak, /* at least calls_per_s */
	    .rate_per_s = gf->rate_per_s > peak ? gf->rate_per_s : peak,
	    .inlined_per_s = gf->inlined_per_s,
	    .slice_cost = gf->slice_cost,
	    .mode = gf->mode,
	    .counts_at_entry = gf->counts_at_entry,
	    .entry_only = gf->entry_only,
	    .mode_since_ns = gf->mode_since_ns,
	    .hold_ns = gf->hold_ns,
	};
}

double govern_allowed_hits(const struct govern *b)
{
	return budget_allowed_hits(b->hits_per_s, b->pct, b->hit_ns);
}

/* In full with every probe in, and nothing called since its rings began
 * (none of its counters moved for GOVERN_RING slices, no rate of late):
 * while its counters stay, its demand is none and its plan full whatever
 * the others', so a slice passes it by.  Most of a thousand functions
 * traced at once. */
static bool govern_at_rest(const struct session *s, const struct session_func *sf)
{
	const struct govern_func *gf = &sf->gf;

	return gf->still_slices >= GOVERN_RING && gf->mode == BUDGET_FULL && !gf->marks_only &&
	       !gf->drain_until_ns && gf->peak_per_s == 0 && gf->inlined_per_s == 0 &&
	       tracer_entry_is_in(s->tracer, sf->slot) &&
	       (gf->entry_only || tracer_rets_are_in(s->tracer, sf->slot)) &&
	       (!sf->inl_counted || gf->marks_failed || tracer_marks_are_in(s->tracer, sf->slot));
}

/* Between slices: the estimated functions' probes in or out on their
 * slices' clocks, and the RETs of calls that drain out once they
 * returned.  Neither the rings nor the plan move: a slice stays a tenth
 * of the second they measure, however many looks come between. */
static uint64_t govern_look(struct session *s, uint64_t now_ns)
{
	s->gov.next_ns = s->gov.slice_due_ns;
	for (size_t k = 0; k < s->gov.nlook; k++) {
		struct session_func *sf = &s->funcs[s->gov.look[k]];
		struct govern_func *gf = &sf->gf;
		if (sf->slot < 0 || gf->marks_only)
			continue;
		if (gf->mode == BUDGET_ESTIMATED)
			govern_run_estimate(s, sf, now_ns);
		else if (gf->drain_until_ns)
			govern_drain(s, sf, now_ns);
		gf->probes_were_in |= tracer_entry_is_in(s->tracer, sf->slot);
	}
	return s->gov.next_ns;
}

/* What the watchers leave the functions of the budget: allowed hits a
 * second less the watchers' over the ring's time. */
static double govern_funcs_allowed(const struct govern *b, double allowed)
{
	for (size_t i = 0; i < GOVERN_RING; i++)
		allowed -= (double)b->watch_ring[i] / b->ring_s;
	return allowed;
}

/* In a list of s->funcs indices: gone out, last renamed gone. */
static size_t govern_list_moved(size_t *list, size_t n, size_t gone, size_t last)
{
	size_t m = 0;

	for (size_t k = 0; k < n; k++)
		if (list[k] != gone)
			list[m++] = list[k] == last ? gone : list[k];
	return m;
}

void govern_func_moved(struct govern *b, size_t gone, size_t last)
{
	if (b->look)
		b->nlook = govern_list_moved(b->look, b->nlook, gone, last);
}

static void govern_look_add(struct govern *b, size_t i)
{
	for (size_t k = 0; k < b->nlook; k++)
		if (b->look[k] == i)
			return;
	b->look[b->nlook++] = i;
}

/* The sum of a ring but for its oldest slice, which the slice under way
 * replaces: the last second's, up to the slice's start. */
static double govern_ring_but_oldest(const struct govern *b, const uint64_t *ring)
{
	double sum = 0;

	for (size_t k = 0; k < GOVERN_RING; k++)
		sum += k == (b->slice + 1) % GOVERN_RING ? 0 : (double)ring[k];
	return sum;
}

/* The brake (budget_brake): BPF woke the engine mid-slice, the last
 * second's hits past the budget.  Each function whose counters moved is
 * planned at its rate since the slice began where that is more, and goes
 * to a cheaper mode now if the plan says so, rather than at the slice's
 * end: a function at rest that a query calls 100,000 times a second costs
 * the target a few milliseconds of traps before it, where a slice costs
 * it a second's budget.  The rings and the slice's clock do not move. */
static void govern_brake(struct session *s, uint64_t now)
{
	struct govern *b = &s->gov;
	uint64_t t0 = b->slice_end_ns[b->slice % GOVERN_RING];
	size_t n = 0, kept;
	double room;

	if (b->hits_per_s <= 0 || !t0 || now <= t0 ||
	    govern_tick_buffers(b, s->nfuncs ? s->nfuncs : 1) != 0)
		return;
	/* Over a millisecond at least: a rate, not one call's gap. */
	double dt = now - t0 < 1000000 ? 1e-3 : (double)(now - t0) / 1e9;
	double allowed = govern_allowed_hits(b);
	double watched = govern_ring_but_oldest(b, b->watch_ring) +
			 (double)(tracer_watch_hits(s->tracer) - b->watch_hits);
	b->brakes++;
	for (size_t i = 0; i < s->nfuncs; i++) {
		struct session_func *sf = &s->funcs[i];
		struct govern_func *gf = &sf->gf;
		struct retop_func_stats st;
		if (sf->slot < 0 ||
		    (gf->at_rest &&
		     tracer_hits_still(s->tracer, sf->slot, gf->last_begun, gf->last_entries,
				       gf->last_rets, gf->last_inlined)))
			continue;
		/* Called: the next slice measures it, whatever its turn. */
		gf->at_rest = false;
		if (tracer_read_counters(s->tracer, sf->slot, &st) != 0)
			continue;
		double begun = (double)(st.begun - gf->last_begun);
		double inlined = (double)(st.inlined - gf->last_inlined);
		struct budget_brake_in *x = &b->tick_brake[n];
		x->hits = govern_ring_but_oldest(b, gf->hits_ring) +
			  (double)(st.entries + st.rets + st.inlined - gf->last_hits);
		x->calls = govern_ring_but_oldest(b, gf->begun_ring) + begun +
			   govern_ring_but_oldest(b, gf->inl_ring) + inlined;
		/* An estimated function's calls begin only in its sampled
		 * slices: its rate is its entries' while its entry was in. */
		bool est = gf->mode == BUDGET_ESTIMATED;
		uint64_t in_ns = est ? govern_covered(gf, t0, now) : 0;
		x->rate = gf->marks_only ? 0
			  : !est	 ? begun / dt
			  : in_ns >= 1000000
			      ? (double)(st.entries - gf->last_entries) / ((double)in_ns / 1e9)
			      : 0;
		x->inlined = est ? 0 : inlined / dt;
		govern_demand(gf, now, &b->tick_demand[n]);
		b->tick_sf[n++] = sf;
	}
	size_t shed =
	    budget_brake(b->tick_demand, b->tick_brake, n, govern_funcs_allowed(b, allowed),
			 budget_brake_others(watched, govern_overspent(s, now), allowed), now,
			 b->tick_order, b->tick_plan, &kept, &room);
	for (size_t j = 0; j < n; j++) {
		struct session_func *sf = b->tick_sf[j];
		struct govern_func *gf = &sf->gf;
		/* Estimated, in a sampled slice at a rate past its plan's: a
		 * query's burst at 100,000 calls a second spends a second's
		 * budget in one slice.  The slice ends now, the next ones are
		 * drawn at the share the plan gives that rate. */
		if (gf->mode == BUDGET_ESTIMATED && b->tick_brake[j].rate > gf->peak_per_s &&
		    b->tick_plan[j].share < gf->share && tracer_entry_is_in(s->tracer, sf->slot)) {
			log_debug("budget", "%s: sampled slice cut at %.0f calls a second",
				  sf->f->name, b->tick_brake[j].rate);
			gf->peak_per_s = b->tick_brake[j].rate;
			govern_cut_slice(s, sf, b->tick_plan[j].share, now);
			govern_look_add(b, (size_t)(sf - s->funcs));
			shed++;
			continue;
		}
		if (b->tick_plan[j].to == gf->mode)
			continue;
		log_debug("budget", "%s: braked at %.0f calls a second since the slice began",
			  sf->f->name, b->tick_brake[j].rate);
		/* Planned so until its calls say otherwise: estimated, at the
		 * rate it ran at; its entries kept, at its calls of the last
		 * second (its rate was a burst's, which the second paid for). */
		double peak = b->tick_plan[j].to == BUDGET_ESTIMATED ? b->tick_brake[j].rate
								     : b->tick_brake[j].calls;
		if (peak > gf->peak_per_s)
			gf->peak_per_s = peak;
		/* Its marks out, their rate decays from the one they ran at. */
		if (b->tick_brake[j].inlined > gf->inlined_per_s)
			gf->inlined_per_s = b->tick_brake[j].inlined;
		gf->share = b->tick_plan[j].share;
		govern_apply(s, sf, b->tick_plan[j].to, now);
		if (gf->mode == BUDGET_ESTIMATED || gf->drain_until_ns)
			govern_look_add(b, (size_t)(sf - s->funcs));
	}
	/* Another function may follow (a query calls many at once): armed
	 * again after every brake that shed one, however many came before in
	 * the slice.  Each sheds a function at least, so there are no more
	 * than the functions bursting; with three at most a slice, a query's
	 * fourth ran unbraked to the slice's end (73 ms at 312,000 calls a
	 * second).  A burst kept counted is braked again once its entries
	 * could pass the room the second left it: a scrape's 40,000 calls
	 * begin as a burst the second can pay for. */
	double at = GOVERN_BRAKE_SHARE * allowed;
	if (kept && (room < at || b->brakes >= GOVERN_BRAKES_MAX))
		at = room;
	if (kept || shed)
		tracer_wake_arm(s->tracer, (uint64_t)at + 1);
}

static uint64_t govern_tick_now(struct session *s, uint64_t now_ns)
{
	struct govern *b = &s->gov;
	struct retop_func_stats *st;
	size_t n = 0, cap = s->nfuncs ? s->nfuncs : 1;

	/* A quiet slice cut short: BPF woke the engine (the hits rose, or an
	 * exec()).  Slices of 100 ms for a second. */
	bool after_quiet = b->quiet;
	if (after_quiet && now_ns + BUDGET_SLICE_NS / 2 < b->quiet_until_ns)
		b->loud_until_ns = now_ns + GOVERN_QUIET_NS;
	b->quiet = false;
	/* The next slice; a look sooner where a sampled slice starts or
	 * calls drain (below). */
	b->next_ns = b->slice_due_ns = now_ns + BUDGET_SLICE_NS;
	if (govern_tick_buffers(b, cap) != 0)
		return b->next_ns;
	st = b->tick_st;
	b->slice++;
	if (after_quiet)
		govern_rings_restart(s);
	/* The ring's oldest slice began where the one it replaces ended. */
	uint64_t began = b->slice_end_ns[b->slice % GOVERN_RING];
	b->slice_end_ns[b->slice % GOVERN_RING] = now_ns;
	b->hits_end[b->slice % GOVERN_RING] = tracer_budget_hits(s->tracer);
	b->ring_s = began && now_ns > began + 1000000000ull ? (double)(now_ns - began) / 1e9 : 1.0;
	uint64_t wh = tracer_watch_hits(s->tracer);
	b->watch_ring[b->slice % GOVERN_RING] = wh - b->watch_hits;
	b->watch_hits = wh;
	b->watch_slice_s = b->watch_read_ns && now_ns > b->watch_read_ns
			       ? (double)(now_ns - b->watch_read_ns) / 1e9
			       : 0;
	b->watch_read_ns = now_ns;
	double allowed = govern_allowed_hits(b), funcs_allowed = govern_funcs_allowed(b, allowed);
	b->brakes = 0;
	/* A function at rest adds no cost and takes full: with a budget left
	 * to share, the plan of the others is the same without it.  (With
	 * none, the plan puts even those out of full.) */
	bool skip_rest = b->hits_per_s <= 0 || funcs_allowed >= 0, any = false;
	/* Loud, they are looked at one slice in five (GOVERN_REST_EVERY);
	 * the first slice after a quiet one looks at them all. */
	bool rest_unread = skip_rest && !after_quiet && b->slice % GOVERN_REST_EVERY != 0;
	for (size_t i = 0; i < s->nfuncs; i++) {
		struct session_func *sf = &s->funcs[i];
		struct govern_func *gf = &sf->gf;
		if (sf->slot < 0)
			continue;
		any = true;
		if (skip_rest && gf->at_rest &&
		    (rest_unread ||
		     tracer_hits_still(s->tracer, sf->slot, gf->last_begun, gf->last_entries,
				       gf->last_rets, gf->last_inlined)))
			continue;
		gf->at_rest = false;
		if (tracer_read_counters(s->tracer, sf->slot, &st[i]) != 0)
			continue;
		govern_measure(s, sf, now_ns, &st[i]);
		b->tick_sf[n] = sf;
		govern_demand(&sf->gf, now_ns, &b->tick_demand[n]);
		b->tick_plan[n] = (struct budget_decision){.to = BUDGET_FULL, .share = 1.0};
		n++;
	}
	govern_trap_share(s, b->tick_sf, n, b->slice_end_ns[(b->slice - 1) % GOVERN_RING], now_ns);
	if (b->hits_per_s > 0)
		budget_plan(b->tick_demand, n, funcs_allowed, now_ns, b->tick_order, b->tick_plan);
	bool spent = govern_spent(s, now_ns);
	size_t timed = 0;
	for (size_t j = 0; j < n; j++) {
		struct session_func *sf = b->tick_sf[j];
		if (spent && b->tick_plan[j].to < sf->gf.mode)
			b->tick_plan[j] =
			    (struct budget_decision){.to = sf->gf.mode, .share = sf->gf.share};
		timed += b->hits_per_s > 0 && b->tick_plan[j].to == BUDGET_TIMING &&
			 !sf->gf.marks_only && !sf->gf.entry_only;
	}
	b->run_every_s = budget_run_every_s(timed);
	for (size_t j = 0; j < n; j++) {
		struct session_func *sf = b->tick_sf[j];
		if (b->hits_per_s > 0)
			sf->gf.share = b->tick_plan[j].share;
		govern_apply(s, sf, b->hits_per_s > 0 ? b->tick_plan[j].to : BUDGET_FULL, now_ns);
		sf->gf.probes_were_in = tracer_entry_is_in(s->tracer, sf->slot);
		sf->gf.at_rest = govern_at_rest(s, sf);
	}
	b->nlook = 0;
	for (size_t j = 0; j < n; j++) {
		const struct govern_func *gf = &b->tick_sf[j]->gf;
		if (gf->mode == BUDGET_ESTIMATED || gf->drain_until_ns)
			b->look[b->nlook++] = (size_t)(b->tick_sf[j] - s->funcs);
	}
	govern_watchers(s, any, allowed, now_ns);
	govern_go_quiet(s, b->tick_sf, n, allowed, now_ns);
	return b->next_ns;
}

uint64_t govern_tick(struct session *s, uint64_t now_ns)
{
	if (!s->tracer)
		return now_ns + BUDGET_SLICE_NS;
	if (now_ns < s->gov.next_ns)
		return s->gov.next_ns;
	/* The probes this tick takes out close together at its end. */
	tracer_defer(s->tracer);
	if (s->gov.brake_due && now_ns < s->gov.slice_due_ns)
		govern_brake(s, now_ns);
	s->gov.brake_due = false;
	uint64_t next =
	    now_ns < s->gov.slice_due_ns ? govern_look(s, now_ns) : govern_tick_now(s, now_ns);
	tracer_flush(s->tracer);
	return next;
}

void govern_close(struct govern *b)
{
	free(b->tick_st);
	free(b->tick_demand);
	free(b->tick_plan);
	free(b->tick_sf);
	free(b->tick_order);
	free(b->tick_brake);
	free(b->look);
	b->look = NULL;
	b->nlook = 0;
	b->tick_st = NULL;
	b->tick_demand = NULL;
	b->tick_plan = NULL;
	b->tick_sf = NULL;
	b->tick_order = NULL;
	b->tick_brake = NULL;
	b->tick_cap = 0;
}

void govern_sample(struct session *s, uint64_t now_ns)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		if (s->funcs[i].slot >= 0 && s->funcs[i].gf.mode == BUDGET_ESTIMATED)
			govern_read_slices(s, &s->funcs[i], now_ns, true);
}

void govern_fill(struct session_func *sf, struct snapshot_func *out)
{
	struct govern_func *gf = &sf->gf;
	struct ledger_view lv;

	out->mode = gf->mode;
	out->sampled = gf->mode == BUDGET_FULL ? 1.0 : gf->share;
	/* A call whose bucket found no place has a duration in the mean
	 * only: the percentiles are then a sample. */
	out->timed_calls =
	    sf->cur.st.calls -
	    (sf->cur.st.hist_lost < sf->cur.st.calls ? sf->cur.st.hist_lost : sf->cur.st.calls);
	ledger_view(&gf->ledger, govern_counted(gf, &sf->cur.st), gf->mode == BUDGET_ESTIMATED,
		    &lv);
	out->v.calls = lv.calls;
	out->estimated = lv.estimated;
	if (!lv.estimated)
		return;
	out->calls_ci95[0] = lv.lo;
	out->calls_ci95[1] = lv.hi;
	out->trap_share = lv.trap_share;
	out->estimate_gap_s = lv.gap_s;
	/* No upper end: no point estimate either.  The calls are at least the
	 * lower end, and at least any lower end shown before (they only grow). */
	if (isinf(lv.hi)) {
		if (lv.lo > gf->lower_shown)
			gf->lower_shown = lv.lo;
		out->v.calls = (uint64_t)gf->lower_shown;
		out->calls_lower_bound = true;
	}
}
