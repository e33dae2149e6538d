/* Unit tests for src/guard.c: the time limit's arithmetic (arm, due once,
 * extend, remaining), --max-memory's sizes, the figures printed; and for
 * src/bpf_mem.c: the map memory estimate against the in-flight map's own
 * formula, the room left, the kernel's element and array sizes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bpf_mem.h"
#include "guard.h"

#define S 1000000000ull

static void test_deadline(void **state)
{
	struct guard g = {0};

	(void)state;
	guard_arm(&g, 2.5, 10 * S);
	assert_true(guard_remaining_s(&g, 10 * S) == 2.5);
	assert_false(guard_due(&g, 12 * S));
	assert_true(guard_due(&g, 12 * S + S / 2));
	/* Once: the caller detaches once. */
	assert_false(guard_due(&g, 13 * S));
	assert_true(guard_remaining_s(&g, 13 * S) == 0);
	/* Extended after it passed: another period from now. */
	guard_extend(&g, 20 * S);
	assert_false(g.expired);
	assert_true(guard_remaining_s(&g, 20 * S) == 2.5);
	/* Extended before it passes: from the deadline. */
	guard_extend(&g, 21 * S);
	assert_true(guard_remaining_s(&g, 21 * S) == 4.0);
}

static void test_no_limit(void **state)
{
	struct guard g = {0};

	(void)state;
	guard_arm(&g, 0, 5 * S);
	assert_true(guard_remaining_s(&g, 5 * S) < 0);
	assert_false(guard_due(&g, 1000000 * S));
	guard_extend(&g, 6 * S);
	assert_true(guard_remaining_s(&g, 6 * S) < 0);
}

static void test_sizes(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_true(guard_parse_size("1048576", &v));
	assert_int_equal(v, 1048576);
	assert_true(guard_parse_size("64M", &v));
	assert_int_equal(v, 64ull << 20);
	assert_true(guard_parse_size("1.5G", &v));
	assert_int_equal(v, 3ull << 29);
	assert_true(guard_parse_size("512k", &v));
	assert_int_equal(v, 512ull << 10);
	assert_true(guard_parse_size("2MiB", &v));
	assert_int_equal(v, 2ull << 20);
	assert_true(guard_parse_size("100B", &v));
	assert_int_equal(v, 100);
	assert_false(guard_parse_size("", &v));
	assert_false(guard_parse_size("0", &v));
	assert_false(guard_parse_size("-1M", &v));
	assert_false(guard_parse_size("12Q", &v));
	assert_false(guard_parse_size("1MM", &v));
	assert_false(guard_parse_size("nan", &v));
	assert_false(guard_parse_size("2000000T", &v));
}

static void test_format(void **state)
{
	char b[32];

	(void)state;
	guard_format_remaining(599.2, b, sizeof(b));
	assert_string_equal(b, "10:00");
	guard_format_remaining(61, b, sizeof(b));
	assert_string_equal(b, "1:01");
	guard_format_remaining(3723, b, sizeof(b));
	assert_string_equal(b, "1:02:03");
	guard_format_remaining(-1, b, sizeof(b));
	assert_string_equal(b, "0:00");
	guard_format_bytes(47883144, b, sizeof(b));
	assert_string_equal(b, "45.7 MiB");
	guard_format_bytes(3ull << 30, b, sizeof(b));
	assert_string_equal(b, "3.0 GiB");
	guard_format_bytes(2048, b, sizeof(b));
	assert_string_equal(b, "2.0 KiB");
}

static void test_estimate(void **state)
{
	(void)state;
	/* --max-in-flight costs only the in-flight maps' buckets at load
	 * (16 bytes an entry, rounded up to a power of two): the first 8192
	 * calls in one map, the rest in the spill map (of one entry at least);
	 * each call in flight then 112 bytes. */
	assert_int_equal(bpf_mem_estimate(262144, 64) - bpf_mem_estimate(1024, 64),
			 16ull * (8192 + 262144 - 1024 - 1));
	assert_int_equal(bpf_mem_inflight_base_bytes(1000), 16ull * (1024 + 1));
	assert_int_equal(bpf_mem_inflight_base_bytes(8192 + 3), 16ull * (8192 + 4));
	assert_int_equal(bpf_mem_inflight_call_bytes(), 112);
	/* What calls not yet in flight may take, never below nothing. */
	assert_int_equal(bpf_mem_inflight_room_bytes(100, 40), 60 * 112);
	assert_int_equal(bpf_mem_inflight_room_bytes(100, -3), 100 * 112);
	assert_int_equal(bpf_mem_inflight_room_bytes(100, 200), 0);
	/* A preallocated element has no allocator's node. */
	assert_int_equal(bpf_mem_hash_elem_bytes(8, 4, true), 48 + 8 + 8);
	assert_int_equal(bpf_mem_array_bytes(3, 12, 4096), 4096);
	/* One row of counters a function, in whole pages. */
	assert_true(bpf_mem_estimate(1024, 256) > bpf_mem_estimate(1024, 64));
	/* At the defaults, under 9 MiB with nothing in flight (the time
	 * split's figures of 8,192 calls at their entry some 1.1 MiB of it). */
	assert_true(bpf_mem_estimate(262144, 64) < 9ull << 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_deadline), cmocka_unit_test(test_no_limit),
	    cmocka_unit_test(test_sizes),    cmocka_unit_test(test_format),
	    cmocka_unit_test(test_estimate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
