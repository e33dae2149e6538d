/* The in-flight maps from user space: the calls of a slot taken out (its
 * function gone, or its calls no longer timed), and the sweep that counts
 * what is in flight and claims the calls proven dead as orphans
 * (docs/ARCHITECTURE.md, "Orphans"). */
#include "tracer_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf_mem.h"
#include "log.h"
#include "procs.h"
#include "clock.h"

/* The in-flight map a record was read from. */
static int tracer_inflight_fd(const struct tracer *t, bool spill)
{
	return bpf_map__fd(spill ? t->skel->maps.inflight_spill : t->skel->maps.inflight);
}

/* Delete a read record, and its value into *val if val is not NULL; 0:
 * this delete took it.  A spilled record leaves spill_live with it. */
static int tracer_inflight_take(struct tracer *t, const struct retop_inflight_key *key, bool spill,
				struct retop_inflight_val *val)
{
	int fd = tracer_inflight_fd(t, spill);
	int ret = val ? bpf_map_lookup_and_delete_elem(fd, key, val) : bpf_map_delete_elem(fd, key);

	if (ret == 0 && spill)
		__sync_fetch_and_sub(&t->skel->bss->spill_live, 1);
	return ret;
}

/* A call leaves the in-flight map other than by its RET: its arguments, if
 * any were captured, go with it (no RET will take them). */
static void tracer_forget_args(struct tracer *t, const struct retop_inflight_key *key)
{
	if (t->args_used)
		bpf_map_delete_elem(bpf_map__fd(t->skel->maps.inflight_args), key);
}

/* One in-flight call, as the sweep reads it. */
struct sweep_entry {
	struct retop_inflight_key key;
	struct retop_inflight_val val;
	bool spill; /* read from inflight_spill */
};

/* Read one in-flight map, in batches, after the n entries already read: a
 * syscall per entry would cost a second at 262,144 calls in flight. */
static int tracer_read_map(struct tracer *t, int fd, size_t *n_io)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 token = 0;
	size_t n = *n_io;
	bool first = true, grow = false;

	for (;;) {
		if (grow || t->sweep_cap - n < 1024) {
			size_t cap = t->sweep_cap ? 2 * t->sweep_cap : 8192;
			struct retop_inflight_key *k = realloc(t->sweep_keys, cap * sizeof(*k));
			if (k)
				t->sweep_keys = k;
			struct retop_inflight_val *v = realloc(t->sweep_vals, cap * sizeof(*v));
			if (v)
				t->sweep_vals = v;
			if (!k || !v)
				return -ENOMEM;
			t->sweep_cap = cap;
			grow = false;
		}
		__u32 count = (__u32)(t->sweep_cap - n);
		int ret = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, t->sweep_keys + n,
					       t->sweep_vals + n, &count, &opts);
		int e = ret ? errno : 0;
		first = false;
		n += count;
		*n_io = n;
		if (e == ENOENT)
			return 0;
		if (e == ENOSPC && count == 0 && t->sweep_cap < (1u << 26)) {
			grow = true; /* one bucket holds more than fits: grow, retry */
			continue;
		}
		if (e)
			return -e;
	}
}

/* Read every call in flight: the first map, then the spilled calls when
 * there are any (walking their map's buckets is what costs).  Entries
 * from t->sweep_first on were spilled. */
static int tracer_read_inflight(struct tracer *t, size_t *out)
{
	size_t n = 0;
	int ret = tracer_read_map(t, tracer_inflight_fd(t, false), &n);

	t->sweep_first = n;
	if (!ret && __atomic_load_n(&t->skel->bss->spill_live, __ATOMIC_ACQUIRE) > 0)
		ret = tracer_read_map(t, tracer_inflight_fd(t, true), &n);
	*out = n;
	return ret;
}

void tracer_purge_slot(struct tracer *t, int slot)
{
	size_t n = 0;

	if (tracer_read_inflight(t, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (t->sweep_keys[i].func_id == (uint32_t)slot &&
		    tracer_inflight_take(t, &t->sweep_keys[i], i >= t->sweep_first, NULL) == 0)
			tracer_forget_args(t, &t->sweep_keys[i]);
	t->skel->bss->slot_inflight[slot] = 0;
}

uint64_t tracer_untime_inflight(struct tracer *t, int slot)
{
	struct retop_inflight_val val;
	uint64_t n_untimed = 0;
	size_t n = 0;

	if (tracer_read_inflight(t, &n) != 0)
		return 0;
	/* Each call is deleted here or by its RET, never both: the one that
	 * deleted it counts it.  A RET that won the call from the sweep
	 * (RETURNING) but loses this delete leaves it to be counted here; a
	 * tombstone holds no call. */
	for (size_t i = 0; i < n; i++)
		if (t->sweep_keys[i].func_id == (uint32_t)slot &&
		    tracer_inflight_take(t, &t->sweep_keys[i], i >= t->sweep_first, &val) == 0 &&
		    val.start_ns != RETOP_START_ORPHANED) {
			__sync_fetch_and_sub(&t->skel->bss->slot_inflight[slot], 1);
			tracer_forget_args(t, &t->sweep_keys[i]);
			n_untimed++;
		}
	return n_untimed;
}

int64_t tracer_slot_inflight(const struct tracer *t, int slot)
{
	return __atomic_load_n(&t->skel->bss->slot_inflight[slot], __ATOMIC_RELAXED);
}

bool tracer_slot_timing_none(const struct tracer *t, int slot)
{
	/* The flag written before (tracer_record, tracer_entry_out) is seen
	 * by every entry that BPF has not counted in slot_entering yet; the
	 * ones it has are there, or already in flight (added before they
	 * leave slot_entering). */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&t->skel->bss->slot_entering[slot], __ATOMIC_ACQUIRE) <= 0 &&
	       __atomic_load_n(&t->skel->bss->slot_inflight[slot], __ATOMIC_ACQUIRE) <= 0;
}

uint64_t tracer_inflight_room_bytes(const struct tracer *t)
{
	int64_t live = 0;

	for (size_t i = 0; i < t->opts.max_functions; i++)
		live += tracer_slot_inflight(t, (int)i);
	return bpf_mem_inflight_room_bytes(t->opts.inflight_max, live);
}

/* By goroutine, the latest call first. */
static int sweep_entry_cmp(const void *a, const void *b)
{
	const struct sweep_entry *x = a, *y = b;

	if (x->key.tgid != y->key.tgid)
		return x->key.tgid < y->key.tgid ? -1 : 1;
	if (x->key.g != y->key.g)
		return x->key.g < y->key.g ? -1 : 1;
	if (x->val.start_ns != y->val.start_ns)
		return x->val.start_ns > y->val.start_ns ? -1 : 1;
	return 0;
}

/* Is the process still there?  Asked once per process and sweep. */
struct sweep_procs {
	uint32_t tgid[64];
	bool alive[64];
	uint64_t exec_ns[64]; /* its last exec() (BPF's execs), 0: none seen */
	size_t n;
};

/* Whether the process lives, and when it last called exec(): once per
 * process and sweep. */
static bool sweep_proc_alive(struct tracer *t, struct sweep_procs *p, uint32_t tgid,
			     uint64_t *exec_ns)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->tgid[i] == tgid) {
			*exec_ns = p->exec_ns[i];
			return p->alive[i];
		}
	bool alive = procs_alive((int)tgid);
	*exec_ns = tracer_exec_ns(t, (int)tgid);
	if (p->n < 64) {
		p->tgid[p->n] = tgid;
		p->alive[p->n] = alive;
		p->exec_ns[p->n++] = *exec_ns;
	}
	return alive;
}

/* Evidence seen between a call's start and the moment the sweep began
 * reading the map: the call was still in the map after that moment, so the
 * evidence cannot be its own RET.  Evidence from later (the map is read
 * bucket by bucket, the goroutine record after it) may be that call's own
 * return, followed by a new call in the same frame: it waits for the next
 * sweep. */
static bool sweep_evidence(uint64_t at, uint64_t start, uint64_t read_ns)
{
	return at > start && at < read_ns;
}

/* What proves a call dead (retop.h): its process
 * exited, its goroutine exited, or its goroutine ran at its depth or
 * shallower after the call began (a RET, or an entry still in flight). */
static bool sweep_proven_dead(const struct sweep_entry *e, const struct retop_goroutine_val *g,
			      bool have_g, uint64_t later_min_depth, uint64_t read_ns)
{
	uint64_t start = e->val.start_ns, depth = e->key.depth;

	if (later_min_depth <= depth)
		return true;
	if (!have_g)
		return false;
	return sweep_evidence(g->exit_ns, start, read_ns) ||
	       (sweep_evidence(g->ret_ns, start, read_ns) && g->ret_depth <= depth) ||
	       (sweep_evidence(g->min_ns, start, read_ns) && g->min_depth <= depth);
}

/* Take out a record no probe can reach any more (its process exited, or
 * its slot was detached): nothing races with this delete.  A call it held
 * is an orphan (of a live slot). */
static void sweep_reap(struct tracer *t, const struct sweep_entry *e, bool orphan)
{
	struct retop_inflight_val now;

	if (tracer_inflight_take(t, &e->key, e->spill, &now) != 0)
		return;
	tracer_forget_args(t, &e->key);
	if (!RETOP_START_LIVE(now.start_ns))
		return;
	__sync_fetch_and_sub(&t->skel->bss->slot_inflight[e->key.func_id], 1);
	if (orphan)
		t->slots[e->key.func_id].orphans++;
}

/* A call of a live process proven dead: claimed in the kernel, by
 * compare-and-swap, only if its record still holds the call that was judged
 * (retop_claim).  A newer call in the same frame, or a RET, wins instead;
 * nothing is deleted, nothing put back. */
static void sweep_claim(struct tracer *t, const struct sweep_entry *e)
{
	struct retop_claim c = {.key = e->key, .start_ns = e->val.start_ns};
	LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = &c, .ctx_size_in = sizeof(c));

	if (bpf_prog_test_run_opts(bpf_program__fd(t->skel->progs.retop_claim), &opts) != 0) {
		if (!t->claim_warned)
			log_warn("tracer", "cannot claim dead calls (%s): they stay in flight",
				 strerror(errno));
		t->claim_warned = true;
		return;
	}
	if (c.claimed)
		t->slots[e->key.func_id].orphans++;
}

/* Judge one goroutine's calls, [first, end) of the sorted entries. */
static void sweep_goroutine(struct tracer *t, struct sweep_entry *all, size_t first, size_t end,
			    struct sweep_procs *procs, uint64_t now, uint64_t read_ns,
			    struct tracer_inflight *inflight)
{
	struct retop_goroutine_key gk = {.tgid = all[first].key.tgid, .g = all[first].key.g};
	struct retop_goroutine_val gv;
	bool have_g = bpf_map__lookup_elem(t->skel->maps.goroutines, &gk, sizeof(gk), &gv,
					   sizeof(gv), 0) == 0;
	uint64_t exec_ns = 0;
	bool gone = !sweep_proc_alive(t, procs, gk.tgid, &exec_ns) && t->init_pidns;
	uint64_t later_min = UINT64_MAX;

	for (size_t i = first; i < end; i++) {
		struct sweep_entry *e = &all[i];
		uint32_t slot = e->key.func_id;
		uint64_t age = now > e->val.start_ns ? now - e->val.start_ns : 0;
		bool stale = slot >= t->opts.max_functions || !t->slots[slot].used;

		if (!RETOP_START_LIVE(e->val.start_ns)) {
			/* A claimed call's tombstone: its goroutine takes it
			 * out, or reuses it, when it reaches the key again. */
			if (stale || gone)
				sweep_reap(t, e, false);
			continue;
		}
		/* Only proof makes an orphan: a call past --orphan-timeout is
		 * overdue, and stays in flight for its RET to count it.  A call
		 * begun before its process's exec() is proven dead: that
		 * program is gone. */
		bool dead = gone || e->val.start_ns < exec_ns ||
			    sweep_proven_dead(e, &gv, have_g, later_min, read_ns);

		/* A later call at this depth or shallower proves the earlier
		 * ones dead only if it began before the read did (see
		 * sweep_evidence). */
		if (e->key.depth < later_min && e->val.start_ns < read_ns)
			later_min = e->key.depth;
		if (stale || gone) {
			sweep_reap(t, e, !stale);
			continue;
		}
		if (dead) {
			sweep_claim(t, e);
			continue;
		}
		inflight[slot].count++;
		if (age >= t->opts.orphan_timeout_ns)
			inflight[slot].overdue++;
		if (age > inflight[slot].oldest_ns)
			inflight[slot].oldest_ns = age;
	}
}

int tracer_sweep(struct tracer *t, struct tracer_inflight *inflight)
{
	struct sweep_procs procs = {.n = 0};
	struct sweep_entry *all;
	uint64_t now, read_ns;
	size_t n = 0;
	int ret;

	memset(inflight, 0, t->opts.max_functions * sizeof(*inflight));
	read_ns = clock_now_ns();
	ret = tracer_read_inflight(t, &n);
	now = clock_now_ns();
	all = ret ? NULL : calloc(n ? n : 1, sizeof(*all));
	if (!all) {
		if (!t->sweep_warned)
			log_warn("tracer", "in-flight calls not swept (their counts are stale): %s",
				 strerror(ret ? -ret : ENOMEM));
		t->sweep_warned = true;
		return ret ? ret : -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		all[i] =
		    (struct sweep_entry){t->sweep_keys[i], t->sweep_vals[i], i >= t->sweep_first};
	qsort(all, n, sizeof(*all), sweep_entry_cmp);
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && all[end].key.tgid == all[i].key.tgid &&
				  all[end].key.g == all[i].key.g;
		     end++)
			;
		sweep_goroutine(t, all, i, end, &procs, now, read_ns, inflight);
	}
	free(all);
	for (size_t i = 0; i < t->opts.max_functions; i++)
		inflight[i].orphans = t->slots[i].orphans;
	return 0;
}
