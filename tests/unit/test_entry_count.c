/* Unit tests for the proof that an entry probe counts calls (entry_count.c)
 * and for BPF's reading of a jump's condition from the flags (retop.h), on
 * fixed bytes written by hand with their disassembly beside them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "../bpf/retop.h"
#include "entry_count.h"
#include "retsites.h"

#include <string.h>

#define ADDR 0x401000u

#include "decoder_fixture.h"

/* The verdict on code[0..n) with the probe at probe_off. */
static bool counts(const uint8_t *code, size_t n, uint8_t probe_off, uint8_t *cc)
{
	struct func_info f;
	uint8_t bits[64] = {0};

	memset(&f, 0, sizeof(f));
	assert_true(n / 8 + 1 <= sizeof(bits));
	assert_int_equal(retsites_boundaries(eng, code, n, ADDR, bits), n);
	return entry_count_check(NULL, &f, code, bits, n, probe_off, cc);
}

/* Go's small-frame prologue: the jbe is taken into a trailer that calls
 * morestack and jumps back to the entry. */
static const uint8_t small_frame[] = {
    0x49, 0x3b, 0x66, 0x10,	  /* 0: cmp rsp, [r14+0x10] */
    0x76, 0x06,			  /* 4: jbe 0xc */
    0x55,			  /* 6: push rbp */
    0x48, 0x89, 0xe5,		  /* 7: mov rbp, rsp */
    0x5d,			  /* a: pop rbp */
    0xc3,			  /* b: ret */
    0xe8, 0x00, 0x00, 0x00, 0x00, /* c: call (morestack) */
    0xeb, 0xed,			  /* 11: jmp 0 */
};

static void test_small_frame(void **state)
{
	uint8_t cc;

	(void)state;
	assert_true(counts(small_frame, sizeof(small_frame), 4, &cc));
	assert_int_equal(cc, 6); /* jbe */
}

/* The same, but the body falls into the trailer (no RET before it): the
 * restart path is reached without the probe's jump being taken. */
static void test_fall_into_trailer(void **state)
{
	uint8_t code[sizeof(small_frame)], cc;

	(void)state;
	memcpy(code, small_frame, sizeof(code));
	code[0xb] = 0x90; /* nop instead of ret */
	assert_false(counts(code, sizeof(code), 4, &cc));
}

/* A big frame checks twice; a probe on the first jump sees a call begin
 * (not taken), then the second check restarts it: not one hit per call.
 * On the second jump it is: either check taken restarts the call. */
static void test_big_frame_second_check(void **state)
{
	static const uint8_t code[] = {
	    0x49, 0x89, 0xe4,		  /* 0: mov r12, rsp */
	    0x49, 0x83, 0xec, 0x40,	  /* 3: sub r12, 0x40 */
	    0x72, 0x09,			  /* 7: jb 0x12 */
	    0x4d, 0x3b, 0x66, 0x10,	  /* 9: cmp r12, [r14+0x10] */
	    0x76, 0x03,			  /* d: jbe 0x12 */
	    0x55,			  /* f: push rbp */
	    0x5d,			  /* 10: pop rbp */
	    0xc3,			  /* 11: ret */
	    0xe8, 0x00, 0x00, 0x00, 0x00, /* 12: call (morestack) */
	    0xeb, 0xe7,			  /* 17: jmp 0 */
	};
	uint8_t cc;

	(void)state;
	assert_false(counts(code, sizeof(code), 7, &cc));
	assert_true(counts(code, sizeof(code), 0xd, &cc));
	assert_int_equal(cc, 6);
}

/* No prologue: every hit at the entry is a call, unless a loop comes back. */
static void test_leaf(void **state)
{
	static const uint8_t leaf[] = {
	    0x48, 0xff, 0xc0, /* 0: inc rax */
	    0xc3,	      /* 3: ret */
	};
	static const uint8_t loop[] = {
	    0x48, 0xff, 0xc0,	    /* 0: inc rax */
	    0x48, 0x83, 0xf8, 0x0a, /* 3: cmp rax, 10 */
	    0x72, 0xf7,		    /* 7: jb 0 */
	    0xc3,		    /* 9: ret */
	};
	static const uint8_t indirect[] = {
	    0xff, 0xe0, /* 0: jmp rax (no pc-to-SP table to place it) */
	};
	uint8_t cc;

	(void)state;
	assert_true(counts(leaf, sizeof(leaf), 0, &cc));
	assert_int_equal(cc, ENTRY_COUNT_NO_CC);
	assert_false(counts(loop, sizeof(loop), 0, &cc));
	assert_false(counts(indirect, sizeof(indirect), 0, &cc));
}

/* A jump taken back into the prologue, past the entry. */
static void test_branch_into_prologue(void **state)
{
	uint8_t code[sizeof(small_frame)], cc;

	(void)state;
	memcpy(code, small_frame, sizeof(code));
	code[0xa] = 0xeb; /* a: jmp 4 (rel -8) */
	code[0xb] = 0xf8;
	assert_false(counts(code, sizeof(code), 4, &cc));
}

/* x86's conditions as the kernel's jcc emulation evaluates them. */
static void test_jcc_taken(void **state)
{
	(void)state;
	assert_true(retop_jcc_taken(RETOP_EFLAGS_CF, 6));  /* jbe: below */
	assert_true(retop_jcc_taken(RETOP_EFLAGS_ZF, 6));  /* jbe: equal */
	assert_false(retop_jcc_taken(0, 6));		    /* jbe: above */
	assert_true(retop_jcc_taken(0, 7));		    /* ja */
	assert_true(retop_jcc_taken(RETOP_EFLAGS_CF, 2));  /* jb */
	assert_false(retop_jcc_taken(RETOP_EFLAGS_ZF, 2)); /* jb */
	assert_true(retop_jcc_taken(RETOP_EFLAGS_SF, 0xc)); /* jl: SF != OF */
	assert_false(retop_jcc_taken(RETOP_EFLAGS_SF | RETOP_EFLAGS_OF, 0xc));
	assert_true(retop_jcc_taken(RETOP_EFLAGS_ZF, 0xe)); /* jle */
	assert_true(retop_jcc_taken(0, 0xd));		     /* jge */
	assert_true(retop_jcc_taken(RETOP_EFLAGS_PF, 0xa)); /* jp */
	assert_true(retop_jcc_taken(RETOP_EFLAGS_OF, 0));   /* jo */
	assert_true(retop_jcc_taken(0, 5));		     /* jne */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_small_frame),
	    cmocka_unit_test(test_fall_into_trailer),
	    cmocka_unit_test(test_big_frame_second_check),
	    cmocka_unit_test(test_leaf),
	    cmocka_unit_test(test_branch_into_prologue),
	    cmocka_unit_test(test_jcc_taken),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
