/* What changed in one function's durations between two periods (before a
 * baseline, after it): a rank test on the two histograms, p50 and p99 with
 * their 95% confidence intervals and ratios, and a verdict that an operator
 * deciding whether to roll back can act on.  Numbers only: no BPF, no
 * session (tests/unit/test_change.c works on arrays). */
#ifndef RETOP_CHANGE_H
#define RETOP_CHANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"

/* The rank test's level: a change is significant at p < 0.05, as benchstat
 * says it. */
#define CHANGE_ALPHA 0.05
/* Timed calls each period needs before any verdict: below it the normal
 * approximation of the rank test is poor, and a p99 is the top call or
 * two (benchstat wants 4 to 6 runs; a function's calls are many more,
 * and noisier, than a benchmark's runs). */
#define CHANGE_MIN_CALLS 20
/* A tail that moved while the median did not is called only when it moved
 * by this factor at least, from one interval's edge to the other's: slow
 * calls come in bursts (a preemption, a collection, a noisy neighbour), so
 * two periods' p99 differ more than independent calls would make them.
 * Two runs of one unchanged binary, a few seconds apart on a loaded 2-core
 * VM, gave p99 1.5x and 1.6x, intervals apart, at p < 0.001. */
#define CHANGE_TAIL_FACTOR 2.0
/* The 95% confidence intervals of the percentiles. */
#define CHANGE_CI_Z 1.959964

/* What the "before" period is. */
enum change_against {
	CHANGE_NONE,   /* no baseline marked */
	CHANGE_WINDOW, /* the calls before a moment the operator chose */
	CHANGE_BINARY, /* the calls of the binary a deploy replaced (-x) */
};

enum change_verdict {
	CHANGE_TOO_FEW,	    /* fewer than CHANGE_MIN_CALLS on a side: no verdict */
	CHANGE_SAME,	    /* not significant: '~' */
	CHANGE_SIGNIFICANT, /* the durations changed */
};

/* One percentile before and after: the value (a bucket's midpoint, as
 * every face reads it), its 95% interval [lo, hi) on the buckets' edges,
 * and after / before (0: no call before). */
struct change_pct {
	uint64_t before_ns, after_ns;
	uint64_t ci_before[2], ci_after[2];
	double ratio;
	/* The intervals do not overlap and a whole bucket lies between the
	 * two values: a change the histogram can resolve. */
	bool moved;
	/* The least factor between the intervals (one's near edge over the
	 * other's): 1 when they overlap. */
	double sure_factor;
};

struct change_result {
	uint64_t calls_before, calls_after; /* timed calls in each histogram */
	double p_value;			    /* the rank test's, two-sided; 1 when it has no data */
	struct change_pct p50, p99;
	enum change_verdict verdict;
};

/* Compare two histograms of RETOP_HIST_BUCKETS counts (retop.h's buckets):
 * Mann-Whitney U, each bucket a group of ties ranked at its average, in
 * the normal approximation with the tie correction and a continuity
 * correction; significant when p < CHANGE_ALPHA, both sides hold at least
 * CHANGE_MIN_CALLS calls, and p50 moved (struct change_pct), or p99 moved
 * by CHANGE_TAIL_FACTOR at least.  A change inside one bucket is never
 * significant: the histogram cannot tell it from none. */
void change_compare(const __u64 *before, const __u64 *after, struct change_result *out);

/* The same, from cumulative counts: before = before_to - before_from,
 * after = now - after_from (a NULL histogram is all zeros).  False, and
 * nothing computed, when a count went back (the counters were reset). */
bool change_compare_cumulative(const __u64 *before_from, const __u64 *before_to,
			       const __u64 *after_from, const __u64 *now,
			       struct change_result *out);

/* A ratio as a change: "+35%", "-12%", "+0%", "x12.0" from ten times on;
 * "?" when there is none. */
void change_format_ratio(double ratio, char *buf, size_t len);
/* The whole change, as the text shows it under a row and the dashboard in
 * its detail view: "p50 +35% p99 +40% (p=0.001, 1200 -> 1180 calls)";
 * "~ (p=0.410, ...)" when not significant, and "~ (p<0.001, but p50 +2%
 * p99 +3% within noise; ...)" when the ranks moved but no percentile past
 * what the histogram resolves (and a tail's bursts); "too few calls ..." when no verdict
 * is given. */
void change_format(const struct change_result *r, char *buf, size_t len);

#endif
