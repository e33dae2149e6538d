/* Unit tests for src/serve_page.c: the histogram's `le` boundaries (four per
 * power of two, each an exact sum of log-linear buckets), the cumulative
 * counts rendered for known durations, escaped labels, and the page before
 * the probes are in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "serve_page.h"
#include "stats.h"

static void test_bounds(void **state)
{
	const uint64_t *le;
	size_t n = serve_page_le_bounds(&le);

	(void)state;
	assert_int_equal(n, 107);
	assert_int_equal(le[0], 1023);		      /* 2^10 - 1 ns */
	assert_int_equal(le[n - 1], 103079215103ull); /* 1.5 x 2^36 - 1: the first >= 100 s */
	for (size_t i = 0; i < n; i++) {
		uint64_t e = le[i] + 1, lo, hi;
		unsigned shift = 10 + (unsigned)(i / 4);

		/* 2^k x {1, 1.25, 1.5, 1.75} */
		assert_int_equal(e, (uint64_t)(4 + i % 4) << (shift - 2));
		/* A lower bucket edge: the bucket holding e starts at e. */
		stats_bucket_range(retop_hist_bucket(e), &lo, &hi);
		assert_int_equal(lo, e);
		assert_int_not_equal(retop_hist_bucket(e - 1), retop_hist_bucket(e));
	}
}

/* A snapshot of one traced function, as serve_page_render reads it. */
struct fake {
	struct func_info f;
	struct stats_read raw;
	__u64 hist[RETOP_HIST_BUCKETS];
	struct snapshot snap;
	struct snapshot_func sn;
};

static void fake_init(struct fake *k, const char *name, const char *exe)
{
	memset(k, 0, sizeof(*k));
	k->f.name = name;
	k->sn.name = name;
	k->sn.f = &k->f;
	k->sn.state = FUNC_TRACING;
	k->raw.hist = k->hist;
	k->sn.raw = &k->raw;
	k->snap.exe = exe;
	k->snap.attach_pid = 4242;
	k->snap.funcs = &k->sn;
	k->snap.nfuncs = 1;
	k->snap.npids = 1;
}

static void fake_call(struct fake *k, uint64_t ns)
{
	k->hist[retop_hist_bucket(ns)]++;
	k->raw.st.calls++;
	k->raw.st.sum_ns += ns;
	/* Every call timed: the snapshot's count is the counter's. */
	k->sn.v.calls = k->sn.timed_calls = k->raw.st.calls;
}

/* The value of the line that starts with prefix, or -1. */
static long long value_of(const char *page, const char *prefix)
{
	const char *p = page;

	while ((p = strstr(p, prefix))) {
		if (p == page || p[-1] == '\n')
			return atoll(p + strlen(prefix));
		p++;
	}
	return -1;
}

static void test_render_counts(void **state)
{
	static struct fake k;
	char *page = NULL;
	size_t len = 0;
	const char *lbl = "{function=\"main.Work\",binary=\"/srv/app\",pid=\"4242\"";
	char key[256];

	(void)state;
	fake_init(&k, "main.Work", "/srv/app");
	fake_call(&k, 500);	     /* below the first le */
	fake_call(&k, 1023);	     /* exactly on le 1023 ns: counted there */
	fake_call(&k, 1024);	     /* one more: the next le */
	fake_call(&k, 2000000);	     /* 2 ms */
	fake_call(&k, 200000000000); /* 200 s: only +Inf */
	assert_int_equal(serve_page_render(&k.snap, 1000, true, &page, &len), 0);
	assert_int_equal(strlen(page), len);
	snprintf(key, sizeof(key), "retop_function_duration_seconds_bucket%s,le=\"0.000001023\"} ",
		 lbl);
	assert_int_equal(value_of(page, key), 2);
	snprintf(key, sizeof(key), "retop_function_duration_seconds_bucket%s,le=\"0.000001279\"} ",
		 lbl);
	assert_int_equal(value_of(page, key), 3);
	/* 2 ms = 1.907 x 2^20 ns: first counted at le 2^21 - 1. */
	snprintf(key, sizeof(key), "retop_function_duration_seconds_bucket%s,le=\"0.001835007\"} ",
		 lbl);
	assert_int_equal(value_of(page, key), 3);
	snprintf(key, sizeof(key), "retop_function_duration_seconds_bucket%s,le=\"0.002097151\"} ",
		 lbl);
	assert_int_equal(value_of(page, key), 4);
	snprintf(key, sizeof(key),
		 "retop_function_duration_seconds_bucket%s,le=\"103.079215103\"} ", lbl);
	assert_int_equal(value_of(page, key), 4);
	snprintf(key, sizeof(key), "retop_function_duration_seconds_bucket%s,le=\"+Inf\"} ", lbl);
	assert_int_equal(value_of(page, key), 5);
	snprintf(key, sizeof(key), "retop_function_duration_seconds_count%s} ", lbl);
	assert_int_equal(value_of(page, key), 5);
	snprintf(key, sizeof(key), "retop_function_calls_total%s} ", lbl);
	assert_int_equal(value_of(page, key), 5);
	free(page);
	/* The traps of traced callees inside its calls, and calls over --slow:
	 * counters straight from BPF's. */
	k.raw.st.nested_hits = 12;
	k.raw.st.slow_over = 3;
	assert_int_equal(serve_page_render(&k.snap, 1000, true, &page, &len), 0);
	snprintf(key, sizeof(key), "retop_function_probe_hits_inside_total%s} ", lbl);
	assert_int_equal(value_of(page, key), 12);
	snprintf(key, sizeof(key), "retop_function_slow_calls_total%s} ", lbl);
	assert_int_equal(value_of(page, key), 3);
	free(page);
	/* Inlined calls, counted at the proven marks: counters of their own. */
	k.sn.inlined_sites = 3;
	k.sn.inlined_sites_counted = 2;
	k.sn.inlined_calls = 2000;
	assert_int_equal(serve_page_render(&k.snap, 1000, true, &page, &len), 0);
	snprintf(key, sizeof(key), "retop_function_inlined_sites%s} ", lbl);
	assert_int_equal(value_of(page, key), 3);
	snprintf(key, sizeof(key), "retop_function_inlined_sites_counted%s} ", lbl);
	assert_int_equal(value_of(page, key), 2);
	snprintf(key, sizeof(key), "retop_function_inlined_calls_total%s} ", lbl);
	assert_int_equal(value_of(page, key), 2000);
	snprintf(key, sizeof(key), "retop_function_calls_total%s} ", lbl);
	assert_int_equal(value_of(page, key), 5);
	/* 107 boundaries and +Inf, nothing else. */
	size_t nb = 0;
	for (const char *p = page; (p = strstr(p, "_bucket{")); p++)
		nb++;
	assert_int_equal(nb, 108);
	/* Percentiles since start are not exported: the histogram gives them. */
	assert_null(strstr(page, "p50"));
	assert_null(strstr(page, "p99"));
	assert_int_equal(value_of(page, "retop_ready "), 1);
	/* Errors not read (a signature unknown): no series, not a 0. */
	snprintf(key, sizeof(key), "retop_function_errors_total%s} ", lbl);
	assert_int_equal(value_of(page, key), -1);
	free(page);
	/* Failing calls, and each caller's, where they are read. */
	k.sn.errors_counted = true;
	k.sn.errors = 2;
	k.sn.callers.n = 2;
	k.sn.callers.rows[0] = (struct callers_row){.name = "main.A", .calls = 4, .errors = 2};
	k.sn.callers.rows[1] = (struct callers_row){.name = "other", .calls = 1};
	assert_int_equal(serve_page_render(&k.snap, 1000, true, &page, &len), 0);
	assert_int_equal(value_of(page, key), 2);
	snprintf(key, sizeof(key), "retop_caller_errors_total%s,caller=\"main.A\"} ", lbl);
	assert_int_equal(value_of(page, key), 2);
	snprintf(key, sizeof(key), "retop_caller_errors_total%s,caller=\"other\"} ", lbl);
	assert_int_equal(value_of(page, key), 0);
	free(page);
}

static void test_render_labels(void **state)
{
	static struct fake k;
	char *page = NULL;
	size_t len = 0;

	(void)state;
	fake_init(&k, "main.(*T).\"q\"", "/srv/b\xff\xfein\\x");
	assert_int_equal(serve_page_render(&k.snap, 0, true, &page, &len), 0);
	assert_non_null(strstr(page,
			       "retop_target_processes{binary=\"/srv/b\\\\xff\\\\xfein\\\\x\","
			       "pid=\"4242\"} 1\n"));
	assert_non_null(strstr(page, "function=\"main.(*T).\\\"q\\\"\""));
	free(page);
}

static void test_render_no_pid_label(void **state)
{
	static struct fake k;
	char *page = NULL;
	size_t len = 0;

	(void)state;
	fake_init(&k, "main.Work", "/srv/app");
	assert_int_equal(serve_page_render(&k.snap, 0, false, &page, &len), 0);
	assert_null(strstr(page, "pid="));
	assert_non_null(strstr(page, "retop_function_calls_total{function=\"main.Work\","
				     "binary=\"/srv/app\"} 0\n"));
	free(page);
}

static void test_render_starting(void **state)
{
	char *page = NULL;
	size_t len = 0;

	(void)state;
	assert_int_equal(serve_page_render_starting(0.25, &page, &len), 0);
	assert_int_equal(value_of(page, "retop_ready "), 0);
	assert_non_null(strstr(page, "retop_build_info{version="));
	assert_null(strstr(page, "retop_function_"));
	free(page);
}

static void test_accepts_gzip(void **state)
{
	(void)state;
	assert_false(serve_page_accepts_gzip(NULL));
	assert_false(serve_page_accepts_gzip(""));
	assert_false(serve_page_accepts_gzip("identity"));
	assert_false(serve_page_accepts_gzip("gzipx, deflate"));
	assert_true(serve_page_accepts_gzip("gzip"));
	assert_true(serve_page_accepts_gzip("GZip"));
	assert_true(serve_page_accepts_gzip("deflate, x-gzip"));
	/* Prometheus's scraper. */
	assert_true(serve_page_accepts_gzip("gzip"));
	assert_true(serve_page_accepts_gzip("br;q=1.0, gzip;q=0.8, *;q=0.1"));
	assert_false(serve_page_accepts_gzip("gzip;q=0"));
	assert_false(serve_page_accepts_gzip("gzip ; q=0.000"));
	assert_true(serve_page_accepts_gzip("*"));
	assert_false(serve_page_accepts_gzip("*, gzip;q=0"));
	assert_false(serve_page_accepts_gzip("gzip;q=zero"));
}

static void test_gzip_roundtrip(void **state)
{
	static struct fake k;
	char *page = NULL, *gz = NULL, *back;
	size_t len = 0, gzlen = 0;
	z_stream zs = {0};

	(void)state;
	fake_init(&k, "main.Work", "/srv/app");
	fake_call(&k, 5000);
	assert_int_equal(serve_page_render(&k.snap, 0, true, &page, &len), 0);
	assert_int_equal(serve_page_gzip(page, len, &gz, &gzlen), 0);
	assert_true(gzlen > 18 && gzlen < len / 4);   /* a text page shrinks */
	assert_int_equal((unsigned char)gz[0], 0x1f); /* the gzip magic */
	assert_int_equal((unsigned char)gz[1], 0x8b);
	back = malloc(len + 1);
	assert_non_null(back);
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)gz;
	zs.avail_in = (uInt)gzlen;
	zs.next_out = (Bytef *)back;
	zs.avail_out = (uInt)len + 1;
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	assert_int_equal(zs.total_out, len);
	assert_memory_equal(back, page, len);
	inflateEnd(&zs);
	free(back);
	free(gz);
	free(page);
}

/* A function's state travels as an enum with a reason: the batch text, the
 * JSON status, and the /metrics label all render it, and only a failure to
 * attach counts as an attach error (a sampled function is not one). */
static void test_states(void **state)
{
	static struct fake k;
	static const struct {
		enum func_state st;
		double sampled;
		const char *reason, *text, *label;
		int errors;
	} cases[] = {
	    {FUNC_TRACING, 1, "", "tracing", "tracing", 0},
	    {FUNC_SAMPLED, 0.25, "", "sampled 25%", "sampled", 0},
	    {FUNC_SAMPLED, 0.004, "", "sampled 0.4%", "sampled", 0},
	    {FUNC_ENTRY_ONLY, 1, "no RET", "entry-only: no RET", "entry-only", 0},
	    {FUNC_DETACHED, 1, "time limit", "detached: time limit", "detached", 0},
	    {FUNC_ERROR, 1, "no such file", "error: no such file", "error", 1},
	};
	char text[256], key[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *page = NULL;
		size_t len = 0;

		fake_init(&k, "main.Work", "/srv/app");
		k.sn.state = cases[i].st;
		k.sn.sampled = cases[i].sampled;
		snprintf(k.sn.reason, sizeof(k.sn.reason), "%s", cases[i].reason);
		snapshot_func_status(&k.sn, text, sizeof(text));
		assert_string_equal(text, cases[i].text);
		assert_string_equal(func_state_name(cases[i].st), cases[i].label);
		assert_int_equal(serve_page_render(&k.snap, 0, true, &page, &len), 0);
		snprintf(key, sizeof(key),
			 "retop_function_status{function=\"main.Work\",binary=\"/srv/app\","
			 "pid=\"4242\",status=\"%s\"} ",
			 cases[i].label);
		assert_int_equal(value_of(page, key), 1);
		assert_int_equal(value_of(page, "retop_probe_attach_errors_total{binary=\"/srv/app\",pid=\"4242\"} "),
				 cases[i].errors);
		free(page);
	}
}

/* Two traced copies of one name (an ABI wrapper, a generic shape): their
 * series differ by entry address, so no two series share their labels. */
static void test_render_same_names(void **state)
{
	static struct fake k;
	static struct func_info g;
	struct snapshot_func two[2];
	char *page = NULL;
	size_t len = 0;

	(void)state;
	fake_init(&k, "main.Work", "/srv/app");
	k.f.entry = 0x401000;
	g = k.f;
	g.entry = 0x402000;
	two[0] = k.sn;
	two[1] = k.sn;
	two[1].f = &g;
	k.snap.funcs = two;
	k.snap.nfuncs = 2;
	assert_int_equal(serve_page_render(&k.snap, 1000, true, &page, &len), 0);
	assert_non_null(strstr(page, "retop_function_calls_total{function=\"main.Work\",entry=\"0x401000\","));
	assert_non_null(strstr(page, "retop_function_calls_total{function=\"main.Work\",entry=\"0x402000\","));
	free(page);
	/* One copy alone keeps the plain labels. */
	k.snap.nfuncs = 1;
	assert_int_equal(serve_page_render(&k.snap, 1000, true, &page, &len), 0);
	assert_null(strstr(page, "entry=\""));
	free(page);
}

int main(void)
{
	/* clang-format off */
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_render_counts),
	    cmocka_unit_test(test_states),
	    cmocka_unit_test(test_render_labels),
	    cmocka_unit_test(test_render_same_names),
	    cmocka_unit_test(test_render_no_pid_label),
	    cmocka_unit_test(test_render_starting),
	    cmocka_unit_test(test_accepts_gzip),
	    cmocka_unit_test(test_gzip_roundtrip),
	};
	/* clang-format on */
	return cmocka_run_group_tests(tests, NULL, NULL);
}
