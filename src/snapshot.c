#include "snapshot.h"

#include <json-c/json.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "figure.h"
#include "guard.h"
#include "snapshot_split.h"
#include "text_escape.h"

#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* A double with a fixed number of decimals: rates and times need no more. */
static struct json_object *json_fixed(double v, int decimals)
{
	char buf[48];
	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_object_new_double_s(v, buf);
}

/* Latency by caller, busiest first, "other" last. */
static struct json_object *snapshot_callers_json(const struct callers_view *c, bool errors)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < c->n; i++) {
		const struct callers_row *r = &c->rows[i];
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "name", json_object_new_string(r->name));
		json_object_object_add(o, "calls", json_object_new_uint64(r->calls));
		json_object_object_add(o, "mean_ns", json_object_new_uint64(r->mean_ns));
		json_object_object_add(o, "p50_ns", json_object_new_uint64(r->p50_ns));
		json_object_object_add(o, "p99_ns", json_object_new_uint64(r->p99_ns));
		/* Of its calls, those that returned a non-nil error; null
		 * where the function's errors are not read. */
		json_object_object_add(o, "errors",
				       errors ? json_object_new_uint64(r->errors) : NULL);
		json_object_array_add(a, o);
	}
	return a;
}

/* Arguments by name (arg<i> when unnamed): numbers as numbers, strings
 * as strings, pointers and raw registers as hex text, an interface as
 * "nil" or "non-nil", a slice as {"len": N}, null when they could not be
 * read (floats, spilled, a layout not decoded). */
static struct json_object *snapshot_args_json(const struct args_values *a, const char *unnamed)
{
	struct json_object *o = json_object_new_object();

	for (size_t i = 0; i < a->n; i++) {
		const struct args_value *v = &a->v[i];
		struct json_object *j = NULL;
		char key[32], buf[ARGS_TEXT_LEN];

		if (!v->name)
			snprintf(key, sizeof(key), "%s%zu", unnamed, i);
		switch (v->kind) {
		case ARGS_INT:
			j = json_object_new_int64(v->i);
			break;
		case ARGS_UINT:
			j = json_object_new_uint64(v->u);
			break;
		case ARGS_BOOL:
			j = json_object_new_boolean(v->u != 0);
			break;
		case ARGS_SLICE:
			j = json_object_new_object();
			json_object_object_add(j, "len", json_object_new_uint64(v->u));
			break;
		case ARGS_STRING:
		case ARGS_IFACE: /* JSON null is "not read": "nil" or "non-nil" */
		case ARGS_POINTER:
		case ARGS_RAW:
			args_value_text(v, buf, sizeof(buf));
			j = json_object_new_string(buf);
			break;
		case ARGS_UNAVAILABLE:
			break;
		}
		json_object_object_add(o, v->name ? v->name : key, j);
	}
	return o;
}

/* The slowest calls, longest first. */
static struct json_object *snapshot_slowest_json(const struct slowest_list *l)
{
	struct json_object *a = json_object_new_array();

	for (size_t i = 0; i < l->n; i++) {
		const struct slowest_call *c = &l->calls[i];
		struct json_object *o = json_object_new_object();
		json_object_object_add(o, "time", json_fixed(c->time, 6));
		json_object_object_add(o, "duration_ns", json_object_new_uint64(c->dur_ns));
		json_object_object_add(o, "goid", json_object_new_uint64(c->goid));
		json_object_object_add(o, "tid", json_object_new_int64(c->tid));
		json_object_object_add(o, "pid", json_object_new_int64(c->pid));
		json_object_object_add(o, "caller", json_object_new_string(c->caller));
		if (c->vals && c->vals->has_args)
			json_object_object_add(o, "args",
					       snapshot_args_json(&c->vals->args, "arg"));
		if (c->vals && c->vals->has_results)
			json_object_object_add(o, "results",
					       snapshot_args_json(&c->vals->results, "r"));
		json_object_array_add(a, o);
	}
	return a;
}

/* A row's parts, in order: each array is cleared up to its count only
 * (rows past it are undefined, snapshot.h). */
#define SF_OFF(f) offsetof(struct snapshot_func, f)
#define SF_END(f) (SF_OFF(f) + sizeof(((struct snapshot_func *)0)->f))
_Static_assert(SF_OFF(inlined_sites) == SF_END(types), "types is followed by inlined_sites");
_Static_assert(SF_OFF(callers) == SF_END(sites), "sites is followed by callers");
_Static_assert(SF_OFF(split) == SF_END(callers), "callers is followed by split");

static void snapshot_func_zero(struct snapshot_func *f, size_t from, size_t to)
{
	memset((char *)f + from, 0, to - from);
}

void snapshot_text_set(char *dst, size_t len, const char *src)
{
	size_t n = strnlen(src, len - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

void snapshot_func_clear_values(struct snapshot_func *f)
{
	snapshot_func_zero(f, 0, SF_OFF(types));
	snapshot_func_zero(f, SF_END(types), SF_OFF(sites));
	f->callers.n = 0;
	snapshot_func_zero(f, SF_OFF(split), SF_OFF(slowest));
}

void snapshot_funcs_free(struct snapshot_func *funcs, size_t n)
{
	if (!funcs)
		return;
	for (size_t i = 0; i < n; i++) {
		slowest_clear(&funcs[i].slowest);
		slowest_clear(&funcs[i].slowest_interval);
		slowest_clear(&funcs[i].slow_calls);
	}
	free(funcs);
}

const char *func_state_name(enum func_state st)
{
	switch (st) {
	case FUNC_TRACING:
		return "tracing";
	case FUNC_TIMING:
		return "timing-sampled";
	case FUNC_SAMPLED:
		return "sampled";
	case FUNC_ENTRY_ONLY:
		return "entry-only";
	case FUNC_DETACHED:
		return "detached";
	case FUNC_ERROR:
		break;
	}
	return "error";
}

/* The state alone: the text's notes under a row say the rest. */
void snapshot_func_state(const struct snapshot_func *f, char *buf, size_t len)
{
	switch (f->state) {
	case FUNC_TRACING:
		snprintf(buf, len, "tracing");
		break;
	case FUNC_TIMING:
	case FUNC_SAMPLED:
		snprintf(buf, len, "%s %.*f%%", func_state_name(f->state), f->sampled < 0.1 ? 1 : 0,
			 f->sampled * 100);
		break;
	case FUNC_ENTRY_ONLY:
		if (f->estimated) {
			snprintf(buf, len, "entry-only, sampled %.*f%%: %s",
				 f->sampled < 0.1 ? 1 : 0, f->sampled * 100, f->reason);
			break;
		}
		/* fall through */
	default:
		snprintf(buf, len, "%s: %s", func_state_name(f->state), f->reason);
	}
}

bool snapshot_func_probing(const struct snapshot_func *f)
{
	return f->state == FUNC_TRACING || f->state == FUNC_TIMING || f->state == FUNC_SAMPLED;
}

void snapshot_func_status(const struct snapshot_func *f, char *buf, size_t len)
{
	size_t n;

	snapshot_func_state(f, buf, len);
	/* Its calls are timed, its errors not: why (never a guess). */
	if (snapshot_func_probing(f) && f->errors_why[0] && (n = strlen(buf)) + 1 < len)
		snprintf(buf + n, len - n, "; errors not counted: %s", f->errors_why);
}

static struct json_object *snapshot_durations_json(const struct snapshot_durations *d)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "calls", json_object_new_uint64(d->calls));
	json_object_object_add(o, "mean_ns", json_object_new_uint64(d->mean_ns));
	json_object_object_add(o, "p50_ns", json_object_new_uint64(d->p50_ns));
	json_object_object_add(o, "p99_ns", json_object_new_uint64(d->p99_ns));
	return o;
}

/* Failing calls: null where its errors are not read, with why where it
 * returns error or may (returns_error null: its signature is unknown). */
static void snapshot_errors_json(struct json_object *o, const struct snapshot_func *f)
{
	bool on = f->errors_counted, unknown = !f->returns_error && f->errors_why[0];
	struct json_object *types = json_object_new_array();

	json_object_object_add(o, "returns_error",
			       unknown ? NULL : json_object_new_boolean(f->returns_error));
	json_object_object_add(o, "errors", on ? json_object_new_uint64(f->errors) : NULL);
	/* false: estimated like calls (--budget timed a sample of them). */
	json_object_object_add(o, "errors_exact", json_object_new_boolean(on && f->errors_exact));
	json_object_object_add(o, "errors_per_s", on ? json_fixed(f->errors_per_s, 3) : NULL);
	/* Of the timed calls: since tracing began, and in the last interval. */
	json_object_object_add(o, "error_share", on ? json_fixed(f->error_share, 6) : NULL);
	json_object_object_add(o, "error_share_interval",
			       on ? json_fixed(f->error_share_interval, 6) : NULL);
	json_object_object_add(o, "errors_uncounted_why",
			       f->errors_why[0] ? json_object_new_string(f->errors_why) : NULL);
	/* The durations of the failing and the other timed calls apart. */
	json_object_object_add(o, "failing", on ? snapshot_durations_json(&f->failing) : NULL);
	json_object_object_add(o, "succeeding",
			       on ? snapshot_durations_json(&f->succeeding) : NULL);
	for (size_t i = 0; on && i < f->ntypes; i++) {
		struct json_object *t = json_object_new_object();
		json_object_object_add(t, "type", json_object_new_string(f->types[i].name));
		json_object_object_add(t, "errors", json_object_new_uint64(f->types[i].calls));
		json_object_array_add(types, t);
	}
	json_object_object_add(o, "error_types", types);
}

/* The names of f's duration figures at or under its resolution. */
static struct json_object *snapshot_under_json(const struct snapshot_func *f)
{
	struct json_object *a = json_object_new_array();
	const struct {
		const char *name;
		uint64_t ns;
	} figs[] = {{"mean_ns", f->v.mean_ns},
		    {"p50_ns", f->v.p50_ns},
		    {"p99_ns", f->v.p99_ns},
		    {"max_ns", f->v.max_ns},
		    {"min_ns", f->v.min_ns}};

	for (size_t i = 0; i < sizeof(figs) / sizeof(figs[0]); i++)
		if (f->v.calls && figs[i].ns && figure_under_resolution(f, figs[i].ns))
			json_object_array_add(a, json_object_new_string(figs[i].name));
	return a;
}

/* A ratio, a share or a p-value in sig digits; null when there is none. */
static struct json_object *json_or_null(bool known, double v, int sig)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%.*g", sig, v);
	return known ? json_object_new_double_s(v, buf) : NULL;
}

/* Since the baseline against before it (change.h); null: no baseline.
 * Below the minimum of calls there is no verdict: significant and
 * p_value are null. */
static struct json_object *snapshot_change_json(const struct snapshot_change *c)
{
	const struct change_result *r = &c->r;
	bool verdict = r->verdict != CHANGE_TOO_FEW;
	struct json_object *o;

	if (c->against == CHANGE_NONE)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(
	    o, "against",
	    json_object_new_string(c->against == CHANGE_BINARY ? "binary" : "window"));
	json_object_object_add(o, "p50_ratio", json_or_null(r->p50.ratio > 0, r->p50.ratio, 5));
	json_object_object_add(o, "p99_ratio", json_or_null(r->p99.ratio > 0, r->p99.ratio, 5));
	json_object_object_add(o, "error_share_before",
			       json_or_null(c->error_share_known, c->error_share_before, 4));
	json_object_object_add(o, "error_share_after",
			       json_or_null(c->error_share_known, c->error_share_after, 4));
	json_object_object_add(o, "significant",
			       verdict ? json_object_new_boolean(r->verdict == CHANGE_SIGNIFICANT)
				       : NULL);
	json_object_object_add(o, "p_value", json_or_null(verdict, r->p_value, 3));
	json_object_object_add(o, "calls_before", json_object_new_uint64(r->calls_before));
	json_object_object_add(o, "calls_after", json_object_new_uint64(r->calls_after));
	return o;
}

static struct json_object *snapshot_func_json(const struct snapshot_func *f)
{
	char status[SNAPSHOT_STATUS_LEN + 16];
	struct json_object *o = json_object_new_object(), *sites = json_object_new_array();
	const struct stats_view *v = &f->v;

	json_object_object_add(o, "name", json_object_new_string(f->name));
	snapshot_func_status(f, status, sizeof(status));
	json_object_object_add(o, "status", json_object_new_string(status));
	json_object_object_add(o, "state", json_object_new_string(func_state_name(f->state)));
	json_object_object_add(o, "calls", json_object_new_uint64(v->calls));
	/* Calls where it was inlined are in no figure: say how many sites. */
	json_object_object_add(o, "inlined_sites",
			       f->inlined_sites < 0 ? NULL
						    : json_object_new_int64(f->inlined_sites));
	/* Its inlined calls, counted where a mark proves each (never timed). */
	json_object_object_add(o, "inlined_sites_counted",
			       json_object_new_int64(f->inlined_sites_counted));
	json_object_object_add(o, "inlined_calls", json_object_new_uint64(f->inlined_calls));
	json_object_object_add(o, "inlined_calls_per_s", json_fixed(f->inlined_calls_per_s, 3));
	json_object_object_add(o, "inlined_calls_exact",
			       json_object_new_boolean(f->inlined_calls_exact));
	json_object_object_add(
	    o, "inlined_uncounted_why",
	    f->inlined_uncounted_why[0] ? json_object_new_string(f->inlined_uncounted_why) : NULL);
	json_object_object_add(o, "calls_per_s", json_fixed(v->calls_per_s, 3));
	snapshot_errors_json(o, f);
	json_object_object_add(o, "mean_ns", json_object_new_uint64(v->mean_ns));
	json_object_object_add(o, "p50_ns", json_object_new_uint64(v->p50_ns));
	json_object_object_add(o, "p99_ns", json_object_new_uint64(v->p99_ns));
	json_object_object_add(o, "max_ns", json_object_new_uint64(v->max_ns));
	json_object_object_add(o, "change", snapshot_change_json(&f->change));
	json_object_object_add(o, "in_flight", json_object_new_uint64(f->in_flight));
	/* Of in_flight, those past --orphan-timeout: kept, not orphans. */
	json_object_object_add(o, "overdue", json_object_new_uint64(f->overdue));
	json_object_object_add(o, "oldest_in_flight_ns",
			       json_object_new_uint64(f->oldest_in_flight_ns));
	json_object_object_add(o, "orphans", json_object_new_uint64(f->orphans));
	json_object_object_add(o, "unmatched_returns", json_object_new_uint64(v->unmatched));
	json_object_object_add(o, "reentries", json_object_new_uint64(v->reentries));
	/* Calls lost (in-flight map full): calls is exact only when this is 0. */
	json_object_object_add(o, "dropped", json_object_new_uint64(v->dropped));
	json_object_object_add(o, "returns_before_attach",
			       json_object_new_uint64(f->before_attach));
	/* Calls whose goroutine records were evicted (LRU maps full): when not
	 * 0, probe_hits_inside and the split between unmatched_returns and
	 * returns_before_attach are not exact. */
	json_object_object_add(o, "evicted", json_object_new_uint64(v->evicted));
	for (size_t i = 0; i < f->nsites; i++) {
		struct json_object *s = json_object_new_object();
		json_object_object_add(s, "offset", json_object_new_uint64(f->sites[i].offset));
		json_object_object_add(s, "line", json_object_new_int(f->sites[i].line));
		json_object_object_add(s, "hits", json_object_new_uint64(f->sites[i].hits));
		/* The binary the site is in: a deploy's new file adds its own. */
		json_object_object_add(s, "binary_index",
				       json_object_new_uint64(f->sites[i].image));
		json_object_array_add(sites, s);
	}
	json_object_object_add(o, "ret_sites", sites);
	/* The overhead budget: how calls were counted and timed. */
	static const char *const modes[] = {"full", "timing-sampled", "estimated"};
	json_object_object_add(o, "mode", json_object_new_string(modes[f->mode % 3]));
	json_object_object_add(o, "sampled", json_fixed(f->sampled, 4));
	json_object_object_add(o, "timed_calls", json_object_new_uint64(f->timed_calls));
	/* Only timed calls are kept in flight: outside full mode, in_flight
	 * and oldest_in_flight_ns count a sample of the calls. */
	json_object_object_add(o, "in_flight_sampled", json_object_new_boolean(f->mode != 0));
	/* Durations, callers and slowest calls come from the timed calls. */
	json_object_object_add(
	    o, "durations_sampled",
	    json_object_new_boolean(f->timed_calls < v->calls && !f->entry_only));
	json_object_object_add(o, "estimated", json_object_new_boolean(f->estimated));
	/* calls (and calls_per_s) are the lower end of an interval open above. */
	json_object_object_add(o, "calls_lower_bound",
			       json_object_new_boolean(f->calls_lower_bound));
	if (f->estimated) {
		struct json_object *ci = json_object_new_array();
		json_object_array_add(ci, json_object_new_uint64((uint64_t)f->calls_ci95[0]));
		json_object_array_add(
		    ci, isinf(f->calls_ci95[1])
			    ? NULL
			    : json_object_new_uint64((uint64_t)(f->calls_ci95[1] + 0.5)));
		json_object_object_add(o, "calls_ci95", ci);
		/* The traps slow what they count: how much, while sampled. */
		json_object_object_add(o, "trap_share", json_fixed(f->trap_share, 4));
		/* Time no slice accounted for (retop behind its clock, probes
		 * late), imputed at the rate of the rest. */
		json_object_object_add(o, "estimate_gap_s", json_fixed(f->estimate_gap_s, 3));
	}

	/* Probe hits of traced callees inside a call, on average, and what
	 * their traps cost, taken out of its durations (at probe_hit_cost_ns
	 * of each hit's kind): in all, and a call on average. */
	json_object_object_add(o, "probe_hits_inside", json_fixed(v->hits_inside, 3));
	/* The average is over the calls not evicted (those count no hits);
	 * sampled: some traced function's probes were out for a time, so
	 * fewer hits were inside than its calls would make. */
	json_object_object_add(o, "probe_hits_inside_sampled",
			       json_object_new_boolean(f->hits_inside_sampled));
	/* This function's own probes were out for a time (--budget). */
	json_object_object_add(o, "probes_shed", json_object_new_boolean(f->probes_shed));
	json_object_object_add(o, "probe_hits_inside_exact",
			       json_object_new_boolean(!f->hits_inside_sampled && !v->evicted));
	json_object_object_add(o, "trap_ns_subtracted", json_object_new_uint64(v->trap_ns));
	json_object_object_add(o, "trap_ns_subtracted_per_call",
			       json_fixed(v->trap_ns_per_call, 0));
	/* What each call's own entry and RET hits left inside its window, by
	 * how its entry runs (own_window_ns), taken out too. */
	json_object_object_add(o, "own_ns_subtracted", json_object_new_uint64(v->own_ns));
	json_object_object_add(o, "own_ns_subtracted_per_call", json_fixed(v->own_ns_per_call, 0));
	/* How far a duration may still be off (8 calls in 10), and the
	 * figures at or under it: the faces show them as "<resolution". */
	json_object_object_add(o, "resolution_ns", json_fixed(f->resolution_ns, 0));
	/* What its probes cost the target (CPU), and add to a call. */
	struct json_object *cost = json_object_new_object();
	json_object_object_add(cost, "cpu_ns", json_fixed(f->cost_ns, 0));
	json_object_object_add(cost, "cpu_ns_per_s", json_fixed(f->cost_per_s, 0));
	json_object_object_add(cost, "ns_per_call", json_fixed(f->cost_per_call_ns, 0));
	json_object_object_add(o, "probe_cost", cost);
	/* Where its timed calls' time went (null: the split is off). */
	json_object_object_add(o, "time_split", snapshot_split_func_json(f));
	json_object_object_add(o, "under_resolution", snapshot_under_json(f));
	json_object_object_add(o, "args_captured", json_object_new_boolean(f->args));
	json_object_object_add(o, "callers", snapshot_callers_json(&f->callers, f->errors_counted));
	/* Timed calls the caller map had no room for: callers' calls then add
	 * up to less than timed_calls. */
	json_object_object_add(o, "callers_lost", json_object_new_uint64(v->callers_lost));
	/* Calls whose arguments had no room: a slowest call may lack them. */
	json_object_object_add(o, "args_lost", json_object_new_uint64(v->args_lost));
	json_object_object_add(o, "slowest", snapshot_slowest_json(&f->slowest));
	json_object_object_add(o, "slowest_interval", snapshot_slowest_json(&f->slowest_interval));
	/* --slow: every call that long is counted; the latest are listed, and
	 * slowest_lost says how many the ring buffer had no room for. */
	json_object_object_add(o, "slow_calls_total", json_object_new_uint64(v->slow_over));
	json_object_object_add(o, "slow_calls_interval",
			       json_object_new_uint64(v->slow_over_delta));
	json_object_object_add(o, "slow_calls", snapshot_slowest_json(&f->slow_calls));
	json_object_object_add(o, "slowest_lost", json_object_new_uint64(v->slow_lost));
	return o;
}

/* Limits: when tracing stops by itself, and the memory it takes. */
static void snapshot_guard_json(struct json_object *o, const struct snapshot *snap)
{
	struct json_object *mem = json_object_new_object();

	json_object_object_add(o, "max_duration_s", json_fixed(snap->max_duration_s, 3));
	json_object_object_add(o, "remaining_s",
			       snap->remaining_s < 0 ? NULL : json_fixed(snap->remaining_s, 3));
	json_object_object_add(o, "auto_detached", json_object_new_uint64(snap->auto_detached));
	json_object_object_add(mem, "bpf_map_bytes", json_object_new_uint64(snap->bpf_map_bytes));
	json_object_object_add(mem, "user_bytes", json_object_new_uint64(snap->user_bytes));
	/* Goroutine records the evidence maps had no room for: their calls
	 * wait for other evidence or --orphan-timeout. */
	json_object_object_add(mem, "evidence_lost", json_object_new_uint64(snap->evidence_lost));
	json_object_object_add(o, "memory", mem);
	json_object_object_add(o, "budget_pct", json_fixed(snap->budget_pct, 3));
	json_object_object_add(o, "budget_hits_per_s", json_fixed(snap->budget_hits, 0));
	/* False: goroutine exits cost over half the budget, and calls of exited
	 * goroutines stay in flight (overdue) until other evidence. */
	json_object_object_add(o, "exits_watched", json_object_new_boolean(snap->exits_watched));
	/* Calls in this window were not seen (the -p target's exec()). */
	json_object_object_add(o, "unseen_after_exec_s",
			       json_object_new_double(snap->unseen_after_exec_s));
	json_object_object_add(o, "probe_hit_ns", json_fixed(snap->hit_ns, 0));
	/* What each hit inside a call is taken out of its duration, by the
	 * kind of its probe (0: untimed, nothing taken out), and of that the
	 * BPF program's own run time, as it measures it. */
	static const char *const kinds[RETOP_HIT_KINDS] = {"entry_emulated", "entry_stepped",
							   "ret"};
	struct json_object *cost = json_object_new_object(), *trap = json_object_new_object(),
			   *prog = json_object_new_object();
	for (int k = 0; k < RETOP_HIT_KINDS; k++) {
		json_object_object_add(cost, kinds[k], json_fixed(snap->hit_cost_ns[k], 0));
		json_object_object_add(trap, kinds[k], json_fixed(snap->trap_ns[k], 0));
		json_object_object_add(prog, kinds[k], json_fixed(snap->prog_ns[k], 0));
	}
	/* cost = trap + prog: the kernel's part, as timed on retop's own
	 * probes, and the BPF program's, as it measures itself. */
	json_object_object_add(o, "probe_hit_cost_ns", cost);
	json_object_object_add(o, "probe_trap_ns", trap);
	json_object_object_add(o, "probe_prog_ns", prog);
	struct json_object *own = json_object_new_object(), *res = json_object_new_object();
	json_object_object_add(own, "entry_emulated",
			       json_fixed(snap->own_window_ns[RETOP_OWN_EMULATED], 0));
	json_object_object_add(own, "entry_stepped",
			       json_fixed(snap->own_window_ns[RETOP_OWN_STEPPED], 0));
	json_object_object_add(res, "entry_emulated",
			       json_fixed(snap->resolution_ns[RETOP_OWN_EMULATED], 0));
	json_object_object_add(res, "entry_stepped",
			       json_fixed(snap->resolution_ns[RETOP_OWN_STEPPED], 0));
	json_object_object_add(o, "own_window_ns", own);
	json_object_object_add(o, "resolution_ns", res);
	json_object_object_add(o, "hit_resolution_ns", json_fixed(snap->hit_resolution_ns, 0));
	json_object_object_add(o, "slow_ns", json_object_new_uint64(snap->slow_ns));
	/* What retop's probes cost the targets: their traps' CPU. */
	struct json_object *pc = json_object_new_object();
	json_object_object_add(pc, "cpu_ns", json_fixed(snap->cost_ns, 0));
	json_object_object_add(pc, "cpu_ns_per_s", json_fixed(snap->cost_per_s, 0));
	json_object_object_add(pc, "target_cpu_ns_per_s", json_fixed(snap->target_cpu_per_s, 0));
	json_object_object_add(pc, "target_cpu_share", json_fixed(snap->cost_share, 4));
	json_object_object_add(pc, "hits", json_object_new_uint64(snap->probe_hits));
	json_object_object_add(pc, "hits_per_s", json_fixed(snap->probe_hits_per_s, 0));
	json_object_object_add(o, "probe_cost", pc);
	json_object_object_add(o, "time_split", snapshot_split_json(snap));
}

void snapshot_print_json(FILE *out, const struct snapshot *snap, const size_t *order)
{
	struct json_object *o = json_object_new_object(), *targets = json_object_new_array(),
			   *funcs = json_object_new_array();

	json_object_object_add(o, "time", json_fixed(snap->time, 3));
	json_object_object_add(o, "interval_s", json_fixed(snap->interval_s, 6));
	for (size_t i = 0; i < snap->npids; i++) {
		struct json_object *t = json_object_new_object();
		json_object_object_add(t, "pid", json_object_new_int(snap->pids[i]));
		json_object_object_add(t, "exe", json_object_new_string(snap->exe));
		json_object_array_add(targets, t);
	}
	json_object_object_add(o, "targets", targets);
	snapshot_guard_json(o, snap);
	/* The functions go out one at a time, each built, written and freed
	 * in turn, into the place of the empty array that ends the line: a
	 * thousand functions as one tree (some 100,000 objects, a 2 MB
	 * string) spent most of retop -b's CPU in malloc. */
	json_object_object_add(o, "functions", funcs);
	const char *head = json_object_to_json_string_ext(o, JSON_FLAGS);
	size_t n = strlen(head);
	/* Not json-c's usual form: the whole tree, as before. */
	bool whole = n < 3 || strcmp(head + n - 3, "[]}") != 0;
	if (!whole)
		fwrite(head, 1, n - 2, out);
	for (size_t i = 0; i < snap->nfuncs; i++) {
		struct json_object *f = snapshot_func_json(&snap->funcs[order ? order[i] : i]);
		if (whole) {
			json_object_array_add(funcs, f);
			continue;
		}
		if (i)
			fputc(',', out);
		fputs(json_object_to_json_string_ext(f, JSON_FLAGS), out);
		json_object_put(f);
	}
	if (whole)
		fprintf(out, "%s\n", json_object_to_json_string_ext(o, JSON_FLAGS));
	else
		fputs("]}\n", out);
	json_object_put(o);
	fflush(out);
}
