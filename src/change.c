#include "change.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stats.h"

/* One period: its histogram, running totals over the buckets that hold
 * calls of either period (cum[b]: the calls in buckets first..b), and its
 * count. */
struct change_side {
	const __u64 *h;
	uint64_t cum[RETOP_HIST_BUCKETS];
	uint64_t n;
};

/* The bucket that holds the rank-th shortest call (1 <= rank <= n). */
static uint32_t change_bucket_of(const struct change_side *s, uint32_t first, uint32_t last,
				 uint64_t rank)
{
	while (first < last) {
		uint32_t mid = first + (last - first) / 2;
		if (s->cum[mid] >= rank)
			last = mid;
		else
			first = mid + 1;
	}
	return first;
}

/* A rank kept within [1, n], NaN too. */
static uint64_t change_clamp_rank(double r, uint64_t n)
{
	if (!(r >= 1.0))
		return 1;
	if (r >= (double)n)
		return n;
	return (uint64_t)r;
}

/* The q-quantile's bucket (the rank stats_percentile() reads, ceil(q n))
 * and its 95% interval from the order statistics: the ranks n q -+ z
 * sqrt(n q (1 - q)) (the binomial's normal approximation), widened to the
 * edges of the buckets that hold them. */
static uint32_t change_quantile(const struct change_side *s, uint32_t first, uint32_t last,
				double q, uint64_t ci[2])
{
	double centre = (double)s->n * q, half = CHANGE_CI_Z * sqrt(centre * (1 - q));
	uint64_t edge;
	uint32_t lo =
	    change_bucket_of(s, first, last, change_clamp_rank(floor(centre - half), s->n));
	uint32_t hi =
	    change_bucket_of(s, first, last, change_clamp_rank(ceil(centre + half), s->n));

	stats_bucket_range(lo, &ci[0], &edge);
	stats_bucket_range(hi, &edge, &ci[1]);
	return change_bucket_of(s, first, last, change_clamp_rank(ceil(centre), s->n));
}

/* p50 or p99 before and after.  Moved only when the intervals are apart
 * and a whole bucket lies between the two values: values on either side
 * of one bucket edge may differ by a nanosecond, and two neighbouring
 * buckets' midpoints by a bucket's width whatever the change was. */
static void change_percentile(const struct change_side *x, const struct change_side *y,
			      uint32_t first, uint32_t last, double q, struct change_pct *p)
{
	uint32_t bx = change_quantile(x, first, last, q, p->ci_before);
	uint32_t by = change_quantile(y, first, last, q, p->ci_after);

	p->before_ns = stats_bucket_value(bx);
	p->after_ns = stats_bucket_value(by);
	p->ratio = p->before_ns ? (double)p->after_ns / (double)p->before_ns : 0;
	bool up = p->ci_after[0] >= p->ci_before[1], down = p->ci_before[0] >= p->ci_after[1];
	p->moved = (up || down) && (bx > by ? bx - by : by - bx) >= 2;
	p->sure_factor = up && p->ci_before[1]	  ? (double)p->ci_after[0] / (double)p->ci_before[1]
			 : down && p->ci_after[1] ? (double)p->ci_before[0] / (double)p->ci_after[1]
						  : 1;
}

/* Mann-Whitney U of after against before, each bucket a group of ties
 * (they rank at their average: a call of after counts the calls of before
 * below its bucket and half of those in it), in the normal approximation
 * with the tie correction and a continuity correction of 1/2; two-sided. */
static double change_rank_test(const struct change_side *x, const struct change_side *y,
			       uint32_t first, uint32_t last)
{
	double n1 = (double)x->n, n2 = (double)y->n, n = n1 + n2, u = 0, ties = 0;

	if (!x->n || !y->n)
		return 1;
	for (uint32_t b = first; b <= last; b++) {
		double xb = (double)x->h[b], yb = (double)y->h[b], t = xb + yb;
		double x_below = b > first ? (double)x->cum[b - 1] : 0;
		u += yb * (x_below + xb / 2);
		ties += t * t * t - t;
	}
	/* All calls in one bucket: no rank tells them apart. */
	double spread = (n + 1) - ties / (n * (n - 1));
	if (!(spread > (n + 1) * 1e-12))
		return 1;
	double sd = sqrt(n1 * n2 / 12 * spread), d = fabs(u - n1 * n2 / 2) - 0.5;
	double p = erfc((d > 0 ? d : 0) / sd / sqrt(2.0));
	return p < 1 ? p : 1;
}

/* The comparison over [first, last], outside which both are zeros. */
static void change_compare_span(const __u64 *before, const __u64 *after, uint32_t first,
				uint32_t last, struct change_result *out)
{
	/* 20 KiB of running totals: off the stack of the dashboard's worker. */
	static __thread struct change_side x, y;

	memset(out, 0, sizeof(*out));
	out->p_value = 1;
	if (first > last)
		return;
	x.h = before;
	y.h = after;
	x.n = y.n = 0;
	for (uint32_t b = first; b <= last; b++) {
		x.cum[b] = x.n += x.h[b];
		y.cum[b] = y.n += y.h[b];
	}
	out->calls_before = x.n;
	out->calls_after = y.n;
	if (x.n && y.n) {
		change_percentile(&x, &y, first, last, 0.50, &out->p50);
		change_percentile(&x, &y, first, last, 0.99, &out->p99);
		out->p_value = change_rank_test(&x, &y, first, last);
	}
	if (x.n < CHANGE_MIN_CALLS || y.n < CHANGE_MIN_CALLS)
		out->verdict = CHANGE_TOO_FEW;
	else if (out->p_value < CHANGE_ALPHA &&
		 (out->p50.moved || (out->p99.moved && out->p99.sure_factor >= CHANGE_TAIL_FACTOR)))
		out->verdict = CHANGE_SIGNIFICANT;
	else
		out->verdict = CHANGE_SAME;
}

/* Narrow [*first, *last] to the buckets where h has calls (first > last:
 * none). */
static void change_span(const __u64 *h, uint32_t *first, uint32_t *last)
{
	uint32_t f = RETOP_HIST_BUCKETS, l = 0;

	for (uint32_t b = 0; h && b < RETOP_HIST_BUCKETS; b++)
		if (h[b]) {
			f = f < b ? f : b;
			l = b;
		}
	*first = f < *first ? f : *first;
	*last = l > *last ? l : *last;
}

void change_compare(const __u64 *before, const __u64 *after, struct change_result *out)
{
	static const __u64 empty[RETOP_HIST_BUCKETS];
	uint32_t first = RETOP_HIST_BUCKETS, last = 0;

	change_span(before, &first, &last);
	change_span(after, &first, &last);
	change_compare_span(before ? before : empty, after ? after : empty, first, last, out);
}

/* h is zeros outside [first, last] (a NULL histogram is zeros). */
static bool change_zero_outside(const __u64 *h, uint32_t first, uint32_t last)
{
	__u64 any = 0;

	for (uint32_t b = 0; h && b < RETOP_HIST_BUCKETS; b++)
		any |= b < first || b > last ? h[b] : 0;
	return !any;
}

/* a - b over [first, last] (a NULL histogram is zeros); false when a count
 * of a is under b's. */
static bool change_diff(const __u64 *a, const __u64 *b, uint32_t first, uint32_t last, __u64 *out)
{
	for (uint32_t i = first; i <= last && i < RETOP_HIST_BUCKETS; i++) {
		__u64 va = a ? a[i] : 0, vb = b ? b[i] : 0;
		if (va < vb)
			return false;
		out[i] = va - vb;
	}
	return true;
}

bool change_compare_cumulative(const __u64 *before_from, const __u64 *before_to,
			       const __u64 *after_from, const __u64 *now, struct change_result *out)
{
	static __thread __u64 before[RETOP_HIST_BUCKETS], after[RETOP_HIST_BUCKETS];
	uint32_t first = RETOP_HIST_BUCKETS, last = 0;

	/* Every earlier count is at most now's: only now's buckets with calls
	 * are differenced, and a count elsewhere went back (a reset). */
	change_span(now, &first, &last);
	if (!change_zero_outside(before_from, first, last) ||
	    !change_zero_outside(before_to, first, last) ||
	    !change_zero_outside(after_from, first, last))
		return false;
	if (first <= last && (!change_diff(before_to, before_from, first, last, before) ||
			      !change_diff(now, after_from, first, last, after)))
		return false;
	change_compare_span(before, after, first, last, out);
	return true;
}

void change_format_ratio(double ratio, char *buf, size_t len)
{
	if (!(ratio > 0) || isinf(ratio))
		snprintf(buf, len, "?");
	else if (ratio >= 10)
		snprintf(buf, len, "x%.1f", ratio);
	else {
		long pct = lround((ratio - 1) * 100);
		snprintf(buf, len, "%s%ld%%", pct >= 0 ? "+" : "", pct);
	}
}

void change_format(const struct change_result *r, char *buf, size_t len)
{
	char p50[16], p99[16], p[24];

	if (r->verdict == CHANGE_TOO_FEW) {
		snprintf(buf, len, "too few calls for a verdict (%llu before, %llu after; %d each)",
			 (unsigned long long)r->calls_before, (unsigned long long)r->calls_after,
			 CHANGE_MIN_CALLS);
		return;
	}
	if (r->p_value < 0.001)
		snprintf(p, sizeof(p), "p<0.001");
	else
		snprintf(p, sizeof(p), "p=%.3f", r->p_value);
	change_format_ratio(r->p50.ratio, p50, sizeof(p50));
	change_format_ratio(r->p99.ratio, p99, sizeof(p99));
	if (r->verdict == CHANGE_SAME && r->p_value < CHANGE_ALPHA)
		/* The ranks moved, the percentiles not past what the histogram
		 * resolves and a tail's bursts: say so, or "p<0.001" and "~"
		 * read as a contradiction. */
		snprintf(buf, len, "~ (%s, but p50 %s p99 %s within noise; %llu -> %llu calls)", p,
			 p50, p99, (unsigned long long)r->calls_before,
			 (unsigned long long)r->calls_after);
	else if (r->verdict == CHANGE_SAME)
		snprintf(buf, len, "~ (%s, %llu -> %llu calls)", p,
			 (unsigned long long)r->calls_before, (unsigned long long)r->calls_after);
	else
		snprintf(buf, len, "p50 %s p99 %s (%s, %llu -> %llu calls)", p50, p99, p,
			 (unsigned long long)r->calls_before, (unsigned long long)r->calls_after);
}
