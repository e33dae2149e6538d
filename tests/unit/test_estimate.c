/* Unit tests for the calls' ledger and the estimate's interval
 * (src/estimate.c) on arrays of slices: chances, probes late, gaps where
 * retop fell behind its clock, periods exact and estimated. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "estimate.h"

#define L 0.1 /* a slice, in seconds */

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static double unif(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static void test_all_sampled_is_exact(void **state)
{
	struct ledger l = {0};
	struct ledger_view v;

	(void)state;
	ledger_enter_estimate(&l, 0);
	for (int k = 0; k < 20; k++)
		estimate_slice(&l.est, 1.0, true, 1.0, L, 7, true);
	ledger_view(&l, 0, true, &v);
	assert_true(v.estimated);
	assert_int_equal(v.calls, 140);
	assert_true(v.lo == 140 && v.hi == 140);
}

static void test_horvitz_thompson(void **state)
{
	struct estimate e = {0};

	(void)state;
	/* Sampled with chance 1/4: 10 calls stand for 40. */
	estimate_slice(&e, 0.25, true, 1.0, L, 10, true);
	estimate_slice(&e, 0.25, false, 1.0, L, 0, true);
	assert_true(fabs(e.sum - 40) < 1e-9);
	assert_true(fabs(e.var - 100 * 0.75 / 0.0625) < 1e-9);
	assert_true(e.seen == 10 && e.partial == 2 && e.slices_with_calls == 1);
	assert_true(fabs(e.covered_s - 2 * L) < 1e-12 && e.gap_s == 0);
}

static void test_late_probe_counts_its_time(void **state)
{
	/* The probe went in halfway through a sampled slice: its 10 calls are
	 * half the slice's.  Weighted as a whole slice it read 10. */
	struct estimate e = {0};

	(void)state;
	estimate_slice(&e, 1.0, true, 0.5, L, 10, true);
	assert_true(fabs(e.sum - 20) < 1e-9);
	assert_true(e.var > 0); /* the other half's calls are a guess */
	/* Sampled, its probe never in: a gap, not a slice of no calls. */
	estimate_slice(&e, 0.5, true, 0.0, L, 0, true);
	assert_true(fabs(e.gap_s - L) < 1e-12);
	assert_true(fabs(e.covered_s - L) < 1e-12);
}

static void test_gap_is_imputed_not_frozen(void **state)
{
	/* 100 calls a slice, sampled one in two; then 15 slices never planned
	 * (retop stopped for 1.5 s); then sampling goes on. */
	struct ledger l = {0};
	struct ledger_view v;

	(void)state;
	ledger_enter_estimate(&l, 0);
	for (int k = 0; k < 40; k++)
		estimate_slice(&l.est, 0.5, k % 2 == 0, 1.0, L, k % 2 == 0 ? 100 : 0, true);
	for (int k = 0; k < 15; k++)
		estimate_slice(&l.est, 0, false, 0.0, L, 0, true);
	for (int k = 0; k < 40; k++)
		estimate_slice(&l.est, 0.5, k % 2 == 0, 1.0, L, k % 2 == 0 ? 100 : 0, true);
	ledger_view(&l, 0, true, &v);
	/* 95 slices of 100 calls. */
	assert_true(fabs((double)v.calls - 9500) < 1);
	assert_true(fabs(v.gap_s - 1.5) < 1e-9);
	assert_true(v.lo <= 9500 && 9500 <= v.hi && !isinf(v.hi));
	/* Later slices keep counting: the estimate did not stop. */
	estimate_slice(&l.est, 0.5, true, 1.0, L, 100, true);
	struct ledger_view w;
	ledger_view(&l, 0, true, &w);
	assert_true(w.calls > v.calls);
}

static void test_no_coverage_no_estimate(void **state)
{
	struct ledger l = {0};
	struct ledger_view v;

	(void)state;
	ledger_enter_estimate(&l, 50);
	estimate_slice(&l.est, 0, false, 0, L, 0, true);
	ledger_view(&l, 50, true, &v);
	assert_int_equal(v.calls, 50); /* the exact period, nothing invented */
	assert_true(isinf(v.hi));
}

static void test_periods(void **state)
{
	/* 100 calls exact, an estimated period of 50 (all slices sampled),
	 * left in a slice whose 5 calls so far are counted, 3 calls in flight
	 * then (counted in the estimate), then 60 more exact. */
	struct ledger l = {0};
	struct ledger_view v;

	(void)state;
	ledger_enter_estimate(&l, 100);
	for (int k = 0; k < 5; k++)
		estimate_slice(&l.est, 1.0, true, 1.0, L, 10, true);
	ledger_leave_estimate(&l, 5, 1.0, L / 2, 200 + 3);
	ledger_view(&l, 203 + 60, false, &v);
	assert_int_equal(v.calls, 100 + 55 + 60);
	/* While estimating, the exact period since does not count. */
	ledger_view(&l, 203 + 60, true, &v);
	assert_int_equal(v.calls, 100 + 55);
}

static void test_traps_unbound(void **state)
{
	struct ledger l = {0};
	struct ledger_view v;

	(void)state;
	ledger_enter_estimate(&l, 0);
	for (int k = 0; k < 30; k++)
		estimate_slice(&l.est, 0.1, k % 3 == 0, 1.0, L, k % 3 == 0 ? 50 : 0, true);
	l.est.trap_ns = 60, l.est.cpu_ns = 100; /* traps took 60% of the CPU */
	ledger_view(&l, 0, true, &v);
	assert_true(isinf(v.hi));
	assert_true(v.lo >= l.est.seen);
	l.est.trap_ns = 20;
	ledger_view(&l, 0, true, &v);
	assert_false(isinf(v.hi));
	/* The traps slow what they count: the upper end widens by 1/(1-0.2). */
	assert_true(v.hi > (double)v.calls / 0.8 - 1);
}

static void test_few_slices_unbounded(void **state)
{
	struct ledger l = {0};
	struct ledger_view v;

	(void)state;
	ledger_enter_estimate(&l, 0);
	for (int k = 0; k < 9; k++)
		estimate_slice(&l.est, 0.5, true, 1.0, L, 4, true);
	ledger_view(&l, 0, true, &v);
	assert_true(isinf(v.hi));
	assert_true(v.lo == 36);
}

/* Many estimated runs of a steady load with bursts, stalls and late
 * probes: the 95% interval holds the true count in at least 9 of 10, and
 * is bounded. */
static void test_interval_holds(void **state)
{
	int runs = 400, held = 0, bounded = 0;

	(void)state;
	for (int r = 0; r < runs; r++) {
		struct ledger l = {0};
		struct ledger_view v;
		double truth = 0;
		ledger_enter_estimate(&l, 0);
		for (int k = 0; k < 300; k++) {
			/* 200 calls a slice, a burst of 5x one slice in 20. */
			double rate = unif() < 0.05 ? 1000 : 200;
			uint64_t n = (uint64_t)(rate * (0.8 + 0.4 * unif()));
			truth += (double)n;
			if (k >= 100 && k < 115) { /* retop stopped for 1.5 s */
				estimate_slice(&l.est, 0, false, 0, L, 0, true);
				continue;
			}
			double p = 0.3, in = unif() < 0.1 ? 0.7 : 1.0;
			bool on = unif() < p;
			/* Late probes miss the calls of the slice's start. */
			uint64_t seen = on ? (uint64_t)((double)n * in + 0.5) : 0;
			estimate_slice(&l.est, p, on, in, L, seen, true);
		}
		ledger_view(&l, 0, true, &v);
		held += v.lo <= truth && truth <= v.hi;
		bounded += !isinf(v.hi);
	}
	print_message("interval held %d of %d runs, bounded %d\n", held, runs, bounded);
	assert_true(held >= runs * 9 / 10);
	assert_int_equal(bounded, runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_all_sampled_is_exact),
	    cmocka_unit_test(test_horvitz_thompson),
	    cmocka_unit_test(test_late_probe_counts_its_time),
	    cmocka_unit_test(test_gap_is_imputed_not_frozen),
	    cmocka_unit_test(test_no_coverage_no_estimate),
	    cmocka_unit_test(test_periods),
	    cmocka_unit_test(test_traps_unbound),
	    cmocka_unit_test(test_few_slices_unbounded),
	    cmocka_unit_test(test_interval_holds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
