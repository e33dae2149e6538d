/* The cost of a probe hit of each kind (RETOP_HIT_*: an entry the kernel
 * emulates, one it single-steps, a RET), timed on retop's own code with
 * the tracer's programs: the overhead budget's unit, and what durations
 * are corrected by. */
#ifndef RETOP_HITCOST_H
#define RETOP_HITCOST_H

#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"

#define HITCOST_RING 1024 /* timed probe hits kept per kind */

struct probe_set;
struct tracer;

struct hitcost {
	/* The kernel's cost of a hit of each kind (RETOP_HIT_*); 0: not
	 * timed. */
	double trap_ns[RETOP_HIT_KINDS];
	/* The calibration's probes and their tracer (NULL: none), the
	 * unprobed call's time, and the last timed hits, per kind. */
	struct probe_set *cal_ps[RETOP_HIT_KINDS];
	struct tracer *cal_tracer;
	double cal_bare[RETOP_HIT_KINDS];
	uint64_t cal_ring[RETOP_HIT_KINDS][HITCOST_RING];
	size_t cal_n[RETOP_HIT_KINDS];
};

/* Time hits on uprobes in retop's own process, with t's programs and link
 * type, one instruction of each kind (RETOP_HIT_*: the prologue's jump,
 * emulated; an entry compare and a RET, single-stepped): b->trap_ns[k],
 * what the kernel's trap and the program's dispatch cost a hit of kind k,
 * the 20th percentile of single hits.  The probes stay (they cost nothing
 * untouched) for hitcost_more().  A negative errno and a reason on
 * failure. */
int hitcost_calibrate(struct hitcost *b, struct tracer *t, char *err);
/* A few more hits of each kind into the ring: the cost follows the load of
 * the machine.  Stops timing (and says so) on failure. */
void hitcost_more(struct hitcost *b);
void hitcost_close(struct hitcost *b);

#endif
