/* Unit tests for the RET-site search, on fixed x86-64 byte arrays.
 *
 * Every array is written by hand with its disassembly beside it (checked
 * against `objdump -D -b binary -mi386:x86-64 -M intel`).  The functions are
 * "loaded" at ADDR so that jump targets inside and outside them are real
 * addresses, as in a Go binary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "retsites.h"
#include "log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ADDR 0x401000u
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* One RET at the end, then int3 padding up to the next function. */
static const uint8_t one_ret[] = {
	0x48, 0x83, 0xec, 0x18,	      /* 0x0: sub rsp, 0x18 */
	0x48, 0x89, 0x44, 0x24, 0x08, /* 0x4: mov qword ptr [rsp + 8], rax */
	0x48, 0x83, 0xc4, 0x18,	      /* 0x9: add rsp, 0x18 */
	0xc3,			      /* 0xd: ret */
	0xcc, 0xcc,		      /* 0xe: int3; int3 (padding) */
};

/* Two paths, each ending in its own RET. */
static const uint8_t two_rets[] = {
	0x48, 0x85, 0xc0,	      /* 0x0: test rax, rax */
	0x74, 0x03,		      /* 0x3: je 0x8 */
	0x31, 0xc0,		      /* 0x5: xor eax, eax */
	0xc3,			      /* 0x7: ret */
	0xb8, 0x01, 0x00, 0x00, 0x00, /* 0x8: mov eax, 1 */
	0xc3,			      /* 0xd: ret */
	0xcc, 0xcc,		      /* 0xe: int3; int3 */
};

/* ret imm16: pops its arguments, still a return. */
static const uint8_t ret_imm16[] = {
	0x48, 0x89, 0xc8, /* 0x0: mov rax, rcx */
	0xc2, 0x08, 0x00, /* 0x3: ret 8 */
	0xcc, 0xcc,	  /* 0x6: int3; int3 */
};

/* 0xC3 bytes inside immediates, a ModRM byte and a displacement: only the
 * last byte is a RET.  A byte search would find seven. */
static const uint8_t c3_inside[] = {
	0xb8, 0xc3, 0xc3, 0xc3, 0xc3,		  /* 0x0: mov eax, 0xc3c3c3c3 */
	0x01, 0xc3,				  /* 0x5: add ebx, eax */
	0x48, 0x8d, 0x05, 0xc3, 0x00, 0x00, 0x00, /* 0x7: lea rax, [rip + 0xc3] */
	0xc3,					  /* 0xe: ret */
	0xcc,					  /* 0xf: int3 */
};

/* The same C3-laden instructions, then a tail jump: no RET at all. */
static const uint8_t c3_inside_no_ret[] = {
	0xb8, 0xc3, 0xc3, 0xc3, 0xc3, /* 0x0: mov eax, 0xc3c3c3c3 */
	0x01, 0xc3,		      /* 0x5: add ebx, eax */
	0xe9, 0xf4, 0x0f, 0x00, 0x00, /* 0x7: jmp ADDR + 0x1000 */
	0xcc,			      /* 0xc: int3 */
};

/* Tail call: a direct jmp to another function, forward. */
static const uint8_t tail_jump[] = {
	0x48, 0x83, 0xec, 0x08,	      /* 0x0: sub rsp, 8 */
	0x48, 0x83, 0xc4, 0x08,	      /* 0x4: add rsp, 8 */
	0xe9, 0xf3, 0x0f, 0x00, 0x00, /* 0x8: jmp ADDR + 0x1000 */
	0xcc, 0xcc, 0xcc,	      /* 0xd: int3 x3 */
};

/* Tail call backwards, to a function placed before this one. */
static const uint8_t tail_jump_back[] = {
	0x48, 0x89, 0xc8,	      /* 0x0: mov rax, rcx */
	0xe9, 0xf8, 0xef, 0xff, 0xff, /* 0x3: jmp ADDR - 0x1000 */
};

/* An endless loop: the only jmp stays inside the function. */
static const uint8_t loop[] = {
	0x48, 0xff, 0xc0, /* 0x0: inc rax */
	0xeb, 0xfb,	  /* 0x3: jmp 0x0 */
	0xcc, 0xcc, 0xcc, /* 0x5: int3 x3 */
};

/* Ends in a call that does not return (runtime.throw-like), then ud2. */
static const uint8_t call_noreturn[] = {
	0x48, 0x83, 0xec, 0x08,	      /* 0x0: sub rsp, 8 */
	0xe8, 0xf7, 0x0f, 0x00, 0x00, /* 0x4: call ADDR + 0x1000 */
	0x0f, 0x0b,		      /* 0x9: ud2 */
	0xcc,			      /* 0xb: int3 */
};

/* 0x06 (push es) is invalid in 64-bit mode: objdump says "(bad)". */
static const uint8_t bad[] = {
	0x48, 0x89, 0xc8, /* 0x0: mov rax, rcx */
	0x06,		  /* 0x3: (bad) */
	0xc3,		  /* 0x4: ret, never reached by the decoder */
};

/* A far return is not Go code. */
static const uint8_t far_ret[] = {
	0x48, 0x89, 0xc8, /* 0x0: mov rax, rcx */
	0xcb,		  /* 0x3: retf */
};

/* AVX-512 and VEX code as Go >= 1.26 links it (runtime.asyncPreempt,
 * internal/runtime/gc expandAVX512_*, hash/crc32.ieeeCLMUL...), bytes copied
 * from `objdump -d -M intel --insn-width=16` of a Go 1.26 program that
 * imports crypto/sha256, crypto/tls and hash/crc32; vbroadcasti128 from
 * chacha20poly1305 in Debian's prometheus.  capstone 4.0.2 decodes none of
 * the EVEX ones, nor kmovq nor that vbroadcasti128. */
static const uint8_t avx512[] = {
	0x62, 0xf2, 0x7d, 0x48, 0x8d, 0xc4,		  /* 0x00: vpermb zmm0, zmm0, zmm4 */
	0x62, 0xf3, 0xfd, 0x48, 0xce, 0xc1, 0x00,	  /* 0x06: vgf2p8affineqb zmm0, zmm0, zmm1, 0 */
	0x62, 0xf2, 0x7d, 0x48, 0x75, 0xcc,		  /* 0x0d: vpermi2b zmm1, zmm0, zmm4 */
	0xc4, 0xe1, 0xfb, 0x92, 0xc8,			  /* 0x13: kmovq k1, rax */
	0xc4, 0xe1, 0xf8, 0x91, 0x80, 0x00, 0x08, 0x00, 0x00, /* 0x18: kmovq [rax + 0x800], k0 */
	0x62, 0xf2, 0x7d, 0x48, 0x54, 0xd9,		  /* 0x21: vpopcntb zmm3, zmm1 */
	0x62, 0xf3, 0x75, 0x48, 0x44, 0xe8, 0x11,	  /* 0x27: vpclmulqdq zmm5, zmm1, zmm0, 0x11 */
	0x62, 0xd3, 0x55, 0x48, 0x25, 0xcb, 0x96,	  /* 0x2e: vpternlogd zmm1, zmm5, zmm11, 0x96 */
	0xc4, 0x42, 0x7d, 0x5a, 0x70, 0x10,		  /* 0x35: vbroadcasti128 ymm14, [r8 + 0x10] */
	0x62, 0xf2, 0x6d, 0xc9, 0x75, 0xeb,		  /* 0x3b: vpermi2b zmm5{k1}{z}, zmm2, zmm3 */
	0xc5, 0xf8, 0x77,				  /* 0x41: vzeroupper */
	0xc3,						  /* 0x44: ret */
	0xcc, 0xcc,					  /* 0x45: int3 x2 */
};
static const uint32_t avx512_starts[] = {0x00, 0x06, 0x0d, 0x13, 0x18, 0x21, 0x27,
					 0x2e, 0x35, 0x3b, 0x41, 0x44, 0x45, 0x46};

/* Prefixed near RETs are RETs at their first byte; far RETs, with or
 * without an immediate, are refused. */
static const uint8_t prefixed_rets[] = {
	0x31, 0xc0, /* 0x0: xor eax, eax */
	0xf3, 0xc3, /* 0x2: repz ret */
	0xf2, 0xc3, /* 0x4: bnd ret */
	0xc3,	    /* 0x6: ret */
};
static const uint8_t far_ret_imm[] = {
	0x31, 0xc0,	  /* 0x0: xor eax, eax */
	0xca, 0x08, 0x00, /* 0x2: retf 8 */
};

/* 0xCC inside an instruction is no padding; int3 runs between code are. */
static const uint8_t cc_inside[] = {
	0xb8, 0xcc, 0xcc, 0xcc, 0xcc, /* 0x0: mov eax, 0xcccccccc */
	0xcc, 0xcc,		      /* 0x5: int3 x2 */
	0x74, 0xcc,		      /* 0x7: je -52 (to ADDR - 0x2b: outside) */
	0xc3,			      /* 0x9: ret */
	0xcc, 0xcc, 0xcc,	      /* 0xa: int3 x3 */
};
static const uint32_t cc_inside_starts[] = {0x0, 0x5, 0x6, 0x7, 0x9, 0xa, 0xb, 0xc};

static int setup(void **state)
{
	struct retsites_engine *eng;
	char err[ERR_LEN];

	if (retsites_engine_open(&eng, err) != 0) {
		print_error("%s\n", err);
		return -1;
	}
	*state = eng;
	return 0;
}

static int teardown(void **state)
{
	retsites_engine_close(*state);
	return 0;
}

/* Run the search and check everything but the reason. */
static void find(void **state, const uint8_t *code, size_t size, struct retsites *r)
{
	assert_int_equal(retsites_find(*state, code, size, ADDR, r), 0);
}

static void assert_sites(const struct retsites *r, const uint32_t *want, size_t n)
{
	assert_int_equal(r->count, n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(retsites_get(r, i)->offset, want[i]);
		assert_int_equal(retsites_get(r, i)->line, 0);
	}
}

static void test_one_ret(void **state)
{
	static const uint32_t want[] = {0xd};
	struct retsites r;

	find(state, one_ret, sizeof(one_ret), &r);
	assert_sites(&r, want, N(want));
	assert_int_equal(r.code_size, 0xe); /* the padding is not code */
	assert_int_equal(r.traceable, TRACEABLE_FULL);
	assert_string_equal(retsites_reason(&r), "");
	assert_string_equal(traceable_name(r.traceable), "full");
	retsites_free(&r);
	assert_null(r.reason);
	assert_int_equal(r.count, 0);
}

static void test_two_rets(void **state)
{
	static const uint32_t want[] = {0x7, 0xd};
	struct retsites r;

	find(state, two_rets, sizeof(two_rets), &r);
	assert_sites(&r, want, N(want));
	assert_int_equal(r.code_size, 0xe);
	assert_int_equal(r.traceable, TRACEABLE_FULL);
	retsites_free(&r);
}

static void test_ret_imm16(void **state)
{
	static const uint32_t want[] = {0x3};
	struct retsites r;

	find(state, ret_imm16, sizeof(ret_imm16), &r);
	assert_sites(&r, want, N(want));
	assert_int_equal(r.code_size, 0x6);
	assert_int_equal(r.traceable, TRACEABLE_FULL);
	retsites_free(&r);
}

static void test_c3_inside_instructions(void **state)
{
	static const uint32_t want[] = {0xe};
	struct retsites r;

	find(state, c3_inside, sizeof(c3_inside), &r);
	assert_sites(&r, want, N(want));
	assert_int_equal(r.code_size, 0xf);
	assert_int_equal(r.traceable, TRACEABLE_FULL);
	retsites_free(&r);

	find(state, c3_inside_no_ret, sizeof(c3_inside_no_ret), &r);
	assert_int_equal(r.count, 0);
	assert_int_equal(r.code_size, 0xc);
	assert_int_equal(r.traceable, TRACEABLE_ENTRY_ONLY);
	assert_string_equal(retsites_reason(&r), "no RET: ends in tail jump");
	retsites_free(&r);
}

static void test_tail_jump(void **state)
{
	struct retsites r;

	find(state, tail_jump, sizeof(tail_jump), &r);
	assert_int_equal(r.count, 0);
	assert_int_equal(r.code_size, 0xd);
	assert_int_equal(r.traceable, TRACEABLE_ENTRY_ONLY);
	assert_string_equal(retsites_reason(&r), "no RET: ends in tail jump");
	assert_string_equal(traceable_name(r.traceable), "entry-only");
	retsites_free(&r);

	find(state, tail_jump_back, sizeof(tail_jump_back), &r);
	assert_int_equal(r.count, 0);
	assert_int_equal(r.code_size, sizeof(tail_jump_back));
	assert_int_equal(r.traceable, TRACEABLE_ENTRY_ONLY);
	assert_string_equal(retsites_reason(&r), "no RET: ends in tail jump");
	retsites_free(&r);
}

static void test_never_returns(void **state)
{
	struct retsites r;

	/* The jmp goes back inside: a loop, not a tail call. */
	find(state, loop, sizeof(loop), &r);
	assert_int_equal(r.count, 0);
	assert_int_equal(r.code_size, 0x5);
	assert_int_equal(r.traceable, TRACEABLE_ENTRY_ONLY);
	assert_string_equal(retsites_reason(&r), "no RET: never returns");
	retsites_free(&r);

	/* A call leaving the function is not a tail jump either. */
	find(state, call_noreturn, sizeof(call_noreturn), &r);
	assert_int_equal(r.count, 0);
	assert_int_equal(r.code_size, 0xb);
	assert_int_equal(r.traceable, TRACEABLE_ENTRY_ONLY);
	assert_string_equal(retsites_reason(&r), "no RET: never returns");
	retsites_free(&r);
}

static void test_does_not_decode(void **state)
{
	struct retsites r;

	find(state, bad, sizeof(bad), &r);
	assert_int_equal(r.traceable, TRACEABLE_NO);
	assert_int_equal(r.code_size, 0x3);
	assert_non_null(strstr(retsites_reason(&r), "+0x3"));
	assert_non_null(strstr(retsites_reason(&r), "does not decode"));
	assert_string_equal(traceable_name(r.traceable), "no");
	/* Nothing past the bad byte can be trusted: the ret there is not a site. */
	assert_int_equal(r.count, 0);
	retsites_free(&r);
}

static void test_far_ret(void **state)
{
	struct retsites r;

	find(state, far_ret, sizeof(far_ret), &r);
	assert_int_equal(r.traceable, TRACEABLE_NO);
	assert_int_equal(r.count, 0);
	assert_non_null(strstr(retsites_reason(&r), "retf"));
	retsites_free(&r);
}

/* Three RETs live on the heap, two or fewer in place: truncating across
 * that line keeps the first offsets. */
static void test_three_rets_truncate(void **state)
{
	static const uint8_t code[] = {0x31, 0xc0, 0xc3, 0x31, 0xc0, 0xc3, 0x31, 0xc0, 0xc3};
	static const uint32_t want[] = {0x2, 0x5, 0x8};
	struct retsites r;

	find(state, code, sizeof(code), &r);
	assert_sites(&r, want, N(want));
	retsites_truncate(&r, 5); /* more than there are: nothing changes */
	assert_sites(&r, want, N(want));
	retsites_truncate(&r, 2);
	assert_sites(&r, want, 2);
	retsites_truncate(&r, 1);
	assert_sites(&r, want, 1);
	retsites_free(&r);
	assert_int_equal(r.count, 0);
}

/* Only padding: nothing to trace, and no code at all. */
static void test_only_padding(void **state)
{
	static const uint8_t pad[] = {0xcc, 0xcc, 0xcc, 0xcc};
	struct retsites r;

	find(state, pad, sizeof(pad), &r);
	assert_int_equal(r.count, 0);
	assert_int_equal(r.code_size, 0);
	assert_int_not_equal(r.traceable, TRACEABLE_FULL);
	retsites_free(&r);
}

static void test_is_boundary(void **state)
{
	/* Instruction starts of one_ret and of c3_inside. */
	static const uint64_t starts1[] = {0x0, 0x4, 0x9, 0xd, 0xe, 0xf};
	static const uint64_t starts2[] = {0x0, 0x5, 0x7, 0xe, 0xf};
	struct retsites_engine *eng = *state;
	size_t k = 0;

	for (uint64_t off = 0; off < sizeof(one_ret) + 4; off++) {
		bool start = k < N(starts1) && starts1[k] == off;
		assert_int_equal(retsites_is_boundary(eng, one_ret, sizeof(one_ret), ADDR, off),
				 start);
		k += start;
	}
	k = 0;
	for (uint64_t off = 0; off < sizeof(c3_inside) + 4; off++) {
		bool start = k < N(starts2) && starts2[k] == off;
		assert_int_equal(retsites_is_boundary(eng, c3_inside, sizeof(c3_inside), ADDR, off),
				 start);
		k += start;
	}
	/* Past the end, even far past it. */
	assert_false(retsites_is_boundary(eng, one_ret, sizeof(one_ret), ADDR, UINT64_MAX));
	/* After bytes that do not decode, nothing is a boundary. */
	assert_true(retsites_is_boundary(eng, bad, sizeof(bad), ADDR, 3));
	assert_false(retsites_is_boundary(eng, bad, sizeof(bad), ADDR, 4));
}

static void expect_disasm(void **state, const uint8_t *code, size_t size, const char *text,
			  int len)
{
	char buf[128];

	assert_int_equal(retsites_disasm_one(*state, code, size, ADDR, buf, sizeof(buf)), len);
	assert_string_equal(buf, text);
}

static void test_disasm_one(void **state)
{
	char buf[8];

	expect_disasm(state, one_ret + 0xd, 1, "ret", 1);
	expect_disasm(state, c3_inside, sizeof(c3_inside), "mov eax, 0xc3c3c3c3", 5);
	expect_disasm(state, c3_inside + 5, 2, "add ebx, eax", 2);
	expect_disasm(state, one_ret + 4, 5, "mov qword ptr [rsp + 8], rax", 5);
	expect_disasm(state, ret_imm16 + 3, 3, "ret 8", 3);
	/* Jump targets are absolute, from the address given: the jmp of
	 * tail_jump decoded at ADDR goes to ADDR + 5 + 0xff3. */
	expect_disasm(state, tail_jump + 8, 5, "jmp 0x401ff8", 5);
	/* End of input, bad bytes, and a truncated instruction. */
	assert_int_equal(retsites_disasm_one(*state, one_ret, 0, ADDR, buf, sizeof(buf)), 0);
	assert_int_equal(retsites_disasm_one(*state, bad + 3, 2, ADDR, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(retsites_disasm_one(*state, c3_inside, 3, ADDR, buf, sizeof(buf)),
			 -EINVAL);
	/* A short buffer truncates the text and still reports the length. */
	assert_int_equal(retsites_disasm_one(*state, c3_inside, 5, ADDR, buf, sizeof(buf)), 5);
	assert_string_equal(buf, "mov eax");
}

static void test_avx512(void **state)
{
	static const uint32_t want[] = {0x44};
	struct retsites r;

	find(state, avx512, sizeof(avx512), &r);
	assert_int_equal(r.traceable, TRACEABLE_FULL);
	assert_string_equal(retsites_reason(&r), "");
	assert_int_equal(r.code_size, 0x45);
	assert_sites(&r, want, N(want));
	retsites_free(&r);
	for (size_t i = 0; i < N(avx512_starts); i++)
		assert_true(retsites_is_boundary(*state, avx512, sizeof(avx512), ADDR,
						 avx512_starts[i]));
	assert_false(retsites_is_boundary(*state, avx512, sizeof(avx512), ADDR, 0x19));
}

/* Exactly the starts of want[0..n) are set in bits[0..size). */
static void assert_bits(const uint8_t *bits, size_t size, const uint32_t *want, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < size; i++) {
		bool start = k < n && want[k] == i;
		if (((bits[i / 8] >> (i % 8)) & 1) != start)
			fail_msg("offset 0x%zx: bit %d, expected %d", i, !start, start);
		k += start;
	}
	assert_int_equal(k, n);
}

static void test_boundaries(void **state)
{
	static const uint32_t one_ret_starts[] = {0x0, 0x4, 0x9, 0xd, 0xe, 0xf};
	static const uint32_t bad_starts[] = {0x0, 0x3};
	uint8_t bits[16];

	memset(bits, 0, sizeof(bits));
	assert_int_equal(retsites_boundaries(*state, avx512, sizeof(avx512), ADDR, bits),
			 sizeof(avx512));
	assert_bits(bits, sizeof(avx512), avx512_starts, N(avx512_starts));
	memset(bits, 0, sizeof(bits));
	assert_int_equal(retsites_boundaries(*state, one_ret, sizeof(one_ret), ADDR, bits),
			 sizeof(one_ret));
	assert_bits(bits, sizeof(one_ret), one_ret_starts, N(one_ret_starts));
	/* Stops at the first byte that does not decode: no instruction starts
	 * there, and nothing after it is marked. */
	memset(bits, 0, sizeof(bits));
	assert_int_equal(retsites_boundaries(*state, bad, sizeof(bad), ADDR, bits), 3);
	assert_bits(bits, sizeof(bad), bad_starts, 1);
	/* An instruction cut by the end of the buffer does not decode. */
	memset(bits, 0, sizeof(bits));
	assert_int_equal(retsites_boundaries(*state, avx512, 0x1d, ADDR, bits), 0x18);
	assert_bits(bits, 0x1d, avx512_starts, 4);
	assert_int_equal(retsites_boundaries(*state, avx512, 0, ADDR, bits), 0);
}

static void test_prefixed_and_far_rets(void **state)
{
	static const uint32_t want[] = {0x2, 0x4, 0x6};
	struct retsites r;

	find(state, prefixed_rets, sizeof(prefixed_rets), &r);
	assert_int_equal(r.traceable, TRACEABLE_FULL);
	assert_sites(&r, want, N(want));
	retsites_free(&r);
	find(state, far_ret_imm, sizeof(far_ret_imm), &r);
	assert_int_equal(r.traceable, TRACEABLE_NO);
	assert_int_equal(r.count, 0);
	assert_non_null(strstr(retsites_reason(&r), "retf"));
	retsites_free(&r);
}

/* Where capstone decodes an instruction Zydis decodes, both give it the
 * same length: the detail view's text matches the RET search's bytes. */
static void test_disasm_avx512(void **state)
{
	char buf[128];

	for (size_t i = 0; i + 1 < N(avx512_starts); i++) {
		uint32_t off = avx512_starts[i], len = avx512_starts[i + 1] - off;
		assert_int_equal(retsites_disasm_one(*state, avx512 + off, sizeof(avx512) - off,
						     ADDR + off, buf, sizeof(buf)),
				 (int)len);
		assert_true(buf[0] != '\0');
	}
	/* capstone 4 cannot print these: Zydis does. */
	expect_disasm(state, avx512, sizeof(avx512), "vpermb zmm0, zmm0, zmm4", 6);
	expect_disasm(state, avx512 + 0x18, 9, "kmovq [rax+0x800], k0", 9);
	expect_disasm(state, avx512 + 0x2e, 7, "vpternlogd zmm1, zmm5, zmm11, 0x96", 7);
	expect_disasm(state, avx512 + 0x41, 3, "vzeroupper", 3);
}

static void test_int3_runs(void **state)
{
	static const uint32_t want[] = {0x9};
	uint8_t bits[2] = {0};
	struct retsites r;
	size_t k = 0;

	find(state, cc_inside, sizeof(cc_inside), &r);
	assert_int_equal(r.traceable, TRACEABLE_FULL);
	assert_int_equal(r.code_size, 0xa);
	assert_sites(&r, want, N(want));
	retsites_free(&r);
	assert_int_equal(retsites_boundaries(*state, cc_inside, sizeof(cc_inside), ADDR, bits),
			 sizeof(cc_inside));
	assert_bits(bits, sizeof(cc_inside), cc_inside_starts, N(cc_inside_starts));
	for (uint32_t off = 0; off < sizeof(cc_inside); off++) {
		bool start = k < N(cc_inside_starts) && cc_inside_starts[k] == off;
		assert_int_equal(retsites_is_boundary(*state, cc_inside, sizeof(cc_inside), ADDR, off),
				 start);
		k += start;
	}
	/* Padding only to the end: code_size stops before it. */
	find(state, cc_inside, 7, &r);
	assert_int_equal(r.code_size, 5);
	assert_int_equal(r.count, 0);
	assert_string_equal(retsites_reason(&r), "no RET: never returns");
	retsites_free(&r);
}

/* Random bytes, many of them opcodes and prefixes Go code is full of: the
 * three entry points agree on every buffer (RET sites are boundaries, the
 * boundaries are what retsites_is_boundary says, decoding stops at the same
 * place). */
static void test_random_bytes_agree(void **state)
{
	static const uint8_t common[] = {0xc3, 0xcc, 0x62, 0xc4, 0xc5, 0x48, 0x66,
					 0x0f, 0xf3, 0xe9, 0xeb, 0xca, 0xcb};
	uint64_t x = 0x9e3779b97f4a7c15u;
	uint8_t bits[6];
	struct retsites r;

	for (int round = 0; round < 4000; round++) {
		size_t size = 1 + round % 48, stop;
		/* Exactly size bytes on the heap: valgrind sees a read past them. */
		uint8_t *code = malloc(size);
		assert_non_null(code);
		for (size_t i = 0; i < size; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			code[i] = (x >> 8) % 3 ? (uint8_t)x : common[(x >> 16) % sizeof(common)];
		}
		memset(bits, 0, sizeof(bits));
		stop = retsites_boundaries(*state, code, size, ADDR, bits);
		assert_true(stop <= size);
		find(state, code, size, &r);
		assert_true(r.code_size <= stop);
		if (stop < size)
			assert_int_equal(r.traceable, TRACEABLE_NO);
		assert_int_equal(strstr(retsites_reason(&r), "does not decode") != NULL, stop < size);
		for (size_t i = 0; i < r.count; i++) {
			uint32_t off = retsites_get(&r, i)->offset;
			assert_true(off < stop && ((bits[off / 8] >> (off % 8)) & 1));
		}
		/* retsites_is_boundary also says yes where decoding stopped: an
		 * instruction was reached there (test_is_boundary). */
		for (size_t off = 0; off < size; off++)
			assert_int_equal(retsites_is_boundary(*state, code, size, ADDR, off),
					 off == stop ||
						 (off < stop && ((bits[off / 8] >> (off % 8)) & 1)));
		retsites_free(&r);
		free(code);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_ret),
		cmocka_unit_test(test_two_rets),
		cmocka_unit_test(test_ret_imm16),
		cmocka_unit_test(test_c3_inside_instructions),
		cmocka_unit_test(test_tail_jump),
		cmocka_unit_test(test_never_returns),
		cmocka_unit_test(test_does_not_decode),
		cmocka_unit_test(test_far_ret),
		cmocka_unit_test(test_three_rets_truncate),
		cmocka_unit_test(test_only_padding),
		cmocka_unit_test(test_is_boundary),
		cmocka_unit_test(test_disasm_one),
		cmocka_unit_test(test_avx512),
		cmocka_unit_test(test_boundaries),
		cmocka_unit_test(test_prefixed_and_far_rets),
		cmocka_unit_test(test_disasm_avx512),
		cmocka_unit_test(test_int3_runs),
		cmocka_unit_test(test_random_bytes_agree),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
