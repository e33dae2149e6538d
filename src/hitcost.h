/* The cost of a probe hit of each kind (RETOP_HIT_*: an entry the kernel
 * emulates, one it single-steps, a RET), timed on retop's own code with
 * the tracer's programs: the overhead budget's unit, and what durations
 * are corrected by. */
#ifndef RETOP_HITCOST_H
#define RETOP_HITCOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"

#define HITCOST_RING 1024 /* timed probe hits kept per target */
#define HITCOST_TARGETS 5 /* a whole hit of each kind, a call's window by entry kind */
#define HITCOST_PROBES (2 * HITCOST_TARGETS)

struct probe_set;
struct tracer;

struct hitcost {
	/* The kernel's part of a whole hit of each kind (RETOP_HIT_*): what a
	 * traced callee's hit puts inside a call, besides its program's run
	 * time (measured per hit in the target).  0: not timed. */
	double trap_ns[RETOP_HIT_KINDS];
	/* The kernel's part of a call's own entry and RET hits inside its
	 * timed window, by how its entry runs (RETOP_OWN_*), and how far a
	 * call may still be off once it is taken out (8 calls in 10): the
	 * resolution of a duration.  0: not timed. */
	double own_ns[RETOP_OWN_KINDS];
	double resolution_ns[RETOP_OWN_KINDS];
	/* How far a whole hit's kernel part may be over trap_ns (8 hits in
	 * 10), the dearest kind's: the resolution a traced callee adds. */
	double hit_resolution_ns;
	/* The calibration's probes and their tracer (NULL: none), the
	 * unprobed call's time, and the last timed calls, per target. */
	struct probe_set *cal_ps[HITCOST_PROBES];
	struct tracer *cal_tracer;
	double bare[HITCOST_TARGETS];
	int64_t ring[HITCOST_TARGETS][HITCOST_RING];
	size_t n[HITCOST_TARGETS];
};

/* Time hits on uprobes in retop's own process, with t's programs and link
 * type, one instruction of each kind (RETOP_HIT_*: the prologue's jump,
 * emulated; an entry compare and a RET, single-stepped): b->trap_ns[k],
 * the kernel's part of a hit of kind k, and b->own_ns[w] with
 * b->resolution_ns[w], a call's own window by entry kind.  The probes stay
 * (they cost nothing untouched) for hitcost_more().  A negative errno and a
 * reason on failure. */
int hitcost_calibrate(struct hitcost *b, struct tracer *t, char *err);
/* A few more hits of each kind into the ring: the cost follows the load of
 * the machine.  Stops timing (and says so) on failure. */
void hitcost_more(struct hitcost *b);
void hitcost_close(struct hitcost *b);
/* What a function's hits cost the kernel, each kind at its timed cost
 * (0 for a kind not timed): entries (emulated or single-stepped), RETs,
 * and inline marks, priced as emulated entries. */
double hitcost_traps_ns(const struct hitcost *b, bool entry_emulated, uint64_t entries,
			uint64_t rets, uint64_t marks);

#endif
