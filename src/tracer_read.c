/* What user space reads from the BPF side (the counters, mapped; the
 * caller map; the slowest calls' ring buffer) and the settings it writes
 * for the programs to read in .bss: whether a slot's calls are timed, the
 * budget's sampling gate, the cost of a hit, the arguments to capture. */
#include "tracer_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <string.h>

#include "log.h"

int tracer_read(struct tracer *t, int slot, struct retop_func_stats *out)
{
	if (slot < 0 || (size_t)slot >= t->opts.max_functions)
		return -EINVAL;
	/* Like a lookup of the array: each counter read whole, the row not
	 * at one instant (BPF adds to it meanwhile). */
	memcpy(out, &t->stats[slot], sizeof(*out));
	return 0;
}

int tracer_read_hist(struct tracer *t, int slot, struct retop_func_hist *out)
{
	__u32 key = (__u32)slot;

	if (slot < 0 || (size_t)slot >= t->opts.max_functions)
		return -EINVAL;
	if (bpf_map__lookup_elem(t->skel->maps.func_hist, &key, sizeof(key), out, sizeof(*out), 0))
		return -errno;
	return 0;
}

int tracer_read_counters(struct tracer *t, int slot, struct retop_func_stats *out)
{
	if (slot < 0 || (size_t)slot >= t->opts.max_functions)
		return -EINVAL;
	/* Ten times a second per function, from a page BPF writes on every
	 * CPU: the counters only, not the RET sites'. */
	memcpy(out, &t->stats[slot], offsetof(struct retop_func_stats, ret_hits));
	return 0;
}

bool tracer_hits_still(const struct tracer *t, int slot, uint64_t begun, uint64_t entries,
		       uint64_t rets, uint64_t inlined)
{
	if (slot < 0 || (size_t)slot >= t->opts.max_functions)
		return false;
	const volatile struct retop_func_stats *st = &t->stats[slot];
	return st->begun == begun && st->entries == entries && st->rets == rets &&
	       st->inlined == inlined;
}

/* The slot's failing calls start again: its next failing call makes the
 * entry anew. */
static void tracer_errors_reset(struct tracer *t, int slot)
{
	__u32 key = (__u32)slot;

	bpf_map_delete_elem(bpf_map__fd(t->skel->maps.error_stats), &key);
}

int tracer_read_errors(struct tracer *t, int slot, struct retop_error_stats *out)
{
	__u32 key = (__u32)slot;

	if (slot < 0 || slot >= RETOP_MAX_FUNCS || !t->skel->bss->error_reg[slot])
		return -ENOENT;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.error_stats), &key, out) == 0)
		return 0;
	if (errno != ENOENT)
		return -errno;
	/* No failing call since its reset. */
	memset(out, 0, sizeof(*out));
	return 0;
}

int tracer_reset(struct tracer *t, int slot)
{
	__u32 key = (__u32)slot;

	t->slots[slot].orphans = 0;
	if (bpf_map__update_elem(t->skel->maps.func_stats, &key, sizeof(key), &t->zero,
				 sizeof(t->zero), BPF_ANY))
		return -errno;
	tracer_errors_reset(t, slot);
	/* Its next owner's first timed call makes it anew. */
	bpf_map__delete_elem(t->skel->maps.func_hist, &key, sizeof(key), 0);
	callers_purge(bpf_map__fd(t->skel->maps.caller_stats), (uint32_t)slot);
	static const struct retop_split_stats split_zero;
	if (t->skel->rodata->split_enabled &&
	    bpf_map__update_elem(t->skel->maps.split_stats, &key, sizeof(key), &split_zero,
				 sizeof(split_zero), BPF_ANY))
		return -errno;
	tracer_slow_rearm(t, slot);
	tracer_args_set(t, slot, NULL);
	t->skel->bss->caller_sites[slot] = 0;
	return 0;
}

void tracer_record(struct tracer *t, int slot, bool on)
{
	/* Calls begun while not timing return with no entry: a new epoch
	 * tells them from the timed ones. */
	if (on && !t->skel->bss->slot_record[slot])
		t->skel->bss->slot_epoch[slot]++;
	t->skel->bss->slot_record[slot] = on;
}

void tracer_gate(struct tracer *t, int slot, uint64_t base, uint64_t len, bool first_on)
{
	memset(t->skel->bss->gate_on[slot], 0, sizeof(t->skel->bss->gate_on[slot]));
	memset(t->skel->bss->gate_n[slot], 0, sizeof(t->skel->bss->gate_n[slot]));
	t->skel->bss->gate_on[slot][0] = first_on ? 1 : 0;
	t->skel->bss->gate_base[slot] = base;
	t->skel->bss->gate_in[slot] = 0;
	t->skel->bss->gate_out[slot] = UINT64_MAX;
	__atomic_store_n(&t->skel->bss->gate_len[slot], len, __ATOMIC_RELEASE);
}

void tracer_gate_plan(struct tracer *t, int slot, uint64_t k, bool on)
{
	__atomic_store_n(&t->skel->bss->gate_on[slot][k % RETOP_GATE_RING], on ? k + 1 : 0,
			 __ATOMIC_RELEASE);
}

uint64_t tracer_gate_take(struct tracer *t, int slot, uint64_t k)
{
	return __atomic_exchange_n(&t->skel->bss->gate_n[slot][k % RETOP_GATE_RING], 0,
				   __ATOMIC_ACQ_REL);
}

uint64_t tracer_gate_count(const struct tracer *t, int slot, uint64_t k)
{
	return __atomic_load_n(&t->skel->bss->gate_n[slot][k % RETOP_GATE_RING], __ATOMIC_ACQUIRE);
}

void tracer_gate_window(struct tracer *t, int slot, uint64_t in_ns, uint64_t out_ns)
{
	__atomic_store_n(&t->skel->bss->gate_in[slot], in_ns, __ATOMIC_RELAXED);
	__atomic_store_n(&t->skel->bss->gate_out[slot], out_ns, __ATOMIC_RELEASE);
}

void tracer_gate_cap(struct tracer *t, int slot, uint64_t calls)
{
	__atomic_store_n(&t->skel->bss->gate_cap[slot], calls, __ATOMIC_RELAXED);
}

void tracer_hit_costs(struct tracer *t, const double cost[RETOP_HIT_KINDS],
		      const double own[RETOP_OWN_KINDS])
{
	for (int k = 0; k < RETOP_HIT_KINDS; k++)
		__atomic_store_n(&t->skel->bss->hit_cost_ns[k],
				 cost[k] > 0 ? (uint64_t)(cost[k] + 0.5) : 0, __ATOMIC_RELAXED);
	for (int k = 0; k < RETOP_OWN_KINDS; k++)
		__atomic_store_n(&t->skel->bss->own_window_ns[k],
				 own[k] > 0 ? (uint64_t)(own[k] + 0.5) : 0, __ATOMIC_RELAXED);
}

uint64_t tracer_cal_hits(const struct tracer *t)
{
	return __atomic_load_n(&t->skel->bss->cal_hits, __ATOMIC_RELAXED);
}

void tracer_cal_clear(struct tracer *t)
{
	__atomic_store_n(&t->skel->bss->cal_prog_ns, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&t->skel->bss->cal_window_ns, 0, __ATOMIC_RELAXED);
}

void tracer_cal_last(const struct tracer *t, uint64_t *prog_ns, uint64_t *window_ns)
{
	*prog_ns = __atomic_load_n(&t->skel->bss->cal_prog_ns, __ATOMIC_RELAXED);
	*window_ns = __atomic_load_n(&t->skel->bss->cal_window_ns, __ATOMIC_RELAXED);
}

void tracer_prog_time(const struct tracer *t, uint64_t ns[RETOP_HIT_KINDS],
		      uint64_t n[RETOP_HIT_KINDS])
{
	for (int k = 0; k < RETOP_HIT_KINDS; k++) {
		n[k] = __atomic_load_n(&t->skel->bss->prog_n[k], __ATOMIC_RELAXED);
		ns[k] = __atomic_load_n(&t->skel->bss->prog_ns[k], __ATOMIC_RELAXED);
	}
}

uint64_t tracer_watch_hits(const struct tracer *t)
{
	return __atomic_load_n(&t->skel->bss->watch_hits, __ATOMIC_RELAXED);
}

uint64_t tracer_budget_hits(const struct tracer *t)
{
	return __atomic_load_n(&t->skel->bss->budget_hits, __ATOMIC_RELAXED);
}

uint64_t tracer_evidence_lost(const struct tracer *t)
{
	return __atomic_load_n(&t->skel->bss->evidence_lost, __ATOMIC_RELAXED);
}

int tracer_slow_fd(struct tracer *t)
{
	return bpf_map__fd(t->skel->maps.slow_events);
}

const uint32_t *tracer_slot_gens(struct tracer *t)
{
	return t->skel->bss->slot_gen;
}

void tracer_slow_rearm(struct tracer *t, int slot)
{
	if (slot >= 0 && slot < RETOP_MAX_FUNCS)
		memset(t->skel->bss->slow_top[slot], 0, sizeof(t->skel->bss->slow_top[slot]));
}

/* Delete the argument records of slot's calls: with capture off, no RET
 * of the slot takes them. */
static void tracer_args_purge(struct tracer *t, int slot)
{
	int fd = bpf_map__fd(t->skel->maps.inflight_args);
	struct retop_inflight_key key, next, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		if (key.func_id == (uint32_t)slot && bpf_map_delete_elem(fd, &key) == 0) {
			prev = NULL; /* deleted: start again */
			continue;
		}
		prev = &key;
	}
}

void tracer_args_set(struct tracer *t, int slot, const struct retop_args_spec *spec)
{
	static const struct retop_args_spec off;
	bool was_on;

	if (slot < 0 || slot >= RETOP_MAX_FUNCS)
		return;
	was_on = t->skel->bss->args_spec[slot].on;
	t->skel->bss->args_spec[slot] = spec ? *spec : off;
	if (spec && spec->on)
		t->args_used = true;
	if (was_on && !(spec && spec->on))
		tracer_args_purge(t, slot);
}

int tracer_read_split(struct tracer *t, int slot, struct retop_split_stats *out)
{
	__u32 key = (__u32)slot;

	memset(out, 0, sizeof(*out));
	if (slot < 0 || (size_t)slot >= t->opts.max_functions)
		return -EINVAL;
	if (!t->skel->rodata->split_enabled)
		return 0;
	if (t->split) {
		memcpy(out, &t->split[slot], sizeof(*out));
		return 0;
	}
	if (bpf_map__lookup_elem(t->skel->maps.split_stats, &key, sizeof(key), out, sizeof(*out),
				 0))
		return -errno;
	return 0;
}

uint32_t tracer_split_missing(const struct tracer *t)
{
	return t ? __atomic_load_n(&t->skel->bss->split_missing, __ATOMIC_RELAXED) : 0;
}

int tracer_callers_refresh(struct tracer *t)
{
	return callers_table_read(bpf_map__fd(t->skel->maps.caller_stats), &t->callers);
}

int tracer_read_callers(struct tracer *t, int slot, const struct func_images *im,
			struct callers_view *out)
{
	if (slot < 0 || slot >= RETOP_MAX_FUNCS)
		return -EINVAL;
	return callers_view_of(&t->callers, (uint32_t)slot, t->skel->bss->slot_gen[slot], im, out);
}
