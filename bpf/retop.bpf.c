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
 * release ({lo, hi}). */
const volatile __u64 g_stack_hi_offset = 8;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536); /* resized by user space before load */
	__type(key, struct retop_inflight_key);
	__type(value, struct retop_inflight_val);
} inflight SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, RETOP_MAX_FUNCS);
	__type(key, __u32);
	__type(value, struct retop_func_stats);
} func_stats SEC(".maps");

/* When each goroutine last recovered from a panic (runtime.recovery): the
 * frames a panic unwound never return, and a recovery tells them apart
 * from a function restarted by the stack-check prologue. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u64);   /* g */
	__type(value, __u64); /* bpf_ktime_get_ns() */
} recovered SEC(".maps");

/* The key for this goroutine frame: identical at the entry instruction and
 * at a RET, because SP then points at the same return address and a stack
 * copy preserves its distance to stack.hi. */
static __always_inline int inflight_key(struct pt_regs *ctx, __u32 func_id,
					struct retop_inflight_key *key, __u64 *stack_hi)
{
	__u64 g = ctx->r14, hi = 0;

	if (!g || bpf_probe_read_user(&hi, sizeof(hi), (void *)(g + g_stack_hi_offset)) != 0)
		return -1;
	key->tgid = bpf_get_current_pid_tgid() >> 32;
	key->func_id = func_id;
	key->g = g;
	key->depth = hi - PT_REGS_SP(ctx);
	*stack_hi = hi;
	return 0;
}

SEC("uprobe")
int retop_entry(struct pt_regs *ctx)
{
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 func_id = RETOP_COOKIE_FUNC(cookie);
	struct retop_inflight_key key = {};
	struct retop_inflight_val val = {}, *old;
	struct retop_func_stats *st = bpf_map_lookup_elem(&func_stats, &func_id);
	__u64 hi, now;

	if (!st)
		return 0;
	__sync_fetch_and_add(&st->entries, 1);
	if (inflight_key(ctx, func_id, &key, &hi))
		return 0;
	now = bpf_ktime_get_ns();
	old = bpf_map_lookup_elem(&inflight, &key);
	if (old) {
		/* The same frame entered again.  Usually the stack-check
		 * prologue restarted the function (after growing the stack, or
		 * for a preemption): one call.  But if the goroutine recovered
		 * from a panic since, on the same stack, the earlier call was
		 * unwound and never returns: an orphan.  Either way the newer
		 * entry is the live one. */
		__u64 *rec = bpf_map_lookup_elem(&recovered, &key.g);
		if (old->stack_hi == hi && rec && *rec > old->start_ns)
			__sync_fetch_and_add(&st->abandoned, 1);
		else
			__sync_fetch_and_add(&st->reentries, 1);
		old->start_ns = now;
		old->stack_hi = hi;
		return 0;
	}
	val.start_ns = now;
	val.stack_hi = hi;
	val.tid = (__u32)bpf_get_current_pid_tgid();
	if (bpf_map_update_elem(&inflight, &key, &val, BPF_NOEXIST) != 0)
		__sync_fetch_and_add(&st->dropped, 1);
	return 0;
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

SEC("uprobe")
int retop_return(struct pt_regs *ctx)
{
	__u64 now = bpf_ktime_get_ns();
	__u64 cookie = bpf_get_attach_cookie(ctx);
	__u32 func_id = RETOP_COOKIE_FUNC(cookie);
	__u32 site = RETOP_COOKIE_SITE(cookie);
	struct retop_inflight_key key = {};
	struct retop_inflight_val *val;
	struct retop_func_stats *st = bpf_map_lookup_elem(&func_stats, &func_id);
	__u64 dur, b, hi;

	if (!st)
		return 0;
	if (site < RETOP_MAX_RET_SITES)
		__sync_fetch_and_add(&st->ret_hits[site], 1);
	if (inflight_key(ctx, func_id, &key, &hi)) {
		__sync_fetch_and_add(&st->unmatched, 1);
		return 0;
	}
	val = bpf_map_lookup_elem(&inflight, &key);
	if (!val) {
		__sync_fetch_and_add(&st->unmatched, 1);
		return 0;
	}
	dur = now - val->start_ns;
	/* Delete first: only the return that removed the entry counts it. */
	if (bpf_map_delete_elem(&inflight, &key) != 0)
		return 0;
	__sync_fetch_and_add(&st->calls, 1);
	__sync_fetch_and_add(&st->sum_ns, dur);
	b = retop_hist_bucket(dur);
	/* Keep the check and the access on one register for the verifier. */
	asm volatile("" : "+r"(b));
	if (b < RETOP_HIST_BUCKETS)
		__sync_fetch_and_add(&st->hist[b], 1);
	stats_update_minmax(st, dur);
	return 0;
}

/* runtime.recovery(gp): runs on g0, so the goroutine is its argument (RAX
 * in the register ABI), not R14. */
SEC("uprobe")
int retop_recovery(struct pt_regs *ctx)
{
	__u64 g = ctx->rax, now = bpf_ktime_get_ns();

	if (g)
		bpf_map_update_elem(&recovered, &g, &now, BPF_ANY);
	return 0;
}
