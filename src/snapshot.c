#include "snapshot.h"

#include <json-c/json.h>
#include <math.h>
#include <string.h>
#include <time.h>

#include "figure.h"
#include "guard.h"
#include "text_escape.h"

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
			json_object_object_add(o, "args", snapshot_args_json(&c->vals->args, "arg"));
		if (c->vals && c->vals->has_results)
			json_object_object_add(o, "results",
					       snapshot_args_json(&c->vals->results, "r"));
		json_object_array_add(a, o);
	}
	return a;
}

void snapshot_funcs_copy(struct snapshot_func *dst, const struct snapshot_func *src, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		memcpy(&dst[i], &src[i], offsetof(struct snapshot_func, slowest));
		slowest_copy(&dst[i].slowest, &src[i].slowest);
		slowest_copy(&dst[i].slowest_interval, &src[i].slowest_interval);
		slowest_copy(&dst[i].slow_calls, &src[i].slow_calls);
	}
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
	case FUNC_TRACING: return "tracing";
	case FUNC_TIMING: return "timing-sampled";
	case FUNC_SAMPLED: return "sampled";
	case FUNC_ENTRY_ONLY: return "entry-only";
	case FUNC_DETACHED: return "detached";
	case FUNC_ERROR: break;
	}
	return "error";
}

/* The state alone: the text's notes under a row say the rest. */
static void snapshot_func_state(const struct snapshot_func *f, char *buf, size_t len)
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
			snprintf(buf, len, "entry-only, sampled %.*f%%: %s", f->sampled < 0.1 ? 1 : 0,
				 f->sampled * 100, f->reason);
			break;
		}
		/* fall through */
	default:
		snprintf(buf, len, "%s: %s", func_state_name(f->state), f->reason);
	}
}

static bool snapshot_func_probing(const struct snapshot_func *f)
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
	} figs[] = {{"mean_ns", f->v.mean_ns}, {"p50_ns", f->v.p50_ns}, {"p99_ns", f->v.p99_ns},
		    {"max_ns", f->v.max_ns},   {"min_ns", f->v.min_ns}};

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
	json_object_object_add(o, "against", json_object_new_string(c->against == CHANGE_BINARY
									  ? "binary"
									  : "window"));
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
	json_object_object_add(o, "inlined_sites", f->inlined_sites < 0
						       ? NULL
						       : json_object_new_int64(f->inlined_sites));
	/* Its inlined calls, counted where a mark proves each (never timed). */
	json_object_object_add(o, "inlined_sites_counted",
			       json_object_new_int64(f->inlined_sites_counted));
	json_object_object_add(o, "inlined_calls", json_object_new_uint64(f->inlined_calls));
	json_object_object_add(o, "inlined_calls_per_s", json_fixed(f->inlined_calls_per_s, 3));
	json_object_object_add(o, "inlined_calls_exact",
			       json_object_new_boolean(f->inlined_calls_exact));
	json_object_object_add(o, "inlined_uncounted_why",
			       f->inlined_uncounted_why[0]
				   ? json_object_new_string(f->inlined_uncounted_why)
				   : NULL);
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
		json_object_object_add(s, "binary_index", json_object_new_uint64(f->sites[i].image));
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
	json_object_object_add(o, "durations_sampled",
			       json_object_new_boolean(f->timed_calls < v->calls && !f->entry_only));
	json_object_object_add(o, "estimated", json_object_new_boolean(f->estimated));
	/* calls (and calls_per_s) are the lower end of an interval open above. */
	json_object_object_add(o, "calls_lower_bound", json_object_new_boolean(f->calls_lower_bound));
	if (f->estimated) {
		struct json_object *ci = json_object_new_array();
		json_object_array_add(ci, json_object_new_uint64((uint64_t)f->calls_ci95[0]));
		json_object_array_add(ci, isinf(f->calls_ci95[1])
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
	json_object_object_add(o, "trap_ns_subtracted_per_call", json_fixed(v->trap_ns_per_call, 0));
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
	json_object_object_add(o, "slow_calls_interval", json_object_new_uint64(v->slow_over_delta));
	json_object_object_add(o, "slow_calls", snapshot_slowest_json(&f->slow_calls));
	json_object_object_add(o, "slowest_lost", json_object_new_uint64(v->slow_lost));
	return o;
}

/* Limits: when tracing stops by itself, and the memory it takes. */
static void snapshot_guard_json(struct json_object *o, const struct snapshot *snap)
{
	struct json_object *mem = json_object_new_object();

	json_object_object_add(o, "max_duration_s", json_fixed(snap->max_duration_s, 3));
	json_object_object_add(o, "remaining_s", snap->remaining_s < 0
							 ? NULL
							 : json_fixed(snap->remaining_s, 3));
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
	static const char *const kinds[RETOP_HIT_KINDS] = {"entry_emulated", "entry_stepped", "ret"};
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
	json_object_object_add(own, "entry_emulated", json_fixed(snap->own_window_ns[RETOP_OWN_EMULATED], 0));
	json_object_object_add(own, "entry_stepped", json_fixed(snap->own_window_ns[RETOP_OWN_STEPPED], 0));
	json_object_object_add(res, "entry_emulated", json_fixed(snap->resolution_ns[RETOP_OWN_EMULATED], 0));
	json_object_object_add(res, "entry_stepped", json_fixed(snap->resolution_ns[RETOP_OWN_STEPPED], 0));
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
	json_object_object_add(o, "probe_cost", pc);
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
	for (size_t i = 0; i < snap->nfuncs; i++)
		json_object_array_add(funcs,
				      snapshot_func_json(&snap->funcs[order ? order[i] : i]));
	json_object_object_add(o, "functions", funcs);
	fprintf(out, "%s\n",
		json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
							  JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(o);
	fflush(out);
}

/* Keep the end of a long name: the function is what tells rows apart. */
static const char *snapshot_fit_name(const char *name, char *buf, size_t width)
{
	size_t len = strlen(name);

	if (len <= width)
		return name;
	snprintf(buf, width + 1, "~%s", name + len - (width - 1));
	return buf;
}

static void snapshot_text_limits(FILE *out, const struct snapshot *snap)
{
	char left[40], maps[32], user[32];

	guard_format_bytes(snap->bpf_map_bytes, maps, sizeof(maps));
	guard_format_bytes(snap->user_bytes, user, sizeof(user));
	if (snap->remaining_s < 0)
		snprintf(left, sizeof(left), "no time limit");
	else if (snap->auto_detached || snap->remaining_s == 0)
		snprintf(left, sizeof(left), "time limit reached");
	else {
		char t[16];
		guard_format_remaining(snap->remaining_s, t, sizeof(t));
		snprintf(left, sizeof(left), "detach in %s", t);
	}
	fprintf(out, "%s, memory: bpf maps %s, retop %s\n", left, maps, user);
}

/* What retop's probes cost the targets, as it measures them. */
static void snapshot_text_cost(FILE *out, const struct snapshot *snap)
{
	char per_s[16];

	if (!snap->nfuncs)
		return;
	stats_format_duration((uint64_t)(snap->cost_per_s + 0.5), per_s, sizeof(per_s));
	fprintf(out, "retop's probes take %s/s of the target's CPU (%.1f%%)\n",
		snap->cost_per_s >= 1 ? per_s : "0ns", 100 * snap->cost_share);
}

/* What durations are less, and how far they may still be off. */
static void snapshot_text_resolution(FILE *out, const struct snapshot *snap)
{
	char emu[16], step[16];

	if (snap->resolution_ns[RETOP_OWN_STEPPED] <= 0)
		return;
	stats_format_duration((uint64_t)(snap->resolution_ns[RETOP_OWN_EMULATED] + 0.5), emu,
			      sizeof(emu));
	stats_format_duration((uint64_t)(snap->resolution_ns[RETOP_OWN_STEPPED] + 0.5), step,
			      sizeof(step));
	fprintf(out, "resolution %s (entry at a jump), %s (stepped); retop's traps out\n", emu, step);
}

static void snapshot_text_header(FILE *out, const struct snapshot *snap)
{
	char clock[16], rate[8];
	time_t now = (time_t)snap->time;
	struct tm tm;
	double total_rate = 0;
	unsigned up = (unsigned)snap->uptime_s;

	for (size_t i = 0; i < snap->nfuncs; i++)
		total_rate += snap->funcs[i].v.calls_per_s;
	localtime_r(&now, &tm);
	strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	stats_format_count(total_rate, rate, sizeof(rate));
	fprintf(out, "retop - %s up %u:%02u:%02u, ", clock, up / 3600, up / 60 % 60, up % 60);
	if (snap->npids == 1)
		fprintf(out, "pid %d", snap->pids[0]);
	else
		fprintf(out, "%zu processes", snap->npids);
	fprintf(out, "%s, %zu functions, %s calls/s, cpu %.1f%%\n",
		snap->target_exited ? " (exited)" : "", snap->nfuncs, rate, snap->self_cpu_pct);
	if (snap->unseen_after_exec_s > 0)
		fprintf(out, "calls not counted for %.3f s: the process ran exec() again before "
			     "its probes were back\n", snap->unseen_after_exec_s);
	snapshot_text_limits(out, snap);
	snapshot_text_resolution(out, snap);
	snapshot_text_cost(out, snap);
	fprintf(out, "%-21s %8s %7s %7s %7s %5s %7s %5s %5s\n", "FUNCTION", "CALLS", "CALLS/S",
		"P50", "P99", "ERR%", "MAX", "INFL", "ORPH");
}

#define SNAPSHOT_TEXT_COLS 80

/* A status from column col on, wrapped at spaces to 80 columns; the
 * continuation lines are indented, so every line fits a terminal. */
static void snapshot_text_status(FILE *out, int col, const char *status)
{
	int room = SNAPSHOT_TEXT_COLS - col;
	/* A reason may quote the target (a name, a path): escaped. */
	char esc[4 * (SNAPSHOT_STATUS_LEN + 16)];
	const char *s = text_escape_str(status, esc, sizeof(esc));

	while (*s) {
		int n = (int)strlen(s);
		if (n > room) {
			int cut = room;
			while (cut > room / 2 && s[cut] != ' ')
				cut--;
			n = s[cut] == ' ' ? cut : room;
		}
		fprintf(out, "%.*s\n", n, s);
		s += n;
		while (*s == ' ')
			s++;
		if (*s) {
			fprintf(out, "%*s", 4, "");
			room = SNAPSHOT_TEXT_COLS - 4;
		}
	}
}

/* An estimate's line: its interval, open above when the probes slowed
 * the target too much to bound what it does without them. */
static void snapshot_text_interval(FILE *out, const struct snapshot_func *f, const char *status)
{
	fprintf(out, "    %s of the time (--budget): ~ marks estimates; calls 95%% in %.0f-", status,
		f->calls_ci95[0]);
	if (isinf(f->calls_ci95[1]))
		fprintf(out, "? (its traps took %.0f%% of the CPU: unbounded)\n", f->trap_share * 100);
	else
		fprintf(out, "%.0f\n", f->calls_ci95[1]);
}

/* s right-aligned in width columns (s may hold a multi-byte "\u2265"). */
static void snapshot_text_cell(FILE *out, const char *s, size_t width)
{
	size_t w = figure_width(s);

	fprintf(out, " %*s%s", (int)(width > w ? width - w : 0), "", s);
}

/* Under a row once a baseline is marked; "~": not significant. */
static void snapshot_text_change(FILE *out, const struct snapshot_func *f)
{
	char line[200];
	int n;

	if (f->change.against == CHANGE_NONE || f->entry_only)
		return;
	n = snprintf(line, sizeof(line), "vs %s: ",
		     f->change.against == CHANGE_WINDOW ? "baseline"
		     : f->change.old_running	    ? "old binary (still running: both after)"
						    : "old binary");
	change_format(&f->change.r, line + n, sizeof(line) - (size_t)n);
	n = (int)strlen(line);
	if (f->change.error_share_known && (size_t)n < sizeof(line))
		snprintf(line + n, sizeof(line) - (size_t)n, "; failing %.1f%% -> %.1f%%",
			 100 * f->change.error_share_before, 100 * f->change.error_share_after);
	fprintf(out, "    ");
	snapshot_text_status(out, 4, line);
}

static void snapshot_text_row(FILE *out, const struct snapshot_func *f, bool utf8)
{
	char fit[32], calls[16], rate[16], err[16], p50[16], p99[16], max[16], esc[256];
	const struct stats_view *v = &f->v;
	/* Names come from the target's binary: escaped. */
	const char *name = snapshot_fit_name(text_escape_str(f->name, esc, sizeof(esc)), fit, 21);
	char status[SNAPSHOT_STATUS_LEN + 16];

	/* Marked where not exact (figure.h): '~' a sample, '>=' a lower
	 * bound, '!' calls dropped, '<' under the resolution. */
	figure_calls(f, utf8, calls, sizeof(calls));
	figure_rate(f, utf8, rate, sizeof(rate));
	figure_error_share(f, false, err, sizeof(err));
	figure_duration(f, v->calls ? v->p50_ns : 0, p50, sizeof(p50));
	figure_duration(f, v->calls ? v->p99_ns : 0, p99, sizeof(p99));
	figure_duration(f, v->calls ? v->max_ns : 0, max, sizeof(max));
	/* The errors' note has a line of its own (snapshot_text_errors). */
	snapshot_func_state(f, status, sizeof(status));
	fprintf(out, "%-21s", name);
	snapshot_text_cell(out, calls, 8);
	if (!snapshot_func_probing(f) && !f->entry_only) {
		fprintf(out, "  ");
		snapshot_text_status(out, 32, status);
		return;
	}
	snapshot_text_cell(out, rate, 7);
	if (f->entry_only) {
		/* The numbers on the row, why only entries on the next line.  No
		 * RET, so nothing is in flight or orphaned: only entries. */
		fprintf(out, " %7s %7s %5s %7s %5s %5s\n    ", "-", "-", "-", "-", "-", "-");
		snapshot_text_status(out, 4, status);
	} else {
		fprintf(out, " %7s %7s", p50, p99);
		snapshot_text_cell(out, err, 5);
		fprintf(out, " %7s %5llu %5llu\n", max, (unsigned long long)f->in_flight,
			(unsigned long long)f->orphans);
	}
	snapshot_text_change(out, f);
	if (f->overdue) {
		char oldest[16];
		stats_format_duration(f->oldest_in_flight_ns, oldest, sizeof(oldest));
		fprintf(out, "    %llu in flight overdue (--orphan-timeout passed), oldest %s\n",
			(unsigned long long)f->overdue, oldest);
	}
	if (f->estimated)
		snapshot_text_interval(out, f, status);
	else if (f->timed_calls < v->calls && !f->entry_only)
		fprintf(out, "    every call counted, %llu timed (%s): durations from a sample\n",
			(unsigned long long)f->timed_calls, status);
	if (f->estimated && f->estimate_gap_s >= 0.05)
		fprintf(out, "    %.1f s not sampled (retop fell behind, or its probes were late): "
			     "imputed at the rate of the rest\n",
			f->estimate_gap_s);
	if (v->hits_inside >= 0.005 && !f->entry_only) {
		/* Traced callees: their traps are taken out of its durations. */
		char each[16], line[200];
		stats_format_duration((uint64_t)(v->trap_ns_per_call + 0.5), each, sizeof(each));
		snprintf(line, sizeof(line),
			 "durations less %s a call: the traps of %.2f probe hits inside (traced "
			 "callees)%s",
			 each, v->hits_inside,
			 f->hits_inside_sampled
			     ? ", a sample: probes were out for a time (--budget)"
			     : "");
		/* Wrapped as statuses are: a package traced whole has many. */
		fprintf(out, "    ");
		snapshot_text_status(out, 4, line);
	}
	if (f->cost_per_s >= 100000) {
		/* Its probes take a tenth of a millisecond a second or more. */
		char per_s[16], per_call[16];
		stats_format_duration((uint64_t)(f->cost_per_s + 0.5), per_s, sizeof(per_s));
		stats_format_duration((uint64_t)(f->cost_per_call_ns + 0.5), per_call,
				      sizeof(per_call));
		fprintf(out, "    its probes take %s/s of the target's CPU, add %s to a call\n",
			per_s, per_call);
	}
	if (v->evicted && !f->entry_only)
		fprintf(out, "    probe hits inside not exact: %llu calls lost their goroutine's "
			     "records (LRU maps full) and count none\n",
			(unsigned long long)v->evicted);
}

/* Under a function's row: its failing calls (how many, how fast against
 * the others, of which types), or why they are not counted. */
static void snapshot_text_errors(FILE *out, const struct snapshot_func *f)
{
	char line[600], fp50[16], fp99[16], sp50[16], sp99[16], rate[16];
	size_t n;

	if (f->errors_why[0] && snapshot_func_probing(f)) {
		fprintf(out, "    ");
		snprintf(line, sizeof(line), "errors not counted: %s", f->errors_why);
		snapshot_text_status(out, 4, line);
		return;
	}
	if (!f->errors_counted || !f->errors)
		return;
	figure_duration(f, f->failing.p50_ns, fp50, sizeof(fp50));
	figure_duration(f, f->failing.p99_ns, fp99, sizeof(fp99));
	figure_duration(f, f->succeeding.p50_ns, sp50, sizeof(sp50));
	figure_duration(f, f->succeeding.p99_ns, sp99, sizeof(sp99));
	stats_format_count(f->errors_per_s, rate, sizeof(rate));
	/* One line for the figures (p50/p99 of the failing calls and of the
	 * others, "ok"), one for the types. */
	fprintf(out, "    errors %s%llu (%.1f%%, %s/s); p50/p99 failing %s/%s, ok %s/%s\n",
		f->errors_exact ? "" : "~", (unsigned long long)f->errors, 100 * f->error_share,
		rate, fp50, fp99, sp50, sp99);
	n = (size_t)snprintf(line, sizeof(line), "of types");
	for (size_t i = 0; i < f->ntypes && n < sizeof(line); i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s %s %llu", i ? "," : "",
				      f->types[i].name, (unsigned long long)f->types[i].calls);
	if (!f->ntypes)
		return;
	fprintf(out, "    ");
	snapshot_text_status(out, 4, line);
}

/* Under a function's row: where it was inlined, and its inlined calls
 * counted there (the row's figures are of its calls out of line). */
static void snapshot_text_inlined(FILE *out, const struct snapshot_func *f)
{
	char why[sizeof(f->inlined_uncounted_why)];
	bool only = f->f && f->f->inline_only;

	if (f->inlined_sites <= 0)
		return;
	text_escape_str(f->inlined_uncounted_why, why, sizeof(why));
	if (f->inlined_sites_counted > 0)
		fprintf(out, "    %s inlined at %lld sites: %llu%s inlined calls at %lld of them (not "
			     "timed)%s\n",
			only ? "exists only" : "also", (long long)f->inlined_sites,
			(unsigned long long)f->inlined_calls, f->inlined_calls_exact ? "" : " or more",
			(long long)f->inlined_sites_counted,
			only ? "" : "; calls and durations above are of calls out of line");
	else if (!only)
		fprintf(out, "    also inlined at %lld sites: calls there are not counted; calls and "
			     "durations are of calls out of line\n",
			(long long)f->inlined_sites);
	if (why[0])
		fprintf(out, "    not counted at %lld of them: %s\n",
			(long long)(f->inlined_sites - f->inlined_sites_counted), why);
}

/* One call of a slowest list, indented under its function's row. */
static void snapshot_text_call(FILE *out, const struct slowest_call *c)
{
	char dur[16], values[SLOWEST_VALUES_LEN], caller[256];

	stats_format_duration(c->dur_ns, dur, sizeof(dur));
	/* Values escaped where they are made (args_format); the caller here. */
	slowest_call_values(c, values, sizeof(values));
	fprintf(out, "    %7s  goroutine %llu  from %s%s%s\n", dur, (unsigned long long)c->goid,
		text_escape_str(c->caller, caller, sizeof(caller)), values[0] ? ": " : "", values);
}

/* Under a function's row: its calls over --slow in the interval, else with
 * --args the slowest of the interval and what it was called with. */
static void snapshot_text_calls(FILE *out, const struct snapshot *snap, const struct snapshot_func *f)
{
	char thr[16];

	if (snap->slow_ns) {
		stats_format_duration(snap->slow_ns, thr, sizeof(thr));
		fprintf(out, "    >= %s: %llu calls, %llu in this interval%s\n", thr,
			(unsigned long long)f->v.slow_over, (unsigned long long)f->v.slow_over_delta,
			f->v.slow_lost ? " (some not listed: ring buffer full)" : "");
		for (size_t i = 0; i < f->slow_calls.n; i++)
			snapshot_text_call(out, &f->slow_calls.calls[i]);
	} else if (f->args && f->slowest_interval.n) {
		fprintf(out, "    slowest of the interval:\n");
		snapshot_text_call(out, &f->slowest_interval.calls[0]);
	}
}

bool snapshot_func_idle(const struct snapshot_func *f)
{
	if (f->state == FUNC_DETACHED || f->state == FUNC_ERROR)
		return false;
	return f->v.calls_delta == 0 && f->inlined_calls_per_s == 0 && f->in_flight == 0;
}

/* The lines under the rows: what the counts over every function miss. */
static void snapshot_text_totals(FILE *out, const struct snapshot *snap)
{
	uint64_t dropped = 0, evicted = 0, callers_lost = 0, args_lost = 0;

	for (size_t i = 0; i < snap->nfuncs; i++) {
		dropped += snap->funcs[i].v.dropped;
		evicted += snap->funcs[i].v.evicted;
		callers_lost += snap->funcs[i].v.callers_lost;
		args_lost += snap->funcs[i].v.args_lost;
	}
	if (dropped)
		fprintf(out, "! not exact: %llu calls dropped (in-flight map full): %s\n",
			(unsigned long long)dropped, "raise --max-in-flight");
	if (evicted)
		fprintf(out, "! not exact: %llu calls lost their goroutine's records (LRU maps full): "
			     "probe hits inside, unmatched returns\n",
			(unsigned long long)evicted);
	if (callers_lost)
		fprintf(out, "! not exact: %llu calls missing from their callers (caller map full)\n",
			(unsigned long long)callers_lost);
	if (args_lost)
		fprintf(out, "! not exact: %llu calls' arguments not captured (argument map full)\n",
			(unsigned long long)args_lost);
	if (snap->evidence_lost)
		fprintf(out, "! %llu goroutine records found no room: their calls wait for "
			     "--orphan-timeout\n",
			(unsigned long long)snap->evidence_lost);
}

/* The idle functions that fold into one line: none when rows lists them,
 * and none when only one is idle (its line would take as much room as
 * its row, and say less). */
static size_t snapshot_text_folded(const struct snapshot *snap, const struct snapshot_rows *rows)
{
	size_t idle = 0;

	if (!rows || rows->idle)
		return 0;
	for (size_t i = 0; i < snap->nfuncs; i++)
		idle += snapshot_func_idle(&snap->funcs[i]);
	return idle >= 2 ? idle : 0;
}

void snapshot_print_text(FILE *out, const struct snapshot *snap, const struct snapshot_rows *rows)
{
	size_t folded = snapshot_text_folded(snap, rows), listed = 0, cut = 0;
	size_t top = rows ? rows->top : 0;

	snapshot_text_header(out, snap);
	for (size_t k = 0; k < snap->nfuncs; k++) {
		const struct snapshot_func *f =
		    &snap->funcs[rows && rows->order ? rows->order[k] : k];
		if (folded && snapshot_func_idle(f))
			continue;
		if (top && listed == top) {
			cut++;
			continue;
		}
		listed++;
		snapshot_text_row(out, f, rows && rows->utf8);
		snapshot_text_errors(out, f);
		snapshot_text_inlined(out, f);
		snapshot_text_calls(out, snap, f);
	}
	/* At column 0, and starting with a digit as no name does: a parser
	 * of the rows tells these lines from a row and from a row's notes. */
	if (cut)
		fprintf(out, "%zu more function%s not listed (--top %zu)\n", cut,
			cut == 1 ? "" : "s", top);
	if (folded)
		fprintf(out, "%zu functions with no calls (--idle lists them)\n", folded);
	snapshot_text_totals(out, snap);
	fputc('\n', out);
	fflush(out);
}
