/* Unit tests for the overhead budget's policy (src/budget.c) on arrays of
 * demands: who stays in full, who is timed at its entry, who is estimated,
 * with which share; and for --budget PCT%'s ceiling. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "budget.h"

#define S 1000000000ull
/* Long past any mode change: every function settled. */
#define NOW (100 * S)

static struct budget_demand demand(double calls_per_s, bool counts_at_entry)
{
	return (struct budget_demand){.hits = 2 * calls_per_s,
				      .calls_per_s = calls_per_s,
				      .rate_per_s = calls_per_s,
				      .slice_cost = 2.0,
				      .mode = BUDGET_FULL,
				      .counts_at_entry = counts_at_entry};
}

static void test_all_fit(void **state)
{
	struct budget_demand d[2] = {demand(1000, true), demand(2000, false)};
	struct budget_decision out[2];
	size_t order[2];

	(void)state;
	/* 6,000 hits a second of 10,000 (9,000 aimed at): both in full. */
	budget_plan(d, 2, 10000, NOW, order, out);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(out[i].to, BUDGET_FULL);
		assert_true(out[i].share == 1.0);
	}
}

static void test_cheapest_first(void **state)
{
	/* 200 and 300 calls/s fit; 20,000 calls/s (40,000 hits) cannot even
	 * with its entries (20,000 > what is left), so it is estimated. */
	struct budget_demand d[3] = {demand(20000, true), demand(200, false), demand(300, true)};
	struct budget_decision out[3];
	size_t order[3];

	(void)state;
	budget_plan(d, 3, 10000, NOW, order, out);
	assert_int_equal(out[1].to, BUDGET_FULL);
	assert_int_equal(out[2].to, BUDGET_FULL);
	assert_int_equal(out[0].to, BUDGET_ESTIMATED);
	/* What is left after the two in full (9,000 - 400 - 600 = 8,000), for
	 * sampled slices at 2 hits a call and the measured slice cost 2. */
	assert_true(fabs(out[0].share - 8000.0 / (2.0 * 40000.0)) < 1e-9);
}

static void test_timing_when_entries_fit(void **state)
{
	/* 4,000 calls/s: 8,000 hits in full do not fit an equal share, the
	 * 4,000 entries do (proven to count calls): timing, its RETs in for
	 * the share of slices what is left pays for. */
	struct budget_demand d[1] = {demand(4000, true)};
	struct budget_decision out[1];
	size_t order[1];

	(void)state;
	d[0].hits = 2 * 6000;
	d[0].calls_per_s = d[0].rate_per_s = 6000;
	budget_plan(d, 1, 10000, NOW, order, out);
	assert_int_equal(out[0].to, BUDGET_TIMING);
	assert_true(fabs(out[0].share - (9000.0 - 6000.0) / 6000.0) < 1e-9);
	/* The same entry not proven to count calls: estimated. */
	d[0].counts_at_entry = false;
	budget_plan(d, 1, 10000, NOW, order, out);
	assert_int_equal(out[0].to, BUDGET_ESTIMATED);
}

static void test_hold_and_headroom(void **state)
{
	/* Estimated for 1 s only: no way back to a dearer mode before
	 * BUDGET_HOLD_NS, though 1,000 calls/s would fit in full. */
	struct budget_demand d[1] = {demand(1000, true)};
	struct budget_decision out[1];
	size_t order[1];

	(void)state;
	d[0].mode = BUDGET_ESTIMATED;
	d[0].mode_since_ns = NOW - S;
	budget_plan(d, 1, 10000, NOW, order, out);
	assert_int_equal(out[0].to, BUDGET_ESTIMATED);
	/* Settled: back in full. */
	d[0].mode_since_ns = NOW - 3 * S;
	budget_plan(d, 1, 10000, NOW, order, out);
	assert_int_equal(out[0].to, BUDGET_FULL);
	/* 4,000 calls/s (8,000 hits): fits 9,000 in full, not 9,000 * 0.7
	 * from the estimate; its 4,000 entries fit 9,000 * 0.8 * 0.7, so it
	 * is timed, and the rest pays for its RETs in every slice: full. */
	d[0].hits = 8000;
	d[0].calls_per_s = d[0].rate_per_s = 4000;
	budget_plan(d, 1, 10000, NOW, order, out);
	assert_int_equal(out[0].to, BUDGET_FULL);
	/* 6,000 calls/s: its entries fit 9,000 * 0.8, not * 0.7: estimated. */
	d[0].hits = 12000;
	d[0].calls_per_s = d[0].rate_per_s = 6000;
	budget_plan(d, 1, 10000, NOW, order, out);
	assert_int_equal(out[0].to, BUDGET_ESTIMATED);
}

static void test_hold_backs_off(void **state)
{
	/* First sent down (never up since attached): the hold is 2 s. */
	uint64_t hold = budget_hold_after(0, 0, NOW);
	struct budget_demand d[1] = {demand(1000, true)};
	struct budget_decision out[1];
	size_t order[1];

	(void)state;
	assert_true(hold == BUDGET_HOLD_NS);
	/* Up after its hold, and down again 0.5 s later: it flapped, held
	 * twice as long each time, up to BUDGET_HOLD_MAX_NS. */
	uint64_t want[] = {4 * S, 8 * S, 16 * S, 32 * S, 64 * S, 64 * S};
	uint64_t t = NOW;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		uint64_t up = t + hold;
		t = up + S / 2;
		hold = budget_hold_after(hold, up, t);
		assert_true(hold == want[i]);
	}
	assert_true(BUDGET_HOLD_MAX_NS == 64 * S);
	/* The plan keeps it estimated for its whole hold, though it fits in
	 * full: not after 63 s of 64, yes after 64. */
	d[0].mode = BUDGET_ESTIMATED;
	d[0].hold_ns = hold;
	d[0].mode_since_ns = NOW - 63 * S;
	budget_plan(d, 1, 10000, NOW, order, out);
	assert_int_equal(out[0].to, BUDGET_ESTIMATED);
	d[0].mode_since_ns = NOW - 64 * S;
	budget_plan(d, 1, 10000, NOW, order, out);
	assert_int_equal(out[0].to, BUDGET_FULL);
	/* Up, and it stayed up BUDGET_HOLD_STAY_NS: sent down then, the hold
	 * starts again at 2 s. */
	assert_true(budget_hold_after(hold, NOW, NOW + BUDGET_HOLD_STAY_NS) == BUDGET_HOLD_NS);
	assert_true(budget_hold_after(hold, NOW, NOW + BUDGET_HOLD_STAY_NS - 1) ==
		    BUDGET_HOLD_MAX_NS);
}

static void test_min_share(void **state)
{
	/* 1,000,000 calls/s: its equal part (4,500 of the 9,000 aimed at)
	 * samples it 0.11% of the time, under BUDGET_MIN_SHARE.  It is
	 * sampled at the floor, 8,000 hits a second, which fits beside the
	 * other's 400 (estimated a second ago: held, its every slice sampled). */
	struct budget_demand d[2] = {demand(100, false), demand(1e6, false)};
	struct budget_decision out[2];
	size_t order[2];

	(void)state;
	d[0].mode = BUDGET_ESTIMATED;
	d[0].mode_since_ns = NOW - S;
	budget_plan(d, 2, 10000, NOW, order, out);
	assert_int_equal(out[0].to, BUDGET_ESTIMATED);
	assert_true(out[0].share == 1.0);
	assert_int_equal(out[1].to, BUDGET_ESTIMATED);
	assert_true(out[1].share == BUDGET_MIN_SHARE);
}

static void test_floors_yield_to_the_budget(void **state)
{
	/* Five functions a thousand budgets over: at the floor each would be
	 * sampled for 5e6 * 2 * 2 * 0.002 = 40,000 hits a second, four times
	 * the whole budget.  The floors shrink to what is left: together
	 * they spend the 9,000 aimed at, no more. */
	struct budget_demand d[5];
	struct budget_decision out[5];
	size_t order[5];
	double spent = 0;

	(void)state;
	for (int i = 0; i < 5; i++)
		d[i] = demand(5e6, false);
	budget_plan(d, 5, 10000, NOW, order, out);
	for (int i = 0; i < 5; i++) {
		assert_int_equal(out[i].to, BUDGET_ESTIMATED);
		assert_true(out[i].share < BUDGET_MIN_SHARE);
		spent += out[i].share * d[i].slice_cost * d[i].hits;
	}
	assert_true(fabs(spent - 9000) < 1e-6);
	/* Beside one that costs little: it keeps its equal part, the floored
	 * ones share the rest. */
	d[0] = demand(100, false);
	d[0].mode = BUDGET_ESTIMATED;
	budget_plan(d, 5, 10000, NOW, order, out);
	assert_int_equal(out[0].to, BUDGET_FULL);
	spent = 0;
	for (int i = 1; i < 5; i++)
		spent += out[i].share * d[i].slice_cost * d[i].hits;
	assert_true(fabs(spent - (9000 - 200)) < 1e-6);
}

static void test_held_function_does_not_stop_the_filling(void **state)
{
	/* The cheapest function (no calls now) was estimated a second ago:
	 * it is held out of full, but the functions dearer than it still go
	 * in full where they fit.  It used to end the filling, and every
	 * function of a package went to a cheaper mode with it. */
	struct budget_demand d[3] = {demand(0, false), demand(100, true), demand(200, false)};
	struct budget_decision out[3];
	size_t order[3];

	(void)state;
	d[0].mode = BUDGET_ESTIMATED;
	d[0].mode_since_ns = NOW - S;
	budget_plan(d, 3, 10000, NOW, order, out);
	assert_int_equal(out[0].to, BUDGET_ESTIMATED);
	assert_int_equal(out[1].to, BUDGET_FULL);
	assert_int_equal(out[2].to, BUDGET_FULL);
}

static void test_ties_are_stable(void **state)
{
	/* Equal demands: the same plan whatever qsort does with ties. */
	struct budget_demand d[4];
	struct budget_decision a[4], b[4];
	size_t order[4];

	(void)state;
	for (int i = 0; i < 4; i++)
		d[i] = demand(1500, true);
	budget_plan(d, 4, 10000, NOW, order, a);
	budget_plan(d, 4, 10000, NOW, order, b);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(a[i].to, b[i].to);
		assert_true(a[i].share == b[i].share);
	}
	/* 3,000 hits each do not fit 9,000 / 4 in full; their entries (1,500
	 * each) do: all timed, sharing the 3,000 left for RETs. */
	for (int i = 0; i < 4; i++) {
		assert_int_equal(a[i].to, BUDGET_TIMING);
		assert_true(fabs(a[i].share - 0.5) < 1e-9);
	}
}

/* The brake, mid-slice, with the last second's hits past the budget.  A
 * function at rest in full called at 50,000 a second since the slice
 * began: what does not fit at that rate goes at once, its entries too,
 * unless the second can still pay for its calls so far (a burst). */
static void test_brake(void **state)
{
	struct budget_demand d[4] = {demand(100, true), demand(200, true), demand(0, true),
				     demand(300, true)};
	struct budget_brake_in in[4] = {
	    {.rate = 100, .calls = 100, .hits = 200},
	    {.rate = 0, .calls = 200, .hits = 400},
	    {.rate = 50000, .calls = 2000, .hits = 4000},
	    /* Estimated: its sampled slices spent most of the second. */
	    {.rate = 0, .calls = 0, .hits = 8000},
	};
	struct budget_decision out[4];
	size_t order[4], kept;
	double room;

	(void)state;
	/* Estimated long ago and cheap: the plan would put it back in full,
	 * the brake does not. */
	d[3].mode = BUDGET_ESTIMATED;
	d[3].mode_since_ns = NOW - 10 * S;
	/* The others in full and the runtime watchers (8,000) spent 8,600 of
	 * the 9,000 aimed at: its 2,000 calls do not fit, estimated, its
	 * demand raised to the rate, and its share what the plan leaves:
	 * 9,000 less the 1,200 of the three it puts in full, over 50,000
	 * calls at 2 hits and the slice cost 2. */
	assert_int_equal(budget_brake(d, in, 4, 10000, 8000, NOW, order, out, &kept, &room), 1);
	assert_int_equal(kept, 0);
	assert_int_equal(out[0].to, BUDGET_FULL);
	assert_int_equal(out[1].to, BUDGET_FULL);
	assert_int_equal(out[2].to, BUDGET_ESTIMATED);
	assert_int_equal(out[3].to, BUDGET_ESTIMATED);
	assert_true(d[2].calls_per_s == 50000 && d[2].rate_per_s == 50000 && d[2].hits == 100000);
	assert_true(fabs(out[2].share - 7800.0 / 200000.0) < 1e-9);
	/* The watchers' 400 only: a burst the second pays for, its 2,000
	 * calls fit (9,000 - 1,000) * 0.8, the estimated function's 8,000
	 * hits not counted (its slices yield to cheaper entries at the next
	 * plan): its entries stay, its RETs go. */
	d[2] = demand(0, true);
	assert_int_equal(budget_brake(d, in, 4, 10000, 400, NOW, order, out, &kept, &room), 1);
	assert_int_equal(kept, 1);
	assert_int_equal(out[2].to, BUDGET_TIMING);
	assert_true(out[2].share == BUDGET_MIN_SHARE);
	/* It may make 4,400 calls more before it passes the 6,400: the
	 * engine brakes again there. */
	assert_true(fabs(room - 4400) < 1e-9);
	/* The same burst with the second's hits at 26,000 by BPF's count,
	 * 6,000 past twice the budget (an estimated function's sampled
	 * slices, a burst not yet in the rings): that much less room, (9,000
	 * - 1,000 - 6,000) * 0.8 = 1,600, and its 2,000 calls no longer fit:
	 * estimated. */
	d[2] = demand(0, true);
	assert_int_equal(budget_brake(d, in, 4, 10000, budget_brake_others(400, 16000, 10000), NOW,
				      order, out, &kept, &room),
			 1);
	assert_int_equal(kept, 0);
	assert_int_equal(out[2].to, BUDGET_ESTIMATED);
	/* Up to twice the budget, a burst's second's worth: the room as
	 * before. */
	assert_true(budget_brake_others(400, 0, 10000) == 400 &&
		    budget_brake_others(400, 10000, 10000) == 400 &&
		    budget_brake_others(400, 10500, 10000) == 900);
	/* 6,500 calls so far: past 6,400, estimated. */
	d[2] = demand(0, true);
	in[2].calls = 6500;
	in[2].hits = 13000;
	assert_int_equal(budget_brake(d, in, 4, 10000, 400, NOW, order, out, &kept, &room), 1);
	assert_int_equal(kept, 0);
	assert_int_equal(out[2].to, BUDGET_ESTIMATED);
	/* Its entry not proven to count calls: nothing to keep, estimated. */
	d[2] = demand(0, false);
	in[2].calls = 2000;
	in[2].hits = 4000;
	assert_int_equal(budget_brake(d, in, 4, 10000, 400, NOW, order, out, &kept, &room), 1);
	assert_int_equal(out[2].to, BUDGET_ESTIMATED);
	/* An entry alone keeps it in full, its calls counted. */
	d[2] = demand(0, true);
	d[2].entry_only = true;
	assert_int_equal(budget_brake(d, in, 4, 10000, 400, NOW, order, out, &kept, &room), 0);
	assert_int_equal(kept, 1);
	assert_int_equal(out[2].to, BUDGET_FULL);
	/* Rates under the demand leave the demand: 2,000 calls a second
	 * over the last second, 5 since the slice began; nothing goes. */
	d[0] = demand(2000, true);
	in[0].rate = 5;
	in[2].rate = 0;
	d[2] = demand(0, true);
	assert_int_equal(budget_brake(d, in, 4, 10000, 400, NOW, order, out, &kept, &room), 0);
	assert_true(d[0].calls_per_s == 2000 && d[0].hits == 4000);
	for (int i = 0; i < 4; i++)
		assert_int_equal(out[i].to, d[i].mode);
	/* Only what rose goes: 5,000 calls a second in full (10,000 hits)
	 * would not fit the plan, but the slice's plan will say so; the one
	 * called at 50,000 a second since the slice began goes now. */
	{
		struct budget_demand e[2] = {demand(5000, true), demand(0, true)};
		struct budget_brake_in ein[2] = {{.rate = 0, .calls = 5000, .hits = 10000},
						 {.rate = 50000, .calls = 500, .hits = 1000}};
		assert_int_equal(budget_brake(e, ein, 2, 10000, 0, NOW, order, out, &kept, &room),
				 1);
		assert_int_equal(out[0].to, BUDGET_FULL);
		assert_int_equal(out[1].to, BUDGET_ESTIMATED);
	}
	/* Inlined, never called out of line: its marks hit 30,000 times a
	 * second since the slice began.  The others spent the second: its
	 * marks go (estimated); quiet, its 2,000 calls counted at the marks
	 * in the last second fit, timed (its marks stay in). */
	{
		struct budget_demand e[1] = {demand(0, true)};
		struct budget_brake_in ein[1] = {
		    {.rate = 0, .inlined = 30000, .calls = 2000, .hits = 2000}};
		assert_int_equal(
		    budget_brake(e, ein, 1, 10000, 8000, NOW, order, out, &kept, &room), 1);
		assert_int_equal(out[0].to, BUDGET_ESTIMATED);
		assert_true(e[0].inlined_per_s == 30000 && e[0].hits == 30000);
		e[0] = demand(0, true);
		assert_int_equal(budget_brake(e, ein, 1, 10000, 0, NOW, order, out, &kept, &room),
				 1);
		assert_int_equal(out[0].to, BUDGET_TIMING);
		/* 7,300 of them in the last second: past 0.8 * 9,000. */
		e[0] = demand(0, true);
		ein[0].calls = 7300;
		assert_int_equal(budget_brake(e, ein, 1, 10000, 0, NOW, order, out, &kept, &room),
				 1);
		assert_int_equal(out[0].to, BUDGET_ESTIMATED);
	}
	/* Timed at its entry, then a query calls it 8,000 times a second, and
	 * 8,000 times in the last second: its entries no longer fit. */
	d[1].mode = BUDGET_TIMING;
	d[1].mode_since_ns = NOW - 10 * S;
	in[1] = (struct budget_brake_in){.rate = 8000, .calls = 8000, .hits = 8000};
	assert_int_equal(budget_brake(d, in, 4, 10000, 400, NOW, order, out, &kept, &room), 1);
	assert_int_equal(out[1].to, BUDGET_ESTIMATED);
}

static void test_allowed(void **state)
{
	(void)state;
	assert_true(budget_allowed_hits(10000, 0, 20000) == 10000);
	assert_true(budget_allowed_hits(0, 5, 20000) == 0);
	/* 1% of a CPU at 20 us a hit: 1/101 of a second is 495 hits. */
	assert_true(fabs(budget_allowed_hits(10000, 1, 20000) - 1e9 / 101.0 / 20000.0) < 1e-6);
	/* A cheap hit: the hit count is the lower ceiling. */
	assert_true(budget_allowed_hits(10000, 50, 100) == 10000);
}

/* A sampled slice's cap: 5% of the second's hits, at its hits a call,
 * never under 32 calls; none without a budget.  The probes go in a lead
 * ahead of a slice only where that lead's calls cost under a quarter of
 * the cap. */
static void test_slice_cap(void **state)
{
	(void)state;
	/* 10,000 a second at 2 hits a call: 250 calls, 500 hits. */
	assert_int_equal(budget_slice_cap(10000, 2), 250);
	/* A dearer slice (the lead's hits, every RET site): fewer calls. */
	assert_int_equal(budget_slice_cap(10000, 5), 100);
	/* A slice cost under a hit a call counts one. */
	assert_int_equal(budget_slice_cap(10000, 0.5), 500);
	assert_int_equal(budget_slice_cap(200, 2), BUDGET_SLICE_CAP_MIN);
	assert_int_equal(budget_slice_cap(0, 2), 0);
	/* 5 ms ahead: 10,000 calls a second make 50 of them, under a
	 * quarter of 250; 20,000 make 100, over it. */
	assert_true(budget_slice_lead(10000, 250, 5000000));
	assert_false(budget_slice_lead(20000, 250, 5000000));
	assert_true(budget_slice_lead(1e9, 0, 5000000));
}

/* The timing mode's runs, slice by slice over a simulated hour and more
 * (xorshift, fixed seed): the share of slices timed is the share planned,
 * runs are budget_run_slices long, and they start no more than once every
 * every_s where a run under a second does it: BUDGET_RUN_EVERY_S for a
 * few functions timed, and for a package's (budget_run_every_s) their runs
 * together start no more than BUDGET_RUNS_PER_S times a second. */
static void test_timing_runs(void **state)
{
	(void)state;
	const double shares[] = {0.002, 0.01, 0.025, 0.05, 0.118, 0.2, 0.5, 0.9, 0.99};
	const size_t timed_funcs[] = {1, 20, 37, 100};
	const size_t slices = 2000000; /* 55 hours of 100 ms slices */
	uint64_t x = 0x9E3779B97F4A7C15ull;

	for (size_t m = 0; m < sizeof(timed_funcs) / sizeof(timed_funcs[0]); m++) {
		size_t nfuncs = timed_funcs[m];
		double every = budget_run_every_s(nfuncs);
		for (size_t k = 0; k < sizeof(shares) / sizeof(shares[0]); k++) {
			double share = shares[k];
			unsigned left = 0, len = budget_run_slices(share, every), run = 0;
			size_t timed = 0, starts = 0;
			for (size_t i = 0; i < slices; i++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				bool was_in = run > 0;
				bool on = budget_run_step(share, every, &left,
							  (double)(x >> 11) / 9007199254740992.0);
				if (on && !was_in)
					starts++;
				run = on ? run + 1 : 0;
				/* A run that ended may start again at once: its
				 * length is counted modulo len. */
				assert_true(left < len);
				timed += on;
			}
			double got = (double)timed / (double)slices;
			assert_true(fabs(got - share) < 0.03 * share + 1e-4);
			double per_s = (double)starts / ((double)slices * BUDGET_SLICE_NS / 1e9);
			if (len < BUDGET_RUN_MAX) {
				assert_true(per_s <= 1.02 / every);
				if (nfuncs > BUDGET_RUN_EVERY_S * BUDGET_RUNS_PER_S)
					assert_true(per_s * (double)nfuncs <=
						    1.02 * BUDGET_RUNS_PER_S);
			}
			/* A run in full costs the whole second it lasts, no
			 * more. */
			assert_true(len <= BUDGET_RUN_MAX &&
				    len * BUDGET_SLICE_NS <= 1000000000ull);
		}
	}
	assert_true(budget_run_every_s(0) == BUDGET_RUN_EVERY_S);
	assert_true(budget_run_every_s(20) == BUDGET_RUN_EVERY_S);
	assert_true(fabs(budget_run_every_s(37) - 9.25) < 1e-9);
	assert_true(fabs(budget_run_every_s(400) - 100) < 1e-9);
	assert_int_equal(budget_run_slices(0, 0), 1);
	assert_int_equal(budget_run_slices(NAN, BUDGET_RUN_EVERY_S), 1);
	assert_int_equal(budget_run_slices(0.02, BUDGET_RUN_EVERY_S), 1);
	assert_int_equal(budget_run_slices(0.025, BUDGET_RUN_EVERY_S), 2);
	assert_int_equal(budget_run_slices(0.118, BUDGET_RUN_EVERY_S), 6);
	assert_int_equal(budget_run_slices(0.5, BUDGET_RUN_EVERY_S), BUDGET_RUN_MAX);
	/* Twice as far apart, twice as long (up to a second). */
	assert_int_equal(budget_run_slices(0.025, 2 * BUDGET_RUN_EVERY_S), 3);
	assert_int_equal(budget_run_slices(0.118, 2 * BUDGET_RUN_EVERY_S), BUDGET_RUN_MAX);
	/* No share, never timed; every slice timed at a share of 1. */
	const double e = BUDGET_RUN_EVERY_S;
	unsigned left = 0;
	assert_false(budget_run_step(0, e, &left, 0));
	assert_true(budget_run_step(1, e, &left, 0.999));
	/* A run of a second under way, and the share falls (a burst): the
	 * run ends where one of the new length would have. */
	left = 0;
	assert_true(budget_run_step(0.5, e, &left, 0));
	assert_int_equal(left, BUDGET_RUN_MAX - 1);
	assert_true(budget_run_step(0.5, e, &left, 0.999));
	assert_true(budget_run_step(0.05, e, &left, 0.999)); /* runs of 3: 1 left */
	assert_int_equal(left, 1);
	assert_true(budget_run_step(0.05, e, &left, 0.999));
	assert_false(budget_run_step(0.05, e, &left, 0.999));
	left = BUDGET_RUN_MAX - 1;
	assert_false(budget_run_step(0.01, e, &left, 0.999));
	assert_int_equal(left, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_all_fit),
	    cmocka_unit_test(test_cheapest_first),
	    cmocka_unit_test(test_timing_when_entries_fit),
	    cmocka_unit_test(test_hold_and_headroom),
	    cmocka_unit_test(test_hold_backs_off),
	    cmocka_unit_test(test_min_share),
	    cmocka_unit_test(test_floors_yield_to_the_budget),
	    cmocka_unit_test(test_held_function_does_not_stop_the_filling),
	    cmocka_unit_test(test_ties_are_stable),
	    cmocka_unit_test(test_brake),
	    cmocka_unit_test(test_allowed),
	    cmocka_unit_test(test_slice_cap),
	    cmocka_unit_test(test_timing_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
