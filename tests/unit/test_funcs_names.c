/* Unit tests for the functions by name (funcs_by_name: a multikey
 * quicksort on the names' bytes) and the lookups on it (funcs_find,
 * funcs_find_at), on fixed arrays: names that share long prefixes as Go's
 * do, equal names at several entries, names that are prefixes of others,
 * bytes past 0x7f, the empty name, and names equal past 4 KiB (the sort's
 * fallback).  The order must be strcmp's, then the entry's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "funcs.h"
#include "funcs_internal.h"

/* An index of n functions named names[i], at entries[i]: only what the
 * by-name sort and the lookups read. */
struct fake_index {
	struct func_index idx;
	struct func_names names;
};

static void fake_open(struct fake_index *fx, struct func_info *funcs, size_t n)
{
	memset(fx, 0, sizeof(*fx));
	pthread_mutex_init(&fx->names.lock, NULL);
	pthread_mutex_init(&fx->names.inl_lock, NULL);
	fx->idx.funcs = funcs;
	fx->idx.count = n;
	fx->idx.names = &fx->names;
}

static void fake_close(struct fake_index *fx)
{
	free(fx->names.sorted);
	pthread_mutex_destroy(&fx->names.lock);
	pthread_mutex_destroy(&fx->names.inl_lock);
}

/* The order the sort must give: by name (strcmp), then by entry. */
static int name_entry_cmp(const struct func_info *a, const struct func_info *b)
{
	int c = strcmp(a->name, b->name);

	return c ? c : (a->entry < b->entry ? -1 : a->entry > b->entry);
}

static void assert_sorted(struct fake_index *fx)
{
	struct func_info *const *by = funcs_by_name(&fx->idx);
	size_t n = fx->idx.count;
	bool *seen = calloc(n ? n : 1, sizeof(*seen));

	assert_non_null(by);
	assert_non_null(seen);
	for (size_t i = 0; i < n; i++) {
		/* Every function once. */
		size_t k = (size_t)(by[i] - fx->idx.funcs);
		assert_true(k < n);
		assert_false(seen[k]);
		seen[k] = true;
		if (i > 0 && name_entry_cmp(by[i - 1], by[i]) > 0)
			fail_msg("out of order at %zu: \"%.40s\"@%llu before \"%.40s\"@%llu", i,
				 by[i - 1]->name, (unsigned long long)by[i - 1]->entry, by[i]->name,
				 (unsigned long long)by[i]->entry);
	}
	free(seen);
}

static void test_fixed(void **state)
{
	static const char *const names[] = {
	    "github.com/prometheus/prometheus/tsdb.(*DB).Compact",
	    "github.com/prometheus/prometheus/tsdb.(*DB).Close",
	    "github.com/prometheus/prometheus/tsdb.(*DB)",
	    "github.com/prometheus/prometheus/tsdb.(*DB).Compact",
	    "",
	    "runtime.main",
	    "runtime.main.func1",
	    "runtime.mai",
	    "main.\xc3\xa9t\xc3\xa9",
	    "main.ete",
	    "github.com/prometheus/prometheus/tsdb.(*DB).Compact",
	    "a",
	    "B",
	    "_",
	    "github.com/aws/aws-sdk-go/service/ec2.(*EC2).DescribeInstances",
	    "github.com/aws/aws-sdk-go/service/ec2.(*EC2).DescribeInstancesRequest",
	    "github.com/aws/aws-sdk-go/service/ec2.(*EC2).DescribeInstancesPages",
	    "github.com/aws/aws-sdk-go/service/ec2.(*EC2).DescribeImages",
	    "runtime.main",
	    "type:.eq.[2]interface {}",
	};
	enum { N = sizeof(names) / sizeof(names[0]) };
	struct func_info funcs[N];
	struct fake_index fx;

	(void)state;
	memset(funcs, 0, sizeof(funcs));
	/* Entries not in name order, and the same name at descending ones. */
	for (size_t i = 0; i < N; i++)
		funcs[i] = (struct func_info){.name = names[i], .entry = 0x1000 + (N - i) * 0x10};
	fake_open(&fx, funcs, N);
	assert_sorted(&fx);
	/* The lookups: the first of a name, and the one at an entry. */
	struct func_info *f = funcs_find(&fx.idx, "github.com/prometheus/prometheus/tsdb.(*DB).Compact");
	assert_non_null(f);
	assert_int_equal(f->entry, funcs[10].entry); /* the lowest of the three */
	f = funcs_find_at(&fx.idx, "github.com/prometheus/prometheus/tsdb.(*DB).Compact",
			  funcs[3].entry);
	assert_ptr_equal(f, &funcs[3]);
	assert_ptr_equal(funcs_find(&fx.idx, "runtime.mai"), &funcs[7]);
	assert_ptr_equal(funcs_find(&fx.idx, ""), &funcs[4]);
	assert_null(funcs_find(&fx.idx, "runtime.ma"));
	assert_null(funcs_find(&fx.idx, "runtime.main.func2"));
	fake_close(&fx);
}

/* Many names from a small alphabet over a long shared prefix: deep
 * recursion, runs of equal names, names that end inside others. */
static void test_random(void **state)
{
	enum { N = 20000, PREFIX = 40 };
	struct func_info *funcs = calloc(N, sizeof(*funcs));
	char(*names)[PREFIX + 12] = calloc(N, sizeof(*names));
	struct fake_index fx;

	(void)state;
	assert_non_null(funcs);
	assert_non_null(names);
	srand(7);
	for (size_t i = 0; i < N; i++) {
		size_t len = PREFIX + (size_t)rand() % 10;
		memset(names[i], 'g', PREFIX);
		for (size_t k = PREFIX; k < len; k++)
			names[i][k] = "ab\xe2."[rand() % 4];
		names[i][len] = '\0';
		funcs[i] = (struct func_info){.name = names[i], .entry = (uint64_t)rand() % 64};
	}
	fake_open(&fx, funcs, N);
	assert_sorted(&fx);
	for (size_t i = 0; i < N; i += 97) {
		struct func_info *f = funcs_find_at(&fx.idx, funcs[i].name, funcs[i].entry);
		assert_non_null(f);
		assert_string_equal(f->name, funcs[i].name);
		assert_int_equal(f->entry, funcs[i].entry);
	}
	fake_close(&fx);
	free(names);
	free(funcs);
}

/* Names equal for more than 4 KiB: the sort hands them to its fallback. */
static void test_long_equal(void **state)
{
	enum { N = 40, LEN = 5000 };
	struct func_info funcs[N];
	char *names[N];
	struct fake_index fx;

	(void)state;
	for (size_t i = 0; i < N; i++) {
		assert_non_null(names[i] = malloc(LEN + 2));
		memset(names[i], 'x', LEN);
		names[i][LEN] = (char)('a' + (i * 7) % 5);
		names[i][LEN + 1] = '\0';
		funcs[i] = (struct func_info){.name = names[i], .entry = N - i};
	}
	fake_open(&fx, funcs, N);
	assert_sorted(&fx);
	fake_close(&fx);
	for (size_t i = 0; i < N; i++)
		free(names[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixed),
	    cmocka_unit_test(test_random),
	    cmocka_unit_test(test_long_equal),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
