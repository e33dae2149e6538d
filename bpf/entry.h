/* An entry probe's hit, included by retop.bpf.c after its maps: the
 * estimate's sampling gate, the prologue's restarts, and the call put in
 * flight (or counted at its entry when not timed). */
#ifndef RETOP_BPF_ENTRY_H
#define RETOP_BPF_ENTRY_H

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
	if (now < base || now < gate_in[slot] || now >= gate_out[slot])
		return 1;
	k = (now - base) / len;
	i = (__u32)(k % RETOP_GATE_RING);
	if (gate_on[slot][i] != k + 1)
		return 1;
	if (begins) {
		/* The wake-up waits for the program's end (slice_wake):
		 * this stack is at its limit. */
		if (__sync_fetch_and_add(&gate_n[slot][i], 1) + 1 == gate_cap[slot])
			gate_full = 1;
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

#endif
