/* Statistics from the in-kernel counters: percentiles from the log-linear
 * histogram, interval deltas, rates.  Pure arithmetic: no BPF in here. */
#ifndef RETOP_STATS_H
#define RETOP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"

/* Relative error bound of a percentile read off the histogram, in percent,
 * for the UI and --help: half a bucket over the bucket's low edge. */
#define STATS_PERCENTILE_ERROR_PCT 1.6

/* [lo, hi) of values that land in bucket b. */
void stats_bucket_range(uint32_t b, uint64_t *lo, uint64_t *hi);
/* The value a percentile in bucket b reads: its midpoint (exact buckets:
 * their one value). */
uint64_t stats_bucket_value(uint32_t b);

/* The q-quantile (0 < q <= 1) of a histogram: the midpoint of the bucket
 * holding the ceil(q * total)-th value, clamped to [min, max] when those
 * are known (non-zero max).  0 when the histogram is empty.  hist is __u64
 * like retop_func_hist.hist (unsigned long long, not uint64_t's unsigned
 * long on x86-64), so that array is passed without a cast. */
uint64_t stats_percentile(const __u64 *hist, uint32_t nbuckets, double q, uint64_t min_ns,
			  uint64_t max_ns);
/* Its p50 and p99 alike, in one walk of the histogram (out[0], out[1]). */
void stats_p50_p99(const __u64 *hist, uint32_t nbuckets, uint64_t min_ns, uint64_t max_ns,
		   uint64_t out[2]);

/* What the UI and the batch printer show for one function over an interval
 * and since tracing began. */
struct stats_view {
	uint64_t calls;	      /* since tracing began */
	uint64_t calls_delta; /* in the last interval */
	double calls_per_s;
	uint64_t mean_ns, p50_ns, p99_ns, max_ns, min_ns; /* since tracing began */
	uint64_t p50_interval_ns, p99_interval_ns,
	    mean_interval_ns; /* last interval; 0 if no call */
	uint64_t unmatched, reentries, dropped;
	double hits_inside;	 /* probe hits of traced callees inside a call, on average
				  * over the calls not evicted */
	uint64_t trap_ns;	 /* their cost, taken out of the durations: in all */
	double trap_ns_per_call; /* and a call on average */
	uint64_t own_ns;	 /* what each call's own two hits left in its window,
				  * taken out too: in all */
	double own_ns_per_call;
	uint64_t prog_ns;		     /* its probe programs' run time, every hit */
	uint64_t slow_over, slow_over_delta; /* calls at least --slow long */
	uint64_t slow_lost;		     /* slow calls not reported: the ring buffer was full */
	uint64_t evicted;      /* calls whose goroutine records the LRU maps evicted */
	uint64_t callers_lost; /* timed calls missing from callers: no room */
	uint64_t args_lost;    /* calls whose arguments found no room */
	/* The interval's figures are since tracing began: no read before, or
	 * the counters went back (a reset). */
	bool since_start;
};

/* The since-start percentiles last computed, and the counters they were
 * computed at: a function with no new call keeps them without a pass over
 * its histogram. */
struct stats_cache {
	bool valid;
	uint64_t calls, sum_ns, min_ns, max_ns;
	uint64_t p50_ns, p99_ns;
};

/* One read of a function's counters from BPF: its row, and its histogram
 * (RETOP_HIST_BUCKETS of them; NULL: none yet, no timed call).  Past
 * [hist_lo, hist_hi) its buckets are all 0, when hist_hi is set
 * (stats_hist_span): the percentiles pass over that span, a few dozen of
 * its 1,248 buckets, not the whole histogram two or three times. */
struct stats_read {
	struct retop_func_stats st;
	const __u64 *hist;
	uint32_t hist_lo, hist_hi;
};

/* r's histogram was just read: the span of its buckets not 0. */
void stats_hist_span(struct stats_read *r);

/* cur and prev are reads of the same slot; prev may be NULL (first
 * sample).  interval_s is the measured time between the two samples.
 * cache may be NULL. */
void stats_compute_cached(const struct stats_read *cur, const struct stats_read *prev,
			  double interval_s, struct stats_view *out, struct stats_cache *cache);
/* RET site i's hits over the interval v was computed for from cur and prev
 * (since tracing began where v is since start). */
uint64_t stats_site_hits_delta(const struct stats_read *cur, const struct stats_read *prev,
			       const struct stats_view *v, size_t i);
void stats_compute(const struct stats_read *cur, const struct stats_read *prev, double interval_s,
		   struct stats_view *out);

/* Three significant digits in ns/us/ms/s/min/h/d: "850ns", "1.23ms",
 * "850us", "12.0s", "16.7min", "1.00h": fits 7 columns. */
void stats_format_duration(uint64_t ns, char *buf, size_t len);
/* "999", "0.5" (fractions below 10), then three significant digits:
 * "1.23k", "12.3k", "123k", "3.40M": fits 6 columns. */
void stats_format_count(double v, char *buf, size_t len);

#endif
