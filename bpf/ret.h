/* A RET probe's hit, included by retop.bpf.c after its maps: the call
 * paired and timed, its error result, caller, histogram bucket and
 * slow-call record; RETs without an entry told apart. */
#ifndef RETOP_BPF_RET_H
#define RETOP_BPF_RET_H

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

#endif
