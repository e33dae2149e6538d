/* Unit tests for code_walk, against plain definitions on fixed and random
 * input: where an instruction ends in the map of instruction starts (the
 * next start after off, else stop, one bit at a time), and what a branch
 * does (every case in turn, with no shortcut for the common ones). */
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

/* The definition: prefixes, a REX, then each case in turn. */
static enum code_branch branch_by_case(const uint8_t *code, size_t off, size_t end, int64_t *target,
				       bool *uncond)
{
	size_t p = off;

	*uncond = false;
	while (p < end &&
	       (code[p] == 0x26 || code[p] == 0x2E || code[p] == 0x36 || code[p] == 0x3E ||
		code[p] == 0x64 || code[p] == 0x65 || code[p] == 0x66 || code[p] == 0x67 ||
		code[p] == 0xF0 || code[p] == 0xF2 || code[p] == 0xF3))
		p++;
	if (p < end && (code[p] & 0xF0) == 0x40)
		p++;
	if (p >= end)
		return CODE_BRANCH_OTHER;
	uint8_t op = code[p];
	if ((op >= 0x70 && op <= 0x7F) || op == 0xEB || (op >= 0xE0 && op <= 0xE3)) {
		if (p + 2 != end)
			return CODE_BRANCH_OTHER;
		*target = (int64_t)end + (int8_t)code[p + 1];
		*uncond = op == 0xEB;
		return CODE_BRANCH_DIRECT;
	}
	if (op == 0xE9 ||
	    (op == 0x0F && p + 1 < end && code[p + 1] >= 0x80 && code[p + 1] <= 0x8F)) {
		size_t at = op == 0xE9 ? p + 1 : p + 2;
		if (at + 4 != end)
			return CODE_BRANCH_OTHER;
		*target = (int64_t)end + code_walk_rel32(code + at);
		*uncond = op == 0xE9;
		return CODE_BRANCH_DIRECT;
	}
	if (op == 0xFF && p + 1 < end) {
		unsigned reg = (code[p + 1] >> 3) & 7;
		return reg == 4 || reg == 5 ? CODE_BRANCH_INDIRECT : CODE_BRANCH_NONE;
	}
	if (op == 0xC2 || op == 0xC3 || op == 0xCA || op == 0xCB || op == 0xCC || op == 0xCD ||
	    op == 0xCF || op == 0xEA || op == 0xF4)
		return CODE_BRANCH_OTHER;
	if (op == 0x0F && p + 1 < end &&
	    (code[p + 1] == 0x05 || code[p + 1] == 0x07 || code[p + 1] == 0x0B ||
	     code[p + 1] == 0x34 || code[p + 1] == 0x35))
		return CODE_BRANCH_OTHER;
	return CODE_BRANCH_NONE;
}

static void test_branch_fixed(void **state)
{
	static const uint8_t jbe[] = {0x76, 0x1d};	      /* jbe +0x1d */
	static const uint8_t jmp32[] = {0xe9, 0x10, 0, 0, 0}; /* jmp +0x10 */
	static const uint8_t call_rax[] = {0xff, 0xd0};	      /* call rax */
	static const uint8_t jmp_rax[] = {0x3e, 0xff, 0xe0};  /* notrack jmp rax */
	static const uint8_t mov[] = {0x48, 0x89, 0xc8};      /* mov rax, rcx */
	static const uint8_t rex_ret[] = {0x48, 0xc3};	      /* rex.w ret */
	static const uint8_t ud2[] = {0x0f, 0x0b};	      /* ud2 */
	int64_t target = 0;
	bool uncond = true;

	(void)state;
	assert_int_equal(code_walk_branch(jbe, 0, 2, &target, &uncond), CODE_BRANCH_DIRECT);
	assert_int_equal(target, 0x1f);
	assert_false(uncond);
	assert_int_equal(code_walk_branch(jmp32, 0, 5, &target, &uncond), CODE_BRANCH_DIRECT);
	assert_int_equal(target, 0x15);
	assert_true(uncond);
	assert_int_equal(code_walk_branch(call_rax, 0, 2, &target, &uncond), CODE_BRANCH_NONE);
	assert_int_equal(code_walk_branch(jmp_rax, 0, 3, &target, &uncond), CODE_BRANCH_INDIRECT);
	assert_int_equal(code_walk_branch(mov, 0, 3, &target, &uncond), CODE_BRANCH_NONE);
	assert_false(uncond);
	assert_int_equal(code_walk_branch(rex_ret, 0, 2, &target, &uncond), CODE_BRANCH_OTHER);
	assert_int_equal(code_walk_branch(rex_ret, 0, 1, &target, &uncond), CODE_BRANCH_OTHER);
	assert_int_equal(code_walk_branch(ud2, 0, 2, &target, &uncond), CODE_BRANCH_OTHER);
}

/* Bytes that matter to a branch (prefixes, REX, opcodes, the ModRM of
 * FF) more often than chance would draw them. */
static uint8_t branch_byte(void)
{
	static const uint8_t hot[] = {0x26, 0x2e, 0x3e, 0x64, 0x66, 0x67, 0xf0, 0xf2, 0xf3, 0x40,
				      0x41, 0x48, 0x4c, 0x4f, 0x70, 0x76, 0x7f, 0xe0, 0xe3, 0xe8,
				      0xe9, 0xea, 0xeb, 0x0f, 0x80, 0x8f, 0x05, 0x0b, 0x34, 0xff,
				      0xe0, 0xd0, 0x25, 0xc2, 0xc3, 0xcc, 0xcd, 0xcf, 0xf4, 0x90};

	return rand() % 2 ? hot[rand() % (int)sizeof(hot)] : (uint8_t)rand();
}

static void test_branch_random(void **state)
{
	uint8_t code[24];

	(void)state;
	srand(2);
	for (int round = 0; round < 200000; round++) {
		for (size_t i = 0; i < sizeof(code); i++)
			code[i] = branch_byte();
		size_t off = (size_t)rand() % 4, end = off + (size_t)rand() % 12;
		int64_t t1 = 0, t2 = 0;
		bool u1 = false, u2 = false;
		enum code_branch k1 = code_walk_branch(code, off, end, &t1, &u1);
		enum code_branch k2 = branch_by_case(code, off, end, &t2, &u2);
		assert_int_equal(k1, k2);
		assert_int_equal(u1, u2);
		if (k1 == CODE_BRANCH_DIRECT)
			assert_int_equal(t1, t2);
	}
}

/* code_walk_plain() lets a walk pass an instruction by from its first
 * bytes: wherever it does, code_walk_branch() on the whole instruction
 * (its end from the boundary map) says no branch. */
static void test_plain_random(void **state)
{
	uint8_t code[24], bits[4];
	int plain = 0;

	(void)state;
	srand(3);
	for (int round = 0; round < 200000; round++) {
		for (size_t i = 0; i < sizeof(code); i++)
			code[i] = branch_byte();
		for (size_t i = 0; i < sizeof(bits); i++)
			bits[i] = (uint8_t)rand();
		size_t stop = 1 + (size_t)rand() % sizeof(code), off = (size_t)rand() % stop;
		if (!code_walk_plain(code, bits, off, stop))
			continue;
		plain++;
		int64_t target = 0;
		bool uncond = false;
		size_t end = code_walk_insn_end(bits, off, stop);
		assert_int_equal(code_walk_branch(code, off, end, &target, &uncond),
				 CODE_BRANCH_NONE);
	}
	/* The check ran on many instructions, not on none. */
	assert_true(plain > 10000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_insn_end_fixed),
	    cmocka_unit_test(test_insn_end_random),
	    cmocka_unit_test(test_branch_fixed),
	    cmocka_unit_test(test_branch_random),
	    cmocka_unit_test(test_plain_random),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
