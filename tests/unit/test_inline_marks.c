/* Unit tests for the proof that an inline mark counts inlined calls
 * (inline_marks.c), on fixed bytes written by hand with their disassembly
 * beside them: the layouts Go 1.19 and Go 1.27 emit, counted, and each way
 * a mark can fail to run once per call, refused with its reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "gopclntab.h"
#include "inline_marks.h"
#include "retsites.h"

#include <string.h>

#define ADDR 0x401000u
#define UNSAID GOPCLNTAB_INL_PARENT_UNSAID

#include "decoder_fixture.h"

/* The verdict on the first wanted entry of code[0..n). */
static struct inline_mark_site judge(const uint8_t *code, size_t n,
				     const struct inline_marks_entry *e, uint32_t ne,
				     const struct inline_marks_run *r, size_t nr)
{
	struct inline_marks_code c = {.caller = "main.F",
				      .code = code,
				      .size = n,
				      .addr = ADDR,
				      .entries = e,
				      .nentries = ne,
				      .runs = r,
				      .nruns = nr};
	struct inline_mark_site out[4];
	size_t k = 0;

	assert_int_equal(inline_marks_find(eng, &c, out, 4, &k), 0);
	assert_true(k >= 1);
	assert_int_equal(out[0].addr, ADDR + e[0].parent_pc);
	return out[0];
}

static void refused(struct inline_mark_site s, const char *why)
{
	assert_false(s.counted);
	assert_string_equal(s.why, why);
}

/* Go 1.19: the mark first, then the body; the loop comes back to the mark
 * (another call). */
static const uint8_t layout_119[] = {
    0x31, 0xc9,	      /* 0: xor ecx, ecx */
    0xeb, 0x07,	      /* 2: jmp 0xb */
    0x90,	      /* 4: nop: the mark */
    0x48, 0x01, 0x08, /* 5: add [rax], rcx: the body */
    0x48, 0xff, 0xc1, /* 8: inc rcx */
    0x48, 0x39, 0xcb, /* b: cmp rbx, rcx */
    0x7f, 0xf4,	      /* e: jg 4 */
    0xc3,	      /* 10: ret */
};
static const struct inline_marks_entry mark_119 = {.parent_pc = 4, .parent = -1, .wanted = true};
static const struct inline_marks_run body_119 = {.start = 5, .end = 8, .val = 0};

static void test_layout_119(void **state)
{
	(void)state;
	struct inline_mark_site s =
	    judge(layout_119, sizeof(layout_119), &mark_119, 1, &body_119, 1);
	assert_true(s.counted);
	assert_int_equal(s.offset, 4);
}

/* Go 1.26/1.27: part of the body before the mark, in its block; the loop
 * lands on that part, which runs straight into the mark. */
static const uint8_t layout_127[] = {
    0x31, 0xc9,		    /* 0: xor ecx, ecx */
    0x31, 0xd2,		    /* 2: xor edx, edx */
    0xeb, 0x0f,		    /* 4: jmp 0x15 */
    0x48, 0x8d, 0x1c, 0x52, /* 6: lea rbx, [rdx+rdx*2]: the body */
    0x48, 0x8d, 0x5b, 0x01, /* a: lea rbx, [rbx+1]: the body */
    0x90,		    /* e: nop: the mark */
    0x48, 0x31, 0xd9,	    /* f: xor rcx, rbx */
    0x48, 0xff, 0xc2,	    /* 12: inc rdx */
    0x48, 0x39, 0xd0,	    /* 15: cmp rax, rdx */
    0x7f, 0xec,		    /* 18: jg 6 */
    0x48, 0x89, 0xc8,	    /* 1a: mov rax, rcx */
    0xc3,		    /* 1d: ret */
};

static void test_layout_127(void **state)
{
	(void)state;
	struct inline_marks_entry e = {.parent_pc = 0xe, .parent = UNSAID, .wanted = true};
	struct inline_marks_run r = {.start = 6, .end = 0xe, .val = 0};
	struct inline_mark_site s = judge(layout_127, sizeof(layout_127), &e, 1, &r, 1);
	assert_true(s.counted);
}

/* Alignment padding of the caller between the mark and the body: it runs
 * only after the mark. */
static void test_padding_after_mark(void **state)
{
	static const uint8_t code[] = {
	    0x31, 0xc9,			  /* 0: xor ecx, ecx */
	    0x90,			  /* 2: nop: the mark */
	    0x0f, 0x1f, 0x44, 0x00, 0x00, /* 3: nop dword [rax+rax]: padding */
	    0x48, 0x01, 0x08,		  /* 8: add [rax], rcx: the body */
	    0xc3,			  /* b: ret */
	};
	struct inline_marks_entry e = {.parent_pc = 2, .parent = -1, .wanted = true};
	struct inline_marks_run r = {.start = 8, .end = 0xb, .val = 0};
	(void)state;
	assert_true(judge(code, sizeof(code), &e, 1, &r, 1).counted);
}

/* A jump from the caller lands in the body past the mark (the body two
 * instructions here, the add and the inc). */
static void test_jump_past_mark(void **state)
{
	uint8_t code[sizeof(layout_119)];
	struct inline_marks_run r = {.start = 5, .end = 0xb, .val = 0};

	(void)state;
	memcpy(code, layout_119, sizeof(code));
	code[3] = 0x04; /* 2: jmp 8 */
	refused(judge(code, sizeof(code), &mark_119, 1, &r, 1),
		"in main.F: a jump at +0x2 enters the inlined body at +0x8 without passing its "
		"mark (+0x4)");
}

/* No NOP: the compiler reused an instruction of the line as the mark.
 * Where it sits proves it runs once per call, whatever it does: counted,
 * and said to be reused (the interlock then asks the kernel about it). */
static void test_reused(void **state)
{
	uint8_t code[sizeof(layout_119)];

	(void)state;
	memcpy(code, layout_119, sizeof(code));
	code[4] = 0x50; /* 4: push rax */
	struct inline_mark_site s = judge(code, sizeof(code), &mark_119, 1, &body_119, 1);
	assert_true(s.counted);
	assert_true(s.reused);
	assert_false(judge(layout_119, sizeof(layout_119), &mark_119, 1, &body_119, 1).reused);
}

static void test_not_a_start(void **state)
{
	(void)state;
	struct inline_marks_entry e = {.parent_pc = 6, .parent = -1, .wanted = true};
	refused(judge(layout_119, sizeof(layout_119), &e, 1, &body_119, 1),
		"in main.F: its mark (+0x6) is not an instruction start");
}

/* Another inlined call names the same NOP. */
static void test_shared(void **state)
{
	(void)state;
	struct inline_marks_entry e[2] = {mark_119, {.parent_pc = 4, .parent = -1}};
	refused(judge(layout_119, sizeof(layout_119), e, 2, &body_119, 1),
		"in main.F: its mark (+0x4) is also another inlined call's");
}

/* The mark's block ends in a jump before the body. */
static void test_outside_block(void **state)
{
	static const uint8_t code[] = {
	    0x31, 0xc9,	      /* 0: xor ecx, ecx */
	    0xeb, 0x09,	      /* 2: jmp 0xd */
	    0x90,	      /* 4: nop: the mark */
	    0xeb, 0x00,	      /* 5: jmp 7 */
	    0x48, 0x01, 0x08, /* 7: add [rax], rcx: the body */
	    0x48, 0xff, 0xc1, /* a: inc rcx */
	    0x48, 0x39, 0xcb, /* d: cmp rbx, rcx */
	    0x7f, 0xf2,	      /* 10: jg 4 */
	    0xc3,	      /* 12: ret */
	};
	struct inline_marks_run r = {.start = 7, .end = 0xa, .val = 0};
	(void)state;
	refused(judge(code, sizeof(code), &mark_119, 1, &r, 1),
		"in main.F: its mark (+0x4) is not in a block with the inlined code");
}

/* An indirect jump anywhere in the caller. */
static void test_jump_table(void **state)
{
	uint8_t code[sizeof(layout_119) + 2];

	(void)state;
	memcpy(code, layout_119, sizeof(layout_119));
	code[sizeof(layout_119)] = 0xff; /* 11: jmp rax */
	code[sizeof(layout_119) + 1] = 0xe0;
	refused(judge(code, sizeof(code), &mark_119, 1, &body_119, 1),
		"in main.F: an indirect jump (+0x11, a jump table) could land on any code");
}

/* The pc table says the NOP is code of the body itself. */
static void test_mark_in_own_body(void **state)
{
	(void)state;
	struct inline_marks_entry e = {.parent_pc = 4, .parent = UNSAID, .wanted = true};
	struct inline_marks_run r = {.start = 4, .end = 8, .val = 0};
	refused(judge(layout_119, sizeof(layout_119), &e, 1, &r, 1),
		"in main.F: its mark (+0x4) is code of an inlined body, not of the call's caller");
}

/* A loop inside the body comes back to the mark. */
static void test_body_loop(void **state)
{
	static const uint8_t code[] = {
	    0x31, 0xc9,	      /* 0: xor ecx, ecx */
	    0x90,	      /* 2: nop: the mark */
	    0x48, 0x01, 0x08, /* 3: add [rax], rcx: the body */
	    0x48, 0xff, 0xc1, /* 6: inc rcx: the body */
	    0x7f, 0xf7,	      /* 9: jg 2: the body's loop */
	    0xc3,	      /* b: ret */
	};
	struct inline_marks_entry e = {.parent_pc = 2, .parent = -1, .wanted = true};
	struct inline_marks_run r = {.start = 3, .end = 0xb, .val = 0};
	(void)state;
	refused(judge(code, sizeof(code), &e, 1, &r, 1),
		"in main.F: a jump at +0x9 inside the inlined body runs its mark (+0x2) again");
}

/* Code that does not decode condemns every site. */
static void test_no_decode(void **state)
{
	uint8_t code[sizeof(layout_119) + 1];

	(void)state;
	memcpy(code, layout_119, sizeof(layout_119));
	code[sizeof(layout_119)] = 0x0f; /* a truncated two-byte opcode */
	refused(judge(code, sizeof(code), &mark_119, 1, &body_119, 1),
		"in main.F: its code does not decode to its end (stops at +0x11)");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_layout_119),	     cmocka_unit_test(test_layout_127),
	    cmocka_unit_test(test_jump_past_mark),   cmocka_unit_test(test_reused),
	    cmocka_unit_test(test_not_a_start),	     cmocka_unit_test(test_shared),
	    cmocka_unit_test(test_outside_block),    cmocka_unit_test(test_jump_table),
	    cmocka_unit_test(test_mark_in_own_body), cmocka_unit_test(test_body_loop),
	    cmocka_unit_test(test_no_decode),	     cmocka_unit_test(test_padding_after_mark),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
