/* Baselines and what changed since: the operator marks now (the
 * dashboard's key, --baseline SECS), or a deploy followed under -x marks
 * the new binary's start; each sample then compares each function's timed
 * calls since with those before (change.h).  Only cumulative histograms
 * are kept: a period is the difference of two. */
#include "session_internal.h"

#include <stdlib.h>
#include <string.h>

#include "log.h"

static void session_hist_free(__u64 **h)
{
	free(*h);
	*h = NULL;
}

/* A copy of h (NULL: zeros, kept as NULL).  Out of memory: NULL too; a
 * count then goes back and the comparison is dropped, or a period starts
 * at tracing's start. */
static __u64 *session_hist_dup(const __u64 *h)
{
	__u64 *c;

	if (!h || !(c = malloc(sizeof(__u64) * RETOP_HIST_BUCKETS)))
		return NULL;
	memcpy(c, h, sizeof(__u64) * RETOP_HIST_BUCKETS);
	return c;
}

void session_baseline_drop(struct session_func *sf)
{
	struct session_baseline *b = &sf->base;

	session_hist_free(&b->before_from);
	session_hist_free(&b->before_to);
	session_hist_free(&b->after_from);
	session_hist_free(&b->binary_from);
	memset(b, 0, sizeof(*b));
}

/* sf's cumulative histogram now, read afresh from BPF (the last sample's
 * may be a refresh old, and a deploy's calls since belong after); NULL
 * when it has no timed call.  The caller frees it. */
static __u64 *session_hist_now(struct session *s, struct session_func *sf)
{
	struct retop_func_hist *h;

	if (!s->tracer || sf->slot < 0)
		return session_hist_dup(sf->cur.hist);
	if (!(h = malloc(sizeof(*h))))
		return NULL;
	/* No histogram in BPF: no timed call yet. */
	if (tracer_read_hist(s->tracer, sf->slot, h) != 0) {
		free(h);
		return NULL;
	}
	return (__u64 *)h; /* its one member, hist, is at its start */
}

/* sf's timed calls and failing ones now, read afresh like its histogram
 * (the mapped counters: no syscall). */
static struct session_mark_counts session_counts_now(struct session *s, struct session_func *sf)
{
	struct retop_func_stats st;

	if (!s->tracer || sf->slot < 0 || tracer_read_counters(s->tracer, sf->slot, &st) != 0)
		st = sf->cur.st;
	return (struct session_mark_counts){st.calls, st.errors};
}

/* Before: this binary's calls up to now; after: from now on. */
static void session_mark(struct session *s, struct session_func *sf, enum change_against against)
{
	struct session_baseline *b = &sf->base;
	__u64 *now = session_hist_now(s, sf);
	struct session_mark_counts n = session_counts_now(s, sf);

	b->n_before_from = b->n_binary_from;
	b->n_before_to = n;
	b->n_after_from = n;
	session_hist_free(&b->before_from);
	session_hist_free(&b->before_to);
	session_hist_free(&b->after_from);
	b->before_from = session_hist_dup(b->binary_from);
	b->before_to = now;
	b->after_from = session_hist_dup(now);
	b->against = against;
	b->old_running = false;
	b->computed = false;
}

void session_mark_baseline(struct session *s)
{
	size_t marked = 0;

	for (size_t i = 0; i < s->nfuncs; i++)
		if (s->funcs[i].slot >= 0) {
			session_mark(s, &s->funcs[i], CHANGE_WINDOW);
			marked++;
		}
	log_info("change",
		 "baseline marked for %zu functions: their calls from now on are "
		 "compared with those before",
		 marked);
}

void session_mark_binary(struct session *s, size_t k)
{
	for (size_t i = 0; i < s->nfuncs; i++) {
		struct session_func *sf = &s->funcs[i];
		if (sf->slot < 0 || !sf->fi[k])
			continue;
		session_mark(s, sf, CHANGE_BINARY);
		/* Its calls from here on are the new binary's. */
		session_hist_free(&sf->base.binary_from);
		sf->base.binary_from = session_hist_dup(sf->base.after_from);
		sf->base.n_binary_from = sf->base.n_after_from;
		sf->base.old_running = true;
	}
}

void session_baseline_old_gone(struct session *s)
{
	size_t running = 0;

	for (size_t k = 0; k < s->nimages; k++)
		running += !s->images[k].retired;
	if (running > 1)
		return;
	/* The calls in between were of both binaries: in neither period. */
	for (size_t i = 0; i < s->nfuncs; i++) {
		struct session_baseline *b = &s->funcs[i].base;
		if (!b->old_running)
			continue;
		session_hist_free(&b->after_from);
		session_hist_free(&b->binary_from);
		b->after_from = session_hist_now(s, &s->funcs[i]);
		b->binary_from = session_hist_dup(b->after_from);
		b->n_after_from = b->n_binary_from = session_counts_now(s, &s->funcs[i]);
		b->old_running = false;
		b->computed = false;
	}
}

void session_baseline_due(struct session *s, uint64_t now)
{
	if (s->opts.baseline_s <= 0 || s->baseline_marked || !s->tracer || !s->start_ns ||
	    (double)(now - s->start_ns) < s->opts.baseline_s * 1e9)
		return;
	s->baseline_marked = true;
	session_mark_baseline(s);
}

void session_fill_change(struct session_func *sf, struct snapshot_func *out)
{
	struct session_baseline *b = &sf->base;
	/* The timed calls the histogram read holds: a function with no new
	 * call keeps its comparison without a pass over its buckets. */
	uint64_t at = sf->cur.hist ? sf->hist_calls : 0;

	memset(&out->change, 0, sizeof(out->change));
	if (b->against == CHANGE_NONE)
		return;
	if (!b->computed || b->computed_at != at) {
		/* A count went back: the counters were reset under the mark. */
		if (!change_compare_cumulative(b->before_from, b->before_to, b->after_from,
					       sf->cur.hist, &b->result)) {
			session_baseline_drop(sf);
			return;
		}
		b->computed = true;
		b->computed_at = at;
	}
	out->change.against = b->against;
	out->change.r = b->result;
	out->change.old_running = b->old_running;
	/* The failing share of each period's timed calls, where errors are
	 * counted and both periods have timed calls. */
	uint64_t cb = b->n_before_to.calls - b->n_before_from.calls,
		 ca = sf->cur.st.calls - b->n_after_from.calls;
	if (sf->err.state == ARGS_ERROR_READ && !sf->entry_only && cb > 0 && ca > 0 &&
	    b->n_before_to.calls >= b->n_before_from.calls &&
	    b->n_before_to.errors >= b->n_before_from.errors &&
	    sf->cur.st.calls >= b->n_after_from.calls && sf->cur.st.errors >= b->n_after_from.errors) {
		out->change.error_share_known = true;
		out->change.error_share_before =
		    (double)(b->n_before_to.errors - b->n_before_from.errors) / (double)cb;
		out->change.error_share_after =
		    (double)(sf->cur.st.errors - b->n_after_from.errors) / (double)ca;
	}
}
