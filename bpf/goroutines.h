/* Each goroutine's record, included by retop.bpf.c after its maps: the
 * probe hits and trap time inside its traced calls, taken out of their
 * durations at their RET. */
#ifndef RETOP_BPF_GOROUTINES_H
#define RETOP_BPF_GOROUTINES_H

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

#endif
