/* The worker thread: owns the session, runs the jobs the UI posts and samples
 * every delay.  It holds mu only to take a job and to publish results, never
 * across a session call, so the draw loop never waits on an attach. */
#include "worker.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "../src/bigmem.h"
#include "../src/clock.h"

static const char worker_unresolved_reason[] = "could not decode its code";

void worker_lock(struct worker *w)
{
	pthread_mutex_lock(&w->mu);
}
void worker_unlock(struct worker *w)
{
	pthread_mutex_unlock(&w->mu);
}

/* Something for the worker to do (mu held): it waits on the condition, or
 * in poll() on the session's wake fd and efd. */
static void worker_signal_locked(struct worker *w)
{
	uint64_t one = 1;

	pthread_cond_signal(&w->cv);
	if (w->efd >= 0) {
		ssize_t r = write(w->efd, &one, sizeof(one));
		(void)r;
	}
}

/* Wake the UI's poll(); a full pipe already means "wake up". */
static void worker_wake(struct worker *w)
{
	char c = 1;
	ssize_t r = write(w->wake_fd, &c, 1);
	(void)r;
}

static void worker_progress_locked(struct worker *w, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void worker_progress_locked(struct worker *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(w->progress, sizeof(w->progress), fmt, ap);
	va_end(ap);
	w->progress_seq++;
}

long worker_func_at(const struct worker *w, const struct func_info *f)
{
	uintptr_t p = (uintptr_t)f, lo = w->idx ? (uintptr_t)w->idx->funcs : 0;

	if (!w->idx || !f || p < lo || p >= lo + w->idx->count * sizeof(*f))
		return -1;
	return (long)(f - w->idx->funcs);
}

bool worker_busy_locked(const struct worker *w)
{
	return w->qlen > 0 || w->running;
}

bool worker_post_locked(struct worker *w, const struct worker_job *job)
{
	if (w->qlen == WORKER_QUEUE)
		return false;
	w->queue[(w->qhead + w->qlen++) % WORKER_QUEUE] = *job;
	long k = worker_func_at(w, job->f);
	if (k >= 0 && w->tstate)
		w->tstate[k] = job->kind == JOB_TRACE ? TS_QUEUED : TS_NONE;
	for (size_t i = 0; job->kind == JOB_TRACE_LIST && w->tstate && i < job->list->n; i++)
		if ((k = worker_func_at(w, job->list->f[i])) >= 0)
			w->tstate[k] = TS_QUEUED;
	worker_signal_locked(w);
	return true;
}

struct worker_list *worker_list_new(size_t n, const char *label)
{
	struct worker_list *l = calloc(1, sizeof(*l) + n * sizeof(l->f[0]));

	if (l)
		snprintf(l->label, sizeof(l->label), "%s", label);
	return l;
}

bool worker_post(struct worker *w, const struct worker_job *job)
{
	worker_lock(w);
	bool ok = worker_post_locked(w, job);
	worker_unlock(w);
	return ok;
}

void worker_set_delay_locked(struct worker *w, double delay_s)
{
	w->delay_s = delay_s;
	worker_signal_locked(w);
}

void worker_want_locked(struct worker *w, const uint32_t *fidx, size_t n)
{
	if (n > WORKER_WANT)
		n = WORKER_WANT;
	memcpy(w->want, fidx, n * sizeof(*fidx));
	w->nwant = n;
	worker_signal_locked(w);
}

void worker_detail_locked(struct worker *w, const struct func_info *f)
{
	w->detail_f = f;
	w->detail_dirty = true;
	worker_signal_locked(w);
}

void worker_disasm_locked(struct worker *w, const struct func_info *f)
{
	w->disasm_want = f;
	worker_signal_locked(w);
}

/* Decode what the detail view asked for (mu held on entry and exit). */
static void worker_disasm_run_locked(struct worker *w)
{
	const struct func_info *f = w->disasm_want;
	struct disasm d;

	w->disasm_want = NULL;
	worker_unlock(w);
	if (!w->eng && retsites_engine_open(&w->eng, NULL) != 0)
		w->eng = NULL; /* disasm_function says there is no decoder */
	disasm_function(w->eng, w->idx->img, f, f->size, &d);
	worker_lock(w);
	disasm_free(&w->disasm);
	w->disasm = d;
	w->disasm_seq++;
	worker_unlock(w);
	worker_wake(w);
	worker_lock(w);
}

static void worker_meta_fill(struct worker *w, size_t i, int ret)
{
	const struct func_info *f = &w->idx->funcs[i];
	struct worker_meta *m = &w->meta[i];

	m->size = f->size;
	if (ret == 0 && f->rets_resolved) {
		m->resolved = RES_OK;
		m->nrets = (uint16_t)f->rets.count;
		m->traceable = (uint8_t)f->rets.traceable;
		m->reason = retsites_reason(&f->rets);
	} else {
		m->resolved = RES_FAILED;
		m->traceable = TRACEABLE_NO;
		m->reason = worker_unresolved_reason;
	}
}

/* Make the session's index visible to the UI (mu held). */
static int worker_publish_session_locked(struct worker *w, struct session *s)
{
	const struct func_index *idx = session_index(s);
	size_t n = idx->count;

	w->meta = calloc(n ? n : 1, sizeof(*w->meta));
	w->tstate = calloc(n ? n : 1, 1);
	if (!w->meta || !w->tstate)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		w->meta[i].size = idx->funcs[i].size;
	w->s = s;
	w->idx = idx;
	snprintf(w->target, sizeof(w->target), "%s", session_target(s));
	w->pid = session_attach_pid(s);
	w->state = WS_READY;
	w->session_gen++;
	return 0;
}

static void worker_drop_session_locked(struct worker *w)
{
	free(w->meta);
	free(w->tstate);
	w->meta = NULL;
	w->tstate = NULL;
	w->idx = NULL;
	w->snap_n = 0;
	w->ntraced = 0;
	w->detail_f = NULL;
	w->disasm_want = NULL;
	disasm_free(&w->disasm); /* it points into the index that goes */
	w->state = WS_NONE;
	w->session_gen++;
	w->target[0] = '\0';
	w->snap_seq++;
}

/* Mirror the session's traced list into tstate (mu held; the worker is the
 * only thread that changes the session, so reading it here is safe). */
static void worker_sync_tstate_locked(struct worker *w)
{
	size_t attached = 0;

	if (!w->s || !w->tstate)
		return;
	for (size_t i = 0; i < session_count(w->s); i++) {
		struct session_entry e;
		session_entry_at(w->s, i, &e);
		bool in = e.state != FUNC_ERROR && e.state != FUNC_DETACHED;
		uint8_t st = !in			  ? TS_ERROR
			     : e.state == FUNC_ENTRY_ONLY ? TS_ENTRY_ONLY
							  : TS_TRACING;
		long k = worker_func_at(w, e.f);
		if (k >= 0 && w->tstate[k] != TS_QUEUED)
			w->tstate[k] = st;
		attached += in;
	}
	/* A function that failed to attach stays listed with its reason but
	 * holds no tracing slot. */
	w->ntraced = attached;
}

static void worker_resolve(struct worker *w, const struct func_info *f)
{
	char why[ERR_LEN];
	int ret = session_resolve(w->s, f, why);
	long k = worker_func_at(w, f);

	worker_lock(w);
	if (k >= 0)
		worker_meta_fill(w, (size_t)k, ret);
	worker_unlock(w);
}

static void worker_job_trace(struct worker *w, const struct func_info *f)
{
	char err[ERR_LEN];

	long k = worker_func_at(w, f);

	if (!f->rets_resolved && !f->inline_only)
		worker_resolve(w, f);
	worker_lock(w);
	worker_progress_locked(w, "attaching %s: %zu probes...", f->name,
			       1 + (f->rets_resolved ? (size_t)f->rets.count : 0));
	worker_unlock(w);
	worker_wake(w);
	if (!w->can_trace) {
		worker_lock(w);
		if (k >= 0)
			w->tstate[k] = TS_NONE;
		worker_unlock(w);
		log_warn("ui", "%s: cannot trace: %s", f->name, w->trace_err);
		return;
	}
	int ret = session_trace(w->s, f, err);
	worker_lock(w);
	if (k >= 0)
		w->tstate[k] = TS_NONE;
	worker_sync_tstate_locked(w);
	for (size_t i = 0; ret == 0 && i < session_count(w->s); i++) {
		struct session_entry e;
		session_entry_at(w->s, i, &e);
		if (e.f != f)
			continue;
		if (e.state == FUNC_ENTRY_ONLY)
			worker_progress_locked(w, "%s: entry-only: %s", f->name, e.reason);
		else
			worker_progress_locked(w, "%s: tracing, %zu probes", f->name,
					       session_probes_at(w->s, i));
	}
	w->detail_dirty = true;
	worker_unlock(w);
	if (ret != 0)
		log_warn("ui", "%s", err);
}

static void worker_job_untrace(struct worker *w, const struct func_info *f)
{
	long k = worker_func_at(w, f);

	session_untrace(w->s, f);
	worker_lock(w);
	if (k >= 0)
		w->tstate[k] = TS_NONE;
	worker_sync_tstate_locked(w);
	worker_progress_locked(w, "%s: detached", f->name);
	worker_unlock(w);
}

/* f decoded, and its row of meta[] saying so: the interlock decodes the
 * function before f too, and that one's row may still say not yet. */
static void worker_resolve_once(struct worker *w, const struct func_info *f)
{
	long k = worker_func_at(w, f);

	if (!f->rets_resolved) {
		worker_resolve(w, f);
		return;
	}
	worker_lock(w);
	if (k >= 0 && w->meta[k].resolved == RES_NO)
		worker_meta_fill(w, (size_t)k, 0);
	worker_unlock(w);
}

/* Decode what the browser's package key is about to count. */
static void worker_job_resolve(struct worker *w, const struct worker_list *l)
{
	worker_lock(w);
	worker_progress_locked(w, "%s: checking which of %zu functions can be traced...", l->label,
			       l->n);
	worker_unlock(w);
	worker_wake(w);
	for (size_t i = 0; i < l->n; i++)
		worker_resolve_once(w, l->f[i]);
}

static void worker_job_trace_list(struct worker *w, const struct worker_list *l)
{
	char err[ERR_LEN];
	size_t attached = 0;
	int ret = -1;

	worker_lock(w);
	worker_progress_locked(w, "%s: attaching %zu functions...", l->label, l->n);
	worker_unlock(w);
	worker_wake(w);
	for (size_t i = 0; i < l->n; i++)
		if (!l->f[i]->inline_only)
			worker_resolve_once(w, l->f[i]);
	if (w->can_trace)
		ret = session_trace_list(w->s, (const struct func_info **)l->f, l->n, &attached, err);
	worker_lock(w);
	for (size_t i = 0; i < l->n; i++) {
		long k = worker_func_at(w, l->f[i]);
		if (k >= 0)
			w->tstate[k] = TS_NONE;
	}
	worker_sync_tstate_locked(w);
	if (ret == 0)
		worker_progress_locked(w, "%s: tracing %zu of %zu functions%s", l->label, attached,
				       l->n, attached < l->n ? " (! marks the others)" : "");
	w->detail_dirty = true;
	worker_unlock(w);
	if (!w->can_trace)
		log_warn("ui", "%s: cannot trace: %s", l->label, w->trace_err);
	else if (ret != 0)
		log_warn("ui", "%s", err);
}

static void worker_job_args(struct worker *w, const struct func_info *f)
{
	bool on = false;
	int ret = session_toggle_args(w->s, f, &on);

	worker_lock(w);
	if (ret == -ENOTSUP)
		worker_progress_locked(w,
				       "%s: no arguments without durations (entry-only or "
				       "--latency-only)",
				       f->name);
	else if (ret)
		worker_progress_locked(w, "%s: not traced: trace it first (Space)", f->name);
	else
		worker_progress_locked(
		    w,
		    on ? "%s: arguments captured with its slowest calls (a stops)"
		       : "%s: arguments no longer captured",
		    f->name);
	worker_unlock(w);
}

static void worker_job_patterns(struct worker *w)
{
	char err[ERR_LEN];

	worker_lock(w);
	worker_progress_locked(w, "attaching the functions matching %s%s...", w->patterns[0],
			       w->npatterns > 1 ? " and more" : "");
	worker_unlock(w);
	worker_wake(w);
	int ret = w->can_trace ? session_trace_patterns(w->s, w->patterns, w->npatterns, err)
			       : err_set(err, EPERM, "cannot trace: %s", w->trace_err);
	worker_lock(w);
	for (size_t i = 0; i < session_count(w->s); i++) {
		struct session_entry e;
		session_entry_at(w->s, i, &e);
		long k = worker_func_at(w, e.f);
		if (k >= 0)
			worker_meta_fill(w, (size_t)k, 0);
	}
	worker_sync_tstate_locked(w);
	if (ret == 0)
		worker_progress_locked(w, "tracing %zu functions", session_count(w->s));
	worker_unlock(w);
	if (ret != 0)
		log_warn("ui", "%s", err);
}

static void worker_job_open(struct worker *w, int pid)
{
	struct session_opts so = w->sopts;
	struct session *s;
	char err[ERR_LEN], terr[ERR_LEN] = "";

	so.pid = pid;
	so.exe = NULL;
	int ret = session_open(&so, &s, err);
	if (ret == 0 && session_start_tracing(s, terr) != 0)
		log_warn("ui", "cannot trace: %s", terr);
	worker_lock(w);
	if (ret == 0) {
		w->can_trace = terr[0] == '\0';
		snprintf(w->trace_err, sizeof(w->trace_err), "%s", terr);
		if (worker_publish_session_locked(w, s) != 0) {
			worker_drop_session_locked(w);
			session_close(s);
			w->s = NULL;
			ret = err_set(err, ENOMEM, "out of memory");
		}
	}
	if (ret != 0) {
		w->state = WS_FAILED;
		w->session_gen++;
		snprintf(w->open_err, sizeof(w->open_err), "%s", err);
	} else {
		worker_progress_locked(w, "PID %d: %zu functions", pid, session_index(s)->count);
	}
	worker_unlock(w);
}

static void worker_job_close(struct worker *w)
{
	struct session *s = w->s;

	worker_lock(w);
	worker_drop_session_locked(w);
	w->s = NULL;
	worker_unlock(w);
	session_close(s);
}

static void worker_job_scan(struct worker *w)
{
	struct proc_info *p;
	size_t n;

	if (procs_scan_go(&p, &n) != 0)
		return;
	worker_lock(w);
	free(w->procs);
	w->procs = p;
	w->nprocs = n;
	w->procs_seq++;
	w->scanned = true;
	worker_unlock(w);
}

static void worker_run_job(struct worker *w, const struct worker_job *job)
{
	switch (job->kind) {
	case JOB_OPEN:
		if (!w->s)
			worker_job_open(w, job->pid);
		break;
	case JOB_CLOSE:
		if (w->s)
			worker_job_close(w);
		break;
	case JOB_TRACE:
		if (w->s)
			worker_job_trace(w, job->f);
		break;
	case JOB_UNTRACE:
		if (w->s)
			worker_job_untrace(w, job->f);
		break;
	case JOB_PATTERNS:
		if (w->s && w->npatterns)
			worker_job_patterns(w);
		break;
	case JOB_RESET:
		if (w->s)
			session_reset(w->s);
		break;
	case JOB_EXTEND:
		if (w->s)
			session_extend(w->s);
		break;
	case JOB_BASELINE:
		if (w->s)
			session_mark_baseline(w->s);
		break;
	case JOB_SCAN:
		worker_job_scan(w);
		break;
	case JOB_ARGS:
		if (w->s)
			worker_job_args(w, job->f);
		break;
	case JOB_RESOLVE:
		if (w->s)
			worker_job_resolve(w, job->list);
		break;
	case JOB_TRACE_LIST:
		if (w->s)
			worker_job_trace_list(w, job->list);
		break;
	}
	free(job->list);
}

/* Copy the histogram of the function the detail view shows from a fresh
 * snapshot (mu held; its raw counters are valid until the next sample). */
static void worker_copy_hist_locked(struct worker *w, const struct snapshot *snap)
{
	w->detail_dirty = false;
	if (!w->detail_f)
		return;
	for (size_t i = 0; i < snap->nfuncs; i++) {
		const struct stats_read *raw = snap->funcs[i].raw;
		if (snap->funcs[i].f != w->detail_f || !raw)
			continue;
		if (raw->hist)
			memcpy(w->hist, raw->hist, RETOP_HIST_BUCKETS * sizeof(*w->hist));
		else
			memset(w->hist, 0, RETOP_HIST_BUCKETS * sizeof(*w->hist));
		w->hist_min = raw->st.min_ns;
		w->hist_max = raw->st.max_ns;
		w->hist_calls = raw->st.calls;
		w->hist_seq++;
		return;
	}
}

static void worker_sample(struct worker *w)
{
	const struct snapshot *snap = NULL;

	/* After auto-detach the tracer is closed, but the countdown and the
	 * detached rows still show.  The callers of the function the detail
	 * page shows only: no other screen shows callers. */
	if (w->s && session_started(w->s)) {
		worker_lock(w);
		const struct func_info *f = w->detail_f;
		worker_unlock(w);
		session_callers_of(w->s, false, f);
		snap = session_sample(w->s);
	}
	worker_lock(w);
	w->ticks++;
	if (snap) {
		/* The rows the sample wrote are published as they are, and the
		 * session writes the next sample into the ones published before
		 * (the UI holds others: ui_sync_snap_locked swaps): a thousand
		 * rows of 7 KiB are not copied.  Under mu, a session call that
		 * only swaps two pointers: the UI swaps snap_funcs under mu. */
		w->snap = *snap;
		w->snap_funcs = session_swap_rows(w->s, w->snap_funcs);
		w->snap.funcs = w->snap_funcs;
		w->snap_n = w->snap.nfuncs;
		for (size_t i = 0; i < w->snap_n; i++)
			w->snap_fptr[i] = w->snap_funcs[i].f;
		w->snap_seq++;
		worker_sync_tstate_locked(w);
		worker_copy_hist_locked(w, &w->snap);
	}
	worker_unlock(w);
	worker_wake(w);
}

/* Resolve the RET sites of the rows the browser shows, outside mu. */
static bool worker_resolve_wanted(struct worker *w)
{
	uint32_t todo[WORKER_WANT];
	size_t n = 0;

	worker_lock(w);
	for (size_t i = 0; i < w->nwant; i++)
		if (w->idx && w->want[i] < w->idx->count && w->meta[w->want[i]].resolved == RES_NO)
			todo[n++] = w->want[i];
	w->nwant = 0;
	worker_unlock(w);
	for (size_t i = 0; i < n; i++)
		worker_resolve(w, &w->idx->funcs[todo[i]]);
	return n > 0;
}

/* Until the next sample is due (due_ns), or something to do: the
 * engine's clock runs meanwhile (session_run). */
static void worker_wait_locked(struct worker *w, uint64_t due_ns)
{
	if (w->efd < 0) {
		struct timespec ts = {.tv_sec = (time_t)(due_ns / 1000000000ull),
				      .tv_nsec = (long)(due_ns % 1000000000ull)};
		pthread_cond_timedwait(&w->cv, &w->mu, &ts);
		return;
	}
	/* Signals set their flags under mu before they write efd: one written
	 * since mu was released makes the wait end at once. */
	worker_unlock(w);
	session_run(w->s, due_ns, w->efd);
	uint64_t v;
	ssize_t r = read(w->efd, &v, sizeof(v)); /* nonblocking: reset it */
	(void)r;
	worker_lock(w);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t due = clock_now_ns() + (uint64_t)(w->delay_s * 1e9);

	worker_lock(w);
	while (!w->quit) {
		if (w->qlen) {
			struct worker_job job = w->queue[w->qhead];
			w->qhead = (w->qhead + 1) % WORKER_QUEUE;
			w->qlen--;
			w->running = true;
			worker_unlock(w);
			worker_run_job(w, &job);
			worker_lock(w);
			w->running = false;
			worker_unlock(w);
			worker_wake(w);
			worker_lock(w);
			continue;
		}
		uint64_t now = clock_now_ns(), period = (uint64_t)(w->delay_s * 1e9);
		if (now >= due) {
			/* Absolute deadlines keep intervals even; after a long
			 * job, start over instead of sampling in a burst. */
			due = session_next_due(due, period);
			worker_unlock(w);
			worker_sample(w);
			worker_lock(w);
			continue;
		}
		if (due > now + period)
			due = now + period; /* the delay was shortened */
		if (w->detail_dirty) {
			worker_copy_hist_locked(w, &w->snap);
			worker_unlock(w);
			worker_wake(w);
			worker_lock(w);
			continue;
		}
		if (w->disasm_want && w->s) {
			worker_disasm_run_locked(w);
			continue;
		}
		if (w->nwant && w->s) {
			worker_unlock(w);
			bool did = worker_resolve_wanted(w);
			if (did)
				worker_wake(w);
			worker_lock(w);
			continue;
		}
		worker_wait_locked(w, due);
	}
	worker_unlock(w);
	return NULL;
}

static int worker_alloc(struct worker *w)
{
	w->snap_funcs = bigmem_calloc(RETOP_MAX_FUNCS, sizeof(*w->snap_funcs));
	w->snap_fptr = calloc(RETOP_MAX_FUNCS, sizeof(*w->snap_fptr));
	w->hist = calloc(RETOP_HIST_BUCKETS, sizeof(*w->hist));
	return w->snap_funcs && w->snap_fptr && w->hist ? 0 : -ENOMEM;
}

static void worker_free(struct worker *w)
{
	/* Jobs never run (q while attaching): their lists. */
	for (; w->qlen; w->qlen--, w->qhead = (w->qhead + 1) % WORKER_QUEUE)
		free(w->queue[w->qhead].list);
	snapshot_funcs_free(w->snap_funcs, RETOP_MAX_FUNCS);
	free(w->snap_fptr);
	free(w->hist);
	free(w->procs);
	free(w->meta);
	free(w->tstate);
	disasm_free(&w->disasm);
	retsites_engine_close(w->eng);
	w->eng = NULL;
	w->snap_funcs = NULL;
	w->snap_fptr = NULL;
	w->hist = NULL;
	w->procs = NULL;
	w->meta = NULL;
	w->tstate = NULL;
}

int worker_start(struct worker *w, struct session *s, const struct session_opts *so,
		 const char *trace_err, const char *const *patterns, size_t npatterns,
		 double delay_s, int wake_fd, char *err)
{
	sigset_t all, old;

	memset(w, 0, sizeof(*w));
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	w->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	w->sopts = *so;
	w->patterns = patterns;
	w->npatterns = npatterns;
	w->delay_s = delay_s;
	w->wake_fd = wake_fd;
	if (worker_alloc(w) != 0 || (s && worker_publish_session_locked(w, s) != 0)) {
		worker_free(w);
		return err_set(err, ENOMEM, "out of memory");
	}
	w->can_trace = s && !(trace_err && trace_err[0]);
	snprintf(w->trace_err, sizeof(w->trace_err), "%s", trace_err ? trace_err : "");
	if (s && npatterns)
		worker_post_locked(w, &(struct worker_job){.kind = JOB_PATTERNS});
	/* Signals (SIGWINCH, SIGINT, SIGTERM) must reach the UI thread, which
	 * polls for them: the worker blocks them all. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int ret = pthread_create(&w->thread, NULL, worker_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret != 0) {
		w->s = NULL; /* still the caller's */
		worker_free(w);
		return err_set(err, ret, "cannot start the worker thread: %s", strerror(ret));
	}
	w->started = true;
	return 0;
}

void worker_stop(struct worker *w)
{
	if (w->started) {
		worker_lock(w);
		w->quit = true;
		worker_signal_locked(w);
		worker_unlock(w);
		pthread_join(w->thread, NULL);
		w->started = false;
	}
	/* After the join nothing races: detach everything now. */
	session_close(w->s);
	w->s = NULL;
	worker_free(w);
	if (w->efd >= 0)
		close(w->efd);
	w->efd = -1;
	pthread_cond_destroy(&w->cv);
	pthread_mutex_destroy(&w->mu);
}
