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
/* The calls a sampled window counts before the engine takes the entry out
 * (0: no limit): the entry that reaches it wakes the engine. */
__u64 gate_cap[RETOP_MAX_FUNCS];
/* The window a slot's entry probe was really in, [in, out): a call begun
 * outside it (while the probe went in, or after user space took it out)
 * is not counted, so that the calls counted and the time the estimate
 * credits are the same span. */
__u64 gate_in[RETOP_MAX_FUNCS];
__u64 gate_out[RETOP_MAX_FUNCS];
/* A window reached its cap: the entry's program wakes the engine as it
 * ends (slice_wake). */
__u64 gate_full;
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

/* Wakes the engine's clock (govern.c): its hits reached wake_at, a
 * watched process called exec(), or a sampled window is full.  One page:
 * an event is a wake-up and why (wake_engine). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} wakeups SEC(".maps");

/* The events' values, from .data: the entry's stack is at its limit.
 * wake_budget: the hits reached wake_at, or an exec(); wake_slice: a
 * sampled window reached its gate_cap. */
__u64 wake_budget = RETOP_WAKE_BUDGET;
__u64 wake_slice = RETOP_WAKE_SLICE;

static __always_inline void wake_engine(__u64 *why)
{
	bpf_ringbuf_output(&wakeups, why, sizeof(*why), BPF_RB_FORCE_WAKEUP);
}

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

/* The program's parts, each on the maps above: where each timed call's
 * time went (split_begin(), split_end()); pairing a RET with its entry;
 * each goroutine's hits; arguments and results; an entry's hit (entry_hit);
 * further down, a RET's (ret_hit). */
#include "split.h"
#include "pairing.h"
#include "goroutines.h"
#include "args.h"
#include "entry.h"

/* A hit the budget counts; the one that reaches wake_at wakes the engine,
 * once (it disarms wake_at). */
static __always_inline void budget_hit(void)
{
	__u64 n = __sync_fetch_and_add(&budget_hits, 1) + 1, w = *(volatile __u64 *)&wake_at;

	if (w && n >= w && __sync_val_compare_and_swap(&wake_at, w, 0) == w)
		wake_engine(&wake_budget);
}

/* A sampled window reached its cap (gated_out): wake the engine, once. */
static __always_inline void slice_wake(void)
{
	if (*(volatile __u64 *)&gate_full && __sync_val_compare_and_swap(&gate_full, 1, 0) == 1)
		wake_engine(&wake_slice);
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
	slice_wake();
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

#include "ret.h"

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
		wake_engine(&wake_budget);
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
