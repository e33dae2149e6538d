/* Where a function's time goes: its timed calls' durations split as on
 * CPU, waiting for a CPU, blocked in the kernel and parked by Go's
 * scheduler (bpf/split.h), as every face shows them, since tracing began
 * and over the last interval.  Pure arithmetic on BPF's counters. */
#ifndef RETOP_TIMESPLIT_H
#define RETOP_TIMESPLIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/split_types.h"

/* --time-split: on (the default: no probe of its own), off, or sched (with
 * probes on Go's scheduler: parked calls split exactly, and why they were
 * parked). */
enum timesplit_mode { TIMESPLIT_ON = 0, TIMESPLIT_OFF, TIMESPLIT_SCHED };

/* "on", "off", "sched"; and back: 0, or -1 for another word. */
const char *timesplit_mode_name(enum timesplit_mode m);
int timesplit_mode_parse(const char *s, enum timesplit_mode *out);

/* The parts (RETOP_SPLIT_*): JSON's and /metrics' names ("on_cpu",
 * "runqueue", "kernel_blocked", "go_parked"), words for people ("on CPU",
 * "waiting for a CPU", "blocked in the kernel", "parked by Go"), and four
 * letters for a narrow column ("cpu", "runq", "kern", "park"). */
const char *timesplit_part_name(int part);
const char *timesplit_part_words(int part);
const char *timesplit_part_short(int part);

/* The split of a set of timed calls. */
struct timesplit_figures {
	uint64_t calls;	       /* split whole on their thread */
	uint64_t parked;       /* Go's scheduler took them off their thread: their
				* whole duration is in ns[RETOP_SPLIT_PARKED] ... */
	uint64_t parked_split; /* ... but for these, split exactly (--time-split sched) */
	uint64_t unsplit;      /* timed, with no split (figures evicted or unreadable) */
	uint64_t ns[RETOP_SPLIT_PARTS];
	uint64_t total_ns; /* the parts' sum: the calls' and parked calls' durations */
	double share[RETOP_SPLIT_PARTS]; /* of total_ns; 0 when none */
	/* Of the timed calls, those the split covers (calls + parked); 0 when
	 * no call was timed. */
	double covered;
	/* Context switches of their threads inside the calls split, a call. */
	double vcsw_per_call, ivcsw_per_call;
};

/* Why its goroutines were parked, busiest first (--time-split sched). */
#define TIMESPLIT_REASONS 5
struct timesplit_reason {
	char name[48]; /* Go's words ("chan receive"), or retop's */
	uint64_t ns;   /* parked for it, over its calls in flight */
};

struct timesplit_view {
	bool on;			 /* the split runs (else why: the snapshot's) */
	struct timesplit_figures total;	 /* since tracing began */
	struct timesplit_figures recent; /* the last interval */
	/* Since tracing began: the busiest reasons, and all reasons' time. */
	struct timesplit_reason reasons[TIMESPLIT_REASONS];
	size_t nreasons;
	uint64_t reasons_ns;
};

/* From BPF's counters now and at the last sample (prev NULL: the first, or
 * the counters went back: the interval is everything); go_minor names the
 * wait reasons of the binary's Go release (go_waitreasons.h). */
void timesplit_compute(const struct retop_split_stats *cur, const struct retop_split_stats *prev,
		       bool on, int go_minor, struct timesplit_view *out);
/* The words for reason number r (RETOP_SPLIT_REASONS) in Go 1.go_minor. */
void timesplit_reason_name(int go_minor, unsigned r, char *buf, size_t len);
/* The part with most of the time, or -1 when nothing was split. */
int timesplit_dominant(const struct timesplit_figures *f);

#endif
