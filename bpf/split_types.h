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
	__u8 pad[2];
	__u32 preempt; /* the M's preemption signals (m.preemptGen) */
	__u32 systick; /* the P's system calls (p.syscalltick) */
	__u32 pad2;
};

#endif
