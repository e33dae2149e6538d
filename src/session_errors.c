/* Failing calls: where each traced function's error result is read at its
 * RETs (its signature, at attach), and in each snapshot its errors, their
 * share of the timed calls, the durations of failing and succeeding calls
 * apart, and the errors' concrete types (bpf/retop.h, "Failing calls"). */
#include "session_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab.h"
#include "sdk_client.h"
#include "sdk_facts.h"

void session_error_find(struct session *s, const struct func_index *idx, const struct func_info *f,
			struct args_error *out)
{
	const struct sdk_arg *args, *rets;
	size_t nrets, nargs = sdk_facts_args(s->sdk, f, &args, &rets, &nrets);
	enum args_sdk sdk = nargs || nrets	       ? ARGS_SDK_DESCRIBED
			    : s->sdk && s->sdk->client ? ARGS_SDK_SILENT
						       : ARGS_SDK_NONE;
	uint8_t flags = 0;

	/* A function that exists only inlined has no RET to read it at. */
	if (f->inline_only) {
		*out = (struct args_error){.state = ARGS_ERROR_NONE, .reg = RETOP_ARG_NONE};
		return;
	}
	if (gopclntab_func_flags(idx->pcln, f->pcln_index, &flags) != 0)
		flags = 0;
	args_error_find(f, rets, nrets, sdk, flags & GOPCLNTAB_FLAG_ASM, out);
	/* For comparisons (tests/bench/errors.sh): tracing alone. */
	const char *env = getenv("RETOP_ERRORS");
	if (out->state == ARGS_ERROR_READ && env && !strcmp(env, "off")) {
		out->state = ARGS_ERROR_UNREAD;
		out->reg = RETOP_ARG_NONE;
		snprintf(out->why, sizeof(out->why), "not read (RETOP_ERRORS=off)");
	}
}

void session_read_errors(struct session *s, struct session_func *sf)
{
	/* Before the counters: every failing call read here is in them too,
	 * so the succeeding calls (all less the failing) never go below 0. */
	struct retop_func_stats st;

	if (sf->slot < 0 || sf->err.state != ARGS_ERROR_READ || sf->entry_only)
		return;
	/* Read again (a syscall) only when the failing calls moved: the
	 * mapped counters say so for nothing. */
	if (tracer_read_counters(s->tracer, sf->slot, &st) != 0 || !st.errors ||
	    (sf->errs && st.errors == sf->errs->calls))
		return;
	if (!sf->errs)
		sf->errs = malloc(sizeof(*sf->errs));
	if (!sf->errs)
		return;
	if (tracer_read_errors(s->tracer, sf->slot, sf->errs) != 0)
		memset(sf->errs, 0, sizeof(*sf->errs));
}

void session_errors_reset(struct session_func *sf)
{
	if (sf->errs)
		memset(sf->errs, 0, sizeof(*sf->errs));
	sf->errors_est = 0;
	sf->errors_inexact = false;
	sf->errors_seen = sf->timed_seen = sf->errors_shown = 0;
}

/* Errors so far, as calls are counted: exact while every call counted was
 * timed, else each interval's failing share of its timed calls applied to
 * its calls (and the share so far where none was timed).  Only grows. */
static void session_errors_ledger(struct session_func *sf, struct snapshot_func *out,
				  double *share_interval)
{
	uint64_t e = sf->cur.st.errors, t = sf->cur.st.calls, dc = out->v.calls_delta;

	if (e < sf->errors_seen || t < sf->timed_seen)
		sf->errors_seen = sf->timed_seen = 0; /* the counters started again */
	uint64_t de = e - sf->errors_seen, dt = t - sf->timed_seen;
	*share_interval = dt ? (double)de / (double)dt : 0;
	if (dc == dt) {
		sf->errors_est += (double)de;
	} else {
		sf->errors_inexact = true;
		if (dt)
			sf->errors_est += (double)de * (double)dc / (double)dt;
		else if (t)
			sf->errors_est += (double)dc * (double)e / (double)t;
	}
	sf->errors_seen = e;
	sf->timed_seen = t;
	out->errors = (uint64_t)(sf->errors_est + 0.5);
	out->errors_exact = !sf->errors_inexact && !out->estimated && out->v.calls == t;
}

static void session_durations(const __u64 *hist, uint64_t calls, uint64_t sum_ns,
			      struct snapshot_durations *d)
{
	d->calls = calls;
	d->mean_ns = calls ? sum_ns / calls : 0;
	uint64_t p[2];

	stats_p50_p99(hist, RETOP_HIST_BUCKETS, 0, 0, p);
	d->p50_ns = p[0];
	d->p99_ns = p[1];
}

/* The failing calls' durations as read, and the others': every timed
 * call's less those (read before them: never below 0). */
static void session_error_durations(struct session *s, struct session_func *sf,
				    struct snapshot_func *out)
{
	static const struct retop_error_stats no_errors;
	const struct retop_error_stats *es = sf->errs ? sf->errs : &no_errors;
	/* No timed call yet: no histogram (its buckets all 0). */
	static const __u64 none[RETOP_HIST_BUCKETS];
	const __u64 *h = sf->cur.hist ? sf->cur.hist : none;
	uint64_t ok = 0;

	session_durations(es->hist, es->calls, es->sum_ns, &out->failing);
	for (size_t b = 0; b < RETOP_HIST_BUCKETS; b++) {
		s->ok_hist[b] = h[b] > es->hist[b] ? h[b] - es->hist[b] : 0;
		ok += s->ok_hist[b];
	}
	session_durations(s->ok_hist, ok,
			  sf->cur.st.sum_ns > es->sum_ns ? sf->cur.st.sum_ns - es->sum_ns : 0,
			  &out->succeeding);
}

static int session_type_cmp(const void *a, const void *b)
{
	const struct snapshot_error_type *x = a, *y = b;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The busiest types by name (a name two addresses share counted once),
 * then "other": the rest, and the failing calls no place was left for. */
static void session_error_types(struct session *s, struct session_func *sf,
				struct snapshot_func *out)
{
	struct snapshot_error_type all[RETOP_ERROR_TYPES];
	size_t n = 0;
	static const struct retop_error_stats no_errors;
	const struct retop_error_stats *es = sf->errs ? sf->errs : &no_errors;
	uint64_t other = es->other, bias = session_load_bias(s);

	for (size_t i = 0; i < RETOP_ERROR_TYPES; i++) {
		const struct retop_error_type *t = &es->types[i];
		char name[SNAPSHOT_ERROR_TYPE_LEN];
		size_t k;
		if (!t->type || !t->calls)
			continue;
		error_types_name(&s->etypes, s->idx, t->type, bias, name, sizeof(name));
		for (k = 0; k < n && strcmp(all[k].name, name) != 0; k++)
			;
		if (k == n) {
			snprintf(all[n].name, sizeof(all[n].name), "%s", name);
			all[n++].calls = 0;
		}
		all[k].calls += t->calls;
	}
	qsort(all, n, sizeof(all[0]), session_type_cmp);
	out->ntypes = 0;
	for (size_t i = 0; i < n; i++) {
		if (i < SNAPSHOT_ERROR_TYPES)
			out->types[out->ntypes++] = all[i];
		else
			other += all[i].calls;
	}
	if (other) {
		snprintf(out->types[out->ntypes].name, sizeof(out->types[0].name), "other");
		out->types[out->ntypes++].calls = other;
	}
}

void session_fill_errors(struct session *s, struct session_func *sf, double interval,
			 struct snapshot_func *out)
{
	double share_interval = 0;

	out->returns_error = sf->err.state == ARGS_ERROR_READ || sf->err.state == ARGS_ERROR_UNREAD;
	out->errors_counted = sf->err.state == ARGS_ERROR_READ && !sf->entry_only;
	out->errors_why[0] = '\0';
	/* Never attached (refused): its state says why, there is nothing. */
	if (sf->slot < 0 && !sf->have_prev) {
		out->errors_counted = false;
		return;
	}
	if (!out->errors_counted) {
		if (sf->err.state == ARGS_ERROR_READ)
			snprintf(out->errors_why, sizeof(out->errors_why),
				 "no RET probe to read it at (entry-only)");
		else if (sf->err.state != ARGS_ERROR_NONE)
			snapshot_text_set(out->errors_why, sizeof(out->errors_why), sf->err.why);
		return;
	}
	session_errors_ledger(sf, out, &share_interval);
	out->errors_delta = out->errors > sf->errors_shown ? out->errors - sf->errors_shown : 0;
	out->errors_per_s =
	    interval > 0 && sf->have_prev ? (double)out->errors_delta / interval : 0;
	sf->errors_shown = out->errors;
	out->error_share =
	    sf->cur.st.calls ? (double)sf->cur.st.errors / (double)sf->cur.st.calls : 0;
	out->error_share_interval = share_interval;
	session_error_durations(s, sf, out);
	session_error_types(s, sf, out);
}
