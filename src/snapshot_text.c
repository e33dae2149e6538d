/* The batch text face of a snapshot (snapshot.h): a header like top's,
 * one row per function with the lines under it, idle functions folded. */
#include "snapshot.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "figure.h"
#include "guard.h"
#include "snapshot_split.h"
#include "text_escape.h"

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

/* Batch text fits 80 columns. */
#define SNAPSHOT_TEXT_COLS 80

/* What retop's probes cost the targets, as it measures them. */
static void snapshot_text_cost(FILE *out, const struct snapshot *snap)
{
	char per_s[16];

	if (!snap->nfuncs)
		return;
	stats_format_duration((uint64_t)(snap->cost_per_s + 0.5), per_s, sizeof(per_s));
	char line[160], hits[64] = "";
	int n =
	    snprintf(line, sizeof(line), "retop's probes take %s/s of the target's CPU (%.1f%%)",
		     snap->cost_per_s >= 1 ? per_s : "0ns", 100 * snap->cost_share);
	/* The budget's own measure, on the line while it fits 80 columns. */
	if (snap->budget_hits > 0)
		snprintf(hits, sizeof(hits), "%.0f of %.0f hits/s", snap->probe_hits_per_s,
			 snap->budget_hits);
	if (!hits[0])
		fprintf(out, "%s\n", line);
	else if (n + 2 + (int)strlen(hits) <= SNAPSHOT_TEXT_COLS)
		fprintf(out, "%s, %s\n", line, hits);
	else
		fprintf(out, "%s\n    %s\n", line, hits);
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
	fprintf(out, "resolution %s (entry at a jump), %s (stepped); retop's traps out\n", emu,
		step);
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
		fprintf(out,
			"calls not counted for %.3f s: the process ran exec() again before "
			"its probes were back\n",
			snap->unseen_after_exec_s);
	snapshot_text_limits(out, snap);
	snapshot_text_resolution(out, snap);
	snapshot_text_cost(out, snap);
	snapshot_split_text_header(out, snap);
	fprintf(out, "%-21s %8s %7s %7s %7s %5s %7s %5s %5s\n", "FUNCTION", "CALLS", "CALLS/S",
		"P50", "P99", "ERR%", "MAX", "INFL", "ORPH");
}

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
	fprintf(out, "    %s of the time (--budget): ~ marks estimates; calls 95%% in %.0f-",
		status, f->calls_ci95[0]);
	if (isinf(f->calls_ci95[1]))
		fprintf(out, "? (its traps took %.0f%% of the CPU: unbounded)\n",
			f->trap_share * 100);
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
		     : f->change.old_running		? "old binary (still running: both after)"
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
		fprintf(out,
			"    %.1f s not sampled (retop fell behind, or its probes were late): "
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
		fprintf(out,
			"    probe hits inside not exact: %llu calls lost their goroutine's "
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
	/* Wrapped at the width like every note: marked cells ("~", "<")
	 * can take it past 80 columns. */
	snprintf(line, sizeof(line),
		 "errors %s%llu (%.1f%%, %s/s); p50/p99 failing %s/%s, ok %s/%s",
		 f->errors_exact ? "" : "~", (unsigned long long)f->errors, 100 * f->error_share,
		 rate, fp50, fp99, sp50, sp99);
	fprintf(out, "    ");
	snapshot_text_status(out, 4, line);
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
		fprintf(out,
			"    %s inlined at %lld sites: %llu%s inlined calls at %lld of them (not "
			"timed)%s\n",
			only ? "exists only" : "also", (long long)f->inlined_sites,
			(unsigned long long)f->inlined_calls,
			f->inlined_calls_exact ? "" : " or more",
			(long long)f->inlined_sites_counted,
			only ? "" : "; calls and durations above are of calls out of line");
	else if (!only)
		fprintf(out,
			"    also inlined at %lld sites: calls there are not counted; calls and "
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
static void snapshot_text_calls(FILE *out, const struct snapshot *snap,
				const struct snapshot_func *f)
{
	char thr[16];

	if (snap->slow_ns) {
		stats_format_duration(snap->slow_ns, thr, sizeof(thr));
		fprintf(out, "    >= %s: %llu calls, %llu in this interval%s\n", thr,
			(unsigned long long)f->v.slow_over,
			(unsigned long long)f->v.slow_over_delta,
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
		fprintf(out,
			"! not exact: %llu calls lost their goroutine's records (LRU maps full): "
			"probe hits inside, unmatched returns\n",
			(unsigned long long)evicted);
	if (callers_lost)
		fprintf(out,
			"! not exact: %llu calls missing from their callers (caller map full)\n",
			(unsigned long long)callers_lost);
	if (args_lost)
		fprintf(out,
			"! not exact: %llu calls' arguments not captured (argument map full)\n",
			(unsigned long long)args_lost);
	if (snap->evidence_lost)
		fprintf(out,
			"! %llu goroutine records found no room: their calls wait for "
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
		snapshot_split_text(out, f);
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
