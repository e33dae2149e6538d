/* The overhead budget's policy: pure arithmetic on the demand the governor
 * measured (budget.h). */
#include "budget.h"

#include <math.h>
#include <stdlib.h>

double budget_allowed_hits(double hits_per_s, double pct, double hit_ns)
{
	double allowed = hits_per_s;

	if (hits_per_s <= 0)
		return 0;
	if (pct > 0 && hit_ns > 0) {
		/* A target busy on a CPU that spends a share c of its time in
		 * traps does the same work 1/(1-c) times slower: for a
		 * slowdown of at most p, c = p/(1+p). */
		double p = pct / 100.0, cpu = p / (1 + p) * 1e9 / hit_ns;
		if (cpu < allowed)
			allowed = cpu;
	}
	return allowed;
}

uint64_t budget_slice_cap(double allowed, double slice_cost)
{
	if (allowed <= 0)
		return 0;
	double calls = BUDGET_SLICE_FILL * allowed / (slice_cost > 1 ? slice_cost : 1);
	return calls < BUDGET_SLICE_CAP_MIN ? BUDGET_SLICE_CAP_MIN : (uint64_t)calls;
}

bool budget_slice_lead(double peak_per_s, uint64_t cap, uint64_t lead_ns)
{
	return !cap || 4 * peak_per_s * ((double)lead_ns / 1e9) < (double)cap;
}

/* qsort has no context: the demands being sorted. */
static _Thread_local const struct budget_demand *budget_sorting;

static int budget_order_cmp(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	double x = budget_sorting[i].hits, y = budget_sorting[j].hits;

	/* Ties in the demands' order: the same plan from the same numbers. */
	return x < y ? -1 : x > y ? 1 : (i > j) - (i < j);
}

/* What a whole share (1) of a function not in full costs, in hits a
 * second: the RETs of every call (timing), or every probe in every slice
 * at the measured cost of a sampled slice (estimated). */
static double budget_share_cost(const struct budget_demand *x, enum budget_mode to)
{
	/* On the rate (calls_per_s is a second's count, which a new function
	 * has not filled yet). */
	double rate = x->rate_per_s;

	return to == BUDGET_TIMING ? rate : x->slice_cost * rate * (x->entry_only ? 1 : 2);
}

/* The shares of the functions not in full: what is left, in equal parts.
 * A function is sampled at least BUDGET_MIN_SHARE of the time while the
 * budget pays for that; where the floors would take more than is left, they
 * shrink to what is left (the budget wins, the estimate widens). */
static void budget_shares(const struct budget_demand *d, size_t n, const size_t *order, size_t rest,
			  double left, struct budget_decision *out)
{
	double each = rest && left > 0 ? left / (double)rest : 0, spent = 0, floored = 0;

	for (size_t k = 0; k < n; k++) {
		const struct budget_demand *x = &d[order[k]];
		struct budget_decision *o = &out[order[k]];
		if (o->to == BUDGET_FULL)
			continue;
		double cost = budget_share_cost(x, o->to);
		o->share = cost > 0 ? each / cost : 1.0;
		if (o->share >= 1) {
			/* Every slice timed: that is the full mode. */
			o->share = 1;
			o->to = o->to == BUDGET_TIMING ? BUDGET_FULL : o->to;
		}
		if (o->share < BUDGET_MIN_SHARE) {
			o->share = BUDGET_MIN_SHARE;
			floored += BUDGET_MIN_SHARE * cost;
		} else
			spent += o->share * cost;
	}
	if (floored <= 0 || spent + floored <= left)
		return;
	double f = left > spent ? (left - spent) / floored : 0;
	for (size_t k = 0; k < n; k++) {
		struct budget_decision *o = &out[order[k]];
		if (o->to != BUDGET_FULL && o->share == BUDGET_MIN_SHARE)
			o->share = BUDGET_MIN_SHARE * f;
	}
}

uint64_t budget_hold_after(uint64_t hold_ns, uint64_t up_ns, uint64_t now_ns)
{
	if (!up_ns || now_ns - up_ns >= BUDGET_HOLD_STAY_NS || hold_ns < BUDGET_HOLD_NS)
		return BUDGET_HOLD_NS;
	return hold_ns >= BUDGET_HOLD_MAX_NS / 2 ? BUDGET_HOLD_MAX_NS : 2 * hold_ns;
}

/* Held long enough in its mode to go to a dearer one. */
static bool budget_settled(const struct budget_demand *x, uint64_t now_ns)
{
	return now_ns - x->mode_since_ns >= (x->hold_ns ? x->hold_ns : BUDGET_HOLD_NS);
}

/* Water-filling: the cheapest functions in full while each fits in an
 * equal share of what is left (one in a cheaper mode for less than its
 * hold stays out of full, and the filling goes on past it).
 * Then, cheapest first, the others keep their entries in (every call
 * counted) while those fit in what is left, less a fifth for the rest;
 * the ones that do not fit are estimated.  What remains is shared
 * (budget_shares): RET slices of the timed, sampled slices of the
 * estimated. */
void budget_plan(const struct budget_demand *d, size_t n, double allowed, uint64_t now_ns,
		 size_t *order, struct budget_decision *out)
{
	double left = allowed * BUDGET_AIM;
	size_t nfull = 0;

	for (size_t k = 0; k < n; k++) {
		order[k] = k;
		out[k] = (struct budget_decision){.to = BUDGET_ESTIMATED, .share = 1.0};
	}
	budget_sorting = d;
	qsort(order, n, sizeof(*order), budget_order_cmp);
	for (size_t k = 0; k < n; k++) {
		const struct budget_demand *x = &d[order[k]];
		bool settled = budget_settled(x, now_ns);
		if (x->mode != BUDGET_FULL && !settled)
			continue;
		double cost = x->mode == BUDGET_FULL ? x->hits : x->hits / BUDGET_HEADROOM;
		if (cost > left / (double)(n - nfull))
			break;
		left -= x->hits;
		out[order[k]].to = BUDGET_FULL;
		nfull++;
	}
	for (size_t k = 0; k < n; k++) {
		const struct budget_demand *x = &d[order[k]];
		if (out[order[k]].to == BUDGET_FULL)
			continue;
		double entries = x->entry_only ? x->hits : x->calls_per_s + x->inlined_per_s;
		bool settled = budget_settled(x, now_ns);
		double room = x->mode != BUDGET_ESTIMATED ? BUDGET_ENTRY_ROOM
			      : settled			  ? BUDGET_ENTRY_ROOM * BUDGET_HEADROOM
							  : 0;
		if (x->counts_at_entry && !x->entry_only && entries <= left * room) {
			out[order[k]].to = BUDGET_TIMING;
			left -= entries;
		}
	}
	budget_shares(d, n, order, n - nfull, left, out);
}

/* qsort has no context: what the brake's keeping sorts by. */
static _Thread_local const struct budget_brake_in *brake_sorting;

static int brake_calls_cmp(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	double x = brake_sorting[i].calls, y = brake_sorting[j].calls;

	return x < y ? -1 : x > y ? 1 : (i > j) - (i < j);
}

size_t budget_brake(struct budget_demand *d, const struct budget_brake_in *in, size_t n,
		    double allowed, double other_hits, uint64_t now_ns, size_t *order,
		    struct budget_decision *out, size_t *kept, double *room)
{
	double spent = other_hits, theirs = 0;
	size_t shed = 0, m = 0;

	*kept = 0;
	for (size_t i = 0; i < n; i++) {
		struct budget_demand *x = &d[i];
		/* The estimated's slices yield to cheaper functions' entries
		 * at the next plan, as in budget_plan: theirs do not count. */
		if (x->mode != BUDGET_ESTIMATED)
			spent += in[i].hits;
		bool calls = in[i].rate > x->calls_per_s, marks = in[i].inlined > x->inlined_per_s;
		if (!calls && !marks)
			continue;
		if (calls)
			x->calls_per_s = in[i].rate;
		if (in[i].rate > x->rate_per_s)
			x->rate_per_s = in[i].rate;
		if (marks)
			x->inlined_per_s = in[i].inlined;
		double hits = x->calls_per_s * (x->entry_only ? 1 : 2) + x->inlined_per_s;
		if (hits > x->hits)
			x->hits = hits;
	}
	budget_plan(d, n, allowed, now_ns, order, out);
	for (size_t i = 0; i < n; i++)
		if (out[i].to == BUDGET_ESTIMATED && d[i].mode != BUDGET_ESTIMATED &&
		    (d[i].counts_at_entry || d[i].entry_only)) {
			order[m++] = i;
			theirs += in[i].hits;
		}
	brake_sorting = in;
	qsort(order, m, sizeof(*order), brake_calls_cmp);
	double left = BUDGET_ENTRY_ROOM * (allowed * BUDGET_AIM - (spent - theirs));
	for (size_t k = 0; k < m && in[order[k]].calls <= left; k++) {
		size_t i = order[k];
		left -= in[i].calls;
		out[i] = d[i].entry_only ? (struct budget_decision){.to = BUDGET_FULL, .share = 1.0}
					 : (struct budget_decision){.to = BUDGET_TIMING,
								    .share = BUDGET_MIN_SHARE};
		(*kept)++;
	}
	*room = left > 0 ? left : 0;
	/* Only what rose goes (the others wait for the slice's plan, on a
	 * second's measure), and only to a cheaper mode: the modes are
	 * ordered dearest first. */
	for (size_t i = 0; i < n; i++) {
		bool rose = (in[i].rate > 0 && d[i].calls_per_s == in[i].rate) ||
			    (in[i].inlined > 0 && d[i].inlined_per_s == in[i].inlined);
		if (rose && out[i].to > d[i].mode)
			shed++;
		else
			out[i] = (struct budget_decision){.to = d[i].mode, .share = out[i].share};
	}
	return shed;
}

double budget_run_every_s(size_t timed)
{
	double every = (double)timed / BUDGET_RUNS_PER_S;

	return every > BUDGET_RUN_EVERY_S ? every : BUDGET_RUN_EVERY_S;
}

unsigned budget_run_slices(double share, double every_s)
{
	if (!(every_s > BUDGET_RUN_EVERY_S))
		every_s = BUDGET_RUN_EVERY_S;
	double len = ceil(share * every_s * 1e9 / BUDGET_SLICE_NS);

	return !(len > 1) ? 1 : len < BUDGET_RUN_MAX ? (unsigned)len : BUDGET_RUN_MAX;
}

bool budget_run_step(double share, double every_s, unsigned *run_left, double u)
{
	unsigned len = budget_run_slices(share, every_s);

	/* A share that fell (a burst came) ends a longer run as soon as a
	 * run of the new length would have. */
	if (*run_left >= len)
		*run_left = len - 1;
	if (*run_left > 0) {
		(*run_left)--;
		return true;
	}
	if (!(share > 0))
		return false;
	/* Out, a run starts with chance q each slice: out for (1-q)/q slices
	 * on average, then len in; len / (len + (1-q)/q) = share. */
	double q = share >= 1 ? 1 : share / ((double)len * (1 - share) + share);
	if (u >= q)
		return false;
	*run_left = len - 1;
	return true;
}

double budget_brake_others(double watched, double overspent, double allowed)
{
	return watched + (overspent > allowed ? overspent - allowed : 0);
}
