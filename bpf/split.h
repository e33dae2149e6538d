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
 * drops the code below); Go's offsets, of the session's first binary. */
const volatile __u32 split_enabled = 0;
const volatile __u32 split_g_m = 0, split_m_p = 0, split_p_tick = 0, split_m_preempt = 0;
const volatile __u32 split_g_track = 0;
/* What the kernel lacks for the split (RETOP_SPLIT_NO_*), for user space. */
__u32 split_missing;

/* Per slot; sized to --max-functions before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
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
	if (split_parked(&b, (__u32)bpf_get_current_pid_tgid(), &o, &n)) {
		__sync_fetch_and_add(&ss->parked, 1);
		__sync_fetch_and_add(&ss->ns[RETOP_SPLIT_PARKED], dur);
		return;
	}
	split_add(ss, &b, &n, dur, taken);
}

#endif
