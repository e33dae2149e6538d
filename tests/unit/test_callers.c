/* Unit tests for callers_view_of on a table filled by hand: each slot sees
 * its own entries of its own attach generation, summed per calling
 * function, whatever the order the map gave them in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "callers.h"
#include "stats.h"

#include <stdlib.h>
#include <string.h>

static struct func_info fns[] = {
    {.name = "main.a", .entry = 0x1000, .size = 0x100},
    {.name = "main.b", .entry = 0x2000, .size = 0x100},
    {.name = "main.c", .entry = 0x3000, .size = 0x100},
};
static struct func_index idx = {.funcs = fns, .count = 3};

/* Entry k: slot, gen, return address, calls, each call's duration (ns). */
static void put(struct callers_table *t, uint16_t slot, uint32_t gen, uint64_t ret, uint64_t calls,
		uint64_t ns)
{
	size_t k = t->n++;

	t->keys[k] = (struct retop_caller_key){.func_id = slot, .gen = gen, .ret_addr = ret};
	memset(&t->vals[k], 0, sizeof(t->vals[k]));
	t->vals[k].calls = calls;
	t->vals[k].sum_ns = calls * ns;
	t->vals[k].hist[retop_hist_bucket(ns)] = calls;
}

static void fill(struct callers_table *t)
{
	t->cap = 16;
	t->keys = calloc(t->cap, sizeof(*t->keys));
	t->vals = calloc(t->cap, sizeof(*t->vals));
	assert_non_null(t->keys);
	assert_non_null(t->vals);
	/* Slots 5 and 7 interleaved, as a hash map's walk gives them. */
	put(t, 5, 1, 0x1010, 3, 1000);
	put(t, 7, 2, 0x2010, 2, 5000);
	put(t, 5, 1, 0x2020, 4, 2000);
	put(t, 5, 0, 0x3010, 9, 7000); /* an earlier function's: stale */
	put(t, 7, 2, 0x1040, 1, 9000);
	put(t, 5, 1, 0x1020, 2, 1000); /* main.a again, another call site */
	put(t, 1023, 1, 0x3010, 6, 3000);
	put(t, RETOP_MAX_FUNCS + 5, 1, 0x3010, 8, 3000); /* out of range: no slot's */
	put(t, 5, 1, 0x2020, 0, 0);			 /* no calls: no row */
	assert_int_equal(callers_table_index(t), 0);
}

static void test_each_slot_its_own(void **state)
{
	(void)state;
	struct callers_table t = {0};
	struct func_images im = {.idx = {&idx}};
	struct callers_view v;

	fill(&t);
	assert_int_equal(callers_view_of(&t, 5, 1, &im, &v), 0);
	assert_int_equal(v.n, 2);
	assert_string_equal(v.rows[0].name, "main.a");
	assert_int_equal(v.rows[0].calls, 5);
	assert_int_equal(v.rows[0].sum_ns, 5000);
	assert_string_equal(v.rows[1].name, "main.b");
	assert_int_equal(v.rows[1].calls, 4);
	uint64_t p[2];
	stats_p50_p99(t.vals[2].hist, RETOP_HIST_BUCKETS, 0, 0, p);
	assert_int_equal(v.rows[1].p50_ns, p[0]);
	assert_int_equal(v.rows[1].p99_ns, p[1]);

	assert_int_equal(callers_view_of(&t, 7, 2, &im, &v), 0);
	assert_int_equal(v.n, 2);
	assert_string_equal(v.rows[0].name, "main.b");
	assert_int_equal(v.rows[0].calls, 2);
	assert_string_equal(v.rows[1].name, "main.a");
	assert_int_equal(v.rows[1].calls, 1);

	assert_int_equal(callers_view_of(&t, 1023, 1, &im, &v), 0);
	assert_int_equal(v.n, 1);
	assert_string_equal(v.rows[0].name, "main.c");
	assert_int_equal(v.rows[0].calls, 6);

	/* A slot with nothing, a generation with nothing, no slot at all. */
	assert_int_equal(callers_view_of(&t, 6, 1, &im, &v), 0);
	assert_int_equal(v.n, 0);
	assert_int_equal(callers_view_of(&t, 7, 1, &im, &v), 0);
	assert_int_equal(v.n, 0);
	assert_int_equal(callers_view_of(&t, RETOP_MAX_FUNCS + 5, 1, &im, &v), 0);
	assert_int_equal(v.n, 0);
	callers_table_free(&t);
}

/* Read anew with nothing in it: no slot sees what the last read held. */
static void test_empty_after_full(void **state)
{
	(void)state;
	struct callers_table t = {0};
	struct func_images im = {.idx = {&idx}};
	struct callers_view v;

	fill(&t);
	t.n = 0;
	assert_int_equal(callers_table_index(&t), 0);
	assert_int_equal(callers_view_of(&t, 5, 1, &im, &v), 0);
	assert_int_equal(v.n, 0);
	callers_table_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_each_slot_its_own),
	    cmocka_unit_test(test_empty_after_full),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
