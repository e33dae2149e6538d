/* The calls' ledger and the estimate's interval (estimate.h). */
#include "estimate.h"

#include <math.h>
#include <string.h>

void estimate_slice(struct estimate *e, double p, bool on, double in, double len_s, uint64_t n,
		    bool last)
{
	if (p <= 0 || (on && in <= 0)) {
		/* Never planned, or sampled with no probe in: nothing saw its
		 * time, and it was not left out by chance. */
		e->gap_s += len_s;
		return;
	}
	e->covered_s += len_s;
	/* A slice left out by chance is time nobody saw. */
	e->partial += last && p < 1;
	if (!on)
		return;
	if (in > 1)
		in = 1;
	/* The calls of the whole part, from the share its probe was in; that
	 * share's own sampling error (Poisson) adds to the slice's. */
	double y = (double)n / in;
	e->sum += y / p;
	e->seen += (double)n;
	e->slices_with_calls += last && n > 0 && p < 1;
	e->var += (y * y * (1 - p) + (double)n * (1 - in) / (in * in)) / (p * p);
}

void ledger_enter_estimate(struct ledger *l, uint64_t counted)
{
	l->exact_base += counted > l->period_start ? counted - l->period_start : 0;
	l->ever_estimated = true;
}

void ledger_leave_estimate(struct ledger *l, uint64_t part, double in, double len_s,
			   uint64_t counted)
{
	/* Counted in full while its probe was in; the rest of the part at the
	 * same rate. */
	if (in > 0) {
		l->est.sum += (double)part / (in > 1 ? 1 : in);
		l->est.seen += (double)part;
		l->est.covered_s += len_s;
	} else
		l->est.gap_s += len_s;
	l->period_start = counted;
}

void ledger_view(const struct ledger *l, uint64_t counted, bool estimating, struct ledger_view *out)
{
	const struct estimate *e = &l->est;

	memset(out, 0, sizeof(*out));
	if (!l->ever_estimated) {
		out->calls = counted - l->period_start + l->exact_base;
		return;
	}
	/* The calls in flight when the estimate ended were counted in it: the
	 * exact period counts from when as many returned (never below 0, so
	 * the total never goes back). */
	double since =
	    estimating || counted < l->period_start ? 0 : (double)(counted - l->period_start);
	double exact = (double)l->exact_base + since;
	out->estimated = true;
	out->gap_s = e->gap_s;
	/* The gaps at the rate of the covered time: the estimate scaled up,
	 * its variance with it, plus the gaps' own (Poisson) spread.  No
	 * covered time: no estimate, only what was seen. */
	double scale = e->covered_s > 0 ? (e->covered_s + e->gap_s) / e->covered_s : 1;
	double est = e->covered_s > 0 ? e->sum * scale : e->seen;
	double var =
	    e->var * scale * scale + (e->covered_s > 0 ? e->sum / e->covered_s * e->gap_s : 0);
	double half = 1.96 * sqrt(var);
	out->calls = (uint64_t)(exact + est + 0.5);
	/* Below: the calls seen are sure; the normal interval only once
	 * enough sampled slices saw calls (few say nothing of the spread). */
	bool enough = e->slices_with_calls >= ESTIMATE_MIN_SLICES || !e->partial;
	out->lo = enough && est - half > e->seen ? exact + est - half : exact + e->seen;
	/* The slices count the calls made with the probes in; without them the
	 * target runs faster, by 1/(1 - share of its CPU in traps) at most
	 * where its work is what the traps delay.  Past half, unbounded; and
	 * unbounded until enough sampled slices saw calls: a burst between
	 * them is invisible, and the variance of a few slices says nothing
	 * of it; and while nothing was covered. */
	double trap = e->cpu_ns > 0 ? e->trap_ns / e->cpu_ns : 0;
	/* A share of the CPU (the costs are timed, the time in is logged:
	 * either may be a little off). */
	out->trap_share = trap < 1 ? trap : 1;
	bool bounded = trap < 0.5 && enough && e->covered_s > 0;
	out->hi = bounded ? exact + (est + half) / (1 - trap) : INFINITY;
}
