/* The /metrics page of --serve, in the Prometheus text exposition format
 * 0.0.4, rendered from a session's latest snapshot (serve.c serves it). */
#include "serve_page.h"
#include "serve_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

#include "config.h"
#include "funcs.h"
#include "prom_text.h"
#include "stats.h"

/* ---- histogram boundaries -------------------------------------------- */

/* Four boundaries per power of two, 2^k x {1, 1.25, 1.5, 1.75} ns, from
 * 2^10 ns (about 1 us: a uprobe pair alone costs about that) up to the first
 * one at or above 100 s: 107 in all.  Finer than 1-2-5 steps where
 * latencies cluster, and every one is a lower edge of a log-linear bucket
 * (32 per power of two), so each count below is exact. */
#define SERVE_LE_MIN_SHIFT 10
#define SERVE_LE_MAX_NS 100000000000ull
#define SERVE_NLE 128 /* room for the list above */

static uint64_t serve_le_ns[SERVE_NLE];			     /* printed `le`, in ns */
static char serve_le_text[SERVE_NLE][PROM_TEXT_SECONDS_LEN]; /* the same as text */
static uint32_t serve_le_bucket[SERVE_NLE];		     /* first log-linear bucket above it */
static size_t serve_nle;

/* Durations are whole nanoseconds and bucket b holds [lo, hi).  Snap each
 * nominal boundary down to the low edge E of its bucket: buckets below E
 * hold exactly the calls < E ns, i.e. <= E - 1 ns, so `le` = E - 1 ns makes
 * each cumulative count an exact sum of buckets under Prometheus's "less
 * than or equal" rule (le = E would wrongly include calls of exactly E). */
static void serve_init_bounds(void)
{
	uint64_t lo, hi;

	if (serve_nle)
		return;
	for (size_t i = 0; serve_nle < SERVE_NLE; i++) {
		uint64_t nominal = (uint64_t)(4 + i % 4) << (SERVE_LE_MIN_SHIFT - 2 + i / 4);
		uint32_t b = retop_hist_bucket(nominal);

		if (serve_nle && serve_le_ns[serve_nle - 1] + 1 >= SERVE_LE_MAX_NS)
			break;
		stats_bucket_range(b, &lo, &hi);
		if (serve_nle && lo - 1 <= serve_le_ns[serve_nle - 1])
			continue; /* two nominal values in one bucket: keep one */
		serve_le_ns[serve_nle] = lo - 1;
		prom_text_seconds(serve_le_text[serve_nle], PROM_TEXT_SECONDS_LEN, lo - 1);
		serve_le_bucket[serve_nle] = b;
		serve_nle++;
	}
}

size_t serve_page_le_bounds(const uint64_t **out)
{
	serve_init_bounds();
	*out = serve_le_ns;
	return serve_nle;
}

/* ---- rendering ------------------------------------------------------- */


void serve_family(struct render *r, const char *name, const char *type, const char *help)
{
	fprintf(r->f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* binary="...",pid="..." (or binary="..." alone) */
static void serve_put_target_labels(struct render *r, FILE *f)
{
	fputs("binary=\"", f);
	prom_text_put_label(f, r->snap->exe ? r->snap->exe : "");
	fputc('"', f);
	if (r->pid[0])
		fprintf(f, ",pid=\"%s\"", r->pid);
}

/* Whether another traced function has function i's name (an ABI wrapper,
 * a generic shape): then the series tell them apart by entry address, or
 * Prometheus would reject the whole scrape for duplicate series. */
static bool serve_name_shared(const struct render *r, size_t i, size_t n)
{
	for (size_t j = 0; j < n; j++)
		if (j != i && !strcmp(r->snap->funcs[j].name, r->snap->funcs[i].name))
			return true;
	return false;
}

/* Fill r->labels and r->off: 0 or -ENOMEM. */
static int serve_make_labels(struct render *r)
{
	FILE *f = open_memstream(&r->labels, &r->labels_len);
	size_t n = r->snap->nfuncs < RETOP_MAX_FUNCS ? r->snap->nfuncs : RETOP_MAX_FUNCS;

	if (!f)
		return -ENOMEM;
	r->off[0] = 0;
	serve_put_target_labels(r, f);
	fputc('\0', f);
	for (size_t i = 0; i < n; i++) {
		fflush(f);
		r->off[i + 1] = r->labels_len;
		fputs("function=\"", f);
		prom_text_put_label(f, r->snap->funcs[i].name);
		fputs("\",", f);
		if (r->snap->funcs[i].f && serve_name_shared(r, i, n))
			fprintf(f, "entry=\"0x%llx\",", (unsigned long long)r->snap->funcs[i].f->entry);
		serve_put_target_labels(r, f);
		fputc('\0', f);
	}
	if (ferror(f) || fclose(f) != 0) {
		free(r->labels);
		r->labels = NULL;
		return -ENOMEM;
	}
	return 0;
}

static void serve_target_labels(struct render *r)
{
	fputs(r->labels + r->off[0], r->f);
}

/* function="...",binary="...",pid="..." */
void serve_func_labels(struct render *r, size_t i)
{
	fputs(r->labels + r->off[i + 1], r->f);
}

/* A function has numbers once it was attached; one that failed to attach
 * only shows up in retop_function_status. */

/* What every page has, the first one too: the build, and whether the
 * probes are in yet (indexing, SDK requests and attaching come first). */
static void serve_render_up(FILE *f, bool ready)
{
	fputs("# HELP retop_build_info retop's version; always 1.\n"
	      "# TYPE retop_build_info gauge\n",
	      f);
	fprintf(f, "retop_build_info{version=\"%s\"} 1\n", PACKAGE_VERSION);
	fputs("# HELP retop_ready 1 once the functions asked for are attached (or refused); "
	      "0 while retop indexes the binary and attaches.\n# TYPE retop_ready gauge\n",
	      f);
	fprintf(f, "retop_ready %d\n", ready);
}

/* retop's own families: build, target, attach errors, its own cost. */
static void serve_render_self(struct render *r)
{
	unsigned errors = 0;

	for (size_t i = 0; i < r->snap->nfuncs; i++)
		errors += r->snap->funcs[i].state == FUNC_ERROR;
	serve_render_up(r->f, true);
	serve_family(r, "retop_target_processes", "gauge",
		     "Processes of the target that retop sees running.");
	fputs("retop_target_processes{", r->f);
	serve_target_labels(r);
	fprintf(r->f, "} %zu\n", r->snap->npids);
	serve_family(r, "retop_probe_attach_errors_total", "counter",
		     "Functions asked for with -t whose probes could not be attached.");
	fputs("retop_probe_attach_errors_total{", r->f);
	serve_target_labels(r);
	fprintf(r->f, "} %u\n", errors);
	serve_family(r, "retop_sample_duration_seconds", "gauge",
		     "Time the last sample of the BPF counters took.");
	fputs("retop_sample_duration_seconds{", r->f);
	serve_target_labels(r);
	fputs("} ", r->f);
	prom_text_put_seconds(r->f, r->sample_ns);
	fputc('\n', r->f);
	/* What a container's memory limit pays for: the kernel charges the
	 * maps to retop's cgroup. */
	serve_family(r, "retop_bpf_map_bytes", "gauge",
		     "Kernel memory of retop's BPF maps, as the kernel charges it now.");
	fprintf(r->f, "retop_bpf_map_bytes %" PRIu64 "\n", r->snap->bpf_map_bytes);
	serve_family(r, "retop_resident_bytes", "gauge", "retop's own resident memory (VmRSS).");
	fprintf(r->f, "retop_resident_bytes %" PRIu64 "\n", r->snap->user_bytes);
	/* What retop's probes cost the targets. */
	serve_family(r, "retop_probe_cpu_seconds_total", "counter",
		     "CPU time retop's probes took from the targets (every traced function's and the "
		     "runtime watchers' traps).");
	fputs("retop_probe_cpu_seconds_total{", r->f);
	serve_target_labels(r);
	fputs("} ", r->f);
	prom_text_put_seconds(r->f, (uint64_t)(r->snap->cost_ns + 0.5));
	fputc('\n', r->f);
	serve_family(r, "retop_probe_cpu_ratio", "gauge",
		     "Share of the targets' CPU time retop's probes took over the last interval.");
	fputs("retop_probe_cpu_ratio{", r->f);
	serve_target_labels(r);
	fprintf(r->f, "} %.6f\n", r->snap->cost_share);
	serve_family(r, "retop_probe_hits_total", "counter",
		     "Probe hits the overhead budget counts (every traced function's and the "
		     "runtime watchers'): --budget N/s allows N a second.");
	fputs("retop_probe_hits_total{", r->f);
	serve_target_labels(r);
	fprintf(r->f, "} %" PRIu64 "\n", r->snap->probe_hits);
	serve_family(r, "retop_unseen_after_exec_seconds_total", "counter",
		     "-p: time the target's calls were not seen, between its exec() of its "
		     "binary again and its probes back (0: every call seen).");
	fputs("retop_unseen_after_exec_seconds_total{", r->f);
	serve_target_labels(r);
	fprintf(r->f, "} %.6f\n", r->snap->unseen_after_exec_s);
	serve_family(r, "process_cpu_seconds_total", "counter",
		     "User and system CPU time retop itself spent, in seconds.");
	fprintf(r->f, "process_cpu_seconds_total %.6f\n", r->snap->self_cpu_s);
}

/* The 95% interval of an estimated calls_total, for the functions that
 * have one; an open upper end is +Inf. */
static void serve_render_ci(struct render *r)
{
	static const char *const names[] = {"retop_function_calls_ci95_low",
					    "retop_function_calls_ci95_high"};

	for (size_t k = 0; k < 2; k++) {
		serve_family(r, names[k], "gauge",
			     k ? "Upper end of the 95% interval of an estimated calls_total (+Inf: the "
				 "probes slowed the target too much to bound it)."
			       : "Lower end of the 95% interval of an estimated calls_total.");
		for (size_t i = 0; i < r->snap->nfuncs; i++) {
			const struct snapshot_func *f = &r->snap->funcs[i];
			if (!f->raw || !f->estimated)
				continue;
			fprintf(r->f, "%s{", names[k]);
			serve_func_labels(r, i);
			if (isinf(f->calls_ci95[k]))
				fputs("} +Inf\n", r->f);
			else
				fprintf(r->f, "} %.0f\n", f->calls_ci95[k]);
		}
	}
}

static void serve_render_status(struct render *r)
{
	serve_family(r, "retop_function_status", "gauge",
		     "1 for the function's state: tracing, timing-sampled or sampled (--budget), "
		     "entry-only (no RET to probe), detached or error.");
	for (size_t i = 0; i < r->snap->nfuncs; i++) {
		fputs("retop_function_status{", r->f);
		serve_func_labels(r, i);
		fprintf(r->f, ",status=\"%s\"} 1\n", func_state_name(r->snap->funcs[i].state));
	}
}

/* One value per function: a counter, or a gauge in seconds. */
struct serve_fam {
	const char *name, *type, *help;
	bool seconds; /* the value is ns, printed as seconds */
	uint64_t (*get)(const struct snapshot_func *sn);
};

static uint64_t get_calls(const struct snapshot_func *sn)
{
	return sn->v.calls;
}
static uint64_t get_timed(const struct snapshot_func *sn)
{
	return sn->timed_calls;
}
static uint64_t get_entries(const struct snapshot_func *sn)
{
	return sn->raw->st.entries;
}
static uint64_t get_unmatched(const struct snapshot_func *sn)
{
	return sn->raw->st.unmatched;
}
static uint64_t get_reentries(const struct snapshot_func *sn)
{
	return sn->raw->st.reentries;
}
static uint64_t get_dropped(const struct snapshot_func *sn)
{
	return sn->raw->st.dropped;
}
static uint64_t get_in_flight(const struct snapshot_func *sn)
{
	return sn->in_flight;
}
static uint64_t get_overdue(const struct snapshot_func *sn)
{
	return sn->overdue;
}
static uint64_t get_oldest(const struct snapshot_func *sn)
{
	return sn->oldest_in_flight_ns;
}
static uint64_t get_orphans(const struct snapshot_func *sn)
{
	return sn->orphans;
}
static uint64_t get_max(const struct snapshot_func *sn)
{
	return sn->v.max_ns;
}
static uint64_t get_hits_inside(const struct snapshot_func *sn)
{
	return sn->raw->st.nested_hits;
}
static uint64_t get_evicted(const struct snapshot_func *sn)
{
	return sn->raw->st.evicted;
}
static uint64_t get_trap(const struct snapshot_func *sn)
{
	return sn->raw->st.trap_ns;
}
static uint64_t get_own(const struct snapshot_func *sn)
{
	return sn->raw->st.own_ns;
}
static uint64_t get_resolution(const struct snapshot_func *sn)
{
	return (uint64_t)(sn->resolution_ns + 0.5);
}
static uint64_t get_lower_bound(const struct snapshot_func *sn)
{
	return sn->calls_lower_bound;
}
static uint64_t get_cost(const struct snapshot_func *sn)
{
	return (uint64_t)(sn->cost_ns + 0.5);
}
static uint64_t get_slow(const struct snapshot_func *sn)
{
	return sn->raw->st.slow_over;
}

/* No percentile gauges: a p50 since tracing began can be neither summed
 * across processes nor narrowed to a window, and hides a recent change;
 * histogram_quantile() over rate() of the histogram below gives either. */
/* A ratio, in billionths so that it prints like a duration in seconds. */
static uint64_t get_sampled(const struct snapshot_func *sn)
{
	return (uint64_t)(sn->sampled * 1e9 + 0.5);
}

static uint64_t get_inlined_sites(const struct snapshot_func *sn)
{
	return sn->inlined_sites > 0 ? (uint64_t)sn->inlined_sites : 0;
}

static uint64_t get_inlined_calls(const struct snapshot_func *sn)
{
	return sn->inlined_calls;
}

static uint64_t get_inlined_counted(const struct snapshot_func *sn)
{
	return sn->inlined_sites_counted > 0 ? (uint64_t)sn->inlined_sites_counted : 0;
}

static const struct serve_fam serve_fams[] = {
    {"retop_function_calls_total", "counter",
     "Calls: timed to their RET, or counted at their entry while --budget sheds the RET probes; "
     "estimated from random slices where even the entries exceed it (then "
     "retop_function_calls_ci95_low/high hold its 95% interval); where that interval has no "
     "upper end, its lower end (retop_function_calls_lower_bound 1).",
     false, get_calls},
    {"retop_function_calls_lower_bound", "gauge",
     "1 when calls_total is the lower end of an estimate with no upper end (the probes slowed "
     "what they counted too much to bound it): at least so many calls.",
     false, get_lower_bound},
    {"retop_function_timed_calls_total", "counter",
     "Calls with a measured duration: the duration histogram and the callers count these; "
     "fewer than calls_total when --budget times a sample.",
     false, get_timed},
    {"retop_function_entries_total", "counter",
     "Entry probe hits (the only count of an entry-only function).", false, get_entries},
    {"retop_function_in_flight", "gauge",
     "Calls entered and not yet returned, overdue ones included.", false, get_in_flight},
    {"retop_function_overdue_in_flight", "gauge",
     "Calls in flight for --orphan-timeout or longer: still awaited, counted when they return.",
     false, get_overdue},
    {"retop_function_oldest_in_flight_seconds", "gauge",
     "Age of the oldest call in flight; 0 when none. It grows until that call returns or is "
     "proven dead.", true, get_oldest},
    {"retop_orphaned_entries_total", "counter",
     "Entries proven never to return: their goroutine unwound past them (panic, Goexit) or "
     "exited, or their process exited.", false,
     get_orphans},
    {"retop_unmatched_returns_total", "counter",
     "RET hits with no entry, not of calls begun before the attach: returns of dropped calls.", false,
     get_unmatched},
    {"retop_function_reentries_total", "counter",
     "Entry hits over a call already in flight with the same key (morestack restarts).", false,
     get_reentries},
    {"retop_function_dropped_total", "counter",
     "Calls lost because the in-flight map was full (--max-in-flight): calls_total is then a lower "
     "bound.",
     false, get_dropped},
    {"retop_function_max_seconds", "gauge", "Longest call since tracing began.", true, get_max},
    {"retop_function_probe_hits_inside_total", "counter",
     "Probe hits of traced callees inside its paired calls; the calls in "
     "retop_function_evicted_calls_total count none.",
     false, get_hits_inside},
    {"retop_function_evicted_calls_total", "counter",
     "Paired calls whose goroutine's records retop's LRU maps evicted during the call: their "
     "probe hits inside are lost (none counted, none taken out of their durations).",
     false, get_evicted},
    {"retop_function_trap_seconds_subtracted_total", "counter",
     "The traps of those hits, at the timed cost of each probe's kind, taken out of its "
     "durations (the histogram, the sum, the max, callers and slowest calls).",
     true, get_trap},
    {"retop_function_own_trap_seconds_subtracted_total", "counter",
     "What each call's own entry and RET probe hits left inside its timed window, taken out of "
     "its durations too (as timed on retop's own code, by how the entry runs).",
     true, get_own},
    {"retop_function_probe_cpu_seconds_total", "counter",
     "CPU time its probes took from the target: each hit's program, measured, and the kernel's "
     "part of its trap, at the timed cost of its kind. rate() of it over rate() of "
     "retop_target_cpu_seconds_total is retop's share.",
     true, get_cost},
    {"retop_function_duration_resolution_seconds", "gauge",
     "How far a duration may still be off once retop's traps are taken out (8 calls in 10): a "
     "duration at or under it cannot be told from retop's own traps.",
     true, get_resolution},
    {"retop_function_slow_calls_total", "counter",
     "Calls at least --slow long (0 without --slow).", false, get_slow},
    {"retop_function_sampled_ratio", "gauge",
     "Share of time --budget keeps the function's probes in (timing-sampled: its RET probes, "
     "estimated: all of them); 1 when traced in full.",
     true, get_sampled},
    {"retop_function_inlined_sites", "gauge",
     "Sites where the compiler inlined the function: calls there reach neither its entry nor "
     "its RETs, and are counted only in retop_function_inlined_calls_total, at the sites whose "
     "inline mark is proven (0 also when the binary's inline trees could not be read).",
     false, get_inlined_sites},
    {"retop_function_inlined_sites_counted", "gauge",
     "Of retop_function_inlined_sites, those whose inline mark is proven to run once per "
     "inlined call: their calls are counted.",
     false, get_inlined_counted},
    {"retop_function_inlined_calls_total", "counter",
     "Inlined calls begun at the counted sites; never timed, in no other figure: "
     "calls_total and the durations are of calls out of line only. A lower bound while "
     "--budget estimates the function (its marks are then out).",
     false, get_inlined_calls},
};

static void serve_render_fam(struct render *r, const struct serve_fam *fam)
{
	serve_family(r, fam->name, fam->type, fam->help);
	for (size_t i = 0; i < r->snap->nfuncs; i++) {
		uint64_t v;

		if (!r->snap->funcs[i].raw)
			continue;
		v = fam->get(&r->snap->funcs[i]);
		fprintf(r->f, "%s{", fam->name);
		serve_func_labels(r, i);
		fputs("} ", r->f);
		if (fam->seconds)
			prom_text_put_seconds(r->f, v);
		else
			fprintf(r->f, "%" PRIu64, v);
		fputc('\n', r->f);
	}
}

/* Cumulative counts at each `le`: exact sums of log-linear buckets. */
static void serve_render_hist_one(struct render *r, size_t i)
{
	const __u64 *h = r->snap->funcs[i].raw->hist; /* NULL: no timed call yet */
	uint64_t acc = 0;
	uint32_t b = 0;

	for (size_t k = 0; k < serve_nle; k++) {
		for (; b < serve_le_bucket[k]; b++)
			acc += h ? h[b] : 0;
		fprintf(r->f, "retop_function_duration_seconds_bucket{%s,le=\"%s\"} %" PRIu64 "\n",
			r->labels + r->off[i + 1], serve_le_text[k], acc);
	}
	while (h && b < RETOP_HIST_BUCKETS)
		acc += h[b++];
	fputs("retop_function_duration_seconds_bucket{", r->f);
	serve_func_labels(r, i);
	fprintf(r->f, ",le=\"+Inf\"} %" PRIu64 "\nretop_function_duration_seconds_sum{", acc);
	serve_func_labels(r, i);
	fputs("} ", r->f);
	prom_text_put_seconds(r->f, r->snap->funcs[i].raw->st.sum_ns);
	fputs("\nretop_function_duration_seconds_count{", r->f);
	serve_func_labels(r, i);
	/* From the buckets, not calls: the format wants _count == +Inf (and
	 * a bucket may hold a call its calls do not yet, or one whose bucket
	 * found no place, hist_lost, is in calls only). */
	fprintf(r->f, "} %" PRIu64 "\n", acc);
}

static void serve_render_hist(struct render *r)
{
	serve_family(r, "retop_function_duration_seconds", "histogram",
		     "Duration of paired calls, out of line only (inlined calls have no duration); each le "
		     "is exact (a sum of log-linear buckets).");
	for (size_t i = 0; i < r->snap->nfuncs; i++)
		if (r->snap->funcs[i].raw)
			serve_render_hist_one(r, i);
}

static void serve_render_sites(struct render *r)
{
	serve_family(r, "retop_ret_site_hits_total", "counter",
		     "Hits of each RET instruction (offset from the entry; line 0 when unknown).");
	for (size_t i = 0; i < r->snap->nfuncs; i++) {
		const struct snapshot_func *sn = &r->snap->funcs[i];

		if (!sn->raw)
			continue;
		for (size_t k = 0; k < sn->nsites; k++) {
			fputs("retop_ret_site_hits_total{", r->f);
			serve_func_labels(r, i);
			fprintf(r->f, ",site=\"0x%" PRIx32 "\",line=\"%d\"", sn->sites[k].offset,
				sn->sites[k].line);
			/* A deploy's binary: its sites may share an offset with
			 * the first's, so they carry its number. */
			if (sn->sites[k].image)
				fprintf(r->f, ",binary_index=\"%u\"", sn->sites[k].image);
			fprintf(r->f, "} %" PRIu64 "\n", sn->sites[k].hits);
		}
	}
}

/* Failing calls: only where the function's errors are read (a function
 * whose signature is unknown has no series, not a 0). */
static void serve_render_errors(struct render *r)
{
	serve_family(r, "retop_function_errors_total", "counter",
		     "Calls that returned a non-nil error (its last result, of type error, read at "
		     "its RET; a typed nil pointer is non-nil): of retop_function_calls_total, and "
		     "estimated like it while --budget times a sample. Only functions whose errors "
		     "are read (the JSON's errors_uncounted_why says why not).");
	for (size_t i = 0; i < r->snap->nfuncs; i++) {
		const struct snapshot_func *sn = &r->snap->funcs[i];

		if (!sn->raw || !sn->errors_counted)
			continue;
		fputs("retop_function_errors_total{", r->f);
		serve_func_labels(r, i);
		fprintf(r->f, "} %" PRIu64 "\n", sn->errors);
	}
}

/* Latency by caller, as counters that aggregate and window: calls, and
 * their summed duration (rate(sum) / rate(calls) is the mean over any
 * window), and the failing ones where the function's errors are read.  The
 * caller label is bounded: the CALLERS_MAX busiest calling functions of
 * each traced function, then caller="other". */
enum serve_caller_fig { SERVE_CALLS, SERVE_SUM, SERVE_ERRORS };

static void serve_render_callers_fam(struct render *r, const char *name, enum serve_caller_fig fig)
{
	for (size_t i = 0; i < r->snap->nfuncs; i++) {
		const struct callers_view *c = &r->snap->funcs[i].callers;

		if (!r->snap->funcs[i].raw ||
		    (fig == SERVE_ERRORS && !r->snap->funcs[i].errors_counted))
			continue;
		for (size_t k = 0; k < c->n; k++) {
			fprintf(r->f, "%s{", name);
			serve_func_labels(r, i);
			fputs(",caller=\"", r->f);
			prom_text_put_label(r->f, c->rows[k].name);
			fputs("\"} ", r->f);
			if (fig == SERVE_SUM)
				prom_text_put_seconds(r->f, c->rows[k].sum_ns);
			else
				fprintf(r->f, "%" PRIu64,
					fig == SERVE_ERRORS ? c->rows[k].errors : c->rows[k].calls);
			fputc('\n', r->f);
		}
	}
}

static void serve_render_callers(struct render *r)
{
	serve_family(r, "retop_caller_calls_total", "counter",
		     "Paired calls by calling function: the 16 busiest, then caller=\"other\".");
	serve_render_callers_fam(r, "retop_caller_calls_total", SERVE_CALLS);
	serve_family(r, "retop_caller_duration_seconds_total", "counter",
		     "Summed duration of those calls: divide its rate by "
		     "retop_caller_calls_total's for the mean over a window.");
	serve_render_callers_fam(r, "retop_caller_duration_seconds_total", SERVE_SUM);
	serve_family(r, "retop_caller_errors_total", "counter",
		     "Of those calls, the ones that returned a non-nil error: which caller gets "
		     "the function's errors (only where they are read).");
	serve_render_callers_fam(r, "retop_caller_errors_total", SERVE_ERRORS);
}

int serve_page_render(const struct snapshot *snap, uint64_t sample_ns, bool pid_label, char **page,
		      size_t *len)
{
	struct render r = {.snap = snap, .sample_ns = sample_ns};

	serve_init_bounds();
	if (!pid_label)
		r.pid[0] = '\0';
	else if (snap->attach_pid > 0)
		snprintf(r.pid, sizeof(r.pid), "%d", snap->attach_pid);
	else
		snprintf(r.pid, sizeof(r.pid), "all");
	if (serve_make_labels(&r) != 0)
		return -ENOMEM;
	r.f = open_memstream(page, len);
	if (!r.f) {
		free(r.labels);
		return -ENOMEM;
	}
	serve_render_self(&r);
	serve_render_status(&r);
	serve_render_ci(&r);
	for (size_t k = 0; k < sizeof(serve_fams) / sizeof(serve_fams[0]); k++)
		serve_render_fam(&r, &serve_fams[k]);
	serve_render_errors(&r);
	serve_render_hist(&r);
	serve_render_sites(&r);
	serve_render_callers(&r);
	serve_render_split(&r);
	free(r.labels);
	if (ferror(r.f)) {
		fclose(r.f);
		free(*page);
		return -ENOMEM;
	}
	if (fclose(r.f) != 0) {
		free(*page);
		return -ENOMEM;
	}
	return 0;
}

int serve_page_render_starting(double cpu_s, char **page, size_t *len)
{
	FILE *f = open_memstream(page, len);

	if (!f)
		return -ENOMEM;
	serve_render_up(f, false);
	fputs("# HELP process_cpu_seconds_total User and system CPU time retop itself spent, in "
	      "seconds.\n# TYPE process_cpu_seconds_total counter\n",
	      f);
	fprintf(f, "process_cpu_seconds_total %.6f\n", cpu_s);
	if (ferror(f) || fclose(f) != 0) {
		free(*page);
		*page = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* ---- compression ----------------------------------------------------- */

int serve_page_gzip(const char *in, size_t len, char **out, size_t *outlen)
{
	z_stream zs = {0};
	char *buf;
	int rc;

	*out = NULL;
	*outlen = 0;
	/* 15 + 16: a gzip wrapper around the deflate stream.  The fastest
	 * level: the page is text and shrinks ten-fold at any level, and it
	 * is compressed every --delay. */
	if (deflateInit2(&zs, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	uLong bound = deflateBound(&zs, (uLong)len);
	buf = malloc(bound);
	if (!buf) {
		deflateEnd(&zs);
		return -ENOMEM;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)len;
	zs.next_out = (Bytef *)buf;
	zs.avail_out = (uInt)bound;
	rc = deflate(&zs, Z_FINISH);
	*outlen = zs.total_out;
	deflateEnd(&zs);
	if (rc != Z_STREAM_END) {
		free(buf);
		*outlen = 0;
		return -ENOMEM;
	}
	*out = buf;
	return 0;
}

/* The q value of one Accept-Encoding element's parameters (";q=0.5"): 1
 * when absent, 0 when malformed (refusing is the safe reading). */
static double serve_page_qvalue(const char *params, size_t len)
{
	char buf[32];
	const char *q;
	char *end;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, params, len);
	buf[len] = '\0';
	q = strstr(buf, "q=");
	if (!q)
		q = strstr(buf, "Q=");
	if (!q)
		return 1;
	double v = strtod(q + 2, &end);
	return end == q + 2 ? 0 : v;
}

bool serve_page_accepts_gzip(const char *accept_encoding)
{
	const char *p = accept_encoding;
	double gzip_q = -1, star_q = -1;

	while (p && *p) {
		size_t elen = strcspn(p, ","), n;
		const char *e = p;

		p += elen + (p[elen] == ',');
		while (elen && (*e == ' ' || *e == '\t'))
			e++, elen--;
		n = strcspn(e, ";, \t");
		if (n > elen)
			n = elen;
		double q = serve_page_qvalue(e + n, elen - n);
		if ((n == 4 && !strncasecmp(e, "gzip", 4)) ||
		    (n == 6 && !strncasecmp(e, "x-gzip", 6)))
			gzip_q = q;
		else if (n == 1 && *e == '*')
			star_q = q;
	}
	/* RFC 9110 12.5.3: an explicit gzip wins over "*". */
	return gzip_q >= 0 ? gzip_q > 0 : star_q > 0;
}
