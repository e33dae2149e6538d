/* A tracing session: one target (a PID, or every process running a binary),
 * its function index, the traced functions and their last two samples.
 * The batch printer and the dashboard both drive a session and read its
 * snapshots. */
#ifndef RETOP_SESSION_H
#define RETOP_SESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "cli.h"
#include "budget.h"
#include "funcs.h"
#include "guard.h"
#include "slowest.h"
#include "snapshot.h"
#include "tracer.h"

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
	double budget_pct;     /* --budget: % of one CPU; 0: no budget */
};

struct session_func {
	struct func_info *f;
	int slot; /* -1 when not attached */
	bool entry_only;
	char status[SNAPSHOT_STATUS_LEN];
	struct retop_func_stats prev, cur;
	struct callers_view callers; /* the last read */
	struct slowest_list slowest; /* since tracing began */
	bool have_prev;
	struct budget_func bf; /* the overhead budget's duty cycle */
};

struct session {
	struct session_opts opts;
	struct func_index *idx;
	struct tracer *tracer;
	struct sdk_facts *sdk; /* NULL without an SDK */
	struct slowest *slow;  /* the slowest calls' ring buffer; NULL until tracing */
	char binary[600];  /* what uprobes attach to: PATH or /proc/PID/exe */
	char display[600]; /* what the operator sees as the target */
	int attach_pid;	   /* PID, or -1 for every process running the binary */
	struct session_func *funcs;
	size_t nfuncs;
	bool target_exited;
	uint64_t start_ns, last_ns;
	double last_cpu_s;
	struct tracer_inflight inflight[RETOP_MAX_FUNCS];
	bool warned_dropped; /* the one-line warning about a full map */
	struct guard guard;  /* --max-duration */
	struct budget budget; /* --budget */
	struct snapshot snap;
};

void session_opts_from_cli(const struct cli_options *o, struct session_opts *so);
/* Resolve the target and index its binary (no BPF yet). */
int session_open(const struct session_opts *opts, struct session **out, char *err);
/* Load the BPF programs; needed before the first session_trace(). */
int session_start_tracing(struct session *s, char *err);
void session_close(struct session *s);

/* Attach one function; on failure the function is listed with an error
 * status and nothing of it stays attached. */
int session_trace(struct session *s, struct func_info *f, char *err);
void session_untrace(struct session *s, struct func_info *f);
bool session_is_traced(const struct session *s, const struct func_info *f);
/* Every function matching each glob; all patterns are checked before any
 * probe is attached, so a bad pattern leaves nothing attached. */
int session_trace_patterns(struct session *s, const char *const *patterns, size_t n, char *err);
/* The same checks as session_trace_patterns(), attaching nothing. */
int session_check_patterns(struct session *s, const char *const *patterns, size_t n, char *err);

/* Read every counter, sweep in-flight calls, compute rates and deltas. */
const struct snapshot *session_sample(struct session *s);
/* retop's own CPU time so far (user + system), in seconds. */
double session_cpu_seconds(void);
void session_reset(struct session *s);
/* Another --max-duration period before auto-detach (the dashboard's '+'). */
void session_extend(struct session *s);

#endif
