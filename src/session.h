/* A tracing session: one target (a PID, or every process running a binary),
 * its function index, the traced functions and their last two samples.
 * The batch printer and the dashboard both drive a session and read its
 * snapshots. */
#ifndef RETOP_SESSION_H
#define RETOP_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "funcs.h"
#include "snapshot.h"

struct session_opts {
	int pid;	  /* -p, or 0 */
	const char *exe;  /* -x, or NULL */
	bool no_dwarf;
	bool latency_only; /* no callers, no slowest calls */
	const char *args_pattern; /* --args: functions whose arguments are captured */
	size_t max_functions;
	uint32_t max_in_flight;
	double orphan_timeout_s;
	const char *sdk_url; /* -s; NULL: try the default quietly for a PID */
	double max_duration_s; /* auto-detach after it; 0: never */
	uint64_t max_memory;   /* refuse to attach beyond it; 0: no limit */
	double budget_pct;     /* --budget PCT%: of one CPU; 0: no CPU cap */
	double budget_hits;    /* --budget N/s (default 10,000); 0: no budget */
	uint64_t slow_ns;      /* --slow: report every call this long; 0: off */
	bool entry_probe_first; /* RETOP_ENTRY_PROBE=first (interlock_opts) */
	enum timesplit_mode time_split; /* --time-split */
	double baseline_s;	/* --baseline: the first SECS of tracing are the
				 * baseline; 0: none until marked */
};

/* Opaque: the faces read snapshots (session_sample) and the few static
 * facts below, never the session's insides (docs/ARCHITECTURE.md). */
struct session;

/* One function the session lists: traced, or refused with a reason. */
struct session_entry {
	const struct func_info *f;
	enum func_state state;
	const char *reason; /* valid until the session changes */
};

void session_opts_from_cli(const struct cli_options *o, struct session_opts *so);

/* What session_launch() does with the patterns of -t. */
enum session_launch_mode {
	LAUNCH_ATTACH, /* attach them all (batch, --serve) */
	LAUNCH_CHECK,  /* check them; the dashboard's worker attaches them */
};
/* The one start of batch, --serve and the dashboard with -p/-x: resolve the
 * target and index it, ask the SDK, load the BPF programs and attach (or
 * check) the patterns of o.  A failure to load BPF stops the start only when
 * there are patterns; its reason is in trace_err (may be NULL) either way.
 * EXIT_OK, or EXIT_RUNTIME after one line on stderr, nothing left attached. */
int session_launch(const struct cli_options *o, enum session_launch_mode mode,
		   struct session **out, char *trace_err);
/* Resolve the target and index its binary (no BPF yet). */
int session_open(const struct session_opts *opts, struct session **out, char *err);
/* Load the BPF programs; needed before the first session_trace(). */
int session_start_tracing(struct session *s, char *err);
void session_close(struct session *s);

/* Attach one function; on failure the function is listed with an error
 * status and nothing of it stays attached. */
int session_trace(struct session *s, const struct func_info *f, char *err);
void session_untrace(struct session *s, const struct func_info *f);
/* Capture f's arguments (and results, where their types are known) with
 * its slowest calls, or stop: the dashboard's key, --args for a pattern.
 * -ENOENT when f is not attached, -ENOTSUP for an entry-only function or
 * under --latency-only; the new state in *on. */
int session_toggle_args(struct session *s, const struct func_info *f, bool *on);
bool session_is_traced(const struct session *s, const struct func_info *f);
/* Every function matching each glob; all patterns are checked before any
 * probe is attached, so a bad pattern leaves nothing attached. */
int session_trace_patterns(struct session *s, const char *const *patterns, size_t n, char *err);
/* Attach each of fs[0..n) (the dashboard's package key), after one SDK
 * round for all of them; the ones the interlock refuses are listed with
 * their reasons and warned about in one line.  How many attached in
 * *attached; an error only when the -p target exited meanwhile. */
int session_trace_list(struct session *s, const struct func_info *const *fs, size_t n,
		       size_t *attached, char *err);
/* The same checks as session_trace_patterns(), attaching nothing. */
int session_check_patterns(struct session *s, const char *const *patterns, size_t n, char *err);

/* What ended a session_run(). */
enum session_wake {
	SESSION_DUE,  /* the face's next sample is due */
	SESSION_FD,   /* the face's own fd is readable */
	SESSION_INTR, /* a signal */
};
/* The engine's one clock and the faces' one wait.  Until due_ns (the
 * face's next sample, clock_now_ns() clock), its own fd readable (-1:
 * none) or a signal, it runs the overhead budget's slices (measure, plan,
 * move probes), sleeping in between, woken at once when BPF says the hits
 * rose or the target called exec() (then a slice may last a second while
 * the load is far under the budget).  s may be NULL (no target yet): a
 * plain wait.  A face's loop is
 *	for (due = now + period; session_run(s, due, fd) == SESSION_DUE;
 *	     due = session_next_due(due, period))
 *		show(session_sample(s)); */
enum session_wake session_run(struct session *s, uint64_t due_ns, int fd);
/* The sample after the one due at due_ns: a period later (absolute
 * deadlines: sampling does not stretch the period), or a period from now
 * when the face fell behind (a stall samples once, not in a burst). */
uint64_t session_next_due(uint64_t due_ns, uint64_t period_ns);
/* Read every counter, sweep in-flight calls, compute rates and deltas. */
const struct snapshot *session_sample(struct session *s);
/* The rows the next samples write, RETOP_MAX_FUNCS of them, in place of
 * those it wrote so far, which it returns: a face that keeps a sample's
 * rows while the next one is taken hands the session others, rather than
 * copying a thousand rows a sample.  Each sample writes every row it
 * holds; the session frees the rows it holds as it closes. */
struct snapshot_func *session_swap_rows(struct session *s, struct snapshot_func *rows);
/* Whose callers the samples read: every function's (all: the default, for
 * batch and --serve), or only f's (NULL: none's; the dashboard, whose
 * detail page shows one function's).  The caller map is read whole, 10 KiB
 * an entry; the other rows say theirs were not read (callers_unread). */
void session_callers_of(struct session *s, bool all, const struct func_info *f);
/* retop's own CPU time so far (user + system), in seconds. */
double session_cpu_seconds(void);
void session_reset(struct session *s);
/* Now is the baseline: from the next sample on, each traced function's
 * snapshot compares its calls since with its calls before (its change;
 * a deploy under -x marks one by itself, against the old binary). */
void session_mark_baseline(struct session *s);
/* Another --max-duration period before auto-detach (the dashboard's '+'). */
void session_extend(struct session *s);

/* Static facts: the index of the target's binary (its functions' RET sites
 * are resolved on demand), what the operator named as the target, the PID
 * traced (-1: every process running the binary), and whether the BPF
 * programs were loaded. */
const struct func_index *session_index(const struct session *s);
/* Decode f's code (its RET sites and the interlock's verdict), once: what
 * the function browser shows of a function before it is traced.  The
 * index is the engine's: the faces read it, this fills it in. */
int session_resolve(struct session *s, const struct func_info *f, char *why);
const char *session_target(const struct session *s);
int session_attach_pid(const struct session *s);
bool session_started(const struct session *s); /* the BPF programs loaded once */
/* The functions listed, traced or refused: how many, and the i-th. */
size_t session_count(const struct session *s);
void session_entry_at(const struct session *s, size_t i, struct session_entry *out);
/* The uprobes attached for the i-th traced function: apart from
 * session_entry_at, which the UI calls for every function each sample. */
size_t session_probes_at(const struct session *s, size_t i);

#endif
