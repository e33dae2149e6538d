/* Structures and constants shared by retop.bpf.c and user space. */
#ifndef RETOP_BPF_SHARED_H
#define RETOP_BPF_SHARED_H

#ifndef __u64
#include <linux/types.h>
#endif

/* Slots of the per-slot arrays (a power of two: BPF masks indices with
 * it); the per-function maps are sized to --max-functions before load.
 * Functions traced at once: one slot fewer, the last is the calibration's
 * (cal_slot); the CLI default (--max-functions) is lower. */
#define RETOP_MAX_FUNCS 2048
#define RETOP_MAX_TRACED (RETOP_MAX_FUNCS - 1)
/* Calls in flight held in the first in-flight map; more spill into a
 * second one (bpf/retop.bpf.c, inflight). */
#define RETOP_INFLIGHT_FIRST 8192
/* RET sites per function; a function with more is traced entry-only. */
#define RETOP_MAX_RET_SITES 64

/* Log-linear histogram (HDR style).  Values below 2^(SUB_BITS+1) ns get a
 * bucket each; above, every power of two is split into 2^SUB_BITS linear
 * sub-buckets, so a bucket is at most 1/32 of its value wide: a percentile
 * read at a bucket's midpoint is within ~1.6% of the truth, and always
 * within 3.2%. */
#define RETOP_HIST_SUB_BITS 5
#define RETOP_HIST_SUB (1u << RETOP_HIST_SUB_BITS)
/* Highest tracked magnitude: 2^42 ns (about 73 minutes); longer is clamped. */
#define RETOP_HIST_MAX_MSB 42
#define RETOP_HIST_BUCKETS ((RETOP_HIST_MAX_MSB - RETOP_HIST_SUB_BITS) * RETOP_HIST_SUB + 2 * RETOP_HIST_SUB)

/* Bucket of a duration, written without loops or clz so that the BPF
 * verifier and a unit test both accept the same code. */
static inline __u32 retop_hist_bucket(__u64 v)
{
	__u64 x = v;
	__u32 msb = 0;

	if (v < 2 * RETOP_HIST_SUB)
		return (__u32)v;
	if (x >> 32) { x >>= 32; msb += 32; }
	if (x >> 16) { x >>= 16; msb += 16; }
	if (x >> 8) { x >>= 8; msb += 8; }
	if (x >> 4) { x >>= 4; msb += 4; }
	if (x >> 2) { x >>= 2; msb += 2; }
	if (x >> 1) { msb += 1; }
	if (msb > RETOP_HIST_MAX_MSB)
		return RETOP_HIST_BUCKETS - 1;
	/* v >> shift lies in [SUB, 2*SUB): the top SUB_BITS+1 bits of v. */
	return (msb - RETOP_HIST_SUB_BITS) * RETOP_HIST_SUB + (__u32)(v >> (msb - RETOP_HIST_SUB_BITS));
}

/* Attach cookie: which function and which site fired.  A RET site is its
 * index in the function's ret_hits and the binary it is in (RETOP_RET_SITE);
 * an entry is RETOP_SITE_ENTRY with RETOP_ENTRY_* bits. */
#define RETOP_COOKIE(func_id, site) (((__u64)(func_id) << 32) | (__u32)(site))
#define RETOP_COOKIE_FUNC(c) ((__u32)((c) >> 32))
#define RETOP_COOKIE_SITE(c) ((__u32)(c))
/* Binaries one session traces a function in: the first, and the files a
 * deploy renamed over its path while processes still ran the old ones.
 * Return addresses are named with the index of the binary they came from. */
#define RETOP_MAX_IMAGES 8
/* Processes whose exec() the BPF side watches: those with calls in flight
 * (and the -p target). */
#define RETOP_EXEC_PROCS 4096
#define RETOP_RET_SITE(image, index) (((__u32)(image) << 8) | (__u32)(index))
#define RETOP_SITE_INDEX(s) ((s) & 0xFFu)
#define RETOP_SITE_IMAGE(s) (((s) >> 8) & 0xFFu)
#define RETOP_SITE_ENTRY 0xFFFF0000u
#define RETOP_SITE_IS_ENTRY(s) (((s) & 0xFFFF0000u) == RETOP_SITE_ENTRY)
/* The entry of a function traced entry-only: counted, never kept in flight
 * (no RET would ever take it out; it would only fill the map). */
#define RETOP_ENTRY_ONLY 0x1u
/* The probe sits on the stack-check prologue's conditional jump, whose
 * condition (bits 8-11, x86's cc nibble) is known: taken, the runtime grows
 * the stack and the function starts again from its entry (a restart of the
 * same call, not a new one). */
#define RETOP_ENTRY_JCC 0x2u
/* The kernel single-steps the entry probe's instruction out of line (two
 * traps a hit) instead of emulating it (one trap): its hits cost more. */
#define RETOP_ENTRY_STEPPED 0x4u
#define RETOP_ENTRY_CC(s) (((s) >> 8) & 0xFu)
#define RETOP_ENTRY_SITE(flags, cc) (RETOP_SITE_ENTRY | (flags) | ((__u32)(cc) << 8))

/* x86's condition codes, as the kernel's emulation of a jcc evaluates
 * them: is the jump with condition cc taken under EFLAGS f? */
#define RETOP_EFLAGS_CF 0x001u
#define RETOP_EFLAGS_PF 0x004u
#define RETOP_EFLAGS_ZF 0x040u
#define RETOP_EFLAGS_SF 0x080u
#define RETOP_EFLAGS_OF 0x800u
static inline int retop_jcc_taken(__u64 f, __u32 cc)
{
	int r;

	switch (cc >> 1) {
	case 0: r = !!(f & RETOP_EFLAGS_OF); break;
	case 1: r = !!(f & RETOP_EFLAGS_CF); break;
	case 2: r = !!(f & RETOP_EFLAGS_ZF); break;
	case 3: r = !!(f & (RETOP_EFLAGS_CF | RETOP_EFLAGS_ZF)); break;
	case 4: r = !!(f & RETOP_EFLAGS_SF); break;
	case 5: r = !!(f & RETOP_EFLAGS_PF); break;
	case 6: r = !(f & RETOP_EFLAGS_SF) != !(f & RETOP_EFLAGS_OF); break;
	default: r = (f & RETOP_EFLAGS_ZF) || (!(f & RETOP_EFLAGS_SF) != !(f & RETOP_EFLAGS_OF)); break;
	}
	return (cc & 1) ? !r : r;
}

/* What a probe hit costs the target depends on how the kernel runs the
 * probed instruction (docs/UPROBES.md): an emulated entry (the prologue's
 * jump), a single-stepped entry, a RET (always single-stepped).  User space
 * writes the cost of each kind in hit_cost_ns; each hit adds its kind's cost
 * to its goroutine's trap_ns, and a RET takes the traps of the hits inside
 * its call (traced callees) out of the call's duration. */
#define RETOP_HIT_ENTRY_EMULATED 0
#define RETOP_HIT_ENTRY_STEPPED 1
#define RETOP_HIT_RET 2
#define RETOP_HIT_KINDS 3
/* A call's timed window runs from the end of its entry's program to the
 * start of its RET's: inside it are the kernel's part of the entry hit
 * after the program (the return to the function, and the single step of
 * a stepped entry) and of the RET hit before it (the trap, up to the
 * program).  own_window_ns[RETOP_OWN_*] (set by user space, timed
 * on retop's own code) is taken out of every call's duration. */
#define RETOP_OWN_EMULATED 0
#define RETOP_OWN_STEPPED 1
#define RETOP_OWN_KINDS 2
/* User space's calibration probes, on retop's own code, run the same
 * programs on a slot of their own (cal_slot, the one after the traced
 * functions'): their hits count in cal_hits, each leaves its program's run
 * time in cal_prog_ns, and a paired RET the call's window less the hits
 * inside it (its entry program's tail) in cal_window_ns.  Their calls
 * have no callers and no slowest calls.  So the traced functions are at
 * most RETOP_MAX_FUNCS - 1. */

/* The estimate's sampling windows (the overhead budget's last resort): time
 * is cut into slices of gate_len ns from gate_base; slice k is sampled when
 * gate_on[slot][k % RETOP_GATE_RING] == k + 1.  Calls begun in a sampled
 * slice are counted in gate_n[slot][k % RETOP_GATE_RING] and timed; the
 * others are neither (their entries still trap: user space removes the
 * probe between sampled slices). */
#define RETOP_GATE_RING 4
/* A sampled slice counts at most gate_cap[slot] calls (0: no limit): the
 * entry that reaches it wakes the engine, which takes the probe out for
 * the rest of the slice.  Why a wake-up came (its event's value): */
#define RETOP_WAKE_BUDGET 1 /* the hits reached wake_at, or an exec() */
#define RETOP_WAKE_SLICE 2  /* a sampled slice reached its cap */

/* In-flight calls: the same key at the entry and at every RET, even when the
 * goroutine moved to another thread or its stack was copied (docs/ARCHITECTURE.md). */
struct retop_inflight_key {
	__u32 tgid;
	__u32 func_id;
	__u64 g;     /* runtime.g pointer (R14 on amd64, Go >= 1.17) */
	__u64 depth; /* g.stack.hi - SP: preserved by stack copies */
};

/* start_ns of a record that holds no call: the sweep claimed the call as an
 * orphan (ORPHANED), or its RET is taking it out (RETURNING).  The sweep's
 * claim (retop_claim), the RET and an entry over the record each change
 * start_ns by compare-and-swap from the value they read, so exactly one of
 * them wins a call; the sweep never deletes a record that a goroutine may
 * still use, and puts nothing back.  The record of a claimed call stays,
 * as a tombstone, until its goroutine reaches the same key again (an entry
 * reuses it, a RET removes it) or its process exits. */
#define RETOP_START_ORPHANED 0ull
#define RETOP_START_RETURNING 1ull
#define RETOP_START_LIVE(s) ((s) > RETOP_START_RETURNING)

struct retop_inflight_val {
	__u64 start_ns; /* bpf_ktime_get_ns() at the first entry of the call;
			 * never <= RETOP_START_RETURNING for a call */
	__u64 stack_hi; /* g.stack.hi at the entry (a stack copy changes it) */
	__u32 tid : 30;
	__u32 stepped : 1;    /* its entry probe is single-stepped (RETOP_ENTRY_STEPPED) */
	__u32 restarting : 1; /* the prologue's jump was taken: the entry comes again */
	__u32 hits0;	/* the goroutine's probe hits after this entry's (low bits) */
	__u64 trap0;	/* the goroutine's trap_ns after this entry's hit */
};

/* The sweep's compare-and-claim (retop_claim, a syscall program run by
 * user space): the record of key is turned into a tombstone only if it
 * still holds the call that began at start_ns. */
struct retop_claim {
	struct retop_inflight_key key;
	__u64 start_ns;
	__u32 claimed; /* out: 1 the call was claimed (an orphan), 0 not */
	__u32 pad;
};

/* A goroutine of a process: g pointers repeat across processes of one
 * binary (-x), so the process is part of the key. */
struct retop_goroutine_key {
	__u32 tgid;
	__u32 pad;
	__u64 g;
};

/* What the RET probes and runtime.goexit1 saw of a goroutine: evidence that
 * in-flight frames of it are dead.  While a frame at depth D is live, all
 * code on its goroutine runs deeper than D, so a RET at a depth <= D after
 * the frame began proves it unwound (a recovered panic, runtime.Goexit). */
struct retop_goroutine_val {
	__u64 ret_depth, ret_ns; /* the latest RET */
	__u64 min_depth, min_ns; /* the shallowest RET, the latest at that depth */
	__u64 exit_ns;		 /* runtime.goexit1: every frame before is dead */
	__u64 hits;		 /* probe hits on it: every entry and RET of a traced function */
	__u64 trap_ns;		 /* what those hits cost it: hit_cost_ns of their kind
				  * (the kernel's part) plus each program's own run
				  * time, as it measured it */
	__u64 born_ns;		 /* when this record was made: a call begun before it
				  * had its hits counted on a record the LRU map
				  * evicted (hits and trap_ns are not its) */
};

/* The first entry a goroutine made into a function since it was attached
 * (gen tells the attach apart): a RET with no entry, shallower than that,
 * belongs to a call that began before the entry probe was in. */
struct retop_first_key {
	__u32 tgid;
	__u32 func_id;
	__u64 g;
};

struct retop_first_val {
	__u64 depth;
	__u32 gen;
	__u32 pad;
};

/* Per-function counters, updated with atomic adds; user space reads them. */
struct retop_func_stats {
	__u64 calls;	  /* paired returns: the timed calls */
	__u64 begun;	  /* calls begun: entry hits less the prologue's restarts
			   * (exact where the entry is at the prologue's jump, or
			   * where the function has no restart; else as far as the
			   * in-flight map tells a restart) */
	__u64 untimed;	  /* calls begun while the slot was not timing (slot_record
			   * 0): counted at their entry, no duration */
	__u64 sum_ns;
	__u64 min_ns;	  /* 0 until the first call */
	__u64 max_ns;
	__u64 entries;	  /* entry probe hits */
	__u64 rets;	  /* RET probe hits, every site (the sum of ret_hits) */
	__u64 reentries;  /* entry again on a copied stack (morestack restart) */
	__u64 abandoned;  /* entry again on the same stack: the earlier call was
			   * unwound (panic) and never returns: an orphan */
	__u64 unmatched;  /* RET hits with no entry the attach explains: a lost
			   * (dropped) call's return, or a probe that missed */
	__u64 dropped;	  /* calls lost: the in-flight map was full, or the
			   * goroutine could not be read at the entry */
	__u64 before_attach; /* RET hits of calls that began before the entry
			      * probe was in (or after it was removed): expected */
	__u64 nested_hits; /* probe hits inside its paired calls (traced callees) */
	__u64 trap_ns;	   /* the cost of those hits, taken out of its durations
			    * (each call's at most down to 0) */
	__u64 own_ns;	   /* the part of each call's own entry and RET traps
			    * inside its timed window (own_window_ns), taken out
			    * of its durations too */
	__u64 prog_ns;	   /* the run time of this function's probe programs,
			    * every hit (retop's cost to the target, with the
			    * kernel's part of each hit, hit_cost_ns) */
	__u64 slow_over;  /* calls at least --slow long (0 when --slow is off) */
	__u64 slow_lost;  /* slow calls not shipped: the ring buffer was full */
	__u64 evicted;	  /* paired calls whose goroutine record or first entry
			   * was evicted (LRU maps full) during the call: their
			   * probe_hits_inside, and the unmatched / before-attach
			   * split of their goroutine's RETs, are not exact */
	__u64 callers_lost; /* timed calls not counted by caller: no room in the
			     * caller map (its calls are in calls all the same) */
	__u64 args_lost;  /* calls whose arguments found no room: shipped without */
	__u64 inlined;	  /* hits of its inline marks: inlined calls begun
			   * (src/inline_marks.h), never timed */
	__u64 errors;	  /* paired calls that returned a non-nil error
			   * (error_reg), of calls */
	__u64 hist_lost;  /* timed calls with no place in func_hist (no memory):
			   * in calls and sum_ns, not in the percentiles */
	__u64 ret_hits[RETOP_MAX_RET_SITES]; /* every RET hit, paired or not */
};

/* A function's durations (the log-linear histogram), in func_hist: made at
 * its first timed call, so that a thousand functions traced at rest hold
 * no histogram (10 KiB each).  Each bucket is added to before calls, so a
 * read after calls holds at least those calls. */
struct retop_func_hist {
	__u64 hist[RETOP_HIST_BUCKETS];
};

/* Latency by caller.  A caller is the return address at [SP] (the same at
 * the entry and at every RET of a frame); user space resolves it to the
 * calling function.  Each function keeps its own histogram for its first
 * RETOP_CALLER_SITES call sites; calls from any later site are counted
 * under return address 0, "other", so the map stays bounded. */
#define RETOP_CALLER_SITES 24
#define RETOP_CALLER_OTHER 0

struct retop_caller_key {
	__u16 func_id;
	__u16 image; /* the binary whose code holds ret_addr */
	__u32 gen; /* slot_gen: entries of the slot's earlier functions are stale */
	__u64 ret_addr;
};

struct retop_caller_stats {
	__u64 calls;
	__u64 sum_ns;
	__u64 errors; /* of calls, those that returned a non-nil error */
	__u64 hist[RETOP_HIST_BUCKETS];
};

/* Failing calls.  Per slot, user space sets error_reg before the probes go
 * in: the integer register (RETOP_ERROR_REG: its index plus one, 0 for
 * none) that holds the first word of the function's error result at a RET,
 * its itab, 0 only for a nil error (src/args.h).  A paired RET reads it:
 * a failing call is counted in func_stats.errors and its caller's errors,
 * and in the slot's error_stats (made by user space, zeroed, before the
 * probes go in) with its duration and its concrete type: the itab's
 * second word, the runtime._type, the first RETOP_ERROR_TYPES types each
 * counted on their own, later ones in `other`. */
#define RETOP_ERROR_REG(r) ((__u8)((r) + 1))
#define RETOP_ERROR_TYPES 8
#define RETOP_ITAB_TYPE_OFFSET 8 /* itab: {inter, _type, hash, fun...} in every release */

struct retop_error_type {
	__u64 type; /* the _type's address in the process; 0: a free place */
	__u64 calls;
};

struct retop_error_stats {
	__u64 calls; /* failing calls, as counted here (func_stats.errors counts
		      * them even when this has no entry) */
	__u64 sum_ns;
	__u64 other; /* failing calls of a type that found no place, or whose
		      * type could not be read */
	struct retop_error_type types[RETOP_ERROR_TYPES];
	__u64 hist[RETOP_HIST_BUCKETS];
};

/* The slowest calls.  Per function, the RETOP_SLOW_N longest durations of
 * the current interval are kept in BPF (user space zeroes them at every
 * refresh); a call longer than the shortest of them is shipped through a
 * ring buffer, so user space sees a superset of the N slowest without any
 * work for the other calls. */
#define RETOP_SLOW_N 10

/* Arguments, for the functions the operator asked for: the register ABI's
 * nine integer argument registers at the entry, and the first bytes of up
 * to RETOP_ARG_STRS strings (pointer in a register, length in the next). */
#define RETOP_ARG_REGS 9
#define RETOP_ARG_STRS 2
#define RETOP_ARG_STR_LEN 64
#define RETOP_ARG_NONE 0xFFu

struct retop_args {
	__u64 regs[RETOP_ARG_REGS]; /* RAX, RBX, RCX, RDI, RSI, R8, R9, R10, R11 */
	__u32 str_len[RETOP_ARG_STRS]; /* bytes read into str */
	char str[RETOP_ARG_STRS][RETOP_ARG_STR_LEN];
};

/* Per slot, set by user space before the attach: whether arguments are
 * captured at the entry and results read at the RET of a shipped call, and
 * which registers hold a string's pointer (results use the same registers
 * as arguments, from RAX on). */
struct retop_args_spec {
	__u8 on;
	__u8 str_reg[RETOP_ARG_STRS]; /* RETOP_ARG_NONE: none */
	__u8 res_on;
	__u8 res_str_reg[RETOP_ARG_STRS];
	__u8 pad[2];
};

struct retop_slow_event {
	__u16 func_id;
	__u16 image; /* the binary whose code holds ret_addr */
	__u32 gen;
	__u32 tgid;
	__u32 tid; /* the thread the call returned on */
	__u64 start_ns; /* bpf_ktime_get_ns() at the entry */
	__u64 dur_ns;
	__u64 goid;	/* 0 when the offset of runtime.g's goid is unknown */
	__u64 ret_addr; /* the caller */
	__u8 has_args;
	__u8 has_results;
	__u8 over;	/* at least --slow long: shipped whatever its rank */
	__u8 pad[5];
	struct retop_args args;	   /* at the entry */
	struct retop_args results; /* at the RET */
};

#endif
