/* The BPF side of retop, seen from user space: load the programs once, attach
 * a function (its entry and every RET site) or detach it, read its counters,
 * and sweep in-flight calls into orphans.
 *
 * A function occupies a slot; the slot number is the function id carried in
 * the attach cookie and the index of its counters in the BPF array. */
#ifndef RETOP_TRACER_H
#define RETOP_TRACER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"
#include "../bpf/split_types.h"
#include "callers.h"
#include "funcs.h"
#include "interlock.h"

struct tracer;

/* A function's probes of each kind come and go apart (budget.c). */
enum tracer_kind { TRACER_ENTRY, TRACER_RETS, TRACER_MARKS, TRACER_KINDS };

/* In-flight calls tracked at once, across all traced functions: a server
 * with 10,000 goroutines 25 traced frames deep.  --max-in-flight changes
 * it.  The map is allocated per call: bpf_mem_inflight_base_bytes() at
 * load, then bpf_mem_inflight_call_bytes() a call in flight. */
#define TRACER_DEFAULT_IN_FLIGHT 262144u
#define TRACER_MIN_IN_FLIGHT 16u
#define TRACER_MAX_IN_FLIGHT (1u << 24)

struct tracer_opts {
	size_t max_functions;	    /* slots, <= RETOP_MAX_FUNCS */
	uint32_t inflight_max;	    /* in-flight map entries */
	uint64_t orphan_timeout_ns; /* in flight longer: overdue, still kept */
	uint64_t goid_offset;	    /* of goid in runtime.g; 0: goroutine ids unknown */
	bool latency_only;	    /* no callers, no slowest calls: less BPF work a call */
	uint64_t slow_ns;	    /* --slow: ship every call this long; 0: off */
	/* The time split (bpf/split.h): on, with Go's runtime offsets
	 * (src/go_offsets.h; g_m 0: unknown, no split). */
	bool split;
	uint32_t split_g_m, split_m_p, split_p_tick, split_m_preempt, split_g_track;
	/* --time-split sched: the scheduler's probes, and Go's offsets of
	 * g.atomicstatus and g.waitreason (0: unknown, no sched mode). */
	bool split_sched;
	uint32_t split_g_status, split_g_waitreason;
};

/* Per-slot in-flight view, filled by tracer_sweep(). */
struct tracer_inflight {
	uint64_t count;
	uint64_t overdue;   /* of count, in flight for --orphan-timeout or more */
	uint64_t oldest_ns; /* age of the oldest in-flight call, 0 if none */
	uint64_t orphans;   /* swept since the slot was attached or reset */
};

int tracer_open(const struct tracer_opts *opts, struct tracer **out, char *err);
/* Detach everything and unload.  Links are file descriptors: if retop dies
 * instead, the kernel removes the probes all the same. */
void tracer_close(struct tracer *t);

/* Attach the function v approves, at the file offsets it carries and no
 * others, in the file it approved (its descriptor, not a path) for pid (-1:
 * every process running the binary, now and later).  v must come from
 * interlock_approve().
 * All or nothing: on failure no probe of the function stays attached.
 * Returns the slot (>= 0) or a negative errno.  *entry_only tells whether
 * only the entry probe was attached (no RET, or too many RET sites), with
 * the reason in err.  error_reg: the register of the error result's itab at
 * a RET (args_error_find), set before the first probe can fire; -1: its
 * errors are not read. */
int tracer_attach(struct tracer *t, const struct interlock_verdict *v, int pid, int error_reg,
		  bool *entry_only, char *err);
void tracer_detach(struct tracer *t, int slot);
/* The overhead budget's levers (budget.c), each on an attached slot and
 * with the verdict that approved it.  The entry probe and the RET probes
 * come and go apart: put the RETs in before calls are timed and take them
 * out once the timed calls drained; rets_in starts a new epoch. */
/* In: in v's binary (a deploy adds a binary with its verdict, image > 0;
 * its RET sites take the next free range of the slot's ret_hits).  Out:
 * in every binary. */
int tracer_entry_in(struct tracer *t, int slot, const struct interlock_verdict *v, int pid,
		    char *err);
void tracer_entry_out(struct tracer *t, int slot);
int tracer_rets_in(struct tracer *t, int slot, const struct interlock_verdict *v, int pid,
		   char *err);
void tracer_rets_out(struct tracer *t, int slot);
/* The inline marks v approved (interlock_approve_marks), each hit an
 * inlined call counted (never timed): in with the entry, out while the
 * budget estimates the function. */
int tracer_marks_in(struct tracer *t, int slot, const struct interlock_verdict *v, int pid,
		    char *err);
void tracer_marks_out(struct tracer *t, int slot);
/* From tracer_defer on, probes taken out (tracer_*_out, tracer_detach)
 * stop counting as in at once but are closed only by tracer_flush, all
 * together: a close waits for the kernel's grace periods (20-30 ms each
 * on one VM, 75-200 ms a batch on another), and a tick that moves fifty
 * functions' probes then waits for a few of them, not for fifty in a row.
 * The flush hands every kind to one batch that a thread of its own closes
 * (an entry probe out times no call, so a RET need not wait for it), and
 * returns: the caller's clock does not wait for the grace periods.
 * Probes of a slot going back in before its batch closed wait for it, so
 * that no site is ever probed twice. */
void tracer_defer(struct tracer *t);
void tracer_flush(struct tracer *t);
bool tracer_marks_are_in(const struct tracer *t, int slot);
/* Where binary image's RET sites start in the slot's ret_hits, or -1 when
 * they were never attached. */
int tracer_site_base(const struct tracer *t, int slot, unsigned image);
/* Every probe in binary image out, the watchers too: no process runs it
 * any more. */
void tracer_image_out(struct tracer *t, unsigned image);
/* Binary image is the file of binary as again (the -p target ran exec() of
 * it): its RET sites count in the same range of ret_hits. */
void tracer_image_alias(struct tracer *t, unsigned image, unsigned as);
bool tracer_entry_is_in(const struct tracer *t, int slot);
bool tracer_rets_are_in(const struct tracer *t, int slot);
/* Time the slot's calls (keep them in flight for their RET), or only count
 * them at their entry (BPF's untimed counter). */
void tracer_record(struct tracer *t, int slot, bool on);
/* The slot's calls in the in-flight map now. */
int64_t tracer_slot_inflight(const struct tracer *t, int slot);
/* After the slot stopped timing calls (tracer_record off, or its entry
 * probe out, which fires until the flush but times nothing): no timed call
 * is in flight or beginning, so its RET probes may go. */
bool tracer_slot_timing_none(const struct tracer *t, int slot);
/* Take the slot's timed calls out of the in-flight map: each one deleted
 * here (not by its RET) is returned in the count, to be counted untimed. */
uint64_t tracer_untime_inflight(struct tracer *t, int slot);
/* The estimate's sampling windows (retop.h): slices of len ns from base
 * (len 0: no windows, every call counted), slice 0 sampled or not; slice k
 * sampled or not; the calls begun in slice k, read once (zeroed). */
void tracer_gate(struct tracer *t, int slot, uint64_t base, uint64_t len, bool first_on);
void tracer_gate_plan(struct tracer *t, int slot, uint64_t k, bool on);
uint64_t tracer_gate_take(struct tracer *t, int slot, uint64_t k);
/* The calls begun in slice k not taken yet (not zeroed). */
uint64_t tracer_gate_count(const struct tracer *t, int slot, uint64_t k);
/* The window the entry probe was in, [in_ns, out_ns) (UINT64_MAX: still
 * in): the gate counts no call begun outside it. */
void tracer_gate_window(struct tracer *t, int slot, uint64_t in_ns, uint64_t out_ns);
/* A sampled slice's calls at which BPF wakes the engine (0: never). */
void tracer_gate_cap(struct tracer *t, int slot, uint64_t calls);
/* Approve the target's runtime.recovery (calls unwound by a recovered
 * panic are orphans, not restarts) and runtime.goexit1 (the calls of a
 * goroutine that exits are orphans at once) for watching. */
int tracer_watch_recovery(struct tracer *t, const struct interlock_verdict *recovery, int pid);
int tracer_watch_goexit(struct tracer *t, const struct interlock_verdict *goexit, int pid);
/* --time-split sched: approve the target's runtime.execute (a goroutine
 * starts on a thread) and runtime.schedule (its thread leaves it) for
 * watching, with the other watchers; -ENOTSUP when the split's scheduler
 * mode is not on. */
int tracer_watch_sched(struct tracer *t, const struct interlock_verdict *run,
		       const struct interlock_verdict *stop, int pid);
/* Both scheduler probes are in (of some binary): calls are split exactly. */
bool tracer_sched_watched(const struct tracer *t);
/* Their hits so far (in tracer_watch_hits() too). */
uint64_t tracer_sched_hits(const struct tracer *t);
/* Put the watchers' probes in or take them out: a trap at every goroutine
 * exit is paid only while timed calls are in flight (budget.c). */
int tracer_watchers(struct tracer *t, bool on);
bool tracer_watchers_in(const struct tracer *t);
/* exec(): the BPF side notes when a process with calls in flight calls
 * it (its calls begun before are orphans at the next sweep).  Watch pid
 * from now on whether or not it has calls in flight, and read when it last
 * called exec() (0: not since watched; -ENOTSUP: exec() not watched). */
int tracer_watch_exec(struct tracer *t, int pid);
uint64_t tracer_exec_ns(struct tracer *t, int pid);

/* The engine's wake-ups from BPF: an fd that polls readable once the
 * budget's hits reached what tracer_wake_arm() set (hits from now; 0:
 * disarm), a watched process called exec(), or a sampled slice reached
 * its cap (tracer_gate_cap); -1 without one.  Drain it after each wake:
 * returns why (RETOP_WAKE_BUDGET, RETOP_WAKE_SLICE, or both). */
int tracer_wake_fd(const struct tracer *t);
unsigned tracer_wake_drain(struct tracer *t);
void tracer_wake_arm(struct tracer *t, uint64_t hits);
/* Hits of the watchers so far. */
uint64_t tracer_watch_hits(const struct tracer *t);
/* Every hit the budget counts so far (every probe's, the watchers' too). */
uint64_t tracer_budget_hits(const struct tracer *t);
/* What the RET takes out of a call's duration: the kernel's part of each
 * probe hit inside it, by kind (RETOP_HIT_*): cost[k] ns (each program
 * adds its own run time); and of the call's own two hits, by how its entry
 * runs (RETOP_OWN_*): own[w] ns. */
void tracer_hit_costs(struct tracer *t, const double cost[RETOP_HIT_KINDS],
		      const double own[RETOP_OWN_KINDS]);
/* A probe of kind k (RETOP_HIT_*) with the tracer's own programs and link
 * type on retop's own code (file offset off of path), to time what a hit
 * costs: the calibration's slot (retop.h), called with a g of retop's own
 * (hitcost.c); an entry-only one keeps no call in flight. */
struct probe_set;
int tracer_cal_attach(struct tracer *t, int kind, bool entry_only, const char *path, uint64_t off,
		      struct probe_set **out);
uint64_t tracer_cal_hits(const struct tracer *t);
/* Before a calibration call: forget the last one.  After it: its last hit's
 * program run time, and the window between its entry's program and its
 * RET's (0: no such pair). */
void tracer_cal_clear(struct tracer *t);
void tracer_cal_last(const struct tracer *t, uint64_t *prog_ns, uint64_t *window_ns);
/* The programs' own run time so far, per kind: ns[k] over n[k] hits. */
void tracer_prog_time(const struct tracer *t, uint64_t ns[RETOP_HIT_KINDS],
		      uint64_t n[RETOP_HIT_KINDS]);
size_t tracer_probe_count(const struct tracer *t, int slot);

int tracer_read(struct tracer *t, int slot, struct retop_func_stats *out);
/* The slot's failing calls: their durations and types (retop.h), since it
 * was attached or reset.  -ENOENT when its errors are not read. */
int tracer_read_errors(struct tracer *t, int slot, struct retop_error_stats *out);
/* The slot's histogram: -ENOENT while it has none (no timed call since
 * its reset).  A syscall: read when its calls moved. */
int tracer_read_hist(struct tracer *t, int slot, struct retop_func_hist *out);
/* The counters only (out->ret_hits is left as it was): what the budget
 * reads every slice, from the mapped counters. */
int tracer_read_counters(struct tracer *t, int slot, struct retop_func_stats *out);
/* Whether slot's hit counters still read so: the four a function at rest
 * is watched by, read alone from the mapped counters. */
bool tracer_hits_still(const struct tracer *t, int slot, uint64_t begun, uint64_t entries,
		       uint64_t rets, uint64_t inlined);
int tracer_reset(struct tracer *t, int slot);
/* The slowest calls: the ring buffer's fd, each slot's attach generation
 * (RETOP_MAX_FUNCS of them), and the start of a new interval for a slot
 * (its N slowest so far forgotten in BPF, so every call competes again). */
int tracer_slow_fd(struct tracer *t);
const uint32_t *tracer_slot_gens(struct tracer *t);
void tracer_slow_rearm(struct tracer *t, int slot);
/* Capture the arguments of slot's calls at the entry as spec says (NULL:
 * stop).  Cleared by tracer_reset(). */
void tracer_args_set(struct tracer *t, int slot, const struct retop_args_spec *spec);
/* The time split's counters of slot since it was attached or reset
 * (zeroes when the split is off). */
int tracer_read_split(struct tracer *t, int slot, struct retop_split_stats *out);
/* What the kernel lacks for the split (RETOP_SPLIT_NO_*), as BPF found. */
uint32_t tracer_split_missing(const struct tracer *t);
/* Read the caller map once, for every slot (at each refresh, before
 * tracer_read_callers()). */
int tracer_callers_refresh(struct tracer *t);
/* The slot's latency by caller since it was attached or reset, as of the
 * last tracer_callers_refresh(). */
int tracer_read_callers(struct tracer *t, int slot, const struct func_images *im,
			struct callers_view *out);

/* Walk the in-flight map once: count in-flight calls per slot, those
 * overdue (older than the orphan timeout: kept, their RET still counts them)
 * and the age of the oldest; count as orphans (each once) the calls proven
 * dead (their process or goroutine exited, or their goroutine ran shallower
 * since they began): claimed in the kernel, or deleted once their process
 * exited; delete the entries of detached slots.
 * inflight has max_functions items. */
int tracer_sweep(struct tracer *t, struct tracer_inflight *inflight);

/* Kernel memory the loaded maps take, as the kernel charges it (maps
 * allocated per element count the elements they hold). */
uint64_t tracer_map_bytes(struct tracer *t);
/* What the in-flight map may still take: its free entries, each a call. */
uint64_t tracer_inflight_room_bytes(const struct tracer *t);
/* Inserts into the evidence maps that failed (bpf/retop.bpf.c). */
uint64_t tracer_evidence_lost(const struct tracer *t);

#endif
