/* Unit tests for the comparison of two periods (src/change.c) on
 * histograms built from known durations: the rank test against a hand
 * computation with ties, the verdicts (same, changed, too few calls, a
 * change inside a bucket), the percentiles' ratios and intervals, the
 * cumulative form, and what the faces print. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "change.h"
#include "stats.h"

static __u64 before[RETOP_HIST_BUCKETS], after[RETOP_HIST_BUCKETS];

static void clear(void)
{
	memset(before, 0, sizeof(before));
	memset(after, 0, sizeof(after));
}

static void add(__u64 *h, uint64_t ns, uint64_t n)
{
	h[retop_hist_bucket(ns)] += n;
}

/* n calls spread evenly over [lo, lo * 1.5): many buckets, as real calls. */
static void add_spread(__u64 *h, uint64_t lo, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		add(h, lo + lo / 2 * i / n, 1);
}

/* Below 64 ns every value has a bucket of its own: ranks are exact.
 * before {1, 2, 2, 3}, after {2, 3, 3, 4, 5}.  Ranked together:
 * 1 -> 1; the three 2s -> 3 (average of 2, 3, 4); the three 3s -> 6;
 * 4 -> 8; 5 -> 9.  U of after = 20 - (1 + 3 + 3 + 6 - 10) = 17; its mean
 * 4 * 5 / 2 = 10; the ties take (3^3 - 3) * 2 = 48 off: variance
 * 20 / 12 * (10 - 48 / 72) = 15.556; z = (7 - 0.5) / 3.944 = 1.648;
 * two-sided p = 0.0993. */
static void test_rank_test_by_hand(void **state)
{
	struct change_result r;

	(void)state;
	clear();
	add(before, 1, 1);
	add(before, 2, 2);
	add(before, 3, 1);
	add(after, 2, 1);
	add(after, 3, 2);
	add(after, 4, 1);
	add(after, 5, 1);
	change_compare(before, after, &r);
	assert_true(fabs(r.p_value - 0.099342) < 1e-5);
	assert_int_equal(r.calls_before, 4);
	assert_int_equal(r.calls_after, 5);
	/* Nine calls: no verdict, whatever p says. */
	assert_int_equal(r.verdict, CHANGE_TOO_FEW);
	/* Exact buckets: p50 2 then 3. */
	assert_int_equal(r.p50.before_ns, 2);
	assert_int_equal(r.p50.after_ns, 3);
	assert_true(fabs(r.p50.ratio - 1.5) < 1e-9);
}

static void test_identical_not_significant(void **state)
{
	struct change_result r;

	(void)state;
	clear();
	add_spread(before, 100000, 5000);
	add_spread(after, 100000, 5000);
	change_compare(before, after, &r);
	assert_int_equal(r.verdict, CHANGE_SAME);
	assert_true(r.p_value > 0.9);
	assert_true(r.p50.ratio == 1.0 && r.p99.ratio == 1.0);
	assert_false(r.p50.moved || r.p99.moved);
	/* The same shape, different counts: still the same. */
	clear();
	add_spread(before, 100000, 300);
	add_spread(after, 100000, 9000);
	change_compare(before, after, &r);
	assert_int_equal(r.verdict, CHANGE_SAME);
}

/* Twice as slow: flagged, with the ratio within a bucket's precision. */
static void test_twice_as_slow(void **state)
{
	struct change_result r;

	(void)state;
	clear();
	add_spread(before, 100000, 2000);
	add_spread(after, 200000, 2000);
	change_compare(before, after, &r);
	assert_int_equal(r.verdict, CHANGE_SIGNIFICANT);
	assert_true(r.p_value < 1e-6);
	assert_true(fabs(r.p50.ratio - 2.0) < 2 * STATS_PERCENTILE_ERROR_PCT / 100 * 2);
	assert_true(fabs(r.p99.ratio - 2.0) < 2 * STATS_PERCENTILE_ERROR_PCT / 100 * 2);
	assert_true(r.p50.moved && r.p99.moved);
	/* The intervals hold their percentiles and lie apart. */
	assert_true(r.p50.ci_before[0] <= r.p50.before_ns && r.p50.before_ns < r.p50.ci_before[1]);
	assert_true(r.p50.ci_after[0] <= r.p50.after_ns && r.p50.after_ns < r.p50.ci_after[1]);
	assert_true(r.p50.ci_before[1] <= r.p50.ci_after[0]);
	/* And twice as fast the other way. */
	change_compare(after, before, &r);
	assert_int_equal(r.verdict, CHANGE_SIGNIFICANT);
	assert_true(fabs(r.p50.ratio - 0.5) < 0.5 * 2 * STATS_PERCENTILE_ERROR_PCT / 100 * 2);
}

/* Fewer than CHANGE_MIN_CALLS on either side: no verdict, even for a
 * change the test would call. */
static void test_too_few_calls(void **state)
{
	struct change_result r;

	(void)state;
	clear();
	add_spread(before, 100000, 1000);
	add_spread(after, 400000, CHANGE_MIN_CALLS - 1);
	change_compare(before, after, &r);
	assert_int_equal(r.verdict, CHANGE_TOO_FEW);
	assert_true(r.p_value < 0.05);
	clear();
	add_spread(before, 100000, CHANGE_MIN_CALLS);
	add_spread(after, 400000, CHANGE_MIN_CALLS);
	change_compare(before, after, &r);
	assert_int_equal(r.verdict, CHANGE_SIGNIFICANT);
	/* Nothing at all after the mark. */
	clear();
	add_spread(before, 100000, 1000);
	change_compare(before, after, &r);
	assert_int_equal(r.verdict, CHANGE_TOO_FEW);
	assert_true(r.p_value == 1 && r.p50.ratio == 0);
}

/* Inside one bucket ([992, 1008) ns), however many calls: never
 * significant.  Across one bucket edge (1007 ns, then 1009 ns): the rank
 * test sees every call move, but the two values may be 2 ns apart, and
 * the histogram cannot say more; not significant either. */
static void test_within_a_bucket(void **state)
{
	struct change_result r;

	(void)state;
	clear();
	add(before, 993, 100000);
	add(after, 1007, 100000);
	change_compare(before, after, &r);
	assert_int_equal(r.verdict, CHANGE_SAME);
	assert_true(r.p_value > 0.9);
	clear();
	add(before, 1007, 100000);
	add(after, 1009, 100000);
	change_compare(before, after, &r);
	assert_true(r.p_value < 1e-9);
	assert_true(r.p50.ratio > 1.0);
	assert_false(r.p50.moved);
	assert_int_equal(r.verdict, CHANGE_SAME);
	/* Two buckets up (1024 ns and more): a change the histogram
	 * resolves. */
	clear();
	add(before, 1007, 100000);
	add(after, 1030, 100000);
	change_compare(before, after, &r);
	assert_int_equal(r.verdict, CHANGE_SIGNIFICANT);
}

/* A tail that grew while the median stayed: p99 carries the verdict. */
static void test_tail_only(void **state)
{
	struct change_result r;

	(void)state;
	clear();
	add(before, 1000, 1000);
	add(after, 1000, 980);
	add(after, 5000, 20);
	change_compare(before, after, &r);
	assert_int_equal(r.verdict, CHANGE_SIGNIFICANT);
	assert_true(r.p50.ratio == 1.0);
	assert_false(r.p50.moved);
	assert_true(r.p99.moved);
	assert_true(fabs(r.p99.ratio - 5.0) < 0.1);
	assert_true(r.p99.sure_factor >= CHANGE_TAIL_FACTOR);
	/* A tail 60% longer and the bulk one bucket edge on (the rank test
	 * says p < 0.001, the median did not move): slow calls come in
	 * bursts, and so much the tail of an unchanged function moves from
	 * one period to the next. */
	clear();
	add(before, 1007, 980);
	add_spread(before, 4000, 20);
	add(after, 1009, 980);
	add_spread(after, 6400, 20);
	change_compare(before, after, &r);
	assert_true(r.p_value < 0.001);
	assert_false(r.p50.moved);
	assert_true(r.p99.moved);
	assert_true(r.p99.ratio > 1.4);
	assert_true(r.p99.sure_factor < CHANGE_TAIL_FACTOR);
	assert_int_equal(r.verdict, CHANGE_SAME);
}

/* The engine keeps cumulative counts: before = to - from, after = now -
 * after_from; a count that went back (a reset) is refused. */
static void test_cumulative(void **state)
{
	static __u64 from[RETOP_HIST_BUCKETS], to[RETOP_HIST_BUCKETS], now[RETOP_HIST_BUCKETS];
	struct change_result r, direct;

	(void)state;
	clear();
	add_spread(before, 100000, 500);
	add_spread(after, 300000, 700);
	for (uint32_t b = 0; b < RETOP_HIST_BUCKETS; b++) {
		from[b] = b % 7; /* calls of an earlier binary */
		to[b] = from[b] + before[b];
		now[b] = to[b] + after[b];
	}
	change_compare(before, after, &direct);
	assert_true(change_compare_cumulative(from, to, to, now, &r));
	assert_memory_equal(&r, &direct, sizeof(r));
	/* From tracing's start: from NULL. */
	for (uint32_t b = 0; b < RETOP_HIST_BUCKETS; b++)
		now[b] = before[b] + after[b];
	assert_true(change_compare_cumulative(NULL, before, before, now, &r));
	assert_memory_equal(&r, &direct, sizeof(r));
	/* A count of the mark above now's, where now has no call: a reset. */
	assert_false(change_compare_cumulative(NULL, now, now, before, &r));
	for (uint32_t b = 0; b < RETOP_HIST_BUCKETS; b++)
		now[b] = to[b] + after[b];
	now[retop_hist_bucket(100000)] = 0;
	assert_false(change_compare_cumulative(from, to, to, now, &r));
}

static void test_format(void **state)
{
	struct change_result r;
	char buf[160];

	(void)state;
	change_format_ratio(1.35, buf, sizeof(buf));
	assert_string_equal(buf, "+35%");
	change_format_ratio(0.88, buf, sizeof(buf));
	assert_string_equal(buf, "-12%");
	change_format_ratio(0.999, buf, sizeof(buf));
	assert_string_equal(buf, "+0%");
	change_format_ratio(12.04, buf, sizeof(buf));
	assert_string_equal(buf, "x12.0");
	change_format_ratio(0, buf, sizeof(buf));
	assert_string_equal(buf, "?");
	clear();
	add_spread(before, 100000, 2000);
	add_spread(after, 200000, 1000);
	change_compare(before, after, &r);
	change_format(&r, buf, sizeof(buf));
	assert_string_equal(buf, "p50 +100% p99 +100% (p<0.001, 2000 -> 1000 calls)");
	change_compare(before, before, &r);
	change_format(&r, buf, sizeof(buf));
	assert_string_equal(buf, "~ (p=1.000, 2000 -> 2000 calls)");
	clear();
	add(before, 1000, 5);
	add(after, 1000, 30);
	change_compare(before, after, &r);
	change_format(&r, buf, sizeof(buf));
	assert_string_equal(buf, "too few calls for a verdict (5 before, 30 after; 20 each)");
	clear();
	add(before, 1007, 1000);
	add(after, 1009, 1000);
	change_compare(before, after, &r);
	change_format(&r, buf, sizeof(buf));
	assert_string_equal(buf, "~ (p<0.001, but p50 +2% p99 +2% within noise; 1000 -> 1000 "
				 "calls)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rank_test_by_hand),
	    cmocka_unit_test(test_identical_not_significant),
	    cmocka_unit_test(test_twice_as_slow),
	    cmocka_unit_test(test_too_few_calls),
	    cmocka_unit_test(test_within_a_bucket),
	    cmocka_unit_test(test_tail_only),
	    cmocka_unit_test(test_cumulative),
	    cmocka_unit_test(test_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
