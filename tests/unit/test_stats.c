/* Unit tests for src/stats.c: histogram buckets, percentiles, interval
 * deltas and the compact formatting used by the UI. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "stats.h"

#define NS_PER_US 1000ull
#define NS_PER_MS 1000000ull
#define NS_PER_S 1000000000ull

/* |got - want| <= pct% of want */
static void assert_within_pct(uint64_t got, uint64_t want, double pct)
{
	double diff = (double)got - (double)want;

	if (diff < 0)
		diff = -diff;
	if (diff > (double)want * pct / 100.0)
		fail_msg("%llu not within %.2f%% of %llu", (unsigned long long)got, pct,
			 (unsigned long long)want);
}

/* A function's counters and its histogram (a map of its own in BPF), as
 * the session reads them. */
struct rec {
	struct stats_read r;
	__u64 hist[RETOP_HIST_BUCKETS];
};

static struct rec *rec_new(void)
{
	struct rec *x = calloc(1, sizeof(*x));

	if (x)
		x->r.hist = x->hist;
	return x;
}

static void rec_copy(struct rec *dst, const struct rec *src)
{
	*dst = *src;
	dst->r.hist = dst->hist;
}

/* What the BPF program does for one paired return; then the read's span
 * of buckets, as the session takes it. */
static void record(struct rec *x, uint64_t ns, uint64_t n)
{
	struct retop_func_stats *s = &x->r.st;

	if (!n)
		return;
	s->calls += n;
	s->entries += n;
	s->sum_ns += ns * n;
	if (!s->min_ns || ns < s->min_ns)
		s->min_ns = ns;
	if (ns > s->max_ns)
		s->max_ns = ns;
	x->hist[retop_hist_bucket(ns)] += n;
	s->ret_hits[0] += n;
	stats_hist_span(&x->r);
}

static void assert_bucket_holds(uint64_t v)
{
	uint32_t b = retop_hist_bucket(v);
	uint64_t lo, hi;

	assert_true(b < RETOP_HIST_BUCKETS);
	stats_bucket_range(b, &lo, &hi);
	if (b == RETOP_HIST_BUCKETS - 1 && v >= hi)
		return; /* the clamp bucket also takes everything above it */
	if (v < lo || v >= hi)
		fail_msg("v=%llu in bucket %u = [%llu, %llu)", (unsigned long long)v, b,
			 (unsigned long long)lo, (unsigned long long)hi);
}

static void test_bucket_exact_values(void **state)
{
	(void)state;
	assert_int_equal(RETOP_HIST_BUCKETS, 1248);
	assert_int_equal(retop_hist_bucket(0), 0);
	assert_int_equal(retop_hist_bucket(1), 1);
	assert_int_equal(retop_hist_bucket(63), 63);
	assert_int_equal(retop_hist_bucket(64), 64);
	assert_int_equal(retop_hist_bucket(65), 64);
	assert_int_equal(retop_hist_bucket(127), 95);
	assert_int_equal(retop_hist_bucket(128), 96);
	/* 1000 = 62 << 4 | 8: msb 9, shift 4, sub 62 */
	assert_int_equal(retop_hist_bucket(1000), 4 * 32 + 62);
	/* 10^6: msb 19, shift 14, sub 61 */
	assert_int_equal(retop_hist_bucket(1000000), 14 * 32 + 61);
	/* 10^9: msb 29, shift 24, sub 59 */
	assert_int_equal(retop_hist_bucket(1000000000), 24 * 32 + 59);
	assert_int_equal(retop_hist_bucket((1ull << 42) - 1), 36 * 32 + 63);
	assert_int_equal(retop_hist_bucket(1ull << 42), 37 * 32 + 32);
	assert_int_equal(retop_hist_bucket(1ull << 50), RETOP_HIST_BUCKETS - 1);
	assert_int_equal(retop_hist_bucket(UINT64_MAX), RETOP_HIST_BUCKETS - 1);
}

static void test_bucket_range_exact(void **state)
{
	uint64_t lo, hi;

	(void)state;
	stats_bucket_range(0, &lo, &hi);
	assert_int_equal(lo, 0);
	assert_int_equal(hi, 1);
	stats_bucket_range(63, &lo, &hi);
	assert_int_equal(lo, 63);
	assert_int_equal(hi, 64);
	stats_bucket_range(64, &lo, &hi);
	assert_int_equal(lo, 64);
	assert_int_equal(hi, 66);
	stats_bucket_range(95, &lo, &hi);
	assert_int_equal(lo, 126);
	assert_int_equal(hi, 128);
	stats_bucket_range(RETOP_HIST_BUCKETS - 1, &lo, &hi);
	assert_int_equal(lo, 63ull << 37);
	assert_int_equal(hi, 1ull << 43);
	/* Out-of-range indexes read as the clamp bucket. */
	stats_bucket_range(RETOP_HIST_BUCKETS + 100, &lo, &hi);
	assert_int_equal(lo, 63ull << 37);
	assert_int_equal(hi, 1ull << 43);
}

static void test_bucket_range_inverse_sweep(void **state)
{
	uint64_t v;
	int i;

	(void)state;
	for (v = 0; v < 5000; v++)
		assert_bucket_holds(v);
	for (i = 1; i <= 42; i++) {
		assert_bucket_holds((1ull << i) - 1);
		assert_bucket_holds(1ull << i);
		assert_bucket_holds((1ull << i) + 1);
	}
	assert_bucket_holds(1ull << 43);
	assert_bucket_holds(UINT64_MAX);

	/* xorshift64 with a fixed seed: reproducible, spread over all
	 * magnitudes by a random shift. */
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (i = 0; i < 5000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		assert_bucket_holds(x >> (x % 64));
	}
}

static void test_buckets_contiguous_and_tight(void **state)
{
	uint64_t lo, hi, prev_hi = 0;
	uint32_t b;

	(void)state;
	for (b = 0; b < RETOP_HIST_BUCKETS; b++) {
		stats_bucket_range(b, &lo, &hi);
		assert_int_equal(lo, prev_hi);
		assert_true(hi > lo);
		/* Both edges map back to this bucket: an exact inverse. */
		assert_int_equal(retop_hist_bucket(lo), b);
		assert_int_equal(retop_hist_bucket(hi - 1), b);
		if (b >= 64)
			assert_true((hi - lo) * 32 <= lo); /* width / lo <= 1/32 */
		prev_hi = hi;
	}
	assert_int_equal(prev_hi, 1ull << 43);
}

static void test_percentile_empty(void **state)
{
	static __u64 hist[RETOP_HIST_BUCKETS];

	(void)state;
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.5, 0, 0), 0);
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.99, 5, 10), 0);
}

static void test_percentile_constant(void **state)
{
	static __u64 hist[RETOP_HIST_BUCKETS];
	uint64_t v = 20 * NS_PER_MS;

	(void)state;
	hist[retop_hist_bucket(v)] = 1000;
	assert_within_pct(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.5, 0, 0), v, 1.6);
	assert_within_pct(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.99, 0, 0), v, 1.6);
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.5, v, v), v);
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.99, v, v), v);
}

static void test_percentile_small_exact(void **state)
{
	static __u64 hist[RETOP_HIST_BUCKETS];

	(void)state;
	/* Below 64 ns buckets are exact: the value itself, not a midpoint. */
	hist[10] = 1;
	hist[20] = 1;
	hist[40] = 2;
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.25, 0, 0), 10);
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.5, 0, 0), 20);
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.51, 0, 0), 40);
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 1.0, 0, 0), 40);
	/* q outside (0, 1] still lands on the first/last value. */
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.0, 0, 0), 10);
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 2.0, 0, 0), 40);
}

static void test_percentile_uniform(void **state)
{
	static __u64 hist[RETOP_HIST_BUCKETS];
	uint64_t k;

	(void)state;
	for (k = 1; k <= 10000; k++)
		hist[retop_hist_bucket(k * NS_PER_US)]++;
	assert_within_pct(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.5, 0, 0),
			  5000 * NS_PER_US, 1.6);
	assert_within_pct(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.99, 0, 0),
			  9900 * NS_PER_US, 1.6);
	assert_within_pct(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.5, NS_PER_US,
					   10000 * NS_PER_US),
			  5000 * NS_PER_US, 1.6);
}

static void test_percentile_clamp_single_call(void **state)
{
	static __u64 hist[RETOP_HIST_BUCKETS];
	uint64_t v = 123456789;

	(void)state;
	hist[retop_hist_bucket(v)] = 1;
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.5, v, v), v);
	/* Beyond the clamp bucket the true value is only known from max. */
	memset(hist, 0, sizeof(hist));
	v = 5000 * NS_PER_S;
	hist[retop_hist_bucket(v)] = 1;
	assert_int_equal(stats_percentile(hist, RETOP_HIST_BUCKETS, 0.99, v, v), v);
}

static void test_compute_first_sample(void **state)
{
	struct rec *cur = rec_new();
	struct stats_view out;

	(void)state;
	assert_non_null(cur);
	record(cur, 2 * NS_PER_MS, 99);
	record(cur, 50 * NS_PER_MS, 1);
	cur->r.st.unmatched = 3;
	cur->r.st.reentries = 4;
	cur->r.st.dropped = 5;
	cur->r.st.ret_hits[1] = 7;

	stats_compute(&cur->r, NULL, 2.0, &out);
	assert_int_equal(out.calls, 100);
	assert_int_equal(out.calls_delta, 100);
	assert_true(out.calls_per_s == 50.0);
	assert_int_equal(out.mean_ns, (99 * 2 + 50) * NS_PER_MS / 100);
	assert_within_pct(out.p50_ns, 2 * NS_PER_MS, 1.6);
	assert_within_pct(out.p99_ns, 2 * NS_PER_MS, 1.6);
	assert_int_equal(out.min_ns, 2 * NS_PER_MS);
	assert_int_equal(out.max_ns, 50 * NS_PER_MS);
	assert_int_equal(out.unmatched, 3);
	assert_int_equal(out.reentries, 4);
	assert_int_equal(out.dropped, 5);
	assert_true(out.since_start);
	assert_int_equal(stats_site_hits_delta(&cur->r, NULL, &out, 0), 100);
	assert_int_equal(stats_site_hits_delta(&cur->r, NULL, &out, 1), 7);
	/* With no prev the interval is everything since start. */
	assert_int_equal(out.p50_interval_ns, out.p50_ns);
	assert_int_equal(out.p99_interval_ns, out.p99_ns);
	assert_int_equal(out.mean_interval_ns, out.mean_ns);

	stats_compute(&cur->r, NULL, 0.0, &out);
	assert_true(out.calls_per_s == 0.0);
	free(cur);
}

static void test_compute_interval(void **state)
{
	struct rec *prev = rec_new();
	struct rec *cur = rec_new();
	struct stats_view out;

	(void)state;
	assert_non_null(prev);
	assert_non_null(cur);
	record(prev, NS_PER_MS, 1000);
	prev->r.st.ret_hits[2] = 40;
	rec_copy(cur, prev);
	record(cur, 100 * NS_PER_MS, 10);
	cur->r.st.ret_hits[2] = 45;

	stats_compute(&cur->r, &prev->r, 0.5, &out);
	assert_int_equal(out.calls, 1010);
	assert_int_equal(out.calls_delta, 10);
	assert_true(out.calls_per_s == 20.0);
	assert_within_pct(out.p50_ns, NS_PER_MS, 1.6);
	assert_within_pct(out.p50_interval_ns, 100 * NS_PER_MS, 1.6);
	assert_within_pct(out.p99_interval_ns, 100 * NS_PER_MS, 1.6);
	assert_int_equal(out.mean_interval_ns, 100 * NS_PER_MS);
	assert_false(out.since_start);
	assert_int_equal(stats_site_hits_delta(&cur->r, &prev->r, &out, 0), 10);
	assert_int_equal(stats_site_hits_delta(&cur->r, &prev->r, &out, 2), 5);
	assert_int_equal(stats_site_hits_delta(&cur->r, &prev->r, &out, RETOP_MAX_RET_SITES), 0);

	/* No call in the interval: interval figures are zero, totals stay. */
	stats_compute(&cur->r, &cur->r, 1.0, &out);
	assert_int_equal(out.calls_delta, 0);
	assert_true(out.calls_per_s == 0.0);
	assert_int_equal(out.p50_interval_ns, 0);
	assert_int_equal(out.p99_interval_ns, 0);
	assert_int_equal(out.mean_interval_ns, 0);
	assert_int_equal(stats_site_hits_delta(&cur->r, &cur->r, &out, 2), 0);
	assert_int_equal(out.calls, 1010);
	free(prev);
	free(cur);
}

static void test_compute_interval_not_clamped_by_all_time(void **state)
{
	struct rec *prev = rec_new();
	struct rec *cur = rec_new();
	struct stats_view out;

	(void)state;
	assert_non_null(prev);
	assert_non_null(cur);
	/* All-time bounds 1 us .. 1 s; the interval's calls sit in between
	 * and must not be pulled to either bound. */
	record(prev, NS_PER_US, 1);
	record(prev, NS_PER_S, 1);
	rec_copy(cur, prev);
	record(cur, 7 * NS_PER_MS, 100);

	stats_compute(&cur->r, &prev->r, 1.0, &out);
	assert_int_equal(out.calls_delta, 100);
	assert_within_pct(out.p50_interval_ns, 7 * NS_PER_MS, 1.6);
	assert_within_pct(out.p99_interval_ns, 7 * NS_PER_MS, 1.6);

	/* A new all-time max during the interval bounds the interval. */
	/* (45 << 26) + 5 sits at the bottom of its bucket: the midpoint
	 * reads high and the new max pulls it back to the truth. */
	rec_copy(prev, cur);
	record(cur, (45ull << 26) + 5, 1);
	stats_compute(&cur->r, &prev->r, 1.0, &out);
	assert_int_equal(out.p50_interval_ns, (45ull << 26) + 5);
	free(prev);
	free(cur);
}

/* The percentiles over the reads' spans of buckets are those over every
 * bucket, the interval's too, where prev holds buckets cur's calls since
 * did not reach. */
static void test_compute_span_same_figures(void **state)
{
	struct rec *prev = rec_new(), *cur = rec_new();
	struct stats_read whole_cur, whole_prev;
	struct stats_view spanned, whole;

	(void)state;
	assert_non_null(prev);
	assert_non_null(cur);
	record(prev, 3 * NS_PER_US, 500);
	record(prev, 40 * NS_PER_MS, 7);
	rec_copy(cur, prev);
	record(cur, 90 * NS_PER_US, 300);
	record(cur, 2 * NS_PER_S, 4);
	assert_true(cur->r.hist_hi > cur->r.hist_lo);
	assert_int_equal(cur->r.hist_lo, retop_hist_bucket(3 * NS_PER_US));
	assert_int_equal(cur->r.hist_hi, retop_hist_bucket(2 * NS_PER_S) + 1);
	whole_cur = cur->r;
	whole_prev = prev->r;
	whole_cur.hist_hi = whole_prev.hist_hi = 0; /* no span: every bucket */

	stats_compute(&cur->r, &prev->r, 1.0, &spanned);
	stats_compute(&whole_cur, &whole_prev, 1.0, &whole);
	assert_int_equal(spanned.calls_delta, 304);
	assert_int_equal(spanned.p50_ns, whole.p50_ns);
	assert_int_equal(spanned.p99_ns, whole.p99_ns);
	assert_int_equal(spanned.p50_interval_ns, whole.p50_interval_ns);
	assert_int_equal(spanned.p99_interval_ns, whole.p99_interval_ns);
	assert_within_pct(spanned.p50_interval_ns, 90 * NS_PER_US, 1.6);
	assert_within_pct(spanned.p99_interval_ns, 2 * NS_PER_S, 1.6);
	assert_within_pct(spanned.p99_ns, 40 * NS_PER_MS, 1.6);
	free(prev);
	free(cur);
}

static void test_compute_reset(void **state)
{
	struct rec *prev = rec_new();
	struct rec *cur = rec_new();
	struct stats_view out;

	(void)state;
	assert_non_null(prev);
	assert_non_null(cur);
	record(prev, NS_PER_MS, 1000);
	record(cur, 5 * NS_PER_MS, 20); /* fewer calls than prev: a reset */

	stats_compute(&cur->r, &prev->r, 2.0, &out);
	assert_int_equal(out.calls, 20);
	assert_int_equal(out.calls_delta, 20);
	assert_true(out.calls_per_s == 10.0);
	/* The sites' hits, like the calls, are since the reset. */
	assert_true(out.since_start);
	assert_int_equal(stats_site_hits_delta(&cur->r, &prev->r, &out, 0), 20);
	assert_int_equal(out.mean_interval_ns, 5 * NS_PER_MS);
	assert_int_equal(out.p50_interval_ns, 5 * NS_PER_MS);

	/* Only one histogram bucket going back is a reset too. */
	memset(cur, 0, sizeof(*cur));
	cur->r.hist = cur->hist;
	record(cur, 5 * NS_PER_MS, 2000);
	stats_compute(&cur->r, &prev->r, 1.0, &out);
	assert_int_equal(out.calls_delta, 2000);
	assert_int_equal(out.p50_interval_ns, 5 * NS_PER_MS);
	free(prev);
	free(cur);
}

static void test_format_duration(void **state)
{
	static const struct {
		uint64_t ns;
		const char *want;
	} cases[] = {
		{0, "0ns"},
		{1, "1ns"},
		{850, "850ns"},
		{999, "999ns"},
		{1000, "1.00us"},
		{1234, "1.23us"},
		{9995, "10.0us"},
		{12345, "12.3us"},
		{850000, "850us"},
		{999499, "999us"},
		{999500, "1.00ms"},
		{999999, "1.00ms"},
		{NS_PER_MS, "1.00ms"},
		{1234567, "1.23ms"},
		{12345678, "12.3ms"},
		{123456789, "123ms"},
		{999999999, "1.00s"},
		{NS_PER_S, "1.00s"},
		{1234 * NS_PER_MS, "1.23s"},
		{59900 * NS_PER_MS, "59.9s"},
		{100 * NS_PER_S, "100s"},
		{999 * NS_PER_S, "999s"},
		{1000 * NS_PER_S, "16.7min"},
		{3599 * NS_PER_S, "1.00h"},
		{3600 * NS_PER_S, "1.00h"},
		{5400 * NS_PER_S, "1.50h"},
		{86400 * NS_PER_S, "1.00d"},
		{UINT64_MAX, "213504d"},
	};
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		stats_format_duration(cases[i].ns, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
	}
	/* A short buffer truncates, never overflows. */
	stats_format_duration(1234567, buf, 4);
	assert_string_equal(buf, "1.2");
}

static void test_format_duration_width(void **state)
{
	char buf[32];
	uint64_t v;
	int i;

	(void)state;
	for (i = 0; i < 64; i++) {
		v = 1ull << i;
		for (uint64_t d = 0; d < 3; d++) {
			stats_format_duration(v - 1 + d, buf, sizeof(buf));
			assert_true(strlen(buf) <= 7);
		}
	}
	for (v = 1; v < UINT64_MAX / 3; v = v * 3 + 1) {
		stats_format_duration(v, buf, sizeof(buf));
		assert_true(strlen(buf) <= 7);
	}
}

static void test_format_count(void **state)
{
	static const struct {
		double v;
		const char *want;
	} cases[] = {
		{0, "0"},
		{-3, "0"},
		{0.5, "0.5"},
		{1, "1"},
		{5, "5"},
		{9.9, "9.9"},
		{9.96, "10"},
		{12.7, "13"},
		{999, "999"},
		{999.4, "999"},
		{999.5, "1.00k"},
		{1000, "1.00k"},
		{1234, "1.23k"},
		{12345, "12.3k"},
		{123456, "123k"},
		{999499, "999k"},
		{999500, "1.00M"},
		{1234567, "1.23M"},
		{1e9, "1.00G"},
		{1e18, "1.00E"},
		{18446744073709551615.0, "18.4E"},
		{1e30, "999E"},
	};
	char buf[32];
	size_t i;

	(void)state;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		stats_format_count(cases[i].v, buf, sizeof(buf));
		assert_string_equal(buf, cases[i].want);
		assert_true(strlen(buf) <= 6);
	}
	for (double v = 0.01; v < 1e21; v *= 1.37) {
		stats_format_count(v, buf, sizeof(buf));
		assert_true(strlen(buf) <= 6);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bucket_exact_values),
		cmocka_unit_test(test_bucket_range_exact),
		cmocka_unit_test(test_bucket_range_inverse_sweep),
		cmocka_unit_test(test_buckets_contiguous_and_tight),
		cmocka_unit_test(test_percentile_empty),
		cmocka_unit_test(test_percentile_constant),
		cmocka_unit_test(test_percentile_small_exact),
		cmocka_unit_test(test_percentile_uniform),
		cmocka_unit_test(test_percentile_clamp_single_call),
		cmocka_unit_test(test_compute_first_sample),
		cmocka_unit_test(test_compute_interval),
		cmocka_unit_test(test_compute_interval_not_clamped_by_all_time),
		cmocka_unit_test(test_compute_reset),
		cmocka_unit_test(test_compute_span_same_figures),
		cmocka_unit_test(test_format_duration),
		cmocka_unit_test(test_format_duration_width),
		cmocka_unit_test(test_format_count),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
