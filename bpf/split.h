/* The time split's kernel side (bpf/split_types.h), included by
 * retop.bpf.c: split_begin() at a timed call's entry, split_end() at its
 * paired RET.  No probe of its own: the thread's figures come from its
 * task_struct (read through BTF), Go's from the goroutine's g, m and p.
 *
 * A thread's CPU time: the kernel brings sum_exec_runtime up to date only
 * at a tick or a switch; the stretch since runs on its CPU's run-queue
 * clock from se.exec_start.  So at time t (bpf_ktime_get_ns()) it is
 *	sum_exec_runtime + (rq->clock_task - se.exec_start) + (t - rq->clock)
 * where t - rq->clock holds the offset between the two clocks, the same at
 * both ends of a call: it cancels in the difference.  sched_info.run_delay
 * (time runnable, waiting for a CPU) is whole while the thread runs, as it
 * does in its probe.  What remains of a call on its thread is the time it
 * slept in the kernel. */
#ifndef RETOP_SPLIT_H
#define RETOP_SPLIT_H

#include <bpf/bpf_core_read.h>

#include "split_types.h"

/* The kernel's structures, as far as the split reads them: CO-RE finds
 * each field in the running kernel's BTF. */
struct rq___retop {
	__u64 clock;
	__u64 clock_task;
} __attribute__((preserve_access_index));

struct cfs_rq___retop {
	struct rq___retop *rq;
} __attribute__((preserve_access_index));

struct sched_entity___retop {
	__u64 exec_start;
	__u64 sum_exec_runtime;
	struct cfs_rq___retop *cfs_rq;
} __attribute__((preserve_access_index));

struct sched_info___retop {
	unsigned long long run_delay;
} __attribute__((preserve_access_index));

struct task_struct___retop {
	unsigned int policy;
	struct sched_entity___retop se;
	struct sched_info___retop sched_info;
	unsigned long nvcsw, nivcsw;
} __attribute__((preserve_access_index));

/* SCHED_NORMAL, SCHED_BATCH, SCHED_IDLE: the fair class, whose run queue
 * se.cfs_rq names. */
#define SPLIT_FAIR_POLICY(p) ((p) == 0 || (p) == 3 || (p) == 5)

/* Split the timed calls (--time-split off turns it off: the verifier then
 * drops the code below); with the scheduler's probes (--time-split sched);
 * Go's offsets, of the session's first binary. */
const volatile __u32 split_enabled = 0;
const volatile __u32 split_sched = 0;
const volatile __u32 split_g_status = 0, split_g_waitreason = 0;
/* Odd while the scheduler's probes are in (user space moves it each time
 * they go in or out): a goroutine's record holds only in the epoch it was
 * made in, with no start or stop of it missed. */
__u64 sched_epoch;
/* Hits of the scheduler's probes (in watch_hits too): what the mode costs. */
__u64 sched_hits;
const volatile __u32 split_g_m = 0, split_m_p = 0, split_p_tick = 0, split_m_preempt = 0;
const volatile __u32 split_g_track = 0;
/* What the kernel lacks for the split (RETOP_SPLIT_NO_*), for user space. */
__u32 split_missing;

/* Per slot; sized to --max-functions before load; mmapped by user space,
 * which reads a thousand functions' every second without a syscall each. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, RETOP_MAX_FUNCS);
	__type(key, __u32);
	__type(value, struct retop_split_stats);
} split_stats SEC(".maps");

/* Each timed call's figures at its entry, taken by its RET.  An LRU map,
 * preallocated: a call that never returns holds no room for ever. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RETOP_SPLIT_CALLS);
	__type(key, struct retop_inflight_key);
	__type(value, struct retop_split_begin);
} split_calls SEC(".maps");

/* --time-split sched (split_types.h); one entry each when it is off. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RETOP_SPLIT_GOROUTINES);
	__type(key, struct retop_goroutine_key);
	__type(value, struct retop_sched_g);
} sched_gs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, RETOP_SPLIT_GOROUTINES);
	__type(key, __u32);
	__type(value, struct retop_sched_thread);
} sched_threads SEC(".maps");

struct split_now {
	__u64 cpu, run_delay;
	__u32 nvcsw, nivcsw;
};

/* The current thread's figures at time t (a clock reading of this hit). */
static __always_inline int split_task_now(__u64 t, struct split_now *n)
{
	struct task_struct___retop *task = (void *)bpf_get_current_task_btf();
	struct rq___retop *rq;
	__u64 es, c, sum, ct;
	int same = 0;

	if (!bpf_core_field_exists(task->se.cfs_rq) ||
	    !bpf_core_field_exists(task->sched_info.run_delay)) {
		split_missing |= RETOP_SPLIT_NO_TASK;
		return -1;
	}
	if (!SPLIT_FAIR_POLICY(task->policy))
		return -1;
	rq = task->se.cfs_rq->rq;
	if (!rq)
		return -1;
	/* A tick, or another CPU's wake-up onto this run queue, may update
	 * them meanwhile: read again until two reads agree. */
	for (int i = 0; i < 3 && !same; i++) {
		es = task->se.exec_start;
		c = rq->clock;
		sum = task->se.sum_exec_runtime;
		ct = rq->clock_task;
		same =
		    es == task->se.exec_start && c == rq->clock && sum == task->se.sum_exec_runtime;
	}
	if (!same)
		return -1;
	n->cpu = sum + (ct - es) + (t - c);
	n->run_delay = task->sched_info.run_delay;
	n->nvcsw = (__u32)task->nvcsw;
	n->nivcsw = (__u32)task->nivcsw;
	return 0;
}

/* What Go's scheduler says of goroutine g now. */
struct split_go {
	__u64 p;       /* its P (g.m.p) */
	__u32 tick;    /* the P's schedtick */
	__u32 systick; /* and syscalltick, the next word */
	__u32 preempt; /* its M's preemption signals */
	__u8 track;    /* g.trackingSeq, where it tells a park */
};

static __always_inline int split_go_now(__u64 g, struct split_go *o)
{
	__u64 m = 0;

	if (bpf_probe_read_user(&m, sizeof(m), (void *)(g + split_g_m)) != 0 || !m)
		return -1;
	if (bpf_probe_read_user(&o->p, sizeof(o->p), (void *)(m + split_m_p)) != 0 || !o->p)
		return -1;
	/* Both ticks in one read: schedtick, then syscalltick. */
	if (bpf_probe_read_user(&o->tick, 2 * sizeof(o->tick), (void *)(o->p + split_p_tick)) != 0)
		return -1;
	if (bpf_probe_read_user(&o->preempt, sizeof(o->preempt), (void *)(m + split_m_preempt)) !=
	    0)
		return -1;
	o->track = 0;
	if (split_g_track &&
	    bpf_probe_read_user(&o->track, sizeof(o->track), (void *)(g + split_g_track)) != 0)
		return -1;
	return 0;
}

/* ---- --time-split sched: the scheduler's probes */

/* A goroutine's parts so far, at t, on the thread it runs on now (whose
 * figures at t are n). */
static __always_inline void sched_parts_at(const struct retop_sched_g *r, const struct split_now *n,
					   __u64 t, __u64 out[RETOP_SPLIT_PARTS])
{
	__u64 cpu = n->cpu - r->seg_cpu, rq = n->run_delay - r->seg_rd, wall = t - r->seg_t;

	if ((__s64)wall < 0)
		wall = 0;
	if ((__s64)cpu < 0 || cpu > wall)
		cpu = (__s64)cpu < 0 ? 0 : wall;
	if ((__s64)rq < 0 || rq > wall - cpu)
		rq = (__s64)rq < 0 ? 0 : wall - cpu;
	out[RETOP_SPLIT_CPU] = r->acc[RETOP_SPLIT_CPU] + cpu;
	out[RETOP_SPLIT_RUNQ] = r->acc[RETOP_SPLIT_RUNQ] + rq;
	out[RETOP_SPLIT_BLOCKED] = r->acc[RETOP_SPLIT_BLOCKED] + wall - cpu - rq;
	out[RETOP_SPLIT_PARKED] = r->acc[RETOP_SPLIT_PARKED];
}

/* A stretch on a thread begins at t (its figures n). */
static __always_inline void sched_stretch(struct retop_sched_g *r, __u32 tid,
					  const struct split_now *n, __u64 t)
{
	r->tid = tid;
	r->seg_t = t;
	r->seg_cpu = n->cpu;
	r->seg_rd = n->run_delay;
}

/* Its stretch ends at t: into its parts; parked from now, for reason. */
static __always_inline void sched_leave(struct retop_sched_g *r, const struct split_now *n, __u64 t,
					__u32 reason)
{
	__u64 parts[RETOP_SPLIT_PARTS];

	sched_parts_at(r, n, t, parts);
	r->acc[RETOP_SPLIT_CPU] = parts[RETOP_SPLIT_CPU];
	r->acc[RETOP_SPLIT_RUNQ] = parts[RETOP_SPLIT_RUNQ];
	r->acc[RETOP_SPLIT_BLOCKED] = parts[RETOP_SPLIT_BLOCKED];
	r->tid = 0;
	r->stop_t = t;
	r->reason = reason;
}

/* The record of goroutine g of process tgid, running on thread tid at t
 * (figures n): made, or made anew when the probes' epoch changed since;
 * one the probes did not see start here begins a stretch, a gap. */
static __always_inline struct retop_sched_g *sched_running(__u32 tgid, __u64 g, __u32 tid,
							   const struct split_now *n, __u64 t)
{
	struct retop_goroutine_key gk = {.tgid = tgid, .g = g};
	struct retop_sched_g *r, nr = {};
	__u64 epoch = *(volatile __u64 *)&sched_epoch;

	if (!(epoch & 1))
		return NULL;
	r = bpf_map_lookup_elem(&sched_gs, &gk);
	if (r && r->epoch == epoch) {
		if (r->tid != tid) {
			r->gen++;
			sched_stretch(r, tid, n, t);
		}
		return r;
	}
	nr.born_ns = t;
	nr.epoch = epoch;
	sched_stretch(&nr, tid, n, t);
	if (bpf_map_update_elem(&sched_gs, &gk, &nr, BPF_ANY) != 0)
		return NULL;
	return bpf_map_lookup_elem(&sched_gs, &gk);
}

/* A traced call of slot at depth begins on it: the calls at that depth or
 * deeper ended unseen (or this is one again); past RETOP_SPLIT_NESTED the
 * outermost gives its place. */
/* How many of its calls are shallower than depth (the others ended). */
static __always_inline __u32 sched_live_calls(const struct retop_sched_g *r, __u64 depth)
{
	__u32 n = r->ncalls, k;

	if (n > RETOP_SPLIT_NESTED)
		n = RETOP_SPLIT_NESTED;
	for (int i = 0; i < RETOP_SPLIT_NESTED && n > 0; i++) {
		k = n - 1;
		/* The check and the access on one register for the verifier. */
		asm volatile("" : "+r"(k));
		if (k >= RETOP_SPLIT_NESTED || r->calls[k].depth < depth)
			break;
		n--;
	}
	return n;
}

static __always_inline void sched_push(struct retop_sched_g *r, __u32 slot, __u64 depth)
{
	__u32 n = sched_live_calls(r, depth);

	if (n >= RETOP_SPLIT_NESTED) {
		for (int i = 0; i < RETOP_SPLIT_NESTED - 1; i++)
			r->calls[i] = r->calls[i + 1];
		n = RETOP_SPLIT_NESTED - 1;
	}
	asm volatile("" : "+r"(n));
	if (n >= RETOP_SPLIT_NESTED)
		return;
	r->calls[n].slot = slot;
	r->calls[n].depth = depth;
	r->ncalls = n + 1;
}

/* The call at depth returned: it and any deeper leave. */
static __always_inline void sched_pop(struct retop_sched_g *r, __u64 depth)
{
	r->ncalls = sched_live_calls(r, depth);
}

/* Why goroutine g left its thread: Go's wait reason while it waits, or
 * retop's for a runnable or suspended one; 0 (Go's "") when unknown. */
static __always_inline __u32 sched_reason(__u64 g)
{
	__u32 status = 0;
	__u8 why = 0;

	if (bpf_probe_read_user(&status, sizeof(status), (void *)(g + split_g_status)) != 0)
		return 0;
	/* Its status less _Gscan: _Grunnable, _Gwaiting, _Gpreempted. */
	status &= ~0x1000u;
	if (status == 1)
		return RETOP_SPLIT_RUNNABLE;
	if (status == 9)
		return RETOP_SPLIT_SUSPENDED;
	if (status != 4 ||
	    bpf_probe_read_user(&why, sizeof(why), (void *)(g + split_g_waitreason)) != 0)
		return 0;
	return why < RETOP_SPLIT_SUSPENDED ? why : 0;
}

/* runtime.execute(gp): gp (RAX) starts on this thread.  Its park, if the
 * probes saw it begin, ends: parked time, for its reason, to every traced
 * call in flight on it.  The goroutine the thread ran before, if no
 * runtime.schedule was seen since, left it unseen: a gap. */
static __always_inline void sched_run(struct pt_regs *ctx)
{
	__u64 pt = bpf_get_current_pid_tgid(), g = ctx->rax, now = bpf_ktime_get_ns(), d;
	__u32 tgid = pt >> 32, tid = (__u32)pt;
	struct retop_goroutine_key gk = {.tgid = tgid};
	struct retop_sched_thread *th, nt = {.tgid = tgid, .g = g};
	struct retop_sched_g *r;
	struct split_now n;

	if (!split_sched || !g || !(*(volatile __u64 *)&sched_epoch & 1) ||
	    split_task_now(now, &n) != 0)
		return;
	th = bpf_map_lookup_elem(&sched_threads, &tid);
	if (th && th->tgid == tgid && th->g && th->g != g) {
		gk.g = th->g;
		r = bpf_map_lookup_elem(&sched_gs, &gk);
		if (r && r->tid == tid) {
			sched_leave(r, &n, now, 0);
			r->gen++;
		}
	}
	gk.g = g;
	r = bpf_map_lookup_elem(&sched_gs, &gk);
	if (r && r->epoch == *(volatile __u64 *)&sched_epoch && !r->tid) {
		d = now - r->stop_t;
		r->acc[RETOP_SPLIT_PARKED] += d;
		sched_stretch(r, tid, &n, now);
		for (int i = 0; i < RETOP_SPLIT_NESTED; i++) {
			struct retop_split_stats *ss;
			__u32 slot;
			if (i >= r->ncalls)
				break;
			slot = r->calls[i].slot;
			ss = bpf_map_lookup_elem(&split_stats, &slot);
			if (ss)
				__sync_fetch_and_add(
				    &ss->reason_ns[r->reason & (RETOP_SPLIT_REASONS - 1)], d);
		}
	} else {
		/* New, or new in this epoch, or it ran elsewhere unseen (a
		 * gap); already here: put back without leaving (park_m). */
		sched_running(tgid, g, tid, &n, now);
	}
	bpf_map_update_elem(&sched_threads, &tid, &nt, BPF_ANY);
}

/* runtime.schedule(): this thread leaves the goroutine runtime.execute
 * started on it (its status already says why). */
static __always_inline void sched_stop(void)
{
	__u64 pt = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tgid = pt >> 32, tid = (__u32)pt;
	struct retop_goroutine_key gk = {.tgid = tgid};
	struct retop_sched_thread *th;
	struct retop_sched_g *r;
	struct split_now n;

	if (!split_sched)
		return;
	th = bpf_map_lookup_elem(&sched_threads, &tid);
	if (!th || th->tgid != tgid || !th->g)
		return;
	gk.g = th->g;
	th->g = 0;
	r = bpf_map_lookup_elem(&sched_gs, &gk);
	if (!r || r->epoch != *(volatile __u64 *)&sched_epoch || r->tid != tid ||
	    split_task_now(now, &n) != 0)
		return;
	sched_leave(r, &n, now, sched_reason(gk.g));
}

/* Its goroutine's parts at the call's start, from its record. */
static __always_inline void split_sched_begin(const struct retop_inflight_key *key,
					      struct retop_split_begin *b,
					      const struct split_now *n, __u64 start)
{
	struct retop_sched_g *r = sched_running(key->tgid, key->g, b->tid, n, start);

	if (!r)
		return;
	sched_parts_at(r, n, start, b->g_parts);
	b->g_born = r->born_ns;
	b->g_gen = r->gen;
	b->g_epoch = r->epoch;
	b->sched = 1;
	sched_push(r, key->func_id, key->depth);
}

/* The call split exactly from its goroutine's record, when the probes saw
 * all it did since its entry: its parts' growth, retop's traps out of its
 * CPU time.  1 when it was; 0 to split it as without them. */
static __always_inline int split_sched_end(struct retop_split_stats *ss,
					   const struct retop_inflight_key *key,
					   const struct retop_split_begin *b,
					   const struct split_now *n, __u64 now, __u64 dur,
					   __u64 taken)
{
	struct retop_goroutine_key gk = {.tgid = key->tgid, .g = key->g};
	struct retop_sched_g *r = bpf_map_lookup_elem(&sched_gs, &gk);
	__u64 parts[RETOP_SPLIT_PARTS], cpu, rq, park, on;

	if (!r)
		return 0;
	sched_pop(r, key->depth);
	if (r->born_ns != b->g_born || r->epoch != b->g_epoch || r->gen != b->g_gen ||
	    r->epoch != *(volatile __u64 *)&sched_epoch ||
	    r->tid != (__u32)bpf_get_current_pid_tgid())
		return 0;
	sched_parts_at(r, n, now, parts);
	cpu = parts[RETOP_SPLIT_CPU] - b->g_parts[RETOP_SPLIT_CPU];
	rq = parts[RETOP_SPLIT_RUNQ] - b->g_parts[RETOP_SPLIT_RUNQ];
	park = parts[RETOP_SPLIT_PARKED] - b->g_parts[RETOP_SPLIT_PARKED];
	if ((__s64)cpu < 0 || (__s64)rq < 0 || (__s64)park < 0)
		return 0;
	on = cpu > taken ? cpu - taken : 0;
	if (on > dur)
		on = dur;
	if (rq > dur - on)
		rq = dur - on;
	if (park > dur - on - rq)
		park = dur - on - rq;
	if (park) {
		__sync_fetch_and_add(&ss->parked, 1);
		__sync_fetch_and_add(&ss->parked_split, 1);
	} else {
		__sync_fetch_and_add(&ss->calls, 1);
		__sync_fetch_and_add(&ss->vcsw, n->nvcsw - b->nvcsw);
		__sync_fetch_and_add(&ss->ivcsw, n->nivcsw - b->nivcsw);
	}
	__sync_fetch_and_add(&ss->ns[RETOP_SPLIT_CPU], on);
	__sync_fetch_and_add(&ss->ns[RETOP_SPLIT_RUNQ], rq);
	__sync_fetch_and_add(&ss->ns[RETOP_SPLIT_PARKED], park);
	__sync_fetch_and_add(&ss->ns[RETOP_SPLIT_BLOCKED], dur - on - rq - park);
	return 1;
}

/* A timed call begins at start (its in-flight record's start_ns). */
static __always_inline void split_begin(const struct retop_inflight_key *key, __u64 start)
{
	struct retop_split_begin b = {.start_ns = start};
	struct split_now n;
	struct split_go o;

	if (!split_enabled || key->func_id == cal_slot)
		return;
	b.tid = (__u32)bpf_get_current_pid_tgid();
	if (split_task_now(start, &n) == 0 && split_go_now(key->g, &o) == 0) {
		b.p = o.p;
		b.schedtick = o.tick;
		b.systick = o.systick;
		b.preempt = o.preempt;
		b.track = o.track;
		b.cpu_ns = n.cpu;
		b.run_delay = n.run_delay;
		b.nvcsw = n.nvcsw;
		b.nivcsw = n.nivcsw;
		b.ok = 1;
		if (split_sched)
			split_sched_begin(key, &b, &n, start);
	}
	/* No room is the RET's to count (lost): it finds no record. */
	bpf_map_update_elem(&split_calls, key, &b, BPF_ANY);
}

/* Did Go's scheduler take the goroutine off its thread between b and now,
 * so that the thread's figures are not the call's?  Its thread changed; or
 * its P changed, or its P started another goroutine, or its thread slept
 * outside a system call: its M waited for work meanwhile, then took the
 * goroutine back with the time slice it left (which ticks nothing).
 * Not a preemption its own M took back at once: Go preempts a goroutine
 * that ran 10 ms, and its thread, with nothing else to run, starts it
 * again; each tick of its P then came after a preemption signal to its M,
 * which never slept.  From Go 1.26 on, g.trackingSeq unchanged says it
 * never left running (a system call whose P served others meanwhile, a
 * page fault, stays the thread's), and changed, that it did (not a stack
 * copy or a GC assist on its thread, which tick nothing and do not sleep). */
static __always_inline int split_parked(const struct retop_split_begin *b, __u32 tid,
					const struct split_go *o, const struct split_now *n)
{
	int slept = n->nvcsw != b->nvcsw;

	if (tid != b->tid)
		return 1;
	if (split_g_track && o->track == b->track)
		return 0;
	if (o->p != b->p)
		return 1;
	if (o->tick != b->schedtick)
		return slept || o->tick - b->schedtick > o->preempt - b->preempt;
	if (split_g_track)
		return slept;
	return slept && o->systick == b->systick;
}

/* The four parts of a call on one thread, dur long once retop's own traps
 * (taken, CPU time of the thread) are out of it. */
static __always_inline void split_add(struct retop_split_stats *ss,
				      const struct retop_split_begin *b, const struct split_now *n,
				      __u64 dur, __u64 taken)
{
	__u64 cpu = n->cpu - b->cpu_ns, rq = n->run_delay - b->run_delay, on, runq;

	if ((__s64)cpu < 0)
		cpu = 0;
	if ((__s64)rq < 0)
		rq = 0;
	on = cpu > taken ? cpu - taken : 0;
	if (on > dur)
		on = dur;
	runq = rq < dur - on ? rq : dur - on;
	__sync_fetch_and_add(&ss->calls, 1);
	__sync_fetch_and_add(&ss->ns[RETOP_SPLIT_CPU], on);
	__sync_fetch_and_add(&ss->ns[RETOP_SPLIT_RUNQ], runq);
	__sync_fetch_and_add(&ss->ns[RETOP_SPLIT_BLOCKED], dur - on - runq);
	__sync_fetch_and_add(&ss->vcsw, n->nvcsw - b->nvcsw);
	__sync_fetch_and_add(&ss->ivcsw, n->nivcsw - b->nivcsw);
}

/* A paired call begun at start, counted by its RET (whose program began at
 * now), dur long after taken (retop's traps inside it) came out. */
static __always_inline void split_end(const struct retop_inflight_key *key, __u64 start, __u64 now,
				      __u64 dur, __u64 taken)
{
	struct retop_split_begin *rec, b;
	struct retop_split_stats *ss;
	struct split_now n;
	struct split_go o;
	__u32 slot = key->func_id;

	if (!split_enabled)
		return;
	ss = bpf_map_lookup_elem(&split_stats, &slot);
	if (!ss)
		return;
	rec = bpf_map_lookup_elem(&split_calls, key);
	if (!rec || rec->start_ns != start) {
		__sync_fetch_and_add(&ss->lost, 1);
		return;
	}
	b = *rec;
	bpf_map_delete_elem(&split_calls, key);
	if (!b.ok || split_task_now(now, &n) != 0 || split_go_now(key->g, &o) != 0) {
		__sync_fetch_and_add(&ss->unreadable, 1);
		return;
	}
	if (split_sched && b.sched && split_sched_end(ss, key, &b, &n, now, dur, taken))
		return;
	if (split_parked(&b, (__u32)bpf_get_current_pid_tgid(), &o, &n)) {
		__sync_fetch_and_add(&ss->parked, 1);
		__sync_fetch_and_add(&ss->ns[RETOP_SPLIT_PARKED], dur);
		return;
	}
	split_add(ss, &b, &n, dur, taken);
}

#endif
