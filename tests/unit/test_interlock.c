/* Unit tests for the interlock's building blocks on fixed bytes: what the
 * kernel's x86 uprobe code would refuse or mis-execute, the boundary map
 * of a linear decode, the pc-to-SP table walk, R14 writes in assembly, and
 * the runtime functions that must not be probed.
 *
 * Instruction bytes are written by hand with their disassembly beside them
 * (checked against `objdump -D -b binary -mi386:x86-64 -M intel`).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "entry_probe.h"
#include "gopclntab.h"
#include "interlock.h"
#include "log.h"
#include "retsites.h"
#include "runtime_rules.h"
#include "uprobe_insn.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ADDR 0x401000u

static const char *kcheck(const uint8_t *b, size_t n)
{
	return uprobe_insn_check(b, n);
}

#define KOK(...)                                                                                   \
	do {                                                                                       \
		static const uint8_t b_[] = {__VA_ARGS__};                                         \
		const char *why_ = kcheck(b_, sizeof(b_));                                         \
		if (why_)                                                                          \
			fail_msg("refused %02x..: %s", b_[0], why_);                               \
	} while (0)
#define KNO(want, ...)                                                                             \
	do {                                                                                       \
		static const uint8_t b_[] = {__VA_ARGS__};                                         \
		const char *why_ = kcheck(b_, sizeof(b_));                                         \
		assert_non_null(why_);                                                             \
		assert_non_null(strstr(why_, want));                                               \
	} while (0)

/* What Go puts at entries and RETs passes. */
static void test_kernel_go_sites(void **state)
{
	(void)state;
	KOK(0x49, 0x3b, 0x66, 0x10);	   /* cmp rsp, qword ptr [r14 + 0x10] */
	KOK(0x55);			   /* push rbp */
	KOK(0x41, 0x56);		   /* push r14: emulated, correctly */
	KOK(0x48, 0x83, 0xec, 0x18);	   /* sub rsp, 0x18 */
	KOK(0x4c, 0x8d, 0x64, 0x24, 0xf8); /* lea r12, [rsp - 8] */
	KOK(0xc3);			   /* ret */
	KOK(0xf3, 0xc3);		   /* repz ret */
	KOK(0xc2, 0x08, 0x00);		   /* ret 8 */
	KOK(0x90);			   /* nop: emulated as a nop, rightly */
	KOK(0x48, 0x90);		   /* xchg rax, rax (REX.W only): a nop */
	KOK(0xf3, 0x90);		   /* pause: a hint, run as a nop */
	KOK(0xe8, 0x00, 0x10, 0x00, 0x00); /* call rel32: emulated */
	KOK(0xeb, 0xfe);		   /* jmp rel8 */
	KOK(0x64, 0x48, 0x8b, 0x04, 0x25, 0xf8, 0xff, 0xff, 0xff); /* mov rax, fs:[-8] */
}

/* The kernel treats every opcode 0x90 as a NOP (branch_setup_xol_ops):
 * with REX.B it is xchg rax, r8-r15, and the exchange would be lost. */
static void test_kernel_rex_b_nop(void **state)
{
	(void)state;
	KNO("REX.B", 0x49, 0x90); /* xchg r8, rax: runtime.gcWriteBarrierR8 */
	KNO("REX.B", 0x41, 0x90); /* xchg r8d, eax */
	KNO("REX.B", 0x4d, 0x90); /* xchg r8, rax with REX.R too */
	KNO("REX.B", 0x66, 0x41, 0x90);
}

/* Which probed instructions the kernel emulates (one trap a hit) and which
 * it single-steps (two): the cost table's kinds. */
static void test_kernel_emulates(void **state)
{
	static const uint8_t jbe8[] = {0x76, 0x2f}, jbe32[] = {0x0f, 0x86, 0x10, 0x01, 0x00, 0x00},
			     jmp8[] = {0xeb, 0x05}, call32[] = {0xe8, 0, 0, 0, 0}, nop[] = {0x90},
			     push_rbp[] = {0x55}, push_r12[] = {0x41, 0x54},
			     cmp_g[] = {0x49, 0x3b, 0x66, 0x10}, lea[] = {0x48, 0x8d, 0x04, 0x40},
			     ret[] = {0xc3}, push_r12_w[] = {0x49, 0x54}, sub_rsp[] = {0x48, 0x83, 0xec, 0x18};
	(void)state;
	assert_true(uprobe_insn_emulated(jbe8, sizeof(jbe8)));
	assert_true(uprobe_insn_emulated(jbe32, sizeof(jbe32)));
	assert_true(uprobe_insn_emulated(jmp8, sizeof(jmp8)));
	assert_true(uprobe_insn_emulated(call32, sizeof(call32)));
	assert_true(uprobe_insn_emulated(nop, sizeof(nop)));
	assert_true(uprobe_insn_emulated(push_rbp, sizeof(push_rbp)));
	assert_true(uprobe_insn_emulated(push_r12, sizeof(push_r12)));
	/* Go's stack check, a leaf's first lea, RET, a push with REX.W, a
	 * frame's sub: single-stepped. */
	assert_false(uprobe_insn_emulated(cmp_g, sizeof(cmp_g)));
	assert_false(uprobe_insn_emulated(lea, sizeof(lea)));
	assert_false(uprobe_insn_emulated(ret, sizeof(ret)));
	assert_false(uprobe_insn_emulated(push_r12_w, sizeof(push_r12_w)));
	assert_false(uprobe_insn_emulated(sub_rsp, sizeof(sub_rsp)));
	assert_false(uprobe_insn_emulated(jbe32, 1)); /* truncated */
}

static void test_kernel_refused(void **state)
{
	(void)state;
	KNO("lock prefix", 0xf0, 0x48, 0x0f, 0xc1, 0x03);	  /* lock xadd [rbx], rax */
	KNO("segment-override", 0x2e, 0x48, 0x8b, 0x03);	  /* mov rax, cs:[rbx] */
	KNO("segment-override", 0x3e, 0xff, 0xe0);		  /* notrack jmp rax */
	KNO("0x66 prefix", 0x66, 0xe8, 0x00, 0x00);		  /* callw */
	KNO("0x66 prefix", 0x66, 0xeb, 0x00);			  /* jmpw */
	KNO("0x66 prefix", 0x66, 0x0f, 0x84, 0x00, 0x00);	  /* je rel16 */
	KNO("good_insns_64", 0xcc);				  /* int3: padding, never code */
	KNO("good_insns_64", 0xf4);				  /* hlt */
	KNO("good_insns_64", 0x62, 0xf1, 0x7d, 0x48, 0x6f, 0x00); /* EVEX */
	KNO("good_2byte_insns", 0x0f, 0x05);			  /* syscall */
	KNO("good_2byte_insns", 0x0f, 0x0b);			  /* ud2 */
	KNO("good_2byte_insns", 0x0f, 0xae, 0xf0);		  /* mfence */
	KNO("multi-byte NOP", 0x0f, 0x1f, 0x44, 0x00, 0x00);	  /* nop5 */
	KNO("VEX", 0xc5, 0xf8, 0x77);				  /* vzeroupper */
	KNO("mov to ss", 0x8e, 0xd0);				  /* mov ss, eax */
	KNO("truncated", 0x66);
}

/* The boundary map of a linear decode, and where it stops. */
static void test_boundaries(void **state)
{
	static const uint8_t code[] = {
	    0x48, 0x83, 0xec, 0x18, /* 0x0: sub rsp, 0x18 */
	    0x49, 0x90,		    /* 0x4: xchg r8, rax */
	    0xc3,		    /* 0x6: ret */
	    0xcc, 0xcc,		    /* 0x7: int3 x2 */
	};
	static const uint8_t cut[] = {
	    0x48, 0x89, 0xc8, /* 0x0: mov rax, rcx */
	    0x48, 0x8b,	      /* 0x3: mov ... cut short */
	};
	uint8_t bits[4];
	struct retsites_engine *eng = *state;

	memset(bits, 0, sizeof(bits));
	assert_int_equal(retsites_boundaries(eng, code, sizeof(code), ADDR, bits), sizeof(code));
	/* starts at 0, 4, 6, 7, 8 */
	assert_int_equal(bits[0], 0x01 | 0x10 | 0x40 | 0x80);
	assert_int_equal(bits[1], 0x01);
	memset(bits, 0, sizeof(bits));
	assert_int_equal(retsites_boundaries(eng, cut, sizeof(cut), ADDR, bits), 3);
	assert_int_equal(bits[0], 0x01);
}

/* retsites_find() then retsites_boundaries() on the same bytes: the same
 * answer as a decode of its own. */
static void test_boundaries_after_find(void **state)
{
	static const uint8_t code[] = {
	    0x48, 0x85, 0xc0,		  /* 0x0: test rax, rax */
	    0x74, 0x03,			  /* 0x3: je 0x8 */
	    0x31, 0xc0,			  /* 0x5: xor eax, eax */
	    0xc3,			  /* 0x7: ret */
	    0xb8, 0x01, 0x00, 0x00, 0x00, /* 0x8: mov eax, 1 */
	    0xc3,			  /* 0xd: ret */
	    0x48, 0x8b,			  /* 0xe: cut short */
	};
	uint8_t a[2] = {0}, b[2] = {0};
	struct retsites r;
	struct retsites_engine *eng = *state, *other;

	assert_int_equal(retsites_engine_open(&other, NULL), 0);
	assert_int_equal(retsites_find(eng, code, sizeof(code), ADDR, &r), 0);
	assert_int_equal(retsites_boundaries(eng, code, sizeof(code), ADDR, a), 0xe);
	assert_int_equal(retsites_boundaries(other, code, sizeof(code), ADDR, b), 0xe);
	assert_memory_equal(a, b, sizeof(a));
	assert_int_equal(a[0], 0x01 | 0x08 | 0x20 | 0x80);
	assert_int_equal(a[1], 0x01 | 0x20);
	/* Used once: a second call decodes again, with the same result. */
	memset(a, 0, sizeof(a));
	assert_int_equal(retsites_boundaries(eng, code, sizeof(code), ADDR, a), 0xe);
	assert_memory_equal(a, b, sizeof(a));
	retsites_free(&r);
	retsites_engine_close(other);
}

/* A pc-to-SP table: delta 0 on [0,4), 8 on [4,0x10), 0 on [0x10,0x11). */
static void test_pcsp_walk(void **state)
{
	static const uint8_t tab[] = {
	    0x02, 0x04, /* value -1 + 1 = 0, for 4 bytes */
	    0x10, 0x0c, /* + 8 = 8, for 12 bytes */
	    0x0f, 0x01, /* - 8 = 0, for 1 byte */
	    0x00,	/* end */
	};
	struct gopclntab_pciter it = {.p = tab, .avail = sizeof(tab), .quantum = 1, .val = -1};
	uint64_t s, e;
	int32_t v;

	(void)state;
	assert_int_equal(gopclntab_pciter_next(&it, &s, &e, &v), 1);
	assert_int_equal(s, 0);
	assert_int_equal(e, 4);
	assert_int_equal(v, 0);
	assert_int_equal(gopclntab_pciter_next(&it, &s, &e, &v), 1);
	assert_int_equal(s, 4);
	assert_int_equal(e, 0x10);
	assert_int_equal(v, 8);
	assert_int_equal(gopclntab_pciter_next(&it, &s, &e, &v), 1);
	assert_int_equal(s, 0x10);
	assert_int_equal(e, 0x11);
	assert_int_equal(v, 0);
	assert_int_equal(gopclntab_pciter_next(&it, &s, &e, &v), 0);
	assert_int_equal(gopclntab_pciter_next(&it, &s, &e, &v), 0);

	/* Truncated inside a pair: an error, never a guess. */
	struct gopclntab_pciter cut = {.p = tab, .avail = 3, .quantum = 1, .val = -1};
	assert_int_equal(gopclntab_pciter_next(&cut, &s, &e, &v), 1);
	assert_int_equal(gopclntab_pciter_next(&cut, &s, &e, &v), -EINVAL);
}

static void test_writes_r14(void **state)
{
	(void)state;
	assert_true(runtime_rules_writes_r14("mov r14, rax"));
	assert_true(runtime_rules_writes_r14("mov r14d, ecx"));
	assert_true(runtime_rules_writes_r14("pop r14"));
	assert_true(runtime_rules_writes_r14("xchg rax, r14"));
	assert_true(runtime_rules_writes_r14("rorx r14, rdx, 0x10"));
	assert_true(runtime_rules_writes_r14("mov r14, qword ptr fs:[0xfffffffffffffff8]"));
	assert_false(runtime_rules_writes_r14("mov rax, r14"));
	assert_false(runtime_rules_writes_r14("cmp r14, rax"));
	assert_false(runtime_rules_writes_r14("push r14"));
	assert_false(runtime_rules_writes_r14("mov qword ptr [r14 + 0x10], rax"));
	assert_false(runtime_rules_writes_r14("xchg rax, qword ptr [r14]"));
	assert_false(runtime_rules_writes_r14("mov r15, rax"));
	assert_false(runtime_rules_writes_r14("ret"));
}

static void test_runtime_rules(void **state)
{
	(void)state;
	assert_non_null(runtime_rules_check("runtime.gcWriteBarrierR8", 0));
	assert_non_null(runtime_rules_check("runtime.gcWriteBarrier2", 0));
	assert_non_null(runtime_rules_check("runtime.morestack_noctxt", 0));
	assert_non_null(runtime_rules_check("runtime.systemstack_switch", 0));
	assert_non_null(runtime_rules_check("runtime.systemstack", 0));
	assert_non_null(runtime_rules_check("runtime.debugCall1024", 0));
	assert_non_null(runtime_rules_check("runtime.debugCallV2", 0));
	assert_non_null(runtime_rules_check("runtime.duffzero", 0));
	assert_non_null(runtime_rules_check("_rt0_amd64_linux", 0));
	/* Go code that only shares a prefix traces. */
	assert_null(runtime_rules_check("runtime.debugCallCheck", 0));
	assert_null(runtime_rules_check("runtime.goexit1", 0));
	/* mcall's targets run on g0 and never return. */
	assert_non_null(strstr(runtime_rules_check("runtime.park_m", 0), "g0"));
	assert_non_null(strstr(runtime_rules_check("runtime.goexit0", 0), "never returns"));
	assert_null(runtime_rules_check("runtime.park_mx", 0));
	assert_null(runtime_rules_check("runtime.asyncPreempt2", 0));
	assert_null(runtime_rules_check("main.main", 0));
	/* The toolchain's own flags. */
	assert_non_null(strstr(runtime_rules_check("x.f", GOPCLNTAB_FLAG_TOPFRAME), "TOPFRAME"));
	assert_non_null(strstr(runtime_rules_check("x.f", GOPCLNTAB_FLAG_SPWRITE), "SPWRITE"));
	assert_null(runtime_rules_check("x.f", GOPCLNTAB_FLAG_ASM));
}

/* runtime.memequal's shape: a RET, and a jmp to memeqbody outside. */
static void test_tail_jump(void **state)
{
	static const uint8_t code[] = {
	    0x48, 0x39, 0xd8,		  /* 0x0: cmp rax, rbx */
	    0x74, 0x08,			  /* 0x3: je 0xd (inside) */
	    0x48, 0x89, 0xcb,		  /* 0x5: mov rbx, rcx */
	    0xe9, 0x10, 0x00, 0x00, 0x00, /* 0x8: jmp 0x1d (outside) */
	    0xb8, 0x01, 0x00, 0x00, 0x00, /* 0xd: mov eax, 1 */
	    0xc3,			  /* 0x12: ret */
	};
	static const uint8_t inside[] = {
	    0xeb, 0x01, /* 0x0: jmp 0x3 */
	    0xcc,	/* 0x2: int3 */
	    0xc3,	/* 0x3: ret */
	};
	/* An E9 byte inside another instruction is no jmp. */
	static const uint8_t operand[] = {
	    0xb8, 0xe9, 0x00, 0x01, 0x00, /* 0x0: mov eax, 0x100e9 */
	    0xc3,			  /* 0x5: ret */
	};
	struct retsites_engine *eng = *state;
	uint8_t bits[4];
	int64_t target = 0;

	memset(bits, 0, sizeof(bits));
	retsites_boundaries(eng, code, sizeof(code), ADDR, bits);
	assert_int_equal(interlock_tail_jump(code, bits, sizeof(code), &target), 8);
	assert_int_equal(target, 0x1d);
	memset(bits, 0, sizeof(bits));
	retsites_boundaries(eng, inside, sizeof(inside), ADDR, bits);
	assert_int_equal(interlock_tail_jump(inside, bits, sizeof(inside), &target), -1);
	memset(bits, 0, sizeof(bits));
	retsites_boundaries(eng, operand, sizeof(operand), ADDR, bits);
	assert_int_equal(interlock_tail_jump(operand, bits, sizeof(operand), &target), -1);
}

/* Only interlock_approve() makes a verdict the tracer accepts. */
static void test_seal(void **state)
{
	struct interlock_verdict v;

	(void)state;
	memset(&v, 0, sizeof(v));
	assert_false(interlock_sealed(&v));
	assert_false(interlock_sealed(NULL));
	v.entry_offset = 0x1000;
	v.seal = 0x1234;
	assert_false(interlock_sealed(&v));
}

static int setup(void **state)
{
	struct retsites_engine *eng;

	if (retsites_engine_open(&eng, NULL) != 0)
		return -1;
	*state = eng;
	return 0;
}

static int teardown(void **state)
{
	retsites_engine_close(*state);
	return 0;
}

/* The entry probe's place: the conditional jump of each form of Go's
 * stack-check prologue (bytes from Go 1.19-1.27 binaries), else the entry. */
static uint8_t place(void **state, const uint8_t *code, size_t n, uint64_t flat_end)
{
	uint8_t bits[16];

	memset(bits, 0, sizeof(bits));
	size_t stop = retsites_boundaries(*state, code, n, ADDR, bits);
	return entry_probe_place(code, bits, stop, flat_end);
}

static void test_entry_probe_place(void **state)
{
	static const uint8_t small[] = {
	    0x49, 0x3b, 0x66, 0x10, /* 0x0: cmp rsp, [r14+0x10] */
	    0x76, 0x1d,		    /* 0x4: jbe +0x1d */
	    0x55,		    /* 0x6: push rbp */
	    0xc3,		    /* 0x7: ret */
	};
	static const uint8_t framed[] = {
	    0x4c, 0x8d, 0x64, 0x24, 0xf8,	/* 0x0: lea r12, [rsp-8] */
	    0x4d, 0x3b, 0x66, 0x10,		/* 0x5: cmp r12, [r14+0x10] */
	    0x0f, 0x86, 0x10, 0x00, 0x00, 0x00, /* 0x9: jbe rel32 */
	    0xc3,				/* 0xf: ret */
	};
	static const uint8_t far[] = {
	    0x4c, 0x8d, 0xa4, 0x24, 0x78, 0xff, 0xff, 0xff, /* 0x0: lea r12, [rsp-0x88] */
	    0x4d, 0x3b, 0x66, 0x10,			    /* 0x8: cmp r12, [r14+0x10] */
	    0x76, 0x02,					    /* 0xc: jbe +2 */
	    0xc3,					    /* 0xe: ret */
	};
	static const uint8_t huge[] = {
	    0x49, 0x89, 0xe4,			/* 0x0: mov r12, rsp */
	    0x49, 0x81, 0xec, 0xa8, 0x1f, 0x00, 0x00, /* 0x3: sub r12, 0x1fa8 */
	    0x0f, 0x82, 0xdd, 0x00, 0x00, 0x00, /* 0xa: jb rel32 */
	    0xc3,				/* 0x10: ret */
	};
	static const uint8_t leaf[] = {
	    0x48, 0x8d, 0x0c, 0x40, /* 0x0: lea rcx, [rax+rax*2] */
	    0xc3,		    /* 0x4: ret */
	};
	static const uint8_t push_first[] = {
	    0x55,		    /* 0x0: push rbp (SP moves: never past it) */
	    0x49, 0x3b, 0x66, 0x10, /* 0x1: cmp rsp, [r14+0x10] */
	    0x76, 0x02,		    /* 0x5: jbe +2 */
	    0xc3,		    /* 0x7: ret */
	};
	static const uint8_t prefixed[] = {
	    0x49, 0x3b, 0x66, 0x10, /* 0x0: cmp rsp, [r14+0x10] */
	    0x66, 0x76, 0x02,	    /* 0x4: jbe with 0x66: the kernel refuses it */
	    0xc3,		    /* 0x7: ret */
	};

	assert_int_equal(place(state, small, sizeof(small), 6), 4);
	assert_int_equal(place(state, framed, sizeof(framed), 15), 9);
	assert_int_equal(place(state, far, sizeof(far), 14), 0xc);
	assert_int_equal(place(state, huge, sizeof(huge), 16), 0xa);
	assert_int_equal(place(state, leaf, sizeof(leaf), 4), 0);
	assert_int_equal(place(state, push_first, sizeof(push_first), 1), 0);
	assert_int_equal(place(state, prefixed, sizeof(prefixed), 7), 0);
	/* The pc-to-SP table says SP moved before the jump: the entry. */
	assert_int_equal(place(state, small, sizeof(small), 4), 0);
	/* Cut short before the jump ends: the entry. */
	assert_int_equal(place(state, small, 5, 6), 0);
}

/* A leaf's probe: its first emulated instruction, a few plain ones in. */
static uint8_t place_leaf(void **state, const uint8_t *code, size_t n, uint64_t flat_end)
{
	uint8_t bits[16];

	memset(bits, 0, sizeof(bits));
	size_t stop = retsites_boundaries(*state, code, n, ADDR, bits);
	return entry_probe_leaf(*state, code, bits, stop, flat_end, ADDR);
}

static void test_entry_probe_leaf(void **state)
{
	/* Go's loop of a frameless leaf (main.Leaf50us of tests/go/owntraps). */
	static const uint8_t loop[] = {
	    0x31, 0xc9,		    /* 0x0: xor ecx, ecx */
	    0xeb, 0x04,		    /* 0x2: jmp 0x8 */
	    0x48, 0xff, 0xc1,	    /* 0x4: inc rcx */
	    0x90,		    /* 0x7: nop */
	    0x48, 0x39, 0xd9,	    /* 0x8: cmp rcx, rbx */
	    0x7c, 0xf7,		    /* 0xb: jl 0x4 */
	    0xc3,		    /* 0xd: ret */
	};
	/* The loop comes back to the probe's jump: each call would hit it
	 * again and again. */
	static const uint8_t back[] = {
	    0x31, 0xc9,		    /* 0x0: xor ecx, ecx */
	    0x48, 0xff, 0xc1,	    /* 0x2: inc rcx */
	    0x48, 0x39, 0xd9,	    /* 0x5: cmp rcx, rbx */
	    0x7c, 0xf8,		    /* 0x8: jl 0x2 */
	    0xc3,		    /* 0xa: ret */
	};
	/* A load before it: it may fault (a nil pointer) before the probe. */
	static const uint8_t load[] = {
	    0x48, 0x8b, 0x08,	    /* 0x0: mov rcx, [rax] */
	    0xeb, 0x00,		    /* 0x3: jmp 0x5 */
	    0xc3,		    /* 0x5: ret */
	};
	/* SP written before it: the key at the probe is not the entry's. */
	static const uint8_t sp[] = {
	    0x48, 0x89, 0xc4,	    /* 0x0: mov rsp, rax */
	    0xeb, 0x00,		    /* 0x3: jmp 0x5 */
	    0xc3,		    /* 0x5: ret */
	};
	static const uint8_t straight[] = {
	    0x48, 0x83, 0xf0, 0x5a, /* 0x0: xor rax, 0x5a */
	    0xc3,		    /* 0x4: ret */
	};

	assert_int_equal(place_leaf(state, loop, sizeof(loop), sizeof(loop)), 2);
	assert_int_equal(place_leaf(state, back, sizeof(back), sizeof(back)), 0);
	assert_int_equal(place_leaf(state, load, sizeof(load), sizeof(load)), 0);
	assert_int_equal(place_leaf(state, sp, sizeof(sp), sizeof(sp)), 0);
	assert_int_equal(place_leaf(state, straight, sizeof(straight), sizeof(straight)), 0);
	/* The pc-to-SP table says SP moved before the jump ends. */
	assert_int_equal(place_leaf(state, loop, sizeof(loop), 3), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_entry_probe_leaf),
	    cmocka_unit_test(test_kernel_go_sites),
	    cmocka_unit_test(test_kernel_rex_b_nop),
	    cmocka_unit_test(test_kernel_refused),
	    cmocka_unit_test(test_kernel_emulates),
	    cmocka_unit_test(test_boundaries),
	    cmocka_unit_test(test_boundaries_after_find),
	    cmocka_unit_test(test_entry_probe_place),
	    cmocka_unit_test(test_pcsp_walk),
	    cmocka_unit_test(test_writes_r14),
	    cmocka_unit_test(test_runtime_rules),
	    cmocka_unit_test(test_tail_jump),
	    cmocka_unit_test(test_seal),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
