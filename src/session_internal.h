/* The session's insides, for the engine modules that drive it (session*.c,
 * govern.c); the faces see only session.h and the snapshots. */
#ifndef RETOP_SESSION_INTERNAL_H
#define RETOP_SESSION_INTERNAL_H

#include "change.h"
#include "args.h"
#include "error_types.h"
#include "govern.h"
#include "guard.h"
#include "hitcost.h"
#include "session.h"
#include "slowest.h"
#include "tracer.h"

/* A function's baseline (session_change.c): cumulative histograms
 * (RETOP_HIST_BUCKETS counts each; NULL: zeros, no timed call yet) where
 * its "before" period begins and ends and where "after" begins; after is
 * the counts now less after_from. */
/* The timed calls and the failing ones among them at a mark: each
 * period's error share. */
struct session_mark_counts {
	uint64_t calls, errors;
};

struct session_baseline {
	enum change_against against; /* CHANGE_NONE: none marked */
	__u64 *before_from, *before_to, *after_from;
	/* Where the calls of the binary it runs now began (its deploy's
	 * after_from; NULL: tracing's start): the next mark's before_from. */
	__u64 *binary_from;
	struct session_mark_counts n_before_from, n_before_to, n_after_from, n_binary_from;
	/* A deploy's older binary still runs: after holds its calls too,
	 * until its last process exits and after begins again. */
	bool old_running;
	/* The last comparison, and the timed calls it was made at. */
	bool computed;
	uint64_t computed_at;
	struct change_result result;
};

struct session_func {
	struct func_info *f; /* in the session's first binary (idx) */
	/* The same function in each binary a deploy added (fi[0] == f; NULL:
	 * not there, or not followed, and why in follow_reason). */
	struct func_info *fi[RETOP_MAX_IMAGES];
	char follow_reason[SNAPSHOT_STATUS_LEN];
	bool entry_only;
	enum func_state state;
	char reason[SNAPSHOT_STATUS_LEN]; /* why, for every state but tracing */
	struct stats_read prev, cur;
	/* The histograms the reads point at, allocated at the first timed
	 * call (an idle function holds none): cur's, and prev's when its
	 * calls moved since (session_read_hist). */
	struct retop_func_hist *hist_buf[2];
	uint64_t hist_calls; /* cur.st.calls when cur.hist was read */
	struct retop_split_stats split_prev, split_cur; /* the time split's */
	struct stats_cache pct_cache; /* cur's since-start percentiles */
	struct callers_view callers;  /* the last read */
	struct slowest_list slowest;  /* since tracing began */
	bool args_on;		      /* arguments captured (--args, or the dashboard's key) */
	bool have_prev;
	/* Never called: its last reads (cur, prev, both splits) all 0, so a
	 * sample skips them while no hit moves its counters
	 * (session_still_unused). */
	bool unused;
	uint64_t calls_shown; /* calls in the last snapshot: its rate's base */
	bool callers_unread;  /* callers not read by the last sample (session_callers_of) */
	/* The slot, and right after it what the governor's scan of a thousand
	 * functions ten times a second reads of one at rest (govern_func's
	 * first fields): a cache line or two a function, not three. */
	int slot;	       /* -1 when not attached */
	struct govern_func gf; /* the overhead budget's modes and ledger */
	/* Its inline marks (interlock_approve_marks): sites found and
	 * counted, the first one not counted's reason. */
	size_t inl_sites, inl_counted;
	char inl_why[200];
	uint64_t inlined_shown; /* inlined calls in the last snapshot */
	double cost_ns;		/* what its probes cost the target so far */
	/* Failing calls (session_errors.c): where its error result is read,
	 * the failing calls' durations and types as last read, and the
	 * errors' ledger (exact while every call is timed). */
	struct args_error err;
	/* Allocated at the first failing call read (10 KiB: a thousand
	 * functions traced that never fail hold none), read again only
	 * while func_stats.errors is past its calls. */
	struct retop_error_stats *errs;
	double errors_est;
	bool errors_inexact;
	uint64_t errors_seen, timed_seen, errors_shown;
	/* The verdict that proved its marks in each binary (NULL: not yet),
	 * so that the budget puts them back in without proving them again. */
	struct interlock_verdict *marks_v[RETOP_MAX_IMAGES];
	struct session_baseline base; /* what its durations are compared with */
};

/* A binary the session traces: the first, and each file a deploy renamed
 * over the -x path while processes still ran the older ones. */
struct session_image {
	struct func_index *idx; /* NULL: the number is free */
	bool retired;		/* no process ran it any more: its probes are out */
	/* -p: the same file as an earlier image, in the address space the
	 * target's exec() made (idx is that image's) */
	bool shared;
};

struct session {
	struct session_opts opts;
	struct interlock_opts judge; /* from opts, for every interlock_judge() */
	struct func_index *idx; /* the first binary's: images[0].idx */
	struct session_image images[RETOP_MAX_IMAGES];
	size_t nimages;
	struct func_images names;	   /* every image's index, to name callers */
	/* Whose callers a sample reads (session_callers_of): every
	 * function's, or callers_f's only. */
	bool callers_all;
	const struct func_info *callers_f;
	uint64_t refused_dev, refused_ino; /* a replacement not followed */
	struct tracer *tracer;
	struct sdk_facts *sdk; /* NULL without an SDK */
	struct slowest *slow;  /* the slowest calls' ring buffer; NULL until tracing */
	char binary[600];      /* the indexed file: /proc/self/fd/N of its open descriptor */
	char display[600];     /* what the operator sees as the target */
	int attach_pid;	       /* PID, or -1 for every process running the binary */
	struct session_func *funcs;
	size_t nfuncs;
	bool target_exited;
	uint64_t start_ns, last_ns;
	double last_cpu_s; /* retop's CPU time at cpu_ns */
	uint64_t cpu_ns;   /* start of the window of its CPU use */
	double cpu_pct;	   /* over the last window of at least 0.5 s */
	bool cpu_pct_set;  /* else over the first window, however short */
	struct tracer_inflight inflight[RETOP_MAX_FUNCS];
	bool warned_dropped; /* the one-line warning about a full map */
	uint64_t load_bias;  /* a PIE's, in the traced process (callers) */
	bool bias_known;
	uint64_t exec_ns;	/* the -p target's last exec() seen (BPF's execs) */
	bool exec_ended;	/* it ran exec() more times than images allow */
	uint64_t samples;	/* snapshots taken: the hit cost is timed anew every tenth */
	uint64_t target_cpu_ns; /* the targets' CPU time at the last sample */
	uint64_t next_tick;	/* the overhead budget's next slice (session_run) */
	uint64_t watch_hits;	/* the runtime watchers' hits at the last sample */
	uint64_t budget_hits;	/* every hit the budget counts, at the last sample */
	struct guard guard;	/* --max-duration */
	struct govern gov;	/* --budget: the governor */
	struct hitcost hitcost; /* what a probe hit costs */
	/* The time split: Go's offsets found (else why not, in split_why);
	 * on once loaded with them. */
	bool split_on;
	char split_why[SNAPSHOT_STATUS_LEN];
	bool split_sched;    /* --time-split sched, with Go's offsets for it */
	int split_go_minor;  /* the binary's Go release: its wait reasons */
	uint64_t sched_hits; /* the scheduler's probes' hits at the last sample */
	bool baseline_marked;	/* --baseline SECS: its mark was made */
	/* Failing calls' types, named; room for the succeeding calls'
	 * histogram (session_errors.c). */
	struct error_types etypes;
	__u64 ok_hist[RETOP_HIST_BUCKETS];
	/* The figures of a function still never called, computed once a
	 * sample for every such row (most of a thousand traced). */
	struct stats_view unused_v;
	struct timesplit_view unused_split;
	struct snapshot snap;
};

/* session_tracer.c: load the BPF programs (again after auto-detach closed
 * them); time what a probe hit costs; hand the costs to BPF. */
int session_open_tracer(struct session *s, char *err);
void session_calibrate(struct session *s);
void session_hit_costs(struct session *s);

/* session_probes.c: moving probes in every binary a function is traced in. */
/* Put sf's entry probe, its RET probes, or both in, in every binary the
 * session traces it in (each approved again by the interlock). */
int session_probes_in(struct session *s, struct session_func *sf, bool entry, bool rets, char *err);
/* Put sf's inline marks in (in every binary the session traces it in) or
 * take them out. */
int session_marks(struct session *s, struct session_func *sf, bool on, char *err);
/* Put into binary k the probes sf has in now. */
int session_probes_in_image(struct session *s, struct session_func *sf, size_t k, char *why);
/* Keep v, whose marks were just proven in binary k; forget them all. */
void session_keep_marks(struct session_func *sf, size_t k, const struct interlock_verdict *v);
void session_forget_marks(struct session_func *sf);
/* Free what a function's entry owns (its slowest calls' values, marks,
 * baseline, histogram buffers, failing calls), for untrace and close. */
void session_func_release(struct session_func *sf);
/* session.c: between two attaches of a list, the budget's slice if it is
 * due or BPF woke the clock: the functions in already are governed while
 * the rest go in. */
void session_tick_between(struct session *s);

/* session_images.c: the binaries traced, deploys and exec(). */
void session_watch_image(struct session *s, struct func_index *idx);
/* sf's function in binary k, resolved and checked; NULL and why in sf. */
struct func_info *session_func_in(struct session *s, struct session_func *sf, size_t k);
void session_not_followed(struct session_func *sf, size_t k, const char *why);
/* -p: the target ran exec() of its binary again: probes attached anew. */
void session_check_reexec(struct session *s);
/* Who is traced; why tracing ends (NULL: it goes on). */
const char *session_check_target(struct session *s);

/* The session's own (writable) entry for f, a function of its first
 * binary's index as the faces see it (const); NULL if not one. */
struct func_info *session_own(struct session *s, const struct func_info *f);

/* session_attach.c: one function in or out. */
struct session_func *session_find(const struct session *s, const struct func_info *f);
/* Attach f; the SDK, if any, was asked about it before. */
int session_attach(struct session *s, struct func_info *f, char *err);
void session_detach_all(struct session *s, const char *why);
void session_set_args(struct session *s, struct session_func *sf, bool on);

/* session_change.c: baselines and what changed since. */
/* A deploy was followed into (or back to) binary k: each function traced
 * there is compared with the binary it replaced. */
void session_mark_binary(struct session *s, size_t k);
/* -x: once no older binary runs, the new one's calls alone are after. */
void session_baseline_old_gone(struct session *s);
/* --baseline SECS: mark it once SECS seconds of tracing passed. */
void session_baseline_due(struct session *s, uint64_t now);
void session_baseline_drop(struct session_func *sf);
void session_fill_change(struct session_func *sf, struct snapshot_func *out);
/* session_errors.c: failing calls. */
/* Where f (of binary idx) has its error result at a RET. */
void session_error_find(struct session *s, const struct func_index *idx, const struct func_info *f,
			struct args_error *out);
/* Read sf's failing calls from BPF: before its counters, every sample. */
void session_read_errors(struct session *s, struct session_func *sf);
void session_fill_errors(struct session *s, struct session_func *sf, double interval,
			 struct snapshot_func *out);
/* Its counters start again (a reset). */
void session_errors_reset(struct session_func *sf);

/* session_sample.c */
uint64_t session_load_bias(struct session *s);

#endif
