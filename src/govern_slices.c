/* Carrying out the sampled modes: the RET probes out once the calls they
 * timed drained (timing, estimated), and the estimated mode's slices
 * (estimate.h): which slices are sampled, their probes in and out, BPF's
 * gate, and reading what each slice counted for the time its entry probe
 * was really in. */
#include "govern_internal.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "session_internal.h"
#include "tracer.h"

/* How long the calls timed in a slice get to return once it ended, with
 * the RET probes still in; those still in flight then lose their duration
 * (they were counted, at their entry). */
#define GOVERN_DRAIN_NS 1000000000ull
/* Looks, a millisecond apart, for them to return before the next slice. */
#define GOVERN_DRAIN_QUICK 5

double govern_rand(struct govern *b)
{
	if (!b->rng)
		b->rng = clock_now_ns() * 0x9E3779B97F4A7C15ull | 1;
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	return (double)(b->rng >> 11) / 9007199254740992.0;
}

uint64_t govern_counted(const struct govern_func *gf, const struct retop_func_stats *st)
{
	if (gf->entry_only)
		return st->begun;
	return st->calls + st->untimed + gf->drained;
}

/* The next tick in a millisecond at the latest. */
static void govern_look_soon(struct session *s)
{
	uint64_t soon = clock_now_ns() + 1000000ull;

	if (s->gov.next_ns > soon)
		s->gov.next_ns = soon;
}

/* The RET probes stay while timed calls are in flight, up to the drain's
 * deadline; then the calls left lose their duration (counted all the
 * same) and the probes go. */
void govern_drain(struct session *s, struct session_func *sf, uint64_t now)
{
	struct govern_func *gf = &sf->gf;
	int slot = sf->slot;

	if (!tracer_rets_are_in(s->tracer, slot))
		return;
	if (!gf->drain_until_ns) {
		gf->drain_until_ns = now + GOVERN_DRAIN_NS;
		gf->drain_quick = GOVERN_DRAIN_QUICK;
	}
	/* An entry probe taken out fires until the tick's end (tracer_flush)
	 * but times no call (BPF's slot_closing): the RETs wait only for the
	 * timed calls to return, and close with it. */
	if (!tracer_slot_timing_none(s->tracer, slot) && now < gf->drain_until_ns) {
		/* Short calls return within microseconds: the clock looks again
		 * in a millisecond, a few times, rather than a slice of RET
		 * traps later (and the face's thread never sleeps here). */
		if (gf->drain_quick && gf->drain_quick--)
			govern_look_soon(s);
		return;
	}
	uint64_t n =
	    tracer_slot_inflight(s->tracer, slot) > 0 ? tracer_untime_inflight(s->tracer, slot) : 0;
	if (gf->mode != BUDGET_ESTIMATED)
		gf->drained += n; /* counted exactly: at their entry */
	tracer_rets_out(s->tracer, slot);
	gf->drain_until_ns = 0;
}

/* The slice under way at now (the gate may have been set after now was
 * read). */
uint64_t govern_slice_of(const struct govern_func *gf, uint64_t now)
{
	return now > gf->gate_base ? (now - gf->gate_base) / BUDGET_SLICE_NS : 0;
}

/* The entry probe went in (at: once the attach returned), or out: its
 * times in, which say how much of each slice its calls were counted in.
 * BPF counts only the calls begun between the two (gate_in, gate_out):
 * the time credited and the calls counted are the same span, however long
 * the attach took (5-100 ms on a busy VM, against a capped slice's 14 ms). */
static void govern_entry_in(struct session *s, struct session_func *sf, uint64_t at)
{
	struct govern_func *gf = &sf->gf;

	if (gf->in_since)
		return;
	gf->in_since = at ? at : 1;
	tracer_gate_window(s->tracer, sf->slot, at, UINT64_MAX);
}

static void govern_entry_out(struct session *s, struct session_func *sf, uint64_t at)
{
	struct govern_func *gf = &sf->gf;

	if (!gf->in_since)
		return;
	tracer_gate_window(s->tracer, sf->slot, gf->in_since, at);
	unsigned i = gf->in_n++ % GOVERN_IN_LOG;
	gf->in_log[i][0] = gf->in_since;
	gf->in_log[i][1] = at;
	gf->in_since = 0;
}

uint64_t govern_covered(const struct govern_func *gf, uint64_t t0, uint64_t t1)
{
	uint64_t ns = 0;
	unsigned n = gf->in_n < GOVERN_IN_LOG ? gf->in_n : GOVERN_IN_LOG;

	for (unsigned k = 0; k <= n; k++) {
		uint64_t a = k < n ? gf->in_log[k][0] : gf->in_since;
		uint64_t b = k < n ? gf->in_log[k][1] : UINT64_MAX;
		if (!a)
			continue;
		a = a > t0 ? a : t0;
		b = b < t1 ? b : t1;
		ns += b > a ? b - a : 0;
	}
	return ns < t1 - t0 ? ns : t1 - t0;
}

/* The part of slice k up to t (its end when over) not read yet: what it
 * counted, for the share of it its entry probe was in. */
static void govern_read_part(struct session *s, struct session_func *sf, uint64_t k, uint64_t t,
			     bool last)
{
	struct govern_func *gf = &sf->gf;
	uint64_t start = gf->gate_base + k * BUDGET_SLICE_NS;
	uint64_t t0 = gf->read_from > start ? gf->read_from : start;
	uint64_t n = tracer_gate_take(s->tracer, sf->slot, k);
	size_t i = k % RETOP_GATE_RING;

	gf->read_from = t;
	if (t <= t0)
		return;
	/* A slice never planned (retop fell behind its clock) is a gap, and
	 * so is a sampled one whose probe never went in: the estimate goes
	 * on, imputing their time at the rate of the rest. */
	bool planned = k < gf->k_plan && gf->slice_p[i] > 0;
	double in = (double)govern_covered(gf, t0, t) / (double)(t - t0);
	estimate_slice(&gf->ledger.est, planned ? gf->slice_p[i] : 0, planned && gf->slice_on[i],
		       in, (double)(t - t0) / 1e9, n, last);
	gf->slice_n += n;
	if (!last)
		return;
	if (planned && gf->slice_on[i] && in > 0) {
		double rate = (double)gf->slice_n / in * 1e9 / BUDGET_SLICE_NS;
		gf->calls_per_s = gf->calls_per_s > 0 ? 0.7 * gf->calls_per_s + 0.3 * rate : rate;
		gf->rate_per_s = gf->calls_per_s;
	}
	gf->slice_n = 0;
}

void govern_read_slices(struct session *s, struct session_func *sf, uint64_t now, bool partial)
{
	struct govern_func *gf = &sf->gf;
	uint64_t c = govern_slice_of(gf, now);

	for (; gf->k_read < c; gf->k_read++)
		govern_read_part(s, sf, gf->k_read,
				 gf->gate_base + (gf->k_read + 1) * BUDGET_SLICE_NS, true);
	if (partial)
		govern_read_part(s, sf, c, now, false);
}

/* Decide slices up to c + 2 at random, each sampled with the share: a
 * tick up to a slice late still finds the slice under way planned.  A
 * slice whose time began before it was planned is never sampled (its
 * chance was not the one stated): a gap. */
static void govern_plan_slices(struct session *s, struct session_func *sf, uint64_t c)
{
	struct govern_func *gf = &sf->gf;

	for (; gf->k_plan <= c + 2; gf->k_plan++) {
		uint64_t k = gf->k_plan;
		size_t i = k % RETOP_GATE_RING;
		bool late = k <= c;
		gf->slice_on[i] = !late && govern_rand(&s->gov) < gf->share;
		gf->slice_p[i] = late ? 0 : gf->share;
		tracer_gate_plan(s->tracer, sf->slot, k, gf->slice_on[i]);
	}
}

/* Probes in for the sampled slices (the entry one slice early at most),
 * out between them. */
void govern_run_estimate(struct session *s, struct session_func *sf, uint64_t now)
{
	struct govern_func *gf = &sf->gf;
	uint64_t c = govern_slice_of(gf, now);
	uint64_t next_start = gf->gate_base + (c + 1) * BUDGET_SLICE_NS;
	char err[ERR_LEN];

	govern_read_slices(s, sf, now, false);
	govern_plan_slices(s, sf, c);
	/* A slice ends once it counted its cap (BPF wakes the clock then):
	 * those calls stand for the time its probe was in. */
	uint64_t cap = budget_slice_cap(govern_allowed_hits(&s->gov), gf->slice_cost);
	tracer_gate_cap(s->tracer, sf->slot, cap);
	if (cap && gf->cut_k != c + 1 && tracer_entry_is_in(s->tracer, sf->slot) &&
	    gf->slice_n + tracer_gate_count(s->tracer, sf->slot, c) >= cap) {
		log_debug("budget", "%s: sampled slice full (%llu calls)", sf->f->name,
			  (unsigned long long)cap);
		gf->cut_k = c + 1;
	}
	/* The probes go in just before a sampled slice, where the calls of
	 * that lead cost little, else as it starts: the governor wakes for
	 * it. */
	uint64_t lead = budget_slice_lead(gf->peak_per_s, cap, GOVERN_LEAD_NS) ? GOVERN_LEAD_NS : 0;
	bool next_on = gf->slice_on[(c + 1) % RETOP_GATE_RING];
	bool cur_on = gf->slice_on[c % RETOP_GATE_RING] && gf->cut_k != c + 1;
	bool want = cur_on || (next_on && lead && now + lead >= next_start);
	uint64_t wake = next_on && !want   ? next_start - lead
			: want && !next_on ? next_start + GOVERN_LEAD_NS / 5 /* out as it ends */
					   : UINT64_MAX;
	if (s->gov.next_ns > wake)
		s->gov.next_ns = wake;
	bool in = tracer_entry_is_in(s->tracer, sf->slot) &&
		  (gf->entry_only || tracer_rets_are_in(s->tracer, sf->slot));
	if (want && !in) {
		/* Failed, the slices it was for are gaps (nothing counted). */
		if (session_probes_in(s, sf, true, !gf->entry_only, err) != 0)
			log_warn("budget", "%s: probes not in for a sampled slice: %s", sf->f->name,
				 err);
		else
			govern_entry_in(s, sf, clock_now_ns());
		gf->drain_until_ns = 0;
	} else if (!want && tracer_entry_is_in(s->tracer, sf->slot)) {
		govern_entry_out(s, sf, clock_now_ns());
		tracer_entry_out(s->tracer, sf->slot);
	}
	if (!tracer_entry_is_in(s->tracer, sf->slot))
		govern_drain(s, sf, now);
}

void govern_cut_slice(struct session *s, struct session_func *sf, double share, uint64_t now)
{
	struct govern_func *gf = &sf->gf;
	uint64_t c = govern_slice_of(gf, now);

	/* What it counted so far stands for the whole slice, at the share of
	 * it its entry was in (govern_read_part).  The slices not begun are
	 * drawn again: the chance each is drawn with is the one stated. */
	gf->share = share;
	gf->cut_k = c + 1;
	if (tracer_entry_is_in(s->tracer, sf->slot)) {
		govern_entry_out(s, sf, clock_now_ns());
		tracer_entry_out(s->tracer, sf->slot);
	}
	if (gf->k_plan > c + 1)
		gf->k_plan = c + 1;
	govern_run_estimate(s, sf, now); /* plans them */
}

void govern_enter_estimate(struct session *s, struct session_func *sf)
{
	struct govern_func *gf = &sf->gf;
	struct retop_func_stats st;

	/* Slices from now, the first one sampled at random like the others:
	 * from the moment the gate is set, a call counts in a sampled slice
	 * or not at all.  The entry probe is in (full or timing). */
	for (size_t i = 0; i < RETOP_GATE_RING; i++)
		gf->slice_on[i] = false;
	gf->gate_base = clock_now_ns();
	gf->k_read = 0;
	gf->k_plan = 1;
	gf->read_from = 0;
	gf->slice_n = 0;
	gf->cut_k = 0;
	gf->in_since = gf->in_n = 0;
	/* From timing, its RETs out: the first slice is a gap, never sampled
	 * (govern_read_part), so the entry goes out at once.  Sampled, the
	 * RETs would go in first, an attach that takes up to 100 ms on a busy
	 * machine while the entry fires at the rate that put it here. */
	bool rets_out = !gf->entry_only && !tracer_rets_are_in(s->tracer, sf->slot);
	gf->slice_on[0] = !rets_out && govern_rand(&s->gov) < gf->share;
	gf->slice_p[0] = rets_out ? 0 : gf->share;
	tracer_gate(s->tracer, sf->slot, gf->gate_base, BUDGET_SLICE_NS, gf->slice_on[0]);
	/* After the gate, which opens the entry's window wide: in from the
	 * gate's base. */
	govern_entry_in(s, sf, gf->gate_base);
	/* The exact period ends: the counters as the gate closed it, and the
	 * calls still in flight, counted at their entry as the estimate
	 * counts every call. */
	if (tracer_read_counters(s->tracer, sf->slot, &st) == 0)
		ledger_enter_estimate(&gf->ledger,
				      govern_counted(gf, &st) +
					  (uint64_t)tracer_slot_inflight(s->tracer, sf->slot));
	/* The calls of sampled slices are timed: their RETs go in with the
	 * entry, for the first sampled slice (govern_run_estimate). */
	tracer_record(s->tracer, sf->slot, true);
}

void govern_leave_estimate(struct session *s, struct session_func *sf, uint64_t now)
{
	struct govern_func *gf = &sf->gf;
	uint64_t c = govern_slice_of(gf, now), start = gf->gate_base + c * BUDGET_SLICE_NS;
	struct retop_func_stats st;

	govern_read_slices(s, sf, now, false);
	/* The exact period begins with the counters as they are now (read at
	 * the tick's start, the calls that returned since would count twice),
	 * the gate closed right after: a call in neither is one that began
	 * or returned within the microseconds in between. */
	uint64_t counted = tracer_read_counters(s->tracer, sf->slot, &st) == 0
			       ? govern_counted(gf, &st)
			       : govern_counted(gf, &sf->cur.st);
	counted += (uint64_t)tracer_slot_inflight(s->tracer, sf->slot);
	uint64_t t0 = gf->read_from > start ? gf->read_from : start;
	tracer_gate(s->tracer, sf->slot, 0, 0, false);
	/* The slice under way is sampled (govern_apply waits for one): what
	 * it counted so far, counted for sure. */
	uint64_t part = tracer_gate_take(s->tracer, sf->slot, c);
	double in = now > t0 ? (double)govern_covered(gf, t0, now) / (double)(now - t0) : 1;
	ledger_leave_estimate(&gf->ledger, part, in, (double)(now > t0 ? now - t0 : 0) / 1e9,
			      counted);
	gf->in_since = gf->in_n = 0;
}
