/* The session's insides, for the engine modules that drive it (session.c,
 * budget.c); the faces see only session.h and the snapshots. */
#ifndef RETOP_SESSION_INTERNAL_H
#define RETOP_SESSION_INTERNAL_H

#include "budget.h"
#include "guard.h"
#include "session.h"
#include "slowest.h"
#include "tracer.h"

struct session_func {
	struct func_info *f;
	int slot; /* -1 when not attached */
	bool entry_only;
	enum func_state state;
	char reason[SNAPSHOT_STATUS_LEN]; /* why, for every state but tracing */
	struct retop_func_stats prev, cur;
	struct callers_view callers; /* the last read */
	struct slowest_list slowest; /* since tracing began */
	bool args_on;	/* arguments captured (--args, or the dashboard's key) */
	bool have_prev;
	uint64_t calls_shown; /* calls in the last snapshot: its rate's base */
	struct budget_func bf; /* the overhead budget's modes and ledger */
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
	double last_cpu_s;   /* retop's CPU time at cpu_ns */
	uint64_t cpu_ns;     /* start of the window of its CPU use */
	double cpu_pct;	     /* over the last window of at least 0.5 s */
	bool cpu_pct_set;    /* else over the first window, however short */
	struct tracer_inflight inflight[RETOP_MAX_FUNCS];
	bool warned_dropped; /* the one-line warning about a full map */
	uint64_t load_bias;  /* a PIE's, in the traced process (callers) */
	bool bias_known;
	struct guard guard;  /* --max-duration */
	struct budget budget; /* --budget */
	struct snapshot snap;
};

#endif
