/* The calls' ledger and the estimate's interval (estimate.h). */
#include "estimate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void estimate_slice(struct estimate *e, double p, bool on, uint64_t n)
{
	/* A slice left out by chance is time nobody saw. */
	e->partial += p < 1;
	if (!on || e->stopped)
		return;
	e->sum += (double)n / p;
	e->seen += (double)n;
	e->slices_with_calls += n > 0 && p < 1;
	e->var += (double)n * (double)n * (1 - p) / (p * p);
}

bool estimate_stop(struct estimate *e, const char *why)
{
	if (e->stopped)
		return false;
	e->stopped = true;
	snprintf(e->why, sizeof(e->why), "%.150s", why);
	return true;
}

void ledger_enter_estimate(struct ledger *l, uint64_t counted)
{
	l->exact_base += counted > l->period_start ? counted - l->period_start : 0;
	l->ever_estimated = true;
}

void ledger_leave_estimate(struct ledger *l, uint64_t part, uint64_t counted)
{
	if (!l->est.stopped)
		l->est.sum += (double)part;
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
	double half = 1.96 * sqrt(e->var), est = e->sum;
	out->estimated = true;
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
	 * of it. */
	double trap = e->cpu_ns > 0 ? e->trap_ns / e->cpu_ns : 0;
	out->trap_share = trap;
	bool bounded = trap < 0.5 && !e->stopped && enough;
	out->hi = bounded ? exact + (est + half) / (1 - trap) : INFINITY;
}
