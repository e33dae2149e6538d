/* Unit tests for code_walk: where an instruction ends in the map of
 * instruction starts, against its definition (the next start after off,
 * else stop), one bit at a time, on fixed and on random maps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "code_walk.h"

#include <stdlib.h>
#include <string.h>

/* The definition, a bit at a time. */
static size_t insn_end_by_bit(const uint8_t *bits, size_t off, size_t stop)
{
	size_t end = off + 1;

	while (end < stop && !code_walk_starts(bits, end))
		end++;
	return end;
}

static void test_insn_end_fixed(void **state)
{
	/* Starts at 0, 4, 6, 7, 8 and 63. */
	uint8_t bits[9] = {0x01 | 0x10 | 0x40 | 0x80, 0x01, 0, 0, 0, 0, 0, 0x80, 0};

	(void)state;
	assert_int_equal(code_walk_insn_end(bits, 0, 64), 4);
	assert_int_equal(code_walk_insn_end(bits, 4, 64), 6);
	assert_int_equal(code_walk_insn_end(bits, 7, 64), 8);
	/* Across empty bytes of the map. */
	assert_int_equal(code_walk_insn_end(bits, 8, 64), 63);
	/* A start at or past stop is not one. */
	assert_int_equal(code_walk_insn_end(bits, 8, 63), 63);
	assert_int_equal(code_walk_insn_end(bits, 8, 20), 20);
	/* The last instruction ends at stop; off + 1 when that is further. */
	assert_int_equal(code_walk_insn_end(bits, 63, 64), 64);
	assert_int_equal(code_walk_insn_end(bits, 63, 63), 64);
}

static void test_insn_end_random(void **state)
{
	uint8_t bits[40];

	(void)state;
	srand(1);
	for (int round = 0; round < 2000; round++) {
		/* Sparse and dense maps, and every stop up to the map's end. */
		int density = 1 + round % 9;
		for (size_t i = 0; i < sizeof(bits); i++) {
			bits[i] = 0;
			for (int b = 0; b < 8; b++)
				if (rand() % density == 0)
					bits[i] |= (uint8_t)(1u << b);
		}
		size_t stop = (size_t)rand() % (sizeof(bits) * 8 + 1);
		for (size_t off = 0; off <= stop && off < sizeof(bits) * 8; off++)
			assert_int_equal(code_walk_insn_end(bits, off, stop),
					 insn_end_by_bit(bits, off, stop));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_insn_end_fixed),
	    cmocka_unit_test(test_insn_end_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
