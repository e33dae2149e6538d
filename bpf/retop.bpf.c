// SPDX-License-Identifier: GPL-2.0
/* retop's kernel side: one program for every function entry, one for every
 * RET instruction.  The attach cookie says which function and which RET site
 * fired.  Nothing is sent to user space per call: counters and a log-linear
 * histogram per function are updated in place and read once a refresh. */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "retop.h"

char LICENSE[] SEC("license") = "GPL";

/* Offset of stack.hi in runtime.g: `stack` is g's first field in every Go
 * release ({lo, hi}), so this is a constant, not a setting. */
#define G_STACK_HI_OFFSET 8

/* Allocated per call (BPF_F_NO_PREALLOC): the kernel memory follows the
 * calls in flight, up to --max-in-flight (set before load).  A failed
 * insert, full or out of memory, is a dropped call.
 *
 * Two maps: the sweep reads the in-flight calls at every refresh, and a
 * batched read walks every bucket, one per entry the map may hold.  The
 * first RETOP_INFLIGHT_FIRST calls go to `inflight`, cheap to walk; only
 * calls past those spill into `inflight_spill` (the rest of
 * --max-in-flight), which user space reads only while it holds any
 * (spill_live).  A call's record stays in the map it went to. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, RETOP_INFLIGHT_FIRST); /* resized by user space before load */
	__type(key, struct retop_inflight_key);
	__type(value, struct retop_inflight_val);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1); /* resized by user space before load */
	__type(key, struct retop_inflight_key);
	__type(value, struct retop_inflight_val);
} inflight_spill SEC(".maps");

/* One row per slot, --max-functions of them (set before load); mmapped by
 * user space, which reads the counters without a syscall. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, RETOP_MAX_FUNCS);
	__type(key, __u32);
	__type(value, struct retop_func_stats);
} func_stats SEC(".maps");

/* Per slot, its histogram (retop.h): an entry made at the first timed
 * call (no memory is charged before), deleted by user space with the slot. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, RETOP_MAX_FUNCS); /* resized by user space before load */
	__type(key, __u32);
	__type(value, struct retop_func_hist);
} func_hist SEC(".maps");

/* A zeroed histogram to make entries from: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct retop_func_hist);
} hist_zero SEC(".maps");

/* When each goroutine last recovered from a panic (runtime.recovery): the
 * frames a panic unwound never return, and a recovery tells them apart
 * from a function restarted by the stack-check prologue. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192); /* resized by user space before load */
	__type(key, struct retop_goroutine_key);
	__type(value, __u64); /* bpf_ktime_get_ns() */
} recovered SEC(".maps");

/* Evidence that frames died (retop.h); read by the user-space sweep.
 * Preallocated (LRU maps must be): sized before load. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536); /* resized by user space before load */
	__type(key, struct retop_goroutine_key);
	__type(value, struct retop_goroutine_val);
} goroutines SEC(".maps");

/* The last entry each goroutine lost to a full map, and when: the
 * stack-check prologue restarts a function with the same key, and that
 * second entry is the same call, not another one lost. */
struct drop_mark {
	struct retop_inflight_key key;
	__u64 ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192); /* resized by user space before load */
	__type(key, struct retop_goroutine_key);
	__type(value, struct drop_mark);
} drop_marks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536); /* resized by user space before load */
	__type(key, struct retop_first_key);
	__type(value, struct retop_first_val);
} first_entry SEC(".maps");

/* Per slot, set by user space: the owner generation (a new function in the
 * slot: its callers and slowest calls start anew), the epoch (each time the
 * RET probes come back: which entries a goroutine made since), whether the
 * entry probe is being removed (RETs without entry are then expected), and
 * whether calls are timed (kept in flight for their RET) or only counted
 * at their entry (the overhead budget shed the RET probes). */
__u32 slot_gen[RETOP_MAX_FUNCS];
__u32 slot_epoch[RETOP_MAX_FUNCS];
__u32 slot_closing[RETOP_MAX_FUNCS];
__u32 slot_record[RETOP_MAX_FUNCS];
/* Calls of the slot in the in-flight map: the budget waits for them to
 * drain before it removes the RET probes.  User space's deletes count too. */
__s64 slot_inflight[RETOP_MAX_FUNCS];
/* Entries between reading slot_record and slot_closing and counting their
 * call in slot_inflight.  Added before the flags are read, so that user
 * space, which writes a flag and then reads both counters, sees either the
 * call (here or in flight) or an entry that saw the flag (untimed). */
__s64 slot_entering[RETOP_MAX_FUNCS];
/* The estimate's sampling windows (retop.h); gate_len 0: no gate. */
__u64 gate_base[RETOP_MAX_FUNCS];
__u64 gate_len[RETOP_MAX_FUNCS];
__u64 gate_on[RETOP_MAX_FUNCS][RETOP_GATE_RING];
__u64 gate_n[RETOP_MAX_FUNCS][RETOP_GATE_RING];
/* Hits of the runtime watchers (goexit1, recovery): in the budget too. */
__u64 watch_hits;
/* Every probe hit the budget counts (traced functions' and the watchers'),
 * and the count at which to wake user space (0: none).  While the load is
 * far under the budget the engine ticks once a second instead of ten
 * times, armed to be woken the moment the hits reach wake_at. */
__u64 budget_hits;
__u64 wake_at;
/* Records in inflight_spill: inserted here, deleted here or by user space
 * (mmapped .bss), each side counting its own. */
__s64 spill_live;
/* execs of watched processes so far: user space (mmapped .bss) looks the
 * execs map up only when this moved, not at every slice. */
__u64 exec_seq;
/* Inserts into the evidence maps (goroutines, first_entry, drop_marks,
 * recovered) that failed: an LRU map can refuse one when every element is
 * held on other CPUs.  What they would have told is then unknown. */
__u64 evidence_lost;
/* The kernel's part of a probe hit of each kind (retop.h), set by user
 * space as timed on this machine; each program adds its own run time, as
 * it measures it, hit by hit.  prog_ns over prog_n: the programs' mean, for
 * the faces. */
__u64 hit_cost_ns[RETOP_HIT_KINDS];
__u64 prog_ns[RETOP_HIT_KINDS];
__u64 prog_n[RETOP_HIT_KINDS];
/* The kernel's part of a call's own entry and RET hits inside its timed
 * window, by how its entry runs (retop.h), set by user space. */
__u64 own_window_ns[RETOP_OWN_KINDS];
/* The calibration probes (retop.h): their slot, their hits, the last one's
 * program run time, when the last entry's program ended, and the window
 * between it and the RET after it (user space times one hit at a time). */
const volatile __u32 cal_slot = RETOP_MAX_FUNCS;
__u64 cal_hits;
__u64 cal_prog_ns;
__u64 cal_window_ns;

/* Latency by caller (retop.h).  Entries are allocated on first use
 * (BPF_F_NO_PREALLOC): a function has at most RETOP_CALLER_SITES + 1. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, RETOP_MAX_FUNCS * (RETOP_CALLER_SITES + 1)); /* resized before load */
	__type(key, struct retop_caller_key);
	__type(value, struct retop_caller_stats);
} caller_stats SEC(".maps");

/* A zeroed value to create entries from: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct retop_caller_stats);
} caller_zero SEC(".maps");

/* Per slot: call sites given their own entry since the attach (user space
 * zeroes it with the slot), and whether callers are tracked at all. */
__u32 caller_sites[RETOP_MAX_FUNCS];
const volatile __u32 callers_enabled = 1;
/* --max-in-flight is over RETOP_INFLIGHT_FIRST: calls may spill. */
const volatile __u32 spill_enabled = 0;

/* Failing calls (retop.h): per slot, where the error result's itab is at
 * a RET (0: not read), and the failing calls' durations and types, an
 * entry made at its first failing call (a function that never fails, or
 * is not called, costs none) and deleted by user space with the slot. */
__u8 error_reg[RETOP_MAX_FUNCS];

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, RETOP_MAX_FUNCS); /* resized before load */
	__type(key, __u32);
	__type(value, struct retop_error_stats);
} error_stats SEC(".maps");

/* A zeroed entry to make them from: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct retop_error_stats);
} error_zero SEC(".maps");

/* The slowest calls (retop.h): per slot, the longest durations of this
 * interval; user space zeroes a slot's row at every refresh. */
__u64 slow_top[RETOP_MAX_FUNCS][RETOP_SLOW_N];
/* Offset of goid in runtime.g (DWARF, else a per-release table); 0: unknown. */
const volatile __u64 g_goid_offset = 0;
const volatile __u32 slow_enabled = 1;
/* --slow: every call at least this long is shipped and counted; 0: off. */
const volatile __u64 slow_threshold_ns = 0;

/* Arguments captured at the entry, by in-flight key, for slots whose
 * args_spec is on; taken at the RET, or deleted by user space with the
 * in-flight call (a call that never returns keeps no place for ever).
 * Allocated per call: nothing while no function captures arguments. */
struct retop_args_spec args_spec[RETOP_MAX_FUNCS];

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 4096);
	__type(key, struct retop_inflight_key);
	__type(value, struct retop_args);
} inflight_args SEC(".maps");

/* Room to build an args record: too large for the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct retop_args);
} args_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} slow_events SEC(".maps");

/* Wakes the engine's clock (budget.c): its hits reached wake_at, or a
 * watched process called exec().  One page: an event is a wake-up, its
 * bytes say nothing. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} wakeups SEC(".maps");

/* Processes that kept a call in flight, and when each last called exec()
 * (0: never since): a call begun before its process's exec will never
 * return, and the sweep orphans it at once.  LRU: a process that no longer
 * keeps calls in flight gives its place. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RETOP_EXEC_PROCS);
	__type(key, __u32);
	__type(value, __u64);
} execs SEC(".maps");

/* Where each timed call's time went: split_begin() and split_end(). */
#include "split.h"

/* The key for this goroutine frame: identical at the entry instruction and
 * at a RET, because SP then points at the same return address and a stack
 * copy preserves its distance to stack.hi. */
static __always_inline int inflight_key(struct pt_regs *ctx, __u32 func_id,
					struct retop_inflight_key *key, __u64 *stack_hi)
{
	__u64 g = ctx->r14, hi = 0;

	if (!g || bpf_probe_read_user(&hi, sizeof(hi), (void *)(g + G_STACK_HI_OFFSET)) != 0)
		return -1;
	key->tgid = bpf_get_current_pid_tgid() >> 32;
	key->func_id = func_id;
	key->g = g;
	key->depth = hi - PT_REGS_SP(ctx);
	*stack_hi = hi;
	return 0;
}

/* The record of key, in whichever map holds it; *spill says which. */
static __always_inline struct retop_inflight_val *
inflight_find(const struct retop_inflight_key *key, int *spill)
{
	struct retop_inflight_val *v = bpf_map_lookup_elem(&inflight, key);

	*spill = 0;
	/* Only this goroutine inserts its key, before it looks it up again:
	 * if its record spilled, it saw spill_live count it. */
	if (v || !spill_enabled || !*(volatile __s64 *)&spill_live)
		return v;
	*spill = 1;
	return bpf_map_lookup_elem(&inflight_spill, key);
}

static __always_inline int inflight_delete(const struct retop_inflight_key *key, int spill)
{
	if (!spill)
		return bpf_map_delete_elem(&inflight, key);
	if (bpf_map_delete_elem(&inflight_spill, key) != 0)
		return -1;
	__sync_fetch_and_add(&spill_live, -1);
	return 0;
}

/* A new call's record: in the first map while it has room, else spilled. */
static __always_inline int inflight_insert(const struct retop_inflight_key *key,
					   const struct retop_inflight_val *val)
{
	if (bpf_map_update_elem(&inflight, key, val, BPF_NOEXIST) == 0)
		return 0;
	if (!spill_enabled)
		return -1;
	/* Counted first: a lookup that finds it must see the count. */
	__sync_fetch_and_add(&spill_live, 1);
	if (bpf_map_update_elem(&inflight_spill, key, val, BPF_NOEXIST) == 0)
		return 0;
	__sync_fetch_and_add(&spill_live, -1);
	return -1;
}

static __always_inline int same_key(const struct retop_inflight_key *a,
				    const struct retop_inflight_key *b)
{
	return a->tgid == b->tgid && a->func_id == b->func_id && a->g == b->g &&
	       a->depth == b->depth;
}

/* Remember the depth of this goroutine's first entry since the attach. */
static __always_inline void note_first_entry(const struct retop_inflight_key *key)
{
	struct retop_first_key fk = {.tgid = key->tgid, .func_id = key->func_id, .g = key->g};
	struct retop_first_val fv = {.depth = key->depth};
	struct retop_first_val *cur;
	__u32 slot = key->func_id;

	if (slot >= RETOP_MAX_FUNCS)
		return;
	fv.gen = slot_epoch[slot];
	cur = bpf_map_lookup_elem(&first_entry, &fk);
	if (cur && cur->gen == fv.gen)
		return;
	if (bpf_map_update_elem(&first_entry, &fk, &fv, BPF_ANY) != 0)
		__sync_fetch_and_add(&evidence_lost, 1);
}

/* A paired call's goroutine has a first entry since the epoch (the call's
 * own entry wrote one if none): none means the LRU map evicted it. */
static __always_inline int first_entry_lost(const struct retop_inflight_key *key)
{
	struct retop_first_key fk = {.tgid = key->tgid, .func_id = key->func_id, .g = key->g};

	return bpf_map_lookup_elem(&first_entry, &fk) == NULL;
}

/* Is this entry the prologue's restart of the call last dropped on its
 * goroutine?  The same key, and no panic recovered since (a recovery means
 * the dropped call was unwound, and this is a new call in its place). */
static __always_inline struct drop_mark *
drop_restart(const struct retop_goroutine_key *gk, const struct retop_inflight_key *key)
{
	struct drop_mark *mark = bpf_map_lookup_elem(&drop_marks, gk);
	__u64 *rec;

	if (!mark || !same_key(&mark->key, key))
		return NULL;
	rec = bpf_map_lookup_elem(&recovered, gk);
	if (rec && *rec > mark->ns)
		return NULL;
	return mark;
}

/* The in-flight map is full: count the call as dropped, once, even when
 * the stack-check prologue enters it a second time. */
static __always_inline void note_drop(struct retop_func_stats *st,
				      const struct retop_inflight_key *key, __u64 now)
{
	struct retop_goroutine_key gk = {.tgid = key->tgid, .g = key->g};
	struct drop_mark mark = {.key = *key, .ns = now};

	if (drop_restart(&gk, key)) {
		__sync_fetch_and_add(&st->reentries, 1);
		return;
	}
	__sync_fetch_and_add(&st->dropped, 1);
	if (bpf_map_update_elem(&drop_marks, &gk, &mark, BPF_ANY) != 0)
		__sync_fetch_and_add(&evidence_lost, 1);
}

/* A call counted as dropped was restarted by the prologue and found room
 * this time: it is tracked after all. */
static __always_inline void undo_drop(struct retop_func_stats *st,
				      const struct retop_inflight_key *key)
{
	struct retop_goroutine_key gk = {.tgid = key->tgid, .g = key->g};

	if (!drop_restart(&gk, key))
		return;
	bpf_map_delete_elem(&drop_marks, &gk);
	__sync_fetch_and_add(&st->dropped, -1);
	__sync_fetch_and_add(&st->reentries, 1);
}

/* What the probes saw of goroutine g of process tgid (retop.h), created
 * empty, born at now, on its first probe hit; NULL for no g, or no room. */
static __always_inline struct retop_goroutine_val *goroutine_val(__u32 tgid, __u64 g, __u64 now)
{
	struct retop_goroutine_key gk = {.tgid = tgid, .g = g};
	struct retop_goroutine_val *v, nv = {.born_ns = now};

	if (!g)
		return NULL;
	v = bpf_map_lookup_elem(&goroutines, &gk);
	if (v)
		return v;
	/* On failure another CPU may have made it first: look again. */
	if (bpf_map_update_elem(&goroutines, &gk, &nv, BPF_NOEXIST) != 0) {
		v = bpf_map_lookup_elem(&goroutines, &gk);
		if (!v)
			__sync_fetch_and_add(&evidence_lost, 1);
		return v;
	}
	return bpf_map_lookup_elem(&goroutines, &gk);
}

/* Count a probe hit of kind k on the goroutine, and its cost; its hits
 * before this one.  A call's traced callees put their traps inside its
 * interval.  No atomics: a goroutine runs on one thread at a time, and the
 * key holds the process. */
static __always_inline __u32 goroutine_hit(struct retop_goroutine_val *v, __u32 k)
{
	if (!v)
		return 0;
	if (k < RETOP_HIT_KINDS)
		v->trap_ns += hit_cost_ns[k];
	return (__u32)v->hits++;
}

/* What a program knows of its hit: the goroutine's record, the function's
 * counters, and up to when its own run time is on the goroutine's trap_ns
 * already. */
struct hit {
	struct retop_goroutine_val *gv;
	struct retop_func_stats *st;
	__u64 counted_to;
};

/* The end of a program begun at t0: its run time goes on the goroutine (a
 * traced call around this hit has it taken out) and on the function (what
 * retop costs the target).  A calibration hit leaves its run time for user
 * space. */
static __always_inline void hit_done(struct hit *h, __u32 func_id, __u32 k, __u64 t0)
{
	__u64 t = bpf_ktime_get_ns();

	if (func_id == cal_slot) {
		cal_prog_ns = t - t0;
		__sync_fetch_and_add(&cal_hits, 1);
	}
	if (h->gv && t > h->counted_to)
		h->gv->trap_ns += t - h->counted_to;
	if (h->st)
		__sync_fetch_and_add(&h->st->prog_ns, t - t0);
	if (k >= RETOP_HIT_KINDS)
		return;
	__sync_fetch_and_add(&prog_ns[k], t - t0);
	__sync_fetch_and_add(&prog_n[k], 1);
}

static __always_inline __u64 arg_reg(struct pt_regs *ctx, __u32 i)
{
	switch (i) {
	case 0: return ctx->rax;
	case 1: return ctx->rbx;
	case 2: return ctx->rcx;
	case 3: return ctx->rdi;
	case 4: return ctx->rsi;
	case 5: return ctx->r8;
	case 6: return ctx->r9;
	case 7: return ctx->r10;
	default: return ctx->r11;
	}
}

/* Register i of the nine (arg_reg) for an index known only at run time:
 * each case a load of its own at a constant offset, in assembly, which the
 * compiler cannot fold into one load at a computed offset (the verifier
 * refuses a modified context pointer). */
#define RET_REG(field)                                                                             \
	({                                                                                         \
		__u64 v_;                                                                          \
		asm volatile("%0 = *(u64 *)(%1 + %2)"                                              \
			     : "=r"(v_)                                                            \
			     : "r"(ctx), "i"(__builtin_offsetof(struct pt_regs, field)));          \
		v_;                                                                                \
	})
static __always_inline __u64 ret_reg(struct pt_regs *ctx, __u32 i)
{
	switch (i) {
	case 0: return RET_REG(rax);
	case 1: return RET_REG(rbx);
	case 2: return RET_REG(rcx);
	case 3: return RET_REG(rdi);
	case 4: return RET_REG(rsi);
	case 5: return RET_REG(r8);
	case 6: return RET_REG(r9);
	case 7: return RET_REG(r10);
	default: return RET_REG(r11);
	}
}

/* The first bytes of the string whose pointer is in register r. */
static __always_inline void args_read_str(struct retop_args *a, __u32 k, __u32 r)
{
	__u64 n;

	if (r >= RETOP_ARG_REGS - 1 || k >= RETOP_ARG_STRS)
		return;
	n = a->regs[r + 1];
	if (n > RETOP_ARG_STR_LEN)
		n = RETOP_ARG_STR_LEN;
	asm volatile("" : "+r"(n));
	if (n == 0 || n > RETOP_ARG_STR_LEN)
		return;
	if (bpf_probe_read_user(a->str[k], n, (void *)a->regs[r]) == 0)
		a->str_len[k] = (__u32)n;
}

/* The integer registers and the strings they point to: the arguments at
 * the entry, the results at a RET (the same registers, from RAX on). */
static __always_inline void read_regs(struct pt_regs *ctx, struct retop_args *a, __u8 s0, __u8 s1)
{
	for (__u32 i = 0; i < RETOP_ARG_REGS; i++)
		a->regs[i] = arg_reg(ctx, i);
	a->str_len[0] = a->str_len[1] = 0;
	args_read_str(a, 0, s0);
	args_read_str(a, 1, s1);
}

/* Capture the arguments of this call, if the operator asked for them. */
static __always_inline void note_args(struct pt_regs *ctx, struct retop_func_stats *st,
				      const struct retop_inflight_key *key)
{
	__u32 slot = key->func_id, zero = 0;
	struct retop_args *a;

	if (slot >= RETOP_MAX_FUNCS || !args_spec[slot].on)
		return;
	a = bpf_map_lookup_elem(&args_scratch, &zero);
	if (!a)
		return;
	read_regs(ctx, a, args_spec[slot].str_reg[0], args_spec[slot].str_reg[1]);
	if (bpf_map_update_elem(&inflight_args, key, a, BPF_ANY) != 0)
		__sync_fetch_and_add(&st->args_lost, 1);
}

/* Is this hit outside the slot's sampling windows?  Inside one, the call
 * is counted in the window's tally, whose index goes in *counted (else
 * RETOP_GATE_RING). */
static __always_inline int gated_out(__u32 slot, __u64 now, int begins, __u32 *counted)
{
	__u64 len, base, k;
	__u32 i;

	*counted = RETOP_GATE_RING;
	if (slot >= RETOP_MAX_FUNCS)
		return 1;
	len = gate_len[slot];
	if (!len)
		return 0;
	base = gate_base[slot];
	if (now < base)
		return 1;
	k = (now - base) / len;
	i = (__u32)(k % RETOP_GATE_RING);
	if (gate_on[slot][i] != k + 1)
		return 1;
	if (begins) {
		__sync_fetch_and_add(&gate_n[slot][i], 1);
		*counted = i;
	}
	return 0;
}

/* The same frame entered again while its call (begun at s) is in flight.
 * Returns 1 when the sweep claimed that call meanwhile: the record then
 * holds no call, and this entry begins a new one in it. */
static __always_inline int entry_again(struct pt_regs *ctx, struct retop_func_stats *st,
				       struct retop_inflight_val *old, __u64 s,
				       const struct retop_inflight_key *key,
				       struct retop_goroutine_val *gv, __u64 hi, __u64 now,
				       __u32 hits0, __u64 trap0, int restart, int jcc, __u32 gi)
{
	struct retop_goroutine_key gk = {.tgid = key->tgid, .g = key->g};
	int abandoned;
	__u64 *rec;

	if (old->restarting) {
		/* The prologue's restart (the stack grew, or a preemption):
		 * the same call, whose clock runs from its first entry. */
		__sync_fetch_and_add(&st->reentries, 1);
		old->restarting = restart;
		old->stack_hi = hi;
		return 0;
	}
	if (jcc) {
		/* At the prologue's jump the last hit was not taken: that call
		 * began and never returned (a panic unwound it, or its
		 * goroutine exited and the g is reused): an orphan. */
		abandoned = 1;
	} else {
		/* Usually the stack-check prologue restarted the function:
		 * one call, and nothing runs on the goroutine between the two
		 * entries.  So if the goroutine recovered from a panic since,
		 * or exited and its g is reused, the earlier call was unwound
		 * and never returns: an orphan. */
		rec = bpf_map_lookup_elem(&recovered, &gk);
		abandoned = (rec && *rec > s) || (gv && gv->exit_ns > s);
	}
	/* The sweep may have claimed the earlier call as an orphan since it
	 * was read: then it is counted, and the record is free for this one.
	 * A restart keeps the call's start (the swap only claims it). */
	if (__sync_val_compare_and_swap(&old->start_ns, s, abandoned ? now : s) != s)
		return 1;
	old->stack_hi = hi;
	old->restarting = restart;
	if (!abandoned) {
		/* The same call: its clock, and the hits inside it, run from
		 * its first entry; the sampling gate counted it then. */
		__sync_fetch_and_add(&st->reentries, 1);
		__sync_fetch_and_add(&st->begun, -1);
		if (gi < RETOP_GATE_RING && key->func_id < RETOP_MAX_FUNCS)
			__sync_fetch_and_add(&gate_n[key->func_id][gi], -1);
		return 0;
	}
	__sync_fetch_and_add(&st->abandoned, 1);
	old->hits0 = hits0;
	old->trap0 = trap0;
	note_args(ctx, st, key);
	split_begin(key, now);
	return 0;
}

static __always_inline void note_process(__u32 tgid)
{
	__u64 never = 0;

	if (!bpf_map_lookup_elem(&execs, &tgid))
		bpf_map_update_elem(&execs, &tgid, &never, BPF_NOEXIST);
}

/* An entry probe hit of kind (RETOP_HIT_*) whose program began at now. */
static __always_inline void entry_hit(struct pt_regs *ctx, __u32 func_id, __u32 site, __u32 kind,
				      __u64 now, struct hit *h)
{
	struct retop_inflight_key key = {};
	struct retop_inflight_val val = {}, *old;
	struct retop_func_stats *st = bpf_map_lookup_elem(&func_stats, &func_id);
	struct retop_goroutine_val *gv;
	__u64 hi, s = 0, trap0;
	__u32 hits0, gi;
	int jcc = !!(site & RETOP_ENTRY_JCC), restart, spill;

	if (!st || func_id >= RETOP_MAX_FUNCS)
		return;
	h->st = st;
	__sync_fetch_and_add(&st->entries, 1);
	/* Taken, the prologue's jump leads to morestack and back to the
	 * entry: this hit does not begin a call, the next one does. */
	restart = jcc && retop_jcc_taken(ctx->eflags, RETOP_ENTRY_CC(site));
	if (gated_out(func_id, now, !restart, &gi))
		return;
	if (!restart)
		__sync_fetch_and_add(&st->begun, 1);
	gv = goroutine_val(bpf_get_current_pid_tgid() >> 32, ctx->r14, now);
	h->gv = gv;
	hits0 = goroutine_hit(gv, kind) + 1;
	/* The call's clock starts here: the program so far is outside its
	 * window, and inside the calls around it (on the goroutine). */
	h->counted_to = bpf_ktime_get_ns();
	if (gv)
		gv->trap_ns += h->counted_to - now;
	now = h->counted_to;
	trap0 = gv ? gv->trap_ns : 0;
	if (site & RETOP_ENTRY_ONLY)
		return;
	if (inflight_key(ctx, func_id, &key, &hi)) {
		/* No key, no pairing: the call is lost, and says so. */
		if (!restart)
			__sync_fetch_and_add(&st->dropped, 1);
		return;
	}
	old = inflight_find(&key, &spill);
	if (old) {
		s = old->start_ns;
		if (RETOP_START_LIVE(s) &&
		    !entry_again(ctx, st, old, s, &key, gv, hi, now, hits0, trap0, restart, jcc, gi))
			return;
		/* Else the record holds no call (retop.h): it is this call's. */
	}
	__sync_fetch_and_add(&slot_entering[func_id & (RETOP_MAX_FUNCS - 1)], 1);
	if (!slot_record[func_id & (RETOP_MAX_FUNCS - 1)] ||
	    slot_closing[func_id & (RETOP_MAX_FUNCS - 1)]) {
		/* Not timing, or the entry probe is being removed (its RETs
		 * may go first): the call is counted here, at its start. */
		if (!restart)
			__sync_fetch_and_add(&st->untimed, 1);
		__sync_fetch_and_add(&slot_entering[func_id & (RETOP_MAX_FUNCS - 1)], -1);
		return;
	}
	note_first_entry(&key);
	note_process(key.tgid);
	val.start_ns = now;
	val.stack_hi = hi;
	val.tid = (__u32)bpf_get_current_pid_tgid() & 0x3FFFFFFF;
	val.stepped = kind == RETOP_HIT_ENTRY_STEPPED;
	val.hits0 = hits0;
	val.trap0 = trap0;
	val.restarting = restart;
	if (old) {
		/* A tombstone: no one but this goroutine writes it any more
		 * (the sweep claims live calls only), start_ns last. */
		old->stack_hi = hi;
		old->tid = val.tid;
		old->stepped = val.stepped;
		old->hits0 = hits0;
		old->trap0 = trap0;
		old->restarting = restart;
		old->start_ns = now;
	} else if (inflight_insert(&key, &val) != 0) {
		note_drop(st, &key, now);
		__sync_fetch_and_add(&slot_entering[func_id & (RETOP_MAX_FUNCS - 1)], -1);
		return;
	}
	__sync_fetch_and_add(&slot_inflight[func_id & (RETOP_MAX_FUNCS - 1)], 1);
	__sync_fetch_and_add(&slot_entering[func_id & (RETOP_MAX_FUNCS - 1)], -1);
	if (st->dropped)
		undo_drop(st, &key);
	note_args(ctx, st, &key);
	split_begin(&key, now);
}

static __always_inline void wake_engine(void)
{
	__u64 one = 1;

	bpf_ringbuf_output(&wakeups, &one, sizeof(one), BPF_RB_FORCE_WAKEUP);
}

/* A hit the budget counts; the one that reaches wake_at wakes the engine,
 * once (it disarms wake_at). */
static __always_inline void budget_hit(void)
{
	__u64 n = __sync_fetch_and_add(&budget_hits, 1) + 1, w = *(volatile __u64 *)&wake_at;

	if (w && n >= w && __sync_val_compare_and_swap(&wake_at, w, 0) == w)
		wake_engine();
}

SEC("uprobe")
int retop_entry(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns(), cookie = bpf_get_attach_cookie(ctx);
	__u32 site = RETOP_COOKIE_SITE(cookie);
	__u32 kind = (site & RETOP_ENTRY_STEPPED) ? RETOP_HIT_ENTRY_STEPPED : RETOP_HIT_ENTRY_EMULATED;
	struct hit h = {.counted_to = now};

	budget_hit();
	entry_hit(ctx, RETOP_COOKIE_FUNC(cookie), site, kind, now, &h);
	hit_done(&h, RETOP_COOKIE_FUNC(cookie), kind, now);
	return 0;
}

/* An inline mark of a traced function: one of its inlined calls begins
 * (src/inline_marks.h).  Counted, never timed.  Its trap (the kernel
 * emulates the one-byte NOP) is a hit inside any traced call running on
 * the goroutine, whose RET takes its cost out: the goroutine's record is
 * looked up, never made (a goroutine with no traced call in flight has
 * nothing to correct). */
SEC("uprobe")
int retop_inline(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns(), cookie = bpf_get_attach_cookie(ctx);
	__u32 func_id = RETOP_COOKIE_FUNC(cookie);
	/* A NOP mark is emulated; an instruction of the call's line reused as
	 * the mark, single-stepped (its cookie says so). */
	__u32 kind = (RETOP_COOKIE_SITE(cookie) & RETOP_ENTRY_STEPPED) ? RETOP_HIT_ENTRY_STEPPED
								       : RETOP_HIT_ENTRY_EMULATED;
	struct retop_func_stats *st = bpf_map_lookup_elem(&func_stats, &func_id);
	struct retop_goroutine_key gk = {.tgid = bpf_get_current_pid_tgid() >> 32, .g = ctx->r14};
	struct hit h = {.st = st, .counted_to = now};

	budget_hit();
	if (!st)
		return 0;
	__sync_fetch_and_add(&st->inlined, 1);
	if (gk.g) {
		h.gv = bpf_map_lookup_elem(&goroutines, &gk);
		goroutine_hit(h.gv, kind);
	}
	hit_done(&h, func_id, kind, now);
	return 0;
}

/* Every RET is evidence about its goroutine's deeper frames; v is the
 * goroutine's entry (goroutine_val), NULL when there was no room. */
static __always_inline void note_ret(struct retop_goroutine_val *v,
				     const struct retop_inflight_key *key, __u64 now)
{
	if (!v)
		return;
	v->ret_depth = key->depth;
	v->ret_ns = now;
	if (!v->min_ns || key->depth <= v->min_depth) {
		v->min_depth = key->depth;
		v->min_ns = now;
	}
}

/* A RET with no entry: a call that began before the entry probe was in
 * (shallower than the goroutine's first entry since), or after it was
 * removed, is expected; anything else is unmatched. */
static __always_inline void note_unpaired(struct retop_func_stats *st,
					  const struct retop_inflight_key *key)
{
	struct retop_first_key fk = {.tgid = key->tgid, .func_id = key->func_id, .g = key->g};
	struct retop_first_val *first;
	__u32 slot = key->func_id;

	if (slot >= RETOP_MAX_FUNCS)
		return;
	if (st->dropped) {
		/* The return of the last call this goroutine lost: a later
		 * entry with the same key is another call, not a restart. */
		struct retop_goroutine_key gk = {.tgid = key->tgid, .g = key->g};
		struct drop_mark *mark = bpf_map_lookup_elem(&drop_marks, &gk);
		if (mark && same_key(&mark->key, key))
			bpf_map_delete_elem(&drop_marks, &gk);
	}
	first = bpf_map_lookup_elem(&first_entry, &fk);
	/* Not timing, or sampling slices: RETs of calls begun outside them. */
	if (slot_closing[slot] || !slot_record[slot] || gate_len[slot] || !first ||
	    first->gen != slot_epoch[slot] ||
	    key->depth < first->depth)
		__sync_fetch_and_add(&st->before_attach, 1);
	else
		__sync_fetch_and_add(&st->unmatched, 1);
}

/* The entry for this call's caller: its own while the function has fewer
 * than RETOP_CALLER_SITES call sites, "other" after that. */
static __always_inline struct retop_caller_stats *caller_entry(struct retop_caller_key *ck,
								__u32 slot)
{
	struct retop_caller_stats *cs = bpf_map_lookup_elem(&caller_stats, ck);
	__u32 zero = 0;
	void *z;

	if (cs)
		return cs;
	/* Read, then add: a race lets a function take a few more sites than
	 * the bound (one per CPU at most), never an unbounded number. */
	if (caller_sites[slot] >= RETOP_CALLER_SITES) {
		ck->ret_addr = RETOP_CALLER_OTHER;
		cs = bpf_map_lookup_elem(&caller_stats, ck);
		if (cs)
			return cs;
	}
	else
		__sync_fetch_and_add(&caller_sites[slot], 1);
	z = bpf_map_lookup_elem(&caller_zero, &zero);
	if (!z)
		return NULL;
	/* Losing a race to create it is fine: the winner's entry is used.
	 * No entry after that (no room, or no memory): the caller counts
	 * this call as lost. */
	bpf_map_update_elem(&caller_stats, ck, z, BPF_NOEXIST);
	return bpf_map_lookup_elem(&caller_stats, ck);
}

/* A failing call's concrete type: its own place among the first
 * RETOP_ERROR_TYPES types seen, claimed by compare-and-swap, else other. */
static __always_inline void note_error_type(struct retop_error_stats *es, __u64 type)
{
	for (__u32 i = 0; type && i < RETOP_ERROR_TYPES; i++) {
		__u64 cur = es->types[i].type;

		if (!cur) {
			cur = __sync_val_compare_and_swap(&es->types[i].type, 0, type);
			if (!cur)
				cur = type;
		}
		if (cur == type) {
			__sync_fetch_and_add(&es->types[i].calls, 1);
			return;
		}
	}
	__sync_fetch_and_add(&es->other, 1);
}

/* At a paired RET of a slot whose errors are read: did the call return a
 * non-nil error?  If so it is counted, with its duration (bucket b) and its
 * type.  Only the failing calls cost more than a register's read. */
static __always_inline int note_error(struct pt_regs *ctx, struct retop_func_stats *st, __u32 slot,
				      __u64 dur, __u64 b)
{
	struct retop_error_stats *es;
	__u64 itab, type = 0;
	__u32 r;

	if (slot >= RETOP_MAX_FUNCS || !(r = error_reg[slot]) || r > RETOP_ARG_REGS)
		return 0;
	itab = ret_reg(ctx, r - 1);
	if (!itab)
		return 0;
	__sync_fetch_and_add(&st->errors, 1);
	es = bpf_map_lookup_elem(&error_stats, &slot);
	if (!es) {
		__u32 zero = 0;
		struct retop_error_stats *z = bpf_map_lookup_elem(&error_zero, &zero);
		/* Losing a race to make it is fine: the winner's is used. */
		if (z)
			bpf_map_update_elem(&error_stats, &slot, z, BPF_NOEXIST);
		es = bpf_map_lookup_elem(&error_stats, &slot);
		if (!es)
			return 1; /* counted; its duration and type not (no memory) */
	}
	__sync_fetch_and_add(&es->calls, 1);
	__sync_fetch_and_add(&es->sum_ns, dur);
	asm volatile("" : "+r"(b));
	if (b < RETOP_HIST_BUCKETS)
		__sync_fetch_and_add(&es->hist[b], 1);
	if (bpf_probe_read_user(&type, sizeof(type), (void *)(itab + RETOP_ITAB_TYPE_OFFSET)) != 0)
		type = 0;
	note_error_type(es, type);
	return 1;
}

/* A timed call's bucket in its slot's histogram, made at the first one. */
static __always_inline void note_hist(struct retop_func_stats *st, __u32 slot, __u64 b)
{
	struct retop_func_hist *h = bpf_map_lookup_elem(&func_hist, &slot);
	__u32 zero = 0;

	if (!h) {
		struct retop_func_hist *z = bpf_map_lookup_elem(&hist_zero, &zero);
		/* Losing a race to make it is fine: the winner's is used. */
		if (z)
			bpf_map_update_elem(&func_hist, &slot, z, BPF_NOEXIST);
		h = bpf_map_lookup_elem(&func_hist, &slot);
	}
	/* Keep the check and the access on one register for the verifier. */
	asm volatile("" : "+r"(b));
	if (h && b < RETOP_HIST_BUCKETS)
		__sync_fetch_and_add(&h->hist[b], 1);
	else
		__sync_fetch_and_add(&st->hist_lost, 1);
}

/* At a RET, [SP] holds the return address the entry saw: the caller.  No
 * per-call state is needed in the in-flight record for it.  failed: the
 * call returned a non-nil error (note_error). */
static __always_inline void note_caller(struct pt_regs *ctx, struct retop_func_stats *st,
					__u32 slot, __u32 image, __u64 dur, __u64 b, int failed)
{
	struct retop_caller_key ck = {.func_id = (__u16)slot, .image = (__u16)image};
	struct retop_caller_stats *cs;

	if (!callers_enabled || slot >= RETOP_MAX_FUNCS)
		return;
	if (bpf_probe_read_user(&ck.ret_addr, sizeof(ck.ret_addr), (void *)PT_REGS_SP(ctx)) != 0)
		ck.ret_addr = RETOP_CALLER_OTHER;
	ck.gen = slot_gen[slot];
	cs = caller_entry(&ck, slot);
	if (!cs) {
		__sync_fetch_and_add(&st->callers_lost, 1);
		return;
	}
	__sync_fetch_and_add(&cs->calls, 1);
	__sync_fetch_and_add(&cs->sum_ns, dur);
	if (failed)
		__sync_fetch_and_add(&cs->errors, 1);
	asm volatile("" : "+r"(b));
	if (b < RETOP_HIST_BUCKETS)
		__sync_fetch_and_add(&cs->hist[b], 1);
}

/* Ship the call if it is longer than the shortest of the slot's slowest
 * this interval, and take that one's place; or if it is at least --slow
 * long.  Two CPUs racing for a place can only leave the row lower than the
 * truth: more calls shipped, never one of the N slowest missed. */
static __always_inline void note_slow(struct pt_regs *ctx, struct retop_func_stats *st, __u32 slot,
				      __u32 image,
				      __u64 dur, __u64 start, const struct retop_inflight_key *key)
{
	struct retop_slow_event *e;
	struct retop_args *args = NULL;
	__u64 *top, mv, g = key->g;
	__u32 mi = 0;
	int top_n, over;

	if (!slow_enabled || slot >= RETOP_MAX_FUNCS)
		return;
	if (args_spec[slot].on) {
		/* Taken whether or not the call is shipped: its place is free. */
		args = bpf_map_lookup_elem(&inflight_args, key);
	}
	over = slow_threshold_ns && dur >= slow_threshold_ns;
	if (over)
		__sync_fetch_and_add(&st->slow_over, 1);
	top = slow_top[slot];
	mv = top[0];
	for (__u32 i = 1; i < RETOP_SLOW_N; i++)
		if (top[i] < mv) {
			mv = top[i];
			mi = i;
		}
	top_n = dur > mv && mi < RETOP_SLOW_N;
	if (top_n)
		top[mi] = dur;
	if (!top_n && !over)
		goto out;
	e = bpf_ringbuf_reserve(&slow_events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&st->slow_lost, 1);
		goto out;
	}
	e->func_id = (__u16)slot;
	e->image = (__u16)image;
	e->gen = slot_gen[slot];
	e->tgid = bpf_get_current_pid_tgid() >> 32;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->start_ns = start;
	e->dur_ns = dur;
	e->goid = 0;
	if (g_goid_offset && bpf_probe_read_user(&e->goid, sizeof(e->goid),
						 (void *)(g + g_goid_offset)) != 0)
		e->goid = 0;
	if (bpf_probe_read_user(&e->ret_addr, sizeof(e->ret_addr), (void *)PT_REGS_SP(ctx)) != 0)
		e->ret_addr = 0;
	e->over = over;
	e->has_args = 0;
	if (args) {
		__builtin_memcpy(&e->args, args, sizeof(e->args));
		e->has_args = 1;
	}
	/* Results only for a shipped call: no cost for the others. */
	e->has_results = 0;
	if (args_spec[slot].res_on) {
		read_regs(ctx, &e->results, args_spec[slot].res_str_reg[0],
			  args_spec[slot].res_str_reg[1]);
		e->has_results = 1;
	}
	bpf_ringbuf_submit(e, 0);
out:
	if (args)
		bpf_map_delete_elem(&inflight_args, key);
}

static __always_inline void stats_update_minmax(struct retop_func_stats *st, __u64 dur)
{
	__u64 cur;

	/* Bounded retries: losing a race twice only costs min/max precision. */
	for (int i = 0; i < 4; i++) {
		cur = st->max_ns;
		if (dur <= cur || __sync_val_compare_and_swap(&st->max_ns, cur, dur) == cur)
			break;
	}
	for (int i = 0; i < 4; i++) {
		cur = st->min_ns;
		if ((cur && dur >= cur) || __sync_val_compare_and_swap(&st->min_ns, cur, dur) == cur)
			break;
	}
}

/* dur less x, at least 1 ns (min_ns 0 means no call yet); *taken what was
 * taken out. */
static __always_inline __u64 dur_less(__u64 dur, __u64 x, __u64 *taken)
{
	*taken = 0;
	if (dur > 1)
		*taken = x < dur ? x : dur - 1;
	return dur - *taken;
}

/* A RET probe hit whose program began at now: the end of a call's window. */
static __always_inline void ret_hit(struct pt_regs *ctx, __u32 func_id, __u32 site, __u64 now,
				    struct hit *h)
{
	struct retop_inflight_key key = {};
	struct retop_inflight_val *val;
	struct retop_func_stats *st = bpf_map_lookup_elem(&func_stats, &func_id);
	struct retop_goroutine_val *gv;
	__u64 dur, b, hi, s, traps, taken, own, own_taken;
	__u32 hits;
	int lost, spill;

	if (!st)
		return;
	h->st = st;
	__sync_fetch_and_add(&st->rets, 1);
	if (RETOP_SITE_INDEX(site) < RETOP_MAX_RET_SITES)
		__sync_fetch_and_add(&st->ret_hits[RETOP_SITE_INDEX(site)], 1);
	/* One lookup of the goroutine for its hit count and its RET evidence:
	 * inflight_key() reads the same g (R14) of the same process. */
	gv = goroutine_val(bpf_get_current_pid_tgid() >> 32, ctx->r14, now);
	h->gv = gv;
	traps = gv ? gv->trap_ns : 0; /* before this RET's own hit */
	hits = goroutine_hit(gv, RETOP_HIT_RET);
	if (inflight_key(ctx, func_id, &key, &hi)) {
		__sync_fetch_and_add(&st->unmatched, 1);
		return;
	}
	val = inflight_find(&key, &spill);
	if (!val) {
		note_ret(gv, &key, now);
		note_unpaired(st, &key);
		return;
	}
	s = val->start_ns;
	/* The call is this RET's only if it wins it from the sweep's claim. */
	if (!RETOP_START_LIVE(s) ||
	    __sync_val_compare_and_swap(&val->start_ns, s, RETOP_START_RETURNING) != s) {
		/* The record holds no call (the sweep's orphan): remove the
		 * tombstone; this RET is unpaired. */
		inflight_delete(&key, spill);
		note_ret(gv, &key, now);
		note_unpaired(st, &key);
		return;
	}
	dur = now - s;
	hits -= val->hits0; /* the callees' hits since the entry */
	traps -= val->trap0;  /* and their cost */
	/* The LRU map evicted the goroutine's record during the call: no
	 * record, one made since the call began (a callee's hits went on a
	 * fresh count, which looks plausible), or a count that went back.
	 * The call's hits are unknown: none counted, none taken out. */
	lost = !gv || gv->born_ns > s || (__s32)hits < 0 || (__s64)traps < 0;
	if (lost) {
		hits = 0;
		traps = 0;
	}
	/* Durations without retop's own traps inside them: what the call
	 * takes untraced, and what the program's own clock says.  First the
	 * hits inside (traced callees), then the kernel's part of the call's
	 * own two hits inside its window. */
	own = own_window_ns[val->stepped ? RETOP_OWN_STEPPED : RETOP_OWN_EMULATED];
	if (func_id == cal_slot) /* what own_window_ns is timed from */
		cal_window_ns = dur > traps ? dur - traps : 0;
	dur = dur_less(dur, traps, &taken);
	dur = dur_less(dur, own, &own_taken);
	/* Only the one that removed the record counts the call: this RET, or
	 * user space taking the budget's calls out (tracer_untime_inflight). */
	if (inflight_delete(&key, spill) != 0) {
		note_ret(gv, &key, now);
		return;
	}
	if (lost || first_entry_lost(&key))
		__sync_fetch_and_add(&st->evicted, 1);
	/* The mask keeps the verifier sure of the bound. */
	__sync_fetch_and_add(&slot_inflight[func_id & (RETOP_MAX_FUNCS - 1)], -1);
	b = retop_hist_bucket(dur);
	/* The bucket before calls: a read of calls finds it in the histogram.
	 * The calibration's calls need none. */
	if (func_id != cal_slot)
		note_hist(st, func_id, b);
	__sync_fetch_and_add(&st->calls, 1);
	__sync_fetch_and_add(&st->sum_ns, dur);
	__sync_fetch_and_add(&st->nested_hits, hits);
	__sync_fetch_and_add(&st->trap_ns, taken);
	__sync_fetch_and_add(&st->own_ns, own_taken);
	stats_update_minmax(st, dur);
	if (func_id != cal_slot) {
		int failed = note_error(ctx, st, func_id, dur, b);
		note_caller(ctx, st, func_id, RETOP_SITE_IMAGE(site), dur, b, failed);
		note_slow(ctx, st, func_id, RETOP_SITE_IMAGE(site), dur, s, &key);
		split_end(&key, s, now, dur, taken + own_taken);
	}
	/* After the delete: a sweep that sees this RET as evidence no longer
	 * finds the call it ended. */
	note_ret(gv, &key, now);
}

SEC("uprobe")
int retop_return(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns(), cookie = bpf_get_attach_cookie(ctx);
	struct hit h = {.counted_to = now};

	budget_hit();
	ret_hit(ctx, RETOP_COOKIE_FUNC(cookie), RETOP_COOKIE_SITE(cookie), now, &h);
	hit_done(&h, RETOP_COOKIE_FUNC(cookie), RETOP_HIT_RET, now);
	return 0;
}

/* runtime.recovery(gp): runs on g0, so the goroutine is its argument (RAX
 * in the register ABI), not R14. */
SEC("uprobe")
int retop_recovery(struct pt_regs *ctx)
{
	struct retop_goroutine_key gk = {.tgid = bpf_get_current_pid_tgid() >> 32, .g = ctx->rax};
	__u64 now = bpf_ktime_get_ns();

	__sync_fetch_and_add(&watch_hits, 1);
	budget_hit();
	if (gk.g && bpf_map_update_elem(&recovered, &gk, &now, BPF_ANY) != 0)
		__sync_fetch_and_add(&evidence_lost, 1);
	return 0;
}

/* runtime.goexit1 runs on the exiting goroutine (Goexit, or the return of
 * its top function): none of its frames will return. */
SEC("uprobe")
int retop_goexit(struct pt_regs *ctx)
{
	struct retop_goroutine_key gk = {.tgid = bpf_get_current_pid_tgid() >> 32, .g = ctx->r14};
	__u64 now = bpf_ktime_get_ns();
	struct retop_goroutine_val v = {.exit_ns = now, .born_ns = now}, *old;

	__sync_fetch_and_add(&watch_hits, 1);
	budget_hit();
	if (gk.g) {
		/* Its hit count and cost go on: a call still in flight keeps
		 * its base. */
		old = bpf_map_lookup_elem(&goroutines, &gk);
		if (old) {
			v.hits = old->hits;
			v.trap_ns = old->trap_ns;
			v.born_ns = old->born_ns;
		}
		if (bpf_map_update_elem(&goroutines, &gk, &v, BPF_ANY) != 0)
			__sync_fetch_and_add(&evidence_lost, 1);
		/* The g is reused for a new goroutine: no restart to recognise. */
		bpf_map_delete_elem(&drop_marks, &gk);
	}
	return 0;
}

/* --time-split sched (bpf/split.h): runtime.execute(gp), a goroutine
 * starts on this thread; runtime.schedule(), this thread leaves the one it
 * ran.  Both run on g0: R14 is not a goroutine of the traced calls. */
SEC("uprobe")
int retop_sched_run(struct pt_regs *ctx)
{
	__sync_fetch_and_add(&watch_hits, 1);
	__sync_fetch_and_add(&sched_hits, 1);
	budget_hit();
	sched_run(ctx);
	return 0;
}

SEC("uprobe")
int retop_sched_stop(struct pt_regs *ctx)
{
	__sync_fetch_and_add(&watch_hits, 1);
	__sync_fetch_and_add(&sched_hits, 1);
	budget_hit();
	sched_stop();
	return 0;
}

/* exec() replaced a process's program: the calls it had in flight will
 * never return.  Runs for every exec on the machine, one lookup each. */
SEC("raw_tp/sched_process_exec")
int retop_exec(struct bpf_raw_tracepoint_args *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	__u64 *when = bpf_map_lookup_elem(&execs, &tgid);

	if (when) {
		*when = bpf_ktime_get_ns();
		/* After the time: a reader that sees the count sees it. */
		__sync_fetch_and_add(&exec_seq, 1);
		wake_engine();
	}
	return 0;
}

/* The sweep's compare-and-claim (retop.h), run by user space through
 * BPF_PROG_TEST_RUN: the call begun at c->start_ns becomes an orphan only if
 * its record still holds it.  Its RET, or a new call's entry over the
 * record, compare-and-swap the same word, so exactly one of them wins. */
SEC("syscall")
int retop_claim(struct retop_claim *c)
{
	struct retop_inflight_key key = c->key;
	struct retop_inflight_val *v;
	__u64 s = c->start_ns;
	int spill;

	c->claimed = 0;
	if (!RETOP_START_LIVE(s))
		return 0;
	v = inflight_find(&key, &spill);
	if (!v || __sync_val_compare_and_swap(&v->start_ns, s, RETOP_START_ORPHANED) != s)
		return 0;
	__sync_fetch_and_add(&slot_inflight[key.func_id & (RETOP_MAX_FUNCS - 1)], -1);
	c->claimed = 1;
	return 0;
}
