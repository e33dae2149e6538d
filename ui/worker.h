/* The dashboard's worker thread: the only thread that calls the session API.
 *
 * Attaching a function takes tens of milliseconds and sampling reads BPF maps,
 * so neither may run on the draw loop.  The UI posts jobs (open, trace,
 * untrace, reset, scan) and reads what the worker publishes; both sides take
 * worker.mu for every access to the published fields below, and the worker
 * writes one byte to wake_fd whenever something new is published.
 *
 * Everything the UI reads of the function index is either immutable after
 * loading (name, entry, file, line, source) or mirrored into meta[], because
 * resolving RET sites rewrites a func_info's size and rets. */
#ifndef RETOP_UI_WORKER_H
#define RETOP_UI_WORKER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../src/funcs.h"
#include "../src/log.h"
#include "../src/procs.h"
#include "../src/session.h"
#include "../src/snapshot.h"
#include "disasm.h"

enum worker_job_kind {
	JOB_OPEN,    /* session for pid */
	JOB_CLOSE,   /* detach everything, drop the session */
	JOB_TRACE,   /* f */
	JOB_UNTRACE, /* f */
	JOB_PATTERNS,/* the -t patterns given to worker_start */
	JOB_RESET,
	JOB_EXTEND,  /* another --max-duration before auto-detach */
	JOB_BASELINE, /* now is the baseline of every traced function */
	JOB_SCAN,    /* procs_scan_go for the picker */
	JOB_ARGS,    /* f: capture its arguments, or stop */
	JOB_RESOLVE, /* list: decode them (the browser's package key counts them) */
	JOB_TRACE_LIST, /* list: attach them, one SDK round for all */
};

/* The functions of one job, with what the operator picked them by ("net/
 * http"); the job owns it, the worker frees it once the job ran. */
struct worker_list {
	char label[128];
	size_t n;
	const struct func_info *f[];
};

struct worker_job {
	enum worker_job_kind kind;
	const struct func_info *f;
	int pid;
	struct worker_list *list;
};

/* Per function of the index, by position in idx->funcs. */
enum worker_resolve { RES_NO = 0, RES_OK, RES_FAILED };
struct worker_meta {
	uint64_t size;
	uint16_t nrets;
	uint8_t traceable; /* enum traceable */
	uint8_t resolved;  /* enum worker_resolve */
	const char *reason; /* stable once resolved */
};

/* Tracing state of a function as the browser marks it. */
enum worker_tstate { TS_NONE = 0, TS_QUEUED, TS_TRACING, TS_ENTRY_ONLY, TS_ERROR };

enum worker_state { WS_NONE = 0, WS_OPENING, WS_READY, WS_FAILED };

#define WORKER_QUEUE 512
#define WORKER_WANT 128

struct worker {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	pthread_t thread;
	bool started, quit;
	int wake_fd;
	int efd; /* eventfd: the UI's signals, for the worker's poll() */

	struct worker_job queue[WORKER_QUEUE];
	size_t qhead, qlen;
	bool running; /* a job is being run right now */

	const char *const *patterns;
	size_t npatterns;
	struct session_opts sopts;
	struct session *s; /* the worker's own: the UI never dereferences it */

	/* Published: read under mu. */
	enum worker_state state;
	uint64_t session_gen; /* bumped by every open, failure and close */
	char open_err[ERR_LEN];
	const struct func_index *idx; /* the engine's: read only */
	char target[600];
	int pid;
	bool can_trace;
	char trace_err[ERR_LEN];
	struct worker_meta *meta;
	uint8_t *tstate; /* enum worker_tstate per function */
	size_t ntraced;	 /* functions attached (the failed ones hold no slot) */

	double delay_s;
	uint64_t ticks; /* refreshes since start, for -n */
	uint64_t snap_seq;
	struct snapshot snap; /* header; funcs points at snap_funcs */
	struct snapshot_func *snap_funcs;
	const struct func_info **snap_fptr;
	size_t snap_n;

	const struct func_info *detail_f; /* whose histogram to copy */
	bool detail_dirty;
	uint64_t hist_seq;
	__u64 *hist; /* RETOP_HIST_BUCKETS */
	uint64_t hist_min, hist_max, hist_calls;

	struct proc_info *procs;
	size_t nprocs;
	uint64_t procs_seq;
	bool scanned;

	char progress[256];
	uint64_t progress_seq;

	uint32_t want[WORKER_WANT]; /* functions to resolve first: visible rows */
	size_t nwant;

	/* The detail view's disassembly, decoded here, off the draw loop. */
	struct retsites_engine *eng; /* the worker's own capstone handle */
	const struct func_info *disasm_want;
	struct disasm disasm; /* published: the UI takes it (and frees it) */
	uint64_t disasm_seq;
};

/* s may be NULL (picker first) or a session already opened and tracing
 * (or not: trace_err says why).  patterns are attached first when given. */
int worker_start(struct worker *w, struct session *s, const struct session_opts *so,
		 const char *trace_err, const char *const *patterns, size_t npatterns,
		 double delay_s, int wake_fd, char *err);
/* Close the session (detaching every probe) and join the thread. */
void worker_stop(struct worker *w);

void worker_lock(struct worker *w);
void worker_unlock(struct worker *w);
/* With mu held. */
/* f's position in the index, which meta[] and tstate[] follow; -1 for a
 * function that is not in idx->funcs (one that exists only inlined, from
 * idx->inl_only, has no row there). */
long worker_func_at(const struct worker *w, const struct func_info *f);
bool worker_post_locked(struct worker *w, const struct worker_job *job);
bool worker_busy_locked(const struct worker *w);
void worker_set_delay_locked(struct worker *w, double delay_s);
void worker_want_locked(struct worker *w, const uint32_t *fidx, size_t n);
void worker_detail_locked(struct worker *w, const struct func_info *f);
/* Ask for f's instructions; they arrive in w->disasm, disasm_seq bumped. */
void worker_disasm_locked(struct worker *w, const struct func_info *f);

bool worker_post(struct worker *w, const struct worker_job *job);
/* A list for JOB_RESOLVE or JOB_TRACE_LIST of room for n functions, n
 * set to 0; NULL when out of memory. */
struct worker_list *worker_list_new(size_t n, const char *label);

#endif
