/* Unit tests for src/func_order.c, the one order of the dashboard's live
 * table and of batch mode, on fixed arrays: each key, its direction and
 * --sort's signs, ties in name order, the figures of functions that exist
 * only inlined, entry-only and estimated ones; and the batch text built on
 * it (snapshot_print_text): idle functions folded into one line, --top;
 * and the batch JSON (snapshot_print_json): every function, in that order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "func_order.h"
#include "funcs.h"
#include "snapshot.h"

enum { NF = 6 };

/* Six functions whose figures put each one first under some key. */
static struct func_info inl = {.inline_only = true};
static struct snapshot_func funcs[NF];

static int setup(void **state)
{
	(void)state;
	memset(funcs, 0, sizeof(funcs));
	funcs[0] = (struct snapshot_func){.name = "main.Slow", .state = FUNC_TRACING};
	funcs[0].v = (struct stats_view){.calls = 10,
					 .calls_delta = 5,
					 .calls_per_s = 5,
					 .p50_ns = 40000000,
					 .p99_ns = 50000000,
					 .max_ns = 60000000,
					 .p99_interval_ns = 1000};
	funcs[1] = (struct snapshot_func){.name = "main.Fast", .state = FUNC_TRACING};
	funcs[1].v = (struct stats_view){.calls = 9000,
					 .calls_delta = 900,
					 .calls_per_s = 900,
					 .p50_ns = 2000,
					 .p99_ns = 9000,
					 .max_ns = 90000000,
					 .p99_interval_ns = 99000000};
	/* Estimated (--budget): sorted by the figures shown, like the others. */
	funcs[2] = (struct snapshot_func){
	    .name = "main.Sampled", .state = FUNC_SAMPLED, .estimated = true};
	funcs[2].v = (struct stats_view){.calls = 50000,
					 .calls_delta = 100,
					 .calls_per_s = 100,
					 .p50_ns = 1000,
					 .p99_ns = 5000,
					 .max_ns = 6000};
	/* Stuck: no call, three in flight. */
	funcs[3] = (struct snapshot_func){.name = "main.Stuck",
					  .state = FUNC_TRACING,
					  .in_flight = 3,
					  .oldest_in_flight_ns = 7000000000ull};
	/* Exists only inlined: its inlined calls are its calls. */
	funcs[4] = (struct snapshot_func){.name = "main.add",
					  .f = &inl,
					  .state = FUNC_ENTRY_ONLY,
					  .entry_only = true,
					  .inlined_calls = 20000,
					  .inlined_calls_per_s = 2000};
	/* Entry-only: no durations, whatever the histogram says. */
	funcs[5] = (struct snapshot_func){
	    .name = "main.Loop", .state = FUNC_ENTRY_ONLY, .entry_only = true};
	funcs[5].v = (struct stats_view){.calls = 3, .p99_ns = 123456789, .max_ns = 123456789};
	return 0;
}

static void expect_order(const struct func_order *o, const char *const want[NF])
{
	size_t order[NF];

	func_order_sort(funcs, NF, o, order);
	for (size_t i = 0; i < NF; i++)
		assert_string_equal(funcs[order[i]].name, want[i]);
}

static struct func_order by(const char *key)
{
	struct func_order o;

	assert_int_equal(func_order_parse(key, &o), 0);
	return o;
}

static void test_default(void **state)
{
	struct func_order o = func_order_default();
	static const char *const want[NF] = {"main.Slow", "main.Fast",	"main.Sampled",
					     "main.Loop", "main.Stuck", "main.add"};

	(void)state;
	/* P99, highest first: what the dashboard opens with. */
	assert_int_equal(o.key, ORDER_P99);
	assert_false(o.ascending);
	assert_string_equal(func_order_name(o.key), "p99");
	/* Entry-only and inline-only ones have no P99: ties, by name. */
	expect_order(&o, want);
}

static void test_keys(void **state)
{
	struct func_order o = by("calls/s");
	static const char *const rate[NF] = {"main.add",  "main.Fast", "main.Sampled",
					     "main.Slow", "main.Loop", "main.Stuck"};
	static const char *const calls[NF] = {"main.Sampled", "main.add",  "main.Fast",
					      "main.Slow",    "main.Loop", "main.Stuck"};
	static const char *const infl[NF] = {"main.Stuck",   "main.Fast", "main.Loop",
					     "main.Sampled", "main.Slow", "main.add"};
	static const char *const max[NF] = {"main.Fast", "main.Slow",  "main.Sampled",
					    "main.Loop", "main.Stuck", "main.add"};

	(void)state;
	expect_order(&o, rate);
	/* ERR%: the failing share, highest first; a function whose errors
	 * are not read after any whose are, even none. */
	static const char *const err[NF] = {"main.Fast", "main.Slow",	 "main.Stuck",
					    "main.Loop", "main.Sampled", "main.add"};
	funcs[1].errors_counted = funcs[0].errors_counted = funcs[3].errors_counted = true;
	funcs[1].error_share = 0.5;
	funcs[0].error_share = 0.25;
	funcs[0].error_share_interval = 0.75;
	snprintf(funcs[5].errors_why, sizeof(funcs[5].errors_why), "signature unknown");
	o = by("err%");
	expect_order(&o, err);
	o.interval = true;
	assert_true(func_order_value(&funcs[0], ORDER_ERRORS, true) == 0.75);
	assert_true(func_order_value(&funcs[5], ORDER_ERRORS, false) < 0);
	o = by("calls");
	expect_order(&o, calls);
	o = by("inflight");
	expect_order(&o, infl);
	o = by("max");
	expect_order(&o, max);
	/* The dashboard's i: p99 of the last interval. */
	o = by("p99");
	o.interval = true;
	assert_true(func_order_value(&funcs[1], ORDER_P99, true) == 99000000.0);
	assert_true(func_order_value(&funcs[5], ORDER_P99, false) == 0);
	assert_true(func_order_value(&funcs[4], ORDER_CALLS, false) == 20000.0);
	size_t order[NF];
	func_order_sort(funcs, NF, &o, order);
	assert_string_equal(funcs[order[0]].name, "main.Fast");
	assert_string_equal(funcs[order[1]].name, "main.Slow");
}

static void test_directions(void **state)
{
	struct func_order o = by("name");
	static const char *const az[NF] = {"main.Fast", "main.Loop",  "main.Sampled",
					   "main.Slow", "main.Stuck", "main.add"};
	static const char *const za[NF] = {"main.add",	   "main.Stuck", "main.Slow",
					   "main.Sampled", "main.Loop",	 "main.Fast"};
	static const char *const low[NF] = {"main.Loop",    "main.Stuck", "main.add",
					    "main.Sampled", "main.Fast",  "main.Slow"};

	(void)state;
	assert_true(o.ascending);
	expect_order(&o, az);
	o = by("+name"); /* top's -o: + highest first */
	assert_false(o.ascending);
	expect_order(&o, za);
	o = by("-p99"); /* - lowest first; ties still in name order */
	assert_true(o.ascending);
	expect_order(&o, low);
	o = by("+p99");
	assert_false(o.ascending);
}

static void test_parse(void **state)
{
	struct func_order o;
	char list[256];

	(void)state;
	/* The live table's column titles, any case. */
	assert_int_equal(func_order_parse("CALLS/S", &o), 0);
	assert_int_equal(o.key, ORDER_RATE);
	assert_int_equal(func_order_parse("INFL", &o), 0);
	assert_int_equal(o.key, ORDER_INFLIGHT);
	assert_int_equal(func_order_parse("FUNCTION", &o), 0);
	assert_int_equal(o.key, ORDER_NAME);
	assert_int_equal(func_order_parse("Unmatch", &o), 0);
	assert_int_equal(o.key, ORDER_UNMATCHED);
	assert_int_equal(func_order_parse("drop", &o), 0);
	assert_int_equal(o.key, ORDER_DROPPED);
	assert_int_equal(func_order_parse("ERR%", &o), 0);
	assert_int_equal(o.key, ORDER_ERRORS);
	assert_int_equal(func_order_parse("errors", &o), 0);
	assert_int_equal(o.key, ORDER_ERRORS);
	assert_int_equal(func_order_parse("fails", &o), -1);
	assert_int_equal(func_order_parse("", &o), -1);
	assert_int_equal(func_order_parse("-", &o), -1);
	assert_int_equal(func_order_parse("p99x", &o), -1);
	func_order_list(list, sizeof(list));
	assert_string_equal(list, "name, calls, calls/s, p50, p99, err%, max, inflight, oldest, "
				  "orphans, unmatched, dropped");
	for (int k = 0; k < ORDER_KEYS; k++) {
		assert_int_equal(func_order_parse(func_order_name((enum func_order_key)k), &o), 0);
		assert_int_equal(o.key, k);
	}
}

static void test_same_names(void **state)
{
	struct snapshot_func two[3] = {{.name = "main.F"}, {.name = "main.F"}, {.name = "main.E"}};
	struct func_order o = by("-name");
	size_t order[3];

	(void)state;
	/* Copies of one name keep their positions' order, in both directions. */
	func_order_sort(two, 3, &o, order);
	assert_int_equal(order[0], 2);
	assert_int_equal(order[1], 0);
	assert_int_equal(order[2], 1);
	o = by("+name");
	func_order_sort(two, 3, &o, order);
	assert_int_equal(order[0], 0);
	assert_int_equal(order[1], 1);
	assert_int_equal(order[2], 2);
}

/* snapshot_print_text of funcs in the default order, into a string. */
static char *text(size_t top, bool idle, size_t n)
{
	struct snapshot snap = {.funcs = funcs, .nfuncs = n, .npids = 1, .remaining_s = -1};
	struct func_order o = func_order_default();
	size_t order[NF];
	struct snapshot_rows rows = {.order = order, .top = top, .idle = idle};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	func_order_sort(funcs, n, &o, order);
	snapshot_print_text(f, &snap, &rows);
	fclose(f);
	return buf;
}

static void test_text_rows(void **state)
{
	char *t;

	(void)state;
	/* Idle: probes in, no call in the interval, none in flight. */
	assert_false(snapshot_func_idle(&funcs[0]));
	assert_false(snapshot_func_idle(&funcs[3])); /* in flight */
	assert_false(snapshot_func_idle(&funcs[4])); /* inlined calls count */
	funcs[4].inlined_calls_per_s = 0;
	assert_true(snapshot_func_idle(&funcs[4]));
	assert_true(snapshot_func_idle(&funcs[5]));
	/* Detached or refused: calls unknown, not none. */
	funcs[5].state = FUNC_ERROR;
	assert_false(snapshot_func_idle(&funcs[5]));
	funcs[5].state = FUNC_ENTRY_ONLY;

	t = text(0, false, NF);
	assert_non_null(strstr(t, "\nmain.Stuck "));
	assert_null(strstr(t, "\nmain.Loop "));
	assert_null(strstr(t, "\nmain.add "));
	assert_non_null(strstr(t, "\n2 functions with no calls (--idle lists them)\n"));
	assert_null(strstr(t, "more function"));
	free(t);

	t = text(2, false, NF);
	assert_non_null(strstr(t, "\nmain.Slow "));
	assert_non_null(strstr(t, "\nmain.Fast "));
	assert_null(strstr(t, "\nmain.Sampled "));
	assert_non_null(strstr(t, "\n2 more functions not listed (--top 2)\n2 functions with no "
				  "calls (--idle lists them)\n"));
	free(t);

	t = text(0, true, NF);
	assert_non_null(strstr(t, "\nmain.Loop "));
	assert_non_null(strstr(t, "\nmain.add "));
	assert_null(strstr(t, "with no calls"));
	free(t);

	/* One idle function keeps its row: the line would say less. */
	t = text(0, false, 5);
	assert_non_null(strstr(t, "\nmain.add "));
	assert_null(strstr(t, "with no calls"));
	free(t);
}

/* snapshot_print_json of the first n funcs in the default order, parsed
 * back by json-c: one line, one document. */
static struct json_object *json(size_t n)
{
	struct snapshot snap = {.funcs = funcs, .nfuncs = n, .npids = 1, .remaining_s = -1};
	struct func_order o = func_order_default();
	size_t order[NF];
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	snap.exe = "/bin/demo";
	func_order_sort(funcs, n, &o, order);
	snapshot_print_json(f, &snap, order);
	fclose(f);
	assert_true(len > 0 && buf[len - 1] == '\n');
	assert_null(memchr(buf, '\n', len - 1));
	struct json_object *doc = json_tokener_parse(buf);
	free(buf);
	assert_non_null(doc);
	return doc;
}

static void test_json_functions(void **state)
{
	struct json_object *doc, *fs, *v;
	struct func_order o = func_order_default();
	size_t order[NF];

	(void)state;
	/* Every function, idle ones too, in the table's order, after the
	 * snapshot's own figures. */
	doc = json(NF);
	func_order_sort(funcs, NF, &o, order);
	assert_true(json_object_object_get_ex(doc, "functions", &fs));
	assert_int_equal(json_object_array_length(fs), NF);
	for (size_t i = 0; i < NF; i++) {
		assert_true(
		    json_object_object_get_ex(json_object_array_get_idx(fs, i), "name", &v));
		assert_string_equal(json_object_get_string(v), funcs[order[i]].name);
	}
	assert_true(json_object_object_get_ex(doc, "probe_cost", &v));
	assert_true(json_object_object_get_ex(doc, "targets", &v));
	assert_int_equal(json_object_array_length(v), 1);
	json_object_put(doc);
	/* None: an empty list. */
	doc = json(0);
	assert_true(json_object_object_get_ex(doc, "functions", &fs));
	assert_true(json_object_is_type(fs, json_type_array));
	assert_int_equal(json_object_array_length(fs), 0);
	json_object_put(doc);
}

/* A thousand rows, most tied (never called: every figure 0), names
 * repeated: under every key and direction, each row comes after the one
 * before it by func_order_cmp, and rows of one name in their positions'
 * order. */
static void test_many_rows(void **state)
{
	enum { N = 1000 };
	static struct snapshot_func many[N];
	static char names[N][16];
	static size_t order[N];
	static const char *const keys[] = {"name", "-name", "calls", "-calls", "calls/s", "p50",
					   "p99",  "-p99",  "max",   "infl",   "errors"};

	(void)state;
	memset(many, 0, sizeof(many));
	for (size_t i = 0; i < N; i++) {
		snprintf(names[i], sizeof(names[i]), "f%03zu", (i * 7919) % 300);
		many[i].name = names[i];
		if (i % 9 == 0) {
			many[i].v.calls = (i * 31) % 17;
			many[i].v.calls_per_s = (double)((i * 13) % 5);
			many[i].v.p50_ns = many[i].v.p99_ns = (i * 101) % 7;
			many[i].v.max_ns = (i * 37) % 11;
			many[i].in_flight = i % 3;
			many[i].errors_counted = i % 2;
			many[i].error_share = (double)(i % 4) / 4;
		}
	}
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		struct func_order o;
		assert_int_equal(func_order_parse(keys[k], &o), 0);
		func_order_sort(many, N, &o, order);
		for (size_t i = 1; i < N; i++) {
			const struct snapshot_func *a = &many[order[i - 1]], *b = &many[order[i]];
			int r = func_order_cmp(a, b, &o);
			assert_true(r <= 0);
			if (r == 0)
				assert_true(order[i - 1] < order[i]);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_default, setup),
	    cmocka_unit_test_setup(test_keys, setup),
	    cmocka_unit_test_setup(test_directions, setup),
	    cmocka_unit_test_setup(test_parse, setup),
	    cmocka_unit_test_setup(test_same_names, setup),
	    cmocka_unit_test(test_many_rows),
	    cmocka_unit_test_setup(test_text_rows, setup),
	    cmocka_unit_test_setup(test_json_functions, setup),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
