/* The time split (docs/ARCHITECTURE.md, "Where the time goes"): each timed
 * call's duration as on CPU, waiting for a CPU, blocked in the kernel and
 * parked by Go's scheduler.  Shared by bpf/split.h and user space. */
#ifndef RETOP_SPLIT_TYPES_H
#define RETOP_SPLIT_TYPES_H

#ifndef __u64
#include <linux/types.h>
#endif

/* The parts: its thread ran it; its thread was runnable, waiting for a
 * CPU; its thread slept in the kernel (a system call, I/O, a page fault)
 * with the goroutine on it; Go's scheduler took the goroutine off its
 * thread. */
#define RETOP_SPLIT_CPU 0
#define RETOP_SPLIT_RUNQ 1
#define RETOP_SPLIT_BLOCKED 2
#define RETOP_SPLIT_PARKED 3
#define RETOP_SPLIT_PARTS 4

/* Calls whose entry's figures are kept at once (an LRU map: past it the
 * least recently touched lose their split, and say so). */
#define RETOP_SPLIT_CALLS 8192

/* --time-split sched: probes on Go's scheduler (runtime.execute, where a
 * goroutine starts on a thread, and runtime.schedule, where its thread
 * leaves it) keep each goroutine's time on CPU, waiting for a CPU and
 * blocked while on a thread, and parked while off any (retop_sched_g), so
 * that a call Go parked is split exactly, and why each park was (Go's wait
 * reason) is summed per function.  Reasons are Go's g.waitreason (fewer
 * than 48 in every release) and two of retop's: */
#define RETOP_SPLIT_REASONS 64
#define RETOP_SPLIT_SUSPENDED 62 /* suspended (the GC scanning its stack) */
#define RETOP_SPLIT_RUNNABLE 63	 /* runnable: preempted, or it yielded */
/* Traced calls in flight on one goroutine whose parks are summed by reason
 * (the innermost; an outer one past them loses its reasons meanwhile). */
#define RETOP_SPLIT_NESTED 4
/* Goroutines and threads the scheduler's probes keep (LRU maps). */
#define RETOP_SPLIT_GOROUTINES 8192

/* What the kernel side lacks (split_missing, set by BPF): the task's
 * fields the split reads (CONFIG_SCHED_INFO, CONFIG_FAIR_GROUP_SCHED). */
#define RETOP_SPLIT_NO_TASK 0x1u

/* Per slot, in BPF's split_stats; user space reads it at each sample and
 * zeroes it with the slot. */
struct retop_split_stats {
	/* Timed calls whose goroutine stayed on its thread: each split in
	 * four, parked 0. */
	__u64 calls;
	/* Timed calls Go's scheduler took off their thread (or whose thread
	 * ran other goroutines meanwhile): the thread's figures are not
	 * theirs, so their whole duration is in ns[RETOP_SPLIT_PARKED]. */
	__u64 parked;
	/* Timed calls with no split: their entry's figures were evicted
	 * (RETOP_SPLIT_CALLS calls at once), or the call began before the
	 * split was on ... */
	__u64 lost;
	/* ... or a figure could not be read (the task's, g.m, m.p), or the
	 * thread is not scheduled by the fair class (the run-queue clock read
	 * is then not its). */
	__u64 unreadable;
	__u64 ns[RETOP_SPLIT_PARTS]; /* summed over calls and parked */
	/* Context switches of the threads of the calls split, inside them:
	 * voluntary (it slept) and involuntary (preempted). */
	__u64 vcsw, ivcsw;
	/* --time-split sched: of parked, the calls split exactly (their own
	 * CPU time, run-queue wait and kernel time between parks in their
	 * parts); and the time the goroutines of calls in flight were parked,
	 * by reason (RETOP_SPLIT_REASONS). */
	__u64 parked_split;
	__u64 reason_ns[RETOP_SPLIT_REASONS];
};

/* A goroutine as the scheduler's probes saw it. */
struct retop_sched_call {
	__u32 slot;
	__u32 pad;
	__u64 depth; /* g.stack.hi - SP of its frame */
};

struct retop_sched_g {
	__u64 born_ns;
	__u64 epoch;		      /* sched_epoch when made: it holds while that does */
	__u64 seg_t, seg_cpu, seg_rd; /* its stretch on a thread: when it began, and
				       * the thread's CPU time and run-queue wait then */
	__u64 stop_t;		      /* when it left its thread */
	__u64 acc[RETOP_SPLIT_PARTS]; /* its finished stretches' parts, and parked */
	__u32 tid;		      /* its thread while on one; 0 while off */
	__u32 reason;		      /* why it left (RETOP_SPLIT_REASONS) */
	__u32 gen;		      /* one more at each gap in what the probes saw */
	__u32 ncalls;		      /* of calls: innermost last */
	struct retop_sched_call calls[RETOP_SPLIT_NESTED];
};

/* The goroutine a thread runs, as runtime.execute said. */
struct retop_sched_thread {
	__u32 tgid;
	__u32 pad;
	__u64 g;
};

/* A timed call's figures at its entry, keyed like its in-flight record. */
struct retop_split_begin {
	__u64 start_ns;	 /* the call's start: a record of an earlier call is not its */
	__u64 cpu_ns;	 /* its thread's CPU time at start_ns */
	__u64 run_delay; /* its thread's time waiting for a CPU so far */
	__u64 p;	 /* Go's P the goroutine ran on (g.m.p) */
	__u32 tid;
	__u32 schedtick; /* the P's */
	__u32 nvcsw, nivcsw;
	__u8 track; /* g.trackingSeq, where it tells a park */
	__u8 ok;    /* every figure was read */
	__u8 sched; /* g_* hold (--time-split sched) */
	__u8 pad;
	__u32 preempt; /* the M's preemption signals (m.preemptGen) */
	__u32 systick; /* the P's system calls (p.syscalltick) */
	/* --time-split sched: its goroutine's parts at start_ns, and its
	 * record's identity (a record made anew since is not its). */
	__u32 g_gen;
	__u64 g_parts[RETOP_SPLIT_PARTS];
	__u64 g_born, g_epoch;
};

#endif
