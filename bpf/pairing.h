/* Pairing a RET with its entry, included by retop.bpf.c after its maps:
 * the in-flight key of a goroutine frame, the in-flight map and its spill,
 * each goroutine's first entry since the RET probes came back, and the
 * marks of calls dropped for want of room. */
#ifndef RETOP_BPF_PAIRING_H
#define RETOP_BPF_PAIRING_H

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

#endif
