/* One refresh worth of data: what the batch printer and the dashboard show.
 * Neither of them talks to libbpf; both read this. */
#ifndef RETOP_SNAPSHOT_H
#define RETOP_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../bpf/retop.h"
#include "callers.h"
#include "change.h"
#include "slowest.h"
#include "stats.h"
#include "timesplit.h"

struct func_info;

#define SNAPSHOT_MAX_PIDS 64
#define SNAPSHOT_STATUS_LEN 160
#define SNAPSHOT_ERROR_TYPES 5
#define SNAPSHOT_ERROR_TYPE_LEN 96

struct snapshot_site {
	uint32_t offset; /* from the function's entry */
	int line;
	unsigned image; /* the binary (0: the first; a deploy adds more) */
	uint64_t hits;
	uint64_t hits_delta;
};

/* What a listed function's probes are doing; every state but tracing and
 * sampled comes with a reason. */
/* The durations of a part of a function's calls: those that failed, or
 * those that did not (since tracing began). */
struct snapshot_durations {
	uint64_t calls, mean_ns, p50_ns, p99_ns;
};

/* A concrete type of the errors a function returned, and how many. */
struct snapshot_error_type {
	char name[SNAPSHOT_ERROR_TYPE_LEN]; /* "*main.NotFound"; "other": the rest */
	uint64_t calls;
};

enum func_state {
	FUNC_TRACING,	 /* every probe in */
	FUNC_TIMING,	 /* --budget: every call counted, the calls of random
			  * slices (snapshot_func.sampled of the time) timed */
	FUNC_SAMPLED,	 /* --budget: calls estimated from random slices */
	FUNC_ENTRY_ONLY, /* calls counted, no durations */
	FUNC_DETACHED,	 /* was traced; its probes are out, its last numbers kept */
	FUNC_ERROR,	 /* could not be attached */
};

/* "tracing", "sampled", "entry-only", "detached", "error". */
const char *func_state_name(enum func_state st);

/* Its durations since a baseline against before it (change.h). */
struct snapshot_change {
	enum change_against against; /* CHANGE_NONE: no baseline (JSON null) */
	struct change_result r;
	/* Against a binary whose processes still run: after holds the calls
	 * of both binaries until the old one's last process exits. */
	bool old_running;
	/* The share of failed calls before and after: filled where failed
	 * calls are counted; unknown (JSON null) while they are not. */
	bool error_share_known;
	double error_share_before, error_share_after;
};

struct snapshot_func {
	const char *name;
	const struct func_info *f; /* in the session's index */
	enum func_state state;
	char reason[SNAPSHOT_STATUS_LEN]; /* why, for entry-only, detached and error */
	bool entry_only;
	struct stats_view v;
	uint64_t in_flight;
	uint64_t overdue; /* of in_flight, in flight for --orphan-timeout or more */
	uint64_t oldest_in_flight_ns;
	uint64_t orphans;
	uint64_t before_attach; /* RETs of calls begun before the entry probe */
	uint64_t entries;
	bool args; /* arguments captured with its slowest calls */
	/* Its callers were not read (the face asked for another function's,
	 * session_callers_of): callers is empty, not "no caller". */
	bool callers_unread;
	/* Failing calls: those whose error result (its last, when of type
	 * error) was non-nil at the RET.  errors_counted: read at its RETs;
	 * else errors_why says why not where it returns error or may (its
	 * signature unknown), and is "" where it returns none. */
	bool errors_counted;
	bool returns_error; /* its signature is known and ends in error */
	char errors_why[SNAPSHOT_STATUS_LEN];
	/* Since tracing began; exact while every call was timed (errors_exact),
	 * else estimated like calls: each interval's failing share of its
	 * timed calls, applied to its calls.  Only grows. */
	uint64_t errors, errors_delta;
	double errors_per_s;
	bool errors_exact;
	/* Of the timed calls: since tracing began, and in the last interval. */
	double error_share, error_share_interval;
	/* Durations of the failing and the other timed calls, since tracing
	 * began: a fast failure hides in a healthy p50. */
	struct snapshot_durations failing, succeeding;
	/* The busiest concrete types of the failing calls, then "other". */
	size_t ntypes; /* types[0, ntypes); past ntypes, undefined */
	struct snapshot_error_type types[SNAPSHOT_ERROR_TYPES + 1];
	/* Sites where the compiler inlined it: calls there reach none of its
	 * probes and are not in any figure here.  -1: the binary's inline
	 * trees were not read. */
	int64_t inlined_sites;
	/* Its inlined calls, counted at the inline marks proven to run once
	 * per call (inline_marks.h): at inlined_sites_counted of the sites;
	 * never timed, in no other figure.  Not exact (at least so many)
	 * when the budget took the marks out for a while. */
	int64_t inlined_sites_counted;
	uint64_t inlined_calls;
	double inlined_calls_per_s;
	bool inlined_calls_exact;
	char inlined_uncounted_why[200]; /* a site not counted: why; "" when none */
	/* The overhead budget (budget.h): 0 full, 1 timing, 2 estimated. */
	int mode;
	double sampled;	      /* share of time its probes (timing: RETs) are in: 1 = all */
	uint64_t timed_calls; /* calls with a duration: what every duration,
			       * caller and slowest call is made of */
	bool estimated;	      /* calls and rates estimated from random slices */
	double calls_ci95[2]; /* when estimated: the 95% interval of calls (the
			       * upper end INFINITY: unbounded, see trap_share) */
	/* The interval is open above: v.calls (and its rate) is its lower
	 * end, never a point estimate. */
	bool calls_lower_bound;
	/* How far a duration of it may still be off once retop's own traps
	 * are taken out (8 calls in 10): its own two hits' by how its entry
	 * runs, and its traced callees' (snapshot.resolution_ns).  A figure
	 * at or under it is shown as under it (figure.h).  0: not timed. */
	double resolution_ns;
	/* What its probes cost the target: the CPU of their traps (each
	 * program's measured run time and the kernel's part at the timed cost
	 * of its kind) since tracing began and a second over the interval,
	 * and what its own two hits add to a call, as its callers see it. */
	double cost_ns, cost_per_s, cost_per_call_ns;
	double trap_share; /* estimated: share of the targets' CPU in its traps
			    * while its probes were in */
	/* Estimated: time none of its slices accounted for (retop fell behind
	 * its clock, or its probes were not in), imputed at the rate of the
	 * rest. */
	double estimate_gap_s;
	/* A traced function of the session left full mode (--budget): its
	 * probes, and so the hits they put inside this function's calls,
	 * were in only part of the time; v.hits_inside is then a sample. */
	bool hits_inside_sampled;
	bool probes_shed; /* it left full mode since its counters began */
	size_t nsites;	  /* sites[0, nsites) hold its RET sites; past nsites, undefined */
	struct snapshot_site sites[RETOP_MAX_RET_SITES];
	struct callers_view callers; /* since tracing began */
	/* Where its timed calls' time went (timesplit.h). */
	struct timesplit_view split;
	struct snapshot_change change;
	/* The counters as read from BPF since tracing began, unscaled by the
	 * budget (for /metrics), valid until the next snapshot; NULL when
	 * nothing was ever read. */
	const struct stats_read *raw;
	/* Last: each list owns its calls' values (slowest.h), so a snapshot's
	 * rows are freed with snapshot_funcs_free(). */
	struct slowest_list slowest;	      /* since tracing began */
	struct slowest_list slowest_interval; /* in the last interval */
	struct slowest_list slow_calls;	      /* --slow: the latest of the interval */
};

struct snapshot {
	double time;	   /* wall clock, seconds since the epoch */
	double interval_s; /* since the previous snapshot */
	int attach_pid;	   /* the PID traced, or -1 for every process running exe */
	double uptime_s;   /* since tracing began */
	const char *exe;
	int pids[SNAPSHOT_MAX_PIDS];
	size_t npids;
	bool target_exited;
	char target_end[160]; /* how: "exited", "ran exec() of another program (PATH)" */
	/* -p: time between the target's exec() of its binary again and the
	 * probes attached anew, when its calls were not seen. */
	double unseen_after_exec_s;
	double self_cpu_pct;	/* retop's own CPU use over the interval */
	double self_cpu_s;	/* retop's own CPU time so far, user + system */
	double max_duration_s;	/* --max-duration; 0: no limit */
	double remaining_s;	/* before auto-detach; negative: no limit */
	size_t auto_detached;	/* functions detached because time was up */
	uint64_t bpf_map_bytes; /* kernel memory of retop's BPF maps */
	uint64_t evidence_lost; /* goroutine records BPF found no room for */
	uint64_t user_bytes;	/* retop's resident memory */
	double budget_pct;	/* --budget PCT%; 0: no CPU cap */
	double budget_hits;	/* probe hits a second the budget allows; 0: none */
	double hit_ns;		/* calibrated cost of one probe hit (a RET's) */
	/* What a hit of each kind (RETOP_HIT_*) inside a call is taken out of
	 * its duration: the kernel's trap (0: untimed, nothing is taken out)
	 * plus the BPF program's own run time (prog_ns, measured). */
	double hit_cost_ns[RETOP_HIT_KINDS];
	double trap_ns[RETOP_HIT_KINDS]; /* of that, the kernel's, in CPU time */
	double prog_ns[RETOP_HIT_KINDS]; /* and the program's (its mean: each hit
					  * takes its own out) */
	/* What a call's own entry and RET hits leave inside its timed window,
	 * by how its entry runs (RETOP_OWN_*), taken out of each call; and
	 * the resolution: how far a duration may still be off (8 calls in
	 * 10).  A duration under it is shown as under it.  0: not timed. */
	double own_window_ns[RETOP_OWN_KINDS];
	double resolution_ns[RETOP_OWN_KINDS];
	/* And for each hit inside a call (a traced callee's): how far its
	 * kernel part may be over what is taken out (8 hits in 10). */
	double hit_resolution_ns;
	uint64_t slow_ns; /* --slow; 0: off */
	/* What retop's probes cost the targets: their traps' CPU since
	 * tracing began and a second over the interval (every function's and
	 * the runtime watchers'), the targets' own CPU time a second, and the
	 * share of it the traps took. */
	double cost_ns, cost_per_s, target_cpu_per_s, cost_share;
	/* The hits the budget counts (every probe's, the runtime watchers'
	 * too), since tracing began and a second over the interval: the
	 * budget's own measure, beside budget_hits. */
	uint64_t probe_hits;
	double probe_hits_per_s;
	bool exits_watched; /* runtime.goexit1 probed: exits prove calls dead */
	/* The time split (timesplit.h): on, else why not ("off: ..."); with
	 * probes on Go's scheduler (--time-split sched), and whether they are
	 * in now (the budget takes them out with the runtime watchers). */
	bool split_on;
	char split_why[SNAPSHOT_STATUS_LEN];
	bool split_sched, sched_watched;
	/* What the scheduler's probes cost: their hits a second over the
	 * interval, and the targets' CPU they took a second (in cost_per_s). */
	double sched_hits_per_s, sched_cost_per_s;
	struct snapshot_func *funcs;
	size_t nfuncs;
};

/* A row's values cleared, the slowest lists aside: its arrays up to their
 * counts only (sites, types, callers' rows; past the count they are
 * undefined: a thousand rows carry 3.6 KiB of them each, mostly unused). */
void snapshot_func_clear_values(struct snapshot_func *f);
/* src into a row's text of len bytes, cut to fit as snprintf "%s" cuts it:
 * a thousand rows a second copy theirs without printf's cost. */
void snapshot_text_set(char *dst, size_t len, const char *src);
/* Free an array of n functions (calloc'd) and the values their lists hold. */
void snapshot_funcs_free(struct snapshot_func *funcs, size_t n);
/* The state as one line: "tracing", "sampled 25%", "entry-only: why"... */
void snapshot_func_status(const struct snapshot_func *f, char *buf, size_t len);
/* The state alone, without the note on errors (the text gives it a line). */
void snapshot_func_state(const struct snapshot_func *f, char *buf, size_t len);
/* Its probes are in: tracing, timing-sampled or sampled. */
bool snapshot_func_probing(const struct snapshot_func *f);
/* Nothing happened to f in the interval: its probes are in (tracing,
 * sampled or entry-only) and no call returned, none was counted inlined,
 * none is in flight.  A function detached or refused is never idle: its
 * calls are unknown, not none, and its status says why. */
bool snapshot_func_idle(const struct snapshot_func *f);

/* Which rows the text lists, as `top -b` would: functions in order (NULL:
 * as the snapshot lists them), the idle ones folded into one line unless
 * idle is set, and at most top rows (0: all); a line says what was left
 * out. */
struct snapshot_rows {
	const size_t *order;
	size_t top;
	bool idle;
	bool utf8; /* a lower bound as "\u2265" rather than ">=" (figure.h) */
};
/* rows NULL: every function, one row each, as listed. */
void snapshot_print_text(FILE *out, const struct snapshot *snap, const struct snapshot_rows *rows);
/* Every function, in order (NULL: as listed). */
void snapshot_print_json(FILE *out, const struct snapshot *snap, const size_t *order);

#endif
