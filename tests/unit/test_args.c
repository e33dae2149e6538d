/* Unit tests for src/args.c (registers to parameters under Go's register
 * ABI, and their decoding) and src/slowest.c's ordering of the slowest. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "args.h"
#include "dwarf_info.h"
#include "sdk_client.h"
#include "slowest.h"

static struct dwarf_param params[] = {
    {.name = "n", .type = "int32", .size = 4},
    {.name = "s", .type = "string", .size = 16},
    {.name = "ok", .type = "bool", .size = 1},
    {.name = "p", .type = "*main.Card", .size = 8},
    {.name = "f", .type = "float64", .size = 8},
    {.name = "after", .type = "int", .size = 8},
    {.name = "~r0", .type = "int", .size = 8, .is_return = true},
};

static void test_plan_and_decode(void **state)
{
	struct dwarf_func df = {.name = "main.F", .params = params, .nparams = 7};
	struct func_info f = {.name = "main.F", .dwarf = &df};
	struct retop_args a = {.regs = {0xFFFFFFFFu, 0x1000, 5, 1, 0xc000012345, 7}};
	struct args_plan plan;
	struct args_values v;

	(void)state;
	args_plan_make(&f, NULL, 0, NULL, 0, &plan);
	/* The result is not an argument.  The float is in X0, not read; it
	 * takes no integer register, so the int after it is in R8. */
	assert_int_equal(plan.n, 6);
	assert_int_equal(plan.spec.str_reg[0], 1);
	assert_int_equal(plan.spec.str_reg[1], RETOP_ARG_NONE);
	a.str_len[0] = 5;
	memcpy(a.str[0], "hello", 5);
	args_decode(&plan, &a, &v);
	assert_int_equal(v.n, 6);
	assert_string_equal(v.v[0].name, "n");
	assert_int_equal(v.v[0].kind, ARGS_INT);
	assert_int_equal(v.v[0].i, -1); /* int32 0xFFFFFFFF, sign-extended */
	assert_int_equal(v.v[1].kind, ARGS_STRING);
	assert_string_equal(v.v[1].s, "hello");
	assert_false(v.v[1].truncated);
	assert_int_equal(v.v[2].kind, ARGS_BOOL);
	assert_int_equal(v.v[2].u, 1);
	assert_int_equal(v.v[3].kind, ARGS_POINTER);
	assert_int_equal(v.v[3].u, 0xc000012345);
	assert_int_equal(v.v[4].kind, ARGS_UNAVAILABLE);
	assert_int_equal(v.v[5].kind, ARGS_INT);
	assert_int_equal(v.v[5].i, 7);
}

/* A stripped binary: the SDK's parameters (from reflection), used when
 * their registers are the ones Go's ABI gives, else not trusted at all. */
static void test_plan_from_sdk(void **state)
{
	struct sdk_arg sdk[] = {
	    {.name = "id", .type = "int", .size = 8, .loc = SDK_LOC_REGISTER, .loc_value = 0},
	    {.name = "key", .type = "string", .size = 16, .loc = SDK_LOC_REGISTER, .loc_value = 1},
	    {.name = "scale",
	     .type = "float64",
	     .size = 8,
	     .loc = SDK_LOC_REGISTER,
	     .loc_value = 0},
	    {.name = "", .type = "int", .size = 8, .loc = SDK_LOC_REGISTER, .loc_value = 3},
	};
	struct func_info f = {.name = "main.Lookup"};
	struct retop_args a = {.regs = {4242, 0x1000, 3, 9}};
	struct args_plan plan;
	struct args_values v;

	(void)state;
	assert_int_equal(args_plan_make(&f, sdk, 4, NULL, 0, &plan), 0);
	a.str_len[0] = 3;
	memcpy(a.str[0], "key", 3);
	args_decode(&plan, &a, &v);
	assert_int_equal(v.n, 4);
	assert_string_equal(v.v[0].name, "id");
	assert_int_equal(v.v[0].i, 4242);
	assert_string_equal(v.v[1].name, "key");
	assert_string_equal(v.v[1].s, "key");
	assert_int_equal(v.v[2].kind, ARGS_UNAVAILABLE); /* X0 */
	assert_null(v.v[3].name);			 /* no name: arg3 */
	assert_int_equal(v.v[3].i, 9);
	/* The SDK puts key in RCX: not what the ABI does; every register raw. */
	sdk[1].loc_value = 2;
	assert_int_equal(args_plan_make(&f, sdk, 4, NULL, 0, &plan), -EBADMSG);
	assert_int_equal(plan.n, RETOP_ARG_REGS);
	assert_int_equal(plan.slots[0].kind, ARGS_RAW);
	assert_int_equal(plan.spec.str_reg[0], RETOP_ARG_NONE);
	/* No parameters from anywhere: raw. */
	assert_int_equal(args_plan_make(&f, NULL, 0, NULL, 0, &plan), 0);
	assert_int_equal(plan.slots[8].kind, ARGS_RAW);
}

/* Results at the RET: the same registers from RAX again, "~r0" unnamed;
 * from DWARF, or from the SDK (checked like its arguments); none when
 * nothing says their types. */
static void test_results(void **state)
{
	static struct dwarf_param rp[] = {
	    {.name = "id", .type = "int", .size = 8},
	    {.name = "~r0", .type = "string", .size = 16, .is_return = true},
	    {.name = "ok", .type = "bool", .size = 1, .is_return = true},
	};
	struct dwarf_func df = {.name = "main.R", .params = rp, .nparams = 3};
	struct func_info f = {.name = "main.R", .dwarf = &df};
	struct sdk_arg sargs[] = {
	    {.name = "id", .type = "int", .size = 8, .loc = SDK_LOC_REGISTER}};
	struct sdk_arg srets[] = {
	    {.name = "", .type = "int", .size = 8, .loc = SDK_LOC_REGISTER, .loc_value = 0},
	    {.name = "err", .type = "*main.E", .size = 8, .loc = SDK_LOC_REGISTER, .loc_value = 1},
	};
	struct retop_args r = {.regs = {0x2000, 2, 1}};
	struct args_plan plan;
	struct args_values v;

	(void)state;
	assert_int_equal(args_plan_make(&f, NULL, 0, NULL, 0, &plan), 0);
	assert_int_equal(plan.n, 1);
	assert_int_equal(plan.nres, 2);
	assert_true(plan.spec.res_on);
	assert_int_equal(plan.spec.res_str_reg[0], 0); /* the string's pointer: RAX */
	assert_int_equal(plan.spec.res_str_reg[1], RETOP_ARG_NONE);
	r.str_len[0] = 2;
	memcpy(r.str[0], "ok", 2);
	args_decode_results(&plan, &r, &v);
	assert_int_equal(v.n, 2);
	assert_null(v.v[0].name); /* ~r0: r0 */
	assert_string_equal(v.v[0].s, "ok");
	assert_string_equal(v.v[1].name, "ok");
	assert_int_equal(v.v[1].kind, ARGS_BOOL);
	assert_int_equal(v.v[1].u, 1); /* RCX: after the string's two */

	/* An error is two registers, nil when its type word is 0; a slice is
	 * three, shown by its length. */
	static struct dwarf_param ep[] = {
	    {.name = "b", .type = "[]uint8", .size = 24},
	    {.name = "n", .type = "int", .size = 8},
	    {.name = "err", .type = "error", .size = 16, .is_return = true},
	    {.name = "m", .type = "int", .size = 8, .is_return = true},
	};
	struct dwarf_func edf = {.name = "main.E", .params = ep, .nparams = 4};
	struct func_info ef = {.name = "main.E", .dwarf = &edf};
	struct retop_args ea = {.regs = {0xc000100000, 5, 8, 77}};
	assert_int_equal(args_plan_make(&ef, NULL, 0, NULL, 0, &plan), 0);
	args_decode(&plan, &ea, &v);
	assert_int_equal(v.v[0].kind, ARGS_SLICE);
	assert_int_equal(v.v[0].u, 5);
	assert_int_equal(v.v[1].i, 77); /* RDI: after the slice's three */
	struct retop_args er = {.regs = {0, 0, 42}};
	args_decode_results(&plan, &er, &v);
	assert_int_equal(v.v[0].kind, ARGS_IFACE);
	assert_int_equal(v.v[0].u, 0);	/* nil */
	assert_int_equal(v.v[1].i, 42); /* RCX: after the interface's two */
	char line[128];
	args_format(&v, "r", line, sizeof(line));
	assert_string_equal(line, "err=nil m=42");
	er.regs[0] = 0x4c1000;
	args_decode_results(&plan, &er, &v);
	args_format(&v, "r", line, sizeof(line));
	assert_string_equal(line, "err=non-nil m=42");

	/* Stripped, from the SDK. */
	struct func_info g = {.name = "main.S"};
	assert_int_equal(args_plan_make(&g, sargs, 1, srets, 2, &plan), 0);
	assert_int_equal(plan.nres, 2);
	r.regs[0] = 4253;
	args_decode_results(&plan, &r, &v);
	assert_int_equal(v.v[0].i, 4253);
	assert_string_equal(v.v[1].name, "err");
	assert_int_equal(v.v[1].kind, ARGS_POINTER);
	/* A result register the ABI does not give: nothing of the SDK trusted. */
	srets[1].loc_value = 3;
	assert_int_equal(args_plan_make(&g, sargs, 1, srets, 2, &plan), -EBADMSG);
	assert_int_equal(plan.nres, 0);
	assert_false(plan.spec.res_on);
	/* No types: no results. */
	assert_int_equal(args_plan_make(&g, NULL, 0, NULL, 0, &plan), 0);
	assert_int_equal(plan.nres, 0);
	assert_false(plan.spec.res_on);
}

static void test_string_cut_utf8(void **state)
{
	static struct dwarf_param sp[] = {{.name = "s", .type = "string", .size = 16}};
	struct dwarf_func df = {.name = "main.G", .params = sp, .nparams = 1};
	struct func_info f = {.name = "main.G", .dwarf = &df};
	struct retop_args a = {.regs = {0x1000, 100}};
	struct args_plan plan;
	struct args_values v;

	(void)state;
	args_plan_make(&f, NULL, 0, NULL, 0, &plan);
	/* 63 ASCII bytes, then the lead byte of a 2-byte character that the
	 * 64-byte read cut: dropped, and the string says it is cut. */
	memset(a.str[0], 'x', 63);
	a.str[0][63] = (char)0xC3;
	a.str_len[0] = 64;
	args_decode(&plan, &a, &v);
	assert_int_equal(strlen(v.v[0].s), 63);
	assert_true(v.v[0].truncated);
	/* An invalid byte becomes '?'. */
	a.regs[1] = 3;
	a.str_len[0] = 3;
	memcpy(a.str[0],
	       "a\xFF"
	       "b",
	       3);
	args_decode(&plan, &a, &v);
	assert_string_equal(v.v[0].s, "a?b");
	assert_false(v.v[0].truncated);
}

static void test_no_dwarf_raw(void **state)
{
	struct func_info f = {.name = "main.H"};
	struct retop_args a = {.regs = {1, 2, 3, 4, 5, 6, 7, 8, 9}};
	struct args_plan plan;
	struct args_values v;

	(void)state;
	args_plan_make(&f, NULL, 0, NULL, 0, &plan);
	args_decode(&plan, &a, &v);
	assert_int_equal(v.n, RETOP_ARG_REGS);
	for (size_t i = 0; i < v.n; i++) {
		assert_null(v.v[i].name);
		assert_int_equal(v.v[i].kind, ARGS_RAW);
		assert_int_equal(v.v[i].u, i + 1);
	}
}

/* The error result's register at the RET: results from RAX, an
 * interface's first word its itab. */
static enum args_error_state error_of(struct dwarf_param *ps, size_t n, bool asm_code,
				      struct args_error *e)
{
	struct dwarf_func df = {.name = "main.E", .params = ps, .nparams = n};
	struct func_info f = {.name = "main.E", .dwarf = &df};

	args_error_find(&f, NULL, 0, ARGS_SDK_NONE, asm_code, e);
	return e->state;
}

#define RES(t, sz)                                                                                 \
	{                                                                                          \
		.name = "~r", .type = (t), .size = (sz), .is_return = true                         \
	}
#define RESK(t, sz, k)                                                                             \
	{                                                                                          \
		.name = "~r", .type = (t), .size = (sz), .kind = (k), .is_return = true            \
	}

static void test_error_register(void **state)
{
	struct args_error e;

	(void)state;
	/* (error), with an argument before it that does not count. */
	struct dwarf_param p0[] = {{.name = "s", .type = "string", .size = 16},
				   RESK("error", 16, 20)};
	assert_int_equal(error_of(p0, 2, false, &e), ARGS_ERROR_READ);
	assert_int_equal(e.reg, 0);
	/* (int, error): RBX; (string, error): RCX; ([]byte, error): RDI. */
	struct dwarf_param p1[] = {RES("int", 8), RES("error", 16)};
	assert_int_equal(error_of(p1, 2, false, &e), ARGS_ERROR_READ);
	assert_int_equal(e.reg, 1);
	struct dwarf_param p2[] = {RES("string", 16), RES("error", 16)};
	assert_int_equal(error_of(p2, 2, false, &e), ARGS_ERROR_READ);
	assert_int_equal(e.reg, 2);
	struct dwarf_param p3[] = {RES("[]uint8", 24), RES("error", 16)};
	assert_int_equal(error_of(p3, 2, false, &e), ARGS_ERROR_READ);
	assert_int_equal(e.reg, 3);
	/* A float takes an X register, no integer one. */
	struct dwarf_param p4[] = {RES("float64", 8), RES("*main.T", 8), RES("error", 16)};
	assert_int_equal(error_of(p4, 3, false, &e), ARGS_ERROR_READ);
	assert_int_equal(e.reg, 1);
	/* A named type by its Go kind: time.Duration is an int64 (6), a
	 * named interface two words (20). */
	struct dwarf_param p5[] = {RESK("time.Duration", 8, 6), RESK("main.Shape", 16, 20),
				   RES("error", 16)};
	assert_int_equal(error_of(p5, 3, false, &e), ARGS_ERROR_READ);
	assert_int_equal(e.reg, 3);
	/* A struct before it: its fields' registers are not modelled. */
	struct dwarf_param p6[] = {RESK("main.Point", 16, 25), RES("error", 16)};
	assert_int_equal(error_of(p6, 2, false, &e), ARGS_ERROR_UNREAD);
	assert_non_null(strstr(e.why, "main.Point"));
	assert_int_equal(e.reg, RETOP_ARG_NONE);
	/* Seven ints (RAX-R9), a slice that does not fit whole in the two
	 * left (on the stack: it takes no register), then the error in R10
	 * and R11. */
	struct dwarf_param p7[] = {RES("int", 8), RES("int", 8),      RES("int", 8),
				   RES("int", 8), RES("int", 8),      RES("int", 8),
				   RES("int", 8), RES("[]uint8", 24), RES("error", 16)};
	assert_int_equal(error_of(p7, 9, false, &e), ARGS_ERROR_READ);
	assert_int_equal(e.reg, 7);
	struct dwarf_param p8[] = {RES("int", 8), RES("int", 8), RES("int", 8),
				   RES("int", 8), RES("int", 8), RES("int", 8),
				   RES("int", 8), RES("int", 8), RES("error", 16)};
	assert_int_equal(error_of(p8, 9, false, &e), ARGS_ERROR_UNREAD);
	assert_non_null(strstr(e.why, "on the stack"));
	/* No error result, or not the last: nothing to count, nothing to say. */
	struct dwarf_param p9[] = {RES("error", 16), RES("int", 8)};
	assert_int_equal(error_of(p9, 2, false, &e), ARGS_ERROR_NONE);
	assert_int_equal(error_of(p0, 1, false, &e), ARGS_ERROR_NONE);
	assert_string_equal(e.why, "");
	/* Assembly: its results are on the stack (ABI0). */
	assert_int_equal(error_of(p1, 2, true, &e), ARGS_ERROR_UNREAD);
	assert_non_null(strstr(e.why, "assembly"));
	assert_int_equal(error_of(p9, 2, true, &e), ARGS_ERROR_NONE);

	/* Stripped: the SDK's results, checked against the ABI; without them
	 * the signature is unknown, and said so. */
	struct func_info g = {.name = "main.S"};
	struct sdk_arg r1[] = {
	    {.type = "int", .size = 8, .loc = SDK_LOC_REGISTER, .loc_value = 0},
	    {.type = "error", .size = 16, .loc = SDK_LOC_REGISTER, .loc_value = 1},
	};
	args_error_find(&g, r1, 2, ARGS_SDK_DESCRIBED, false, &e);
	assert_int_equal(e.state, ARGS_ERROR_READ);
	assert_int_equal(e.reg, 1);
	r1[1].loc_value = 3;
	args_error_find(&g, r1, 2, ARGS_SDK_DESCRIBED, false, &e);
	assert_int_equal(e.state, ARGS_ERROR_UNKNOWN);
	assert_non_null(strstr(e.why, "disagree"));
	/* A struct before it: the SDK placed the error knowing its fields. */
	struct sdk_arg r2[] = {
	    {.type = "main.Point", .size = 16, .loc = SDK_LOC_REGISTER, .loc_value = 0},
	    {.type = "error", .size = 16, .loc = SDK_LOC_REGISTER, .loc_value = 2},
	};
	args_error_find(&g, r2, 2, ARGS_SDK_DESCRIBED, false, &e);
	assert_int_equal(e.state, ARGS_ERROR_READ);
	assert_int_equal(e.reg, 2);
	args_error_find(&g, NULL, 0, ARGS_SDK_NONE, false, &e);
	assert_int_equal(e.state, ARGS_ERROR_UNKNOWN);
	assert_string_equal(e.why, "signature unknown (stripped, no SDK)");
	args_error_find(&g, NULL, 0, ARGS_SDK_SILENT, false, &e);
	assert_int_equal(e.state, ARGS_ERROR_UNKNOWN);
	assert_non_null(strstr(e.why, "the SDK does not describe it"));
}

/* A named type's value decoded by its Go kind, and the parameters after
 * it still placed. */
static void test_named_kinds(void **state)
{
	static struct dwarf_param np[] = {
	    {.name = "d", .type = "time.Duration", .size = 8, .kind = 6},
	    {.name = "lv", .type = "main.Level", .size = 1, .kind = 8},
	    {.name = "pt", .type = "main.Point", .size = 16, .kind = 25},
	    {.name = "n", .type = "int", .size = 8},
	};
	struct dwarf_func df = {.name = "main.N", .params = np, .nparams = 4};
	struct func_info f = {.name = "main.N", .dwarf = &df};
	struct retop_args a = {.regs = {1500, 0x103, 9}};
	struct args_plan plan;
	struct args_values v;

	(void)state;
	args_plan_make(&f, NULL, 0, NULL, 0, &plan);
	args_decode(&plan, &a, &v);
	assert_int_equal(v.v[0].kind, ARGS_INT);
	assert_int_equal(v.v[0].i, 1500);
	assert_int_equal(v.v[1].kind, ARGS_UINT);
	assert_int_equal(v.v[1].u, 3); /* a uint8: the low byte */
	/* A struct: not modelled, nor anything after it. */
	assert_int_equal(v.v[2].kind, ARGS_UNAVAILABLE);
	assert_int_equal(v.v[3].kind, ARGS_UNAVAILABLE);
}

static void test_slowest_merge_keeps_longest(void **state)
{
	struct slowest_list into = {0}, from = {0};

	(void)state;
	for (size_t i = 0; i < SLOWEST_N; i++)
		into.calls[into.n++].dur_ns = 100 - i * 5; /* 100 .. 55 */
	from.calls[from.n++].dur_ns = 77;
	from.calls[from.n++].dur_ns = 1000;
	from.calls[from.n++].dur_ns = 10;
	slowest_merge(&into, &from);
	assert_int_equal(into.n, SLOWEST_N);
	assert_int_equal(into.calls[0].dur_ns, 1000);
	assert_int_equal(into.calls[1].dur_ns, 100);
	for (size_t i = 1; i < into.n; i++)
		assert_true(into.calls[i - 1].dur_ns >= into.calls[i].dur_ns);
	assert_int_equal(into.calls[SLOWEST_N - 1].dur_ns, 65);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plan_and_decode),
	    cmocka_unit_test(test_plan_from_sdk),
	    cmocka_unit_test(test_results),
	    cmocka_unit_test(test_string_cut_utf8),
	    cmocka_unit_test(test_no_dwarf_raw),
	    cmocka_unit_test(test_error_register),
	    cmocka_unit_test(test_named_kinds),
	    cmocka_unit_test(test_slowest_merge_keeps_longest),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
