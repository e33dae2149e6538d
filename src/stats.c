#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Buckets below this get one value each (see retop_hist_bucket()). */
#define EXACT_BUCKETS (2 * RETOP_HIST_SUB)

void stats_bucket_range(uint32_t b, uint64_t *lo, uint64_t *hi)
{
	uint32_t shift, sub;

	if (b < EXACT_BUCKETS) {
		*lo = b;
		*hi = (uint64_t)b + 1;
		return;
	}
	/* Out-of-range indexes read as the last (clamp) bucket rather than
	 * shifting past 64 bits. */
	if (b >= RETOP_HIST_BUCKETS)
		b = RETOP_HIST_BUCKETS - 1;
	shift = b / RETOP_HIST_SUB - 1;
	sub = b % RETOP_HIST_SUB + RETOP_HIST_SUB;
	*lo = (uint64_t)sub << shift;
	*hi = (uint64_t)(sub + 1) << shift;
}

/* The value a bucket stands for: exact buckets hold a single value, wider
 * ones are read at their midpoint, which halves the worst-case error. */
static uint64_t bucket_value(uint32_t b)
{
	uint64_t lo, hi;

	stats_bucket_range(b, &lo, &hi);
	if (b < EXACT_BUCKETS)
		return lo;
	return lo + (hi - lo) / 2;
}

uint64_t stats_bucket_value(uint32_t b)
{
	return bucket_value(b);
}

/* The rank of quantile q among total values: ceil(q * total), kept within
 * [1, total] whatever q is (NaN too). */
static uint64_t quantile_rank(double q, uint64_t total)
{
	double r = ceil(q * (double)total);

	if (!(r >= 1.0))
		return 1;
	if (r >= (double)total)
		return total;
	return (uint64_t)r;
}

/* Percentiles q[0] <= ... <= q[nq - 1] of cur - prev (prev may be NULL),
 * clamped to [lo, hi] unless hi is 0, into v[], over buckets [from, n):
 * those outside are 0 in cur and prev (stats_hist_span).  One pass for the
 * total and one for every rank.  Shared by the since-start and the
 * interval figures, so that the interval needs no copy of the difference. */
static void percentiles_span(const __u64 *cur, const __u64 *prev, uint32_t from, uint32_t n,
			     const double *q, size_t nq, uint64_t lo, uint64_t hi, uint64_t *v)
{
	uint64_t total = 0, rank, acc = 0;
	uint32_t b = from;
	size_t k = 0;

	for (uint32_t i = from; i < n; i++)
		total += cur[i] - (prev ? prev[i] : 0);
	for (size_t i = 0; i < nq; i++)
		v[i] = 0;
	if (!total)
		return;
	for (; k < nq; k++) {
		rank = quantile_rank(q[k], total);
		while (acc < rank && b < n) {
			acc += cur[b] - (prev ? prev[b] : 0);
			b++;
		}
		if (acc < rank)
			break;
		v[k] = bucket_value(b - 1);
		if (hi)
			v[k] = v[k] < lo ? lo : v[k] > hi ? hi : v[k];
	}
}

void stats_hist_span(struct stats_read *r)
{
	uint32_t lo = 0, hi = 0;

	for (uint32_t b = 0; r->hist && b < RETOP_HIST_BUCKETS; b++)
		if (r->hist[b]) {
			if (!hi)
				lo = b;
			hi = b + 1;
		}
	r->hist_lo = lo;
	r->hist_hi = hi;
}

/* The buckets of a and b (b may be NULL) past which both are 0: every
 * bucket where a span is not known. */
static void hist_span_of(const struct stats_read *a, const struct stats_read *b, uint32_t *lo,
			 uint32_t *hi)
{
	*lo = 0;
	*hi = RETOP_HIST_BUCKETS;
	if (!a->hist_hi || (b && b->hist && !b->hist_hi))
		return;
	*lo = a->hist_lo;
	*hi = a->hist_hi;
	if (b && b->hist) {
		*lo = b->hist_lo < *lo ? b->hist_lo : *lo;
		*hi = b->hist_hi > *hi ? b->hist_hi : *hi;
	}
}

static const double p50_p99[2] = {0.50, 0.99};

uint64_t stats_percentile(const __u64 *hist, uint32_t nbuckets, double q, uint64_t min_ns,
			  uint64_t max_ns)
{
	uint64_t v;

	percentiles_span(hist, NULL, 0, nbuckets, &q, 1, min_ns, max_ns, &v);
	return v;
}

void stats_p50_p99(const __u64 *hist, uint32_t nbuckets, uint64_t min_ns, uint64_t max_ns,
		   uint64_t out[2])
{
	percentiles_span(hist, NULL, 0, nbuckets, p50_p99, 2, min_ns, max_ns, out);
}

/* A counter below its previous value means the map was reset (or the
 * function re-attached); deltas against prev would underflow. */
static bool counters_went_back(const struct stats_read *cur, const struct stats_read *prev)
{
	const struct retop_func_stats *c = &cur->st, *p = &prev->st;
	uint32_t i;

	if (c->calls < p->calls || c->sum_ns < p->sum_ns || c->entries < p->entries ||
	    c->reentries < p->reentries || c->unmatched < p->unmatched)
		return true;
	for (i = 0; i < RETOP_MAX_RET_SITES; i++)
		if (c->ret_hits[i] < p->ret_hits[i])
			return true;
	if (prev->hist && !cur->hist)
		return true;
	/* The same buffer: not read again since (its calls did not move). */
	if (prev->hist == cur->hist)
		return false;
	uint32_t lo, hi;
	hist_span_of(cur, prev, &lo, &hi);
	for (i = lo; prev->hist && i < hi; i++)
		if (cur->hist[i] < prev->hist[i])
			return true;
	return false;
}

/* Interval figures.  The all-time min/max bound the interval only when they
 * moved during it: a new max is the interval's largest call, a new min its
 * smallest.  Otherwise the interval is left unclamped. */

static void compute_interval(const struct stats_read *cur, const struct stats_read *prev,
			     struct stats_view *out)
{
	const struct retop_func_stats *c = &cur->st;
	uint64_t lo = 0, hi = UINT64_MAX;
	const __u64 *ph = NULL;

	if (!out->calls_delta)
		return;
	if (prev) {
		ph = prev->hist;
		if (c->min_ns && (!prev->st.min_ns || c->min_ns < prev->st.min_ns))
			lo = c->min_ns;
		if (c->max_ns > prev->st.max_ns)
			hi = c->max_ns;
	} else {
		lo = c->min_ns;
		hi = c->max_ns ? c->max_ns : UINT64_MAX;
	}
	out->mean_interval_ns = (c->sum_ns - (prev ? prev->st.sum_ns : 0)) / out->calls_delta;
	uint64_t p[2] = {0, 0};
	uint32_t from, to;
	hist_span_of(cur, prev, &from, &to);
	if (cur->hist)
		percentiles_span(cur->hist, ph, from, to, p50_p99, 2, lo, hi, p);
	out->p50_interval_ns = p[0];
	out->p99_interval_ns = p[1];
}

/* The since-start p50 and p99, from the cache when no call came since. */
static void since_start_percentiles(const struct stats_read *cur, struct stats_cache *c,
				    uint64_t p[2])
{
	const struct retop_func_stats *s = &cur->st;

	if (c && c->valid && c->calls == s->calls && c->sum_ns == s->sum_ns &&
	    c->min_ns == s->min_ns && c->max_ns == s->max_ns) {
		p[0] = c->p50_ns;
		p[1] = c->p99_ns;
		return;
	}
	p[0] = p[1] = 0;
	uint32_t from, to;
	hist_span_of(cur, NULL, &from, &to);
	if (cur->hist)
		percentiles_span(cur->hist, NULL, from, to, p50_p99, 2, s->min_ns, s->max_ns, p);
	if (c)
		*c = (struct stats_cache){.valid = true,
					  .calls = s->calls,
					  .sum_ns = s->sum_ns,
					  .min_ns = s->min_ns,
					  .max_ns = s->max_ns,
					  .p50_ns = p[0],
					  .p99_ns = p[1]};
}

void stats_compute(const struct stats_read *cur, const struct stats_read *prev, double interval_s,
		   struct stats_view *out)
{
	stats_compute_cached(cur, prev, interval_s, out, NULL);
}

void stats_compute_cached(const struct stats_read *r, const struct stats_read *prev_r,
			  double interval_s, struct stats_view *out, struct stats_cache *cache)
{
	memset(out, 0, sizeof(*out));
	if (prev_r && counters_went_back(r, prev_r))
		prev_r = NULL;
	const struct retop_func_stats *cur = &r->st, *prev = prev_r ? &prev_r->st : NULL;

	out->calls = cur->calls;
	out->mean_ns = cur->calls ? cur->sum_ns / cur->calls : 0;
	uint64_t p[2];
	since_start_percentiles(r, cache, p);
	out->p50_ns = p[0];
	out->p99_ns = p[1];
	out->min_ns = cur->min_ns;
	out->max_ns = cur->max_ns;
	out->unmatched = cur->unmatched;
	out->reentries = cur->reentries;
	out->dropped = cur->dropped;
	/* Over the calls whose hits are known: an evicted call counts none. */
	uint64_t known = cur->calls > cur->evicted ? cur->calls - cur->evicted : 0;
	out->hits_inside = known ? (double)cur->nested_hits / (double)known : 0;
	out->trap_ns = cur->trap_ns;
	out->trap_ns_per_call = known ? (double)cur->trap_ns / (double)known : 0;
	out->own_ns = cur->own_ns;
	out->own_ns_per_call = cur->calls ? (double)cur->own_ns / (double)cur->calls : 0;
	out->prog_ns = cur->prog_ns;
	out->slow_over = cur->slow_over;
	out->slow_over_delta = cur->slow_over - (prev ? prev->slow_over : 0);
	out->slow_lost = cur->slow_lost;
	out->evicted = cur->evicted;
	out->callers_lost = cur->callers_lost;
	out->args_lost = cur->args_lost;
	out->since_start = !prev;

	out->calls_delta = cur->calls - (prev ? prev->calls : 0);
	out->calls_per_s = interval_s > 0 ? (double)out->calls_delta / interval_s : 0.0;
	compute_interval(r, prev_r, out);
}

/* n / q rounded half up, without the overflow of (n + q / 2) / q. */
static uint64_t div_round(uint64_t n, uint64_t q)
{
	uint64_t rem = n % q;

	return n / q + (rem >= q - rem);
}

/* r is the value times 10^prec. */
static void print_fixed(char *buf, size_t len, uint64_t r, int prec, const char *unit)
{
	if (prec == 2)
		snprintf(buf, len, "%llu.%02llu%s", (unsigned long long)(r / 100),
			 (unsigned long long)(r % 100), unit);
	else if (prec == 1)
		snprintf(buf, len, "%llu.%llu%s", (unsigned long long)(r / 10),
			 (unsigned long long)(r % 10), unit);
	else
		snprintf(buf, len, "%llu%s", (unsigned long long)r, unit);
}

struct dur_unit {
	const char *name;
	uint64_t ns;	/* nanoseconds per unit, a multiple of 100 */
	uint64_t limit; /* move to the next unit from here on; 0: never */
};

static const struct dur_unit dur_units[] = {
    {"us", 1000ull, 1000},	 {"ms", 1000000ull, 1000},    {"s", 1000000000ull, 1000},
    {"min", 60000000000ull, 60}, {"h", 3600000000000ull, 24}, {"d", 86400000000000ull, 0},
};

/* Three significant digits in the smallest unit where the *rounded* value
 * still fits, so 999.96us prints "1.00ms" rather than "1000us".  The widest
 * output is "59.9min" or "213504d" (UINT64_MAX): 7 columns. */
void stats_format_duration(uint64_t ns, char *buf, size_t len)
{
	static const uint64_t dec_scale[] = {1, 10, 100};
	size_t n = sizeof(dur_units) / sizeof(dur_units[0]);
	size_t i;
	int prec;

	if (ns < 1000) {
		snprintf(buf, len, "%lluns", (unsigned long long)ns);
		return;
	}
	for (i = 0; i < n; i++) {
		const struct dur_unit *u = &dur_units[i];

		for (prec = 2; prec >= 0; prec--) {
			uint64_t r = div_round(ns, u->ns / dec_scale[prec]);

			if (r >= 1000 || (u->limit && r >= u->limit * dec_scale[prec]))
				continue;
			print_fixed(buf, len, r, prec, u->name);
			return;
		}
	}
	print_fixed(buf, len, div_round(ns, dur_units[n - 1].ns), 0, dur_units[n - 1].name);
}

/* Counts and rates: integers below 1000, one decimal for fractional rates
 * below 10, then three significant digits with a k/M/G/T/P/E suffix.  At
 * most 6 columns ("999E"... "18.4E" for UINT64_MAX). */
void stats_format_count(double v, char *buf, size_t len)
{
	static const char *const suffix[] = {"k", "M", "G", "T", "P", "E"};
	static const double dec_scale[] = {1, 10, 100};
	double scale = 1.0, r;
	size_t i;

	if (!(v > 0)) { /* negative or NaN: nothing sensible to show */
		snprintf(buf, len, "0");
		return;
	}
	if (v > 999e18) /* also catches +inf */
		v = 999e18;
	if (v < 10 && v != floor(v)) {
		r = floor(v * 10 + 0.5);
		if (r < 100) {
			print_fixed(buf, len, (uint64_t)r, 1, "");
			return;
		}
	}
	/* Rounded in double and compared before any conversion: v may be far
	 * beyond what an integer type holds. */
	r = floor(v + 0.5);
	if (r < 1000) {
		print_fixed(buf, len, (uint64_t)r, 0, "");
		return;
	}
	for (i = 0; i < sizeof(suffix) / sizeof(suffix[0]); i++) {
		scale *= 1000.0;
		for (int prec = 2; prec >= 0; prec--) {
			r = floor(v / scale * dec_scale[prec] + 0.5);
			if (r < 1000) {
				print_fixed(buf, len, (uint64_t)r, prec, suffix[i]);
				return;
			}
		}
	}
	/* Unreachable after the clamp above; keep the output bounded anyway. */
	snprintf(buf, len, "999E");
}

uint64_t stats_site_hits_delta(const struct stats_read *cur, const struct stats_read *prev,
			       const struct stats_view *v, size_t i)
{
	if (i >= RETOP_MAX_RET_SITES)
		return 0;
	return cur->st.ret_hits[i] - (prev && !v->since_start ? prev->st.ret_hits[i] : 0);
}
