/* The detail view of one traced function: summary, hits per RET site with
 * its source line, latency by caller, latency histogram as bars (from the
 * raw in-kernel buckets, merged into ~16 rows), where its time goes (a bar
 * per part of the time split, over the last interval and since start), the
 * slowest calls, and the instructions leading to each RET.
 * The page scrolls; everything is drawn through a virtual line cursor. */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../src/elf_image.h"
#include "../src/figure.h"
#include "../src/retsites.h"
#include "../src/stats.h"
#include "../src/text_escape.h"
#include "screens.h"

#define DETAIL_HIST_ROWS 16
#define DETAIL_BEFORE_RET 4 /* instructions shown before each RET */

struct detail {
	const struct func_info *f;
	__u64 hist[RETOP_HIST_BUCKETS];
	uint64_t hist_seq, hmin, hmax, hcalls;
	bool have_hist;
	struct disasm dis; /* the whole function, decoded by the worker */
	uint64_t disasm_seq;
	struct ui_list scroll;
	int lines; /* of the last page drawn */
};

/* A virtual line cursor: rows above the scroll offset or below the body
 * are counted, not drawn. */
struct detail_page {
	int v, top, y0, h;
};

static int detail_row(struct detail_page *pg)
{
	int v = pg->v++;
	if (v < pg->top || v >= pg->top + pg->h)
		return -1;
	return pg->y0 + v - pg->top;
}

int detail_open(struct ui *ui)
{
	ui->detail = calloc(1, sizeof(*ui->detail));
	return ui->detail ? 0 : -1;
}

void detail_close(struct ui *ui)
{
	if (!ui->detail)
		return;
	disasm_free(&ui->detail->dis);
	free(ui->detail);
	ui->detail = NULL;
}

void detail_show(struct ui *ui, const struct func_info *f)
{
	struct detail *d = ui->detail;

	d->f = f;
	d->have_hist = false;
	d->scroll = (struct ui_list){0, 0};
	disasm_free(&d->dis);
	worker_lock(&ui->w);
	worker_detail_locked(&ui->w, f);
	worker_disasm_locked(&ui->w, f);
	worker_unlock(&ui->w);
}

static const struct snapshot_func *detail_row_of(const struct ui *ui, const struct func_info *f)
{
	for (size_t i = 0; i < ui->nfuncs; i++)
		if (ui->fptr[i] == f)
			return &ui->funcs[i];
	return NULL;
}

static void detail_sync(struct ui *ui, struct detail *d)
{
	worker_lock(&ui->w);
	if (ui->w.detail_f == d->f && ui->w.hist_seq != d->hist_seq) {
		memcpy(d->hist, ui->w.hist, sizeof(d->hist));
		d->hmin = ui->w.hist_min;
		d->hmax = ui->w.hist_max;
		d->hcalls = ui->w.hist_calls;
		d->hist_seq = ui->w.hist_seq;
		d->have_hist = true;
	}
	if (ui->w.disasm_seq != d->disasm_seq && ui->w.disasm.f == d->f) {
		disasm_free(&d->dis);
		d->dis = ui->w.disasm; /* ours now */
		memset(&ui->w.disasm, 0, sizeof(ui->w.disasm));
		d->disasm_seq = ui->w.disasm_seq;
	}
	worker_unlock(&ui->w);
}

/* Its failing calls: how many, how fast against the others (a fast
 * failure hides in a healthy p50), of which types; or why not counted. */
static void detail_errors(const struct snapshot_func *sf, struct detail_page *pg)
{
	char share[16], rate[16], fp50[16], fp99[16], sp50[16], sp99[16], line[400];
	size_t n = 0;
	int y;

	if (sf->errors_why[0]) {
		if ((y = detail_row(pg)) >= 0)
			draw_textf(y, 0, COLS, DR_WARN, "Errors not counted: %s", sf->errors_why);
		return;
	}
	if (!sf->errors_counted)
		return;
	figure_error_share(sf, false, share, sizeof(share));
	fmt_count(sf->errors_per_s, rate, sizeof(rate));
	figure_duration(sf, sf->failing.p50_ns, fp50, sizeof(fp50));
	figure_duration(sf, sf->failing.p99_ns, fp99, sizeof(fp99));
	figure_duration(sf, sf->succeeding.p50_ns, sp50, sizeof(sp50));
	figure_duration(sf, sf->succeeding.p99_ns, sp99, sizeof(sp99));
	if ((y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, sf->errors ? DR_WARN : DR_NORMAL,
			   "Errors %s%llu (%s, %s/s)  p50/p99 failing %s/%s, ok %s/%s",
			   sf->errors_exact ? "" : "~", (unsigned long long)sf->errors, share, rate,
			   fp50, fp99, sp50, sp99);
	if (!sf->ntypes)
		return;
	for (size_t i = 0; i < sf->ntypes && n < sizeof(line); i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "%s%s %llu", i ? ", " : "",
				      sf->types[i].name, (unsigned long long)sf->types[i].calls);
	if ((y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, DR_NORMAL, "  of types: %s", line);
}

static void detail_summary(struct ui *ui, const struct snapshot_func *sf, struct detail_page *pg)
{
	char rate[16], mean[16], mn[16], mx[16], old[16], status[SNAPSHOT_STATUS_LEN + 16];
	int y;

	figure_rate(sf, draw_utf8(), rate, sizeof(rate));
	figure_duration(sf, sf->v.mean_ns, mean, sizeof(mean));
	figure_duration(sf, sf->v.min_ns, mn, sizeof(mn));
	figure_duration(sf, sf->v.max_ns, mx, sizeof(mx));
	fmt_duration(sf->oldest_in_flight_ns, old, sizeof(old));
	snapshot_func_status(sf, status, sizeof(status));
	if (ui->detail->f->inline_only && (y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, DR_NORMAL, "Status: %s", status); /* no code, no entry */
	else if ((y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, DR_NORMAL, "Status: %s   entry %s:%d   entry probe +0x%x",
			   status, fmt_basename(ui->detail->f->file), ui->detail->f->line,
			   ui->detail->f->entry_probe_off);
	if ((y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, DR_NORMAL,
			   "Calls %s%llu (%s/s)  mean %s  min %s  max %s  entries %llu",
			   sf->calls_lower_bound ? (draw_utf8() ? "\u2265" : ">=") : "",
			   (unsigned long long)sf->v.calls, rate, mean, mn, mx,
			   (unsigned long long)sf->entries);
	detail_errors(sf, pg);
	/* What its probes cost the target, and add to each call. */
	if (!ui->detail->f->inline_only && (y = detail_row(pg)) >= 0) {
		char per_s[16], per_call[16];
		fmt_duration((uint64_t)(sf->cost_per_s + 0.5), per_s, sizeof(per_s));
		fmt_duration((uint64_t)(sf->cost_per_call_ns + 0.5), per_call, sizeof(per_call));
		draw_textf(y, 0, COLS, DR_NORMAL,
			   "Its probes: %s/s of the target's CPU, %s added to each call", per_s,
			   per_call);
	}
	/* How far its durations may still be off, once retop's own traps are
	 * taken out: a figure under it says so. */
	if (sf->resolution_ns > 0 && (y = detail_row(pg)) >= 0) {
		char res[16], own[16];
		fmt_duration((uint64_t)(sf->resolution_ns + 0.5), res, sizeof(res));
		fmt_duration((uint64_t)(sf->v.own_ns_per_call + 0.5), own, sizeof(own));
		draw_textf(y, 0, COLS, DR_NORMAL,
			   "Resolution %s: durations less its own probes' %s a call (entry %s)%s", res,
			   own, ui->detail->f->entry_emulated ? "at a jump" : "single-stepped",
			   sf->v.hits_inside >= 0.005 ? " and its traced callees' traps" : "");
	}
	/* Against the baseline ('B' in the live table, --baseline, a deploy),
	 * as the batch text says it. */
	if (sf->change.against != CHANGE_NONE && !sf->entry_only && (y = detail_row(pg)) >= 0) {
		char change[200];
		change_format(&sf->change.r, change, sizeof(change));
		draw_textf(y, 0, COLS, sf->change.r.verdict == CHANGE_SIGNIFICANT ? DR_WARN : DR_NORMAL,
			   "Change vs %s: %s",
			   sf->change.against == CHANGE_WINDOW ? "baseline"
			   : sf->change.old_running	       ? "old binary (still running)"
							       : "old binary",
			   change);
	}
	if ((y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, sf->oldest_in_flight_ns >= 1000000000ull ? DR_STUCK : DR_NORMAL,
			   "In flight %llu (%llu overdue, oldest %s)  orphans %llu  "
			   "unmatched returns %llu  re-entries %llu",
			   (unsigned long long)sf->in_flight, (unsigned long long)sf->overdue, old,
			   (unsigned long long)sf->orphans,
			   (unsigned long long)sf->v.unmatched, (unsigned long long)sf->v.reentries);
	/* What the probes add: the traps of traced callees are inside each
	 * call; BPF takes their timed cost out of its durations. */
	if (sf->v.hits_inside >= 0.005 && (y = detail_row(pg)) >= 0) {
		char each[16] = "";
		if (sf->v.trap_ns_per_call >= 0.5) {
			fmt_duration((uint64_t)(sf->v.trap_ns_per_call + 0.5), each, sizeof(each));
			draw_textf(y, 0, COLS, DR_NORMAL,
				   "Probe hits inside a call: %.2f (traced callees): durations less "
				   "their traps, %s a call",
				   sf->v.hits_inside, each);
		} else {
			draw_textf(y, 0, COLS, DR_WARN,
				   "Probe hits inside a call: %.2f (traced callees): their traps are in its "
				   "durations (untimed)",
				   sf->v.hits_inside);
		}
	}
	if (sf->v.hits_inside >= 0.005 && sf->hits_inside_sampled && (y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, DR_WARN,
			   "Probe hits inside from a sample: traced probes were out for a time (--budget)");
	if (sf->v.evicted && !sf->entry_only && (y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, DR_WARN,
			   "Probe hits inside not exact: %llu calls lost their goroutine's records",
			   (unsigned long long)sf->v.evicted);
	/* Its inlined calls: counted apart at the proven marks, never timed. */
	if (sf->inlined_sites > 0 && (y = detail_row(pg)) >= 0) {
		if (sf->inlined_sites_counted > 0)
			draw_textf(y, 0, COLS, DR_NORMAL,
				   "Inlined at %lld sites: %llu%s inlined calls at %lld of them (not "
				   "timed; the figures above are of calls out of line)",
				   (long long)sf->inlined_sites, (unsigned long long)sf->inlined_calls,
				   sf->inlined_calls_exact ? "" : " or more",
				   (long long)sf->inlined_sites_counted);
		else
			draw_textf(y, 0, COLS, DR_WARN,
				   "Inlined at %lld sites: calls there are not counted (the figures "
				   "above are of calls out of line)",
				   (long long)sf->inlined_sites);
	}
	if (sf->inlined_uncounted_why[0] && (y = detail_row(pg)) >= 0) {
		char why[sizeof(sf->inlined_uncounted_why)];
		draw_textf(y, 0, COLS, DR_WARN, "  not counted at %lld: %s",
			   (long long)(sf->inlined_sites - sf->inlined_sites_counted),
			   text_escape_str(sf->inlined_uncounted_why, why, sizeof(why)));
	}
	/* --budget: which figures are a sample, and how good the estimate is. */
	if (sf->estimated && (y = detail_row(pg)) >= 0) {
		if (isinf(sf->calls_ci95[1]))
			draw_textf(y, 0, COLS, DR_WARN,
				   "Calls estimated: at least %.0f (95%%); its traps took %.0f%% of the "
				   "CPU while sampled: no upper bound",
				   sf->calls_ci95[0], sf->trap_share * 100);
		else
			draw_textf(y, 0, COLS, DR_WARN, "Calls estimated: 95%% in %.0f - %.0f",
				   sf->calls_ci95[0], sf->calls_ci95[1]);
	}
	if (sf->timed_calls < sf->v.calls && !sf->entry_only && (y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, DR_WARN,
			   "Durations from %llu timed calls of %llu (--budget): a sample",
			   (unsigned long long)sf->timed_calls, (unsigned long long)sf->v.calls);
	/* Its own line, so that 80 columns show it. */
	if (sf->v.dropped && (y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, DR_WARN,
			   "Dropped %llu (map full): calls is a lower bound; raise --max-in-flight",
			   (unsigned long long)sf->v.dropped);
	detail_row(pg);
}

static void detail_hist_row(struct detail *d, struct detail_page *pg, uint32_t b0, uint32_t b1,
			    uint64_t top, uint64_t p50, uint64_t p99)
{
	uint64_t lo, hi, tmp, count = 0;
	char l[16], h[16], c[16], label[48];
	int y = detail_row(pg);

	stats_bucket_range(b0, &lo, &tmp);
	stats_bucket_range(b1, &tmp, &hi);
	for (uint32_t b = b0; b <= b1; b++)
		count += d->hist[b];
	if (y < 0)
		return;
	stats_format_duration(lo, l, sizeof(l));
	stats_format_duration(hi, h, sizeof(h));
	fmt_count((double)count, c, sizeof(c));
	snprintf(label, sizeof(label), "%s%s%s", p50 >= lo && p50 < hi ? "p50" : "",
		 p50 >= lo && p50 < hi && p99 >= lo && p99 < hi ? " " : "",
		 p99 >= lo && p99 < hi ? "p99" : "");
	int barw = COLS - 20 - 8 - 9;
	draw_textf(y, 0, 19, DR_NORMAL, "%7s - %-7s", l, h);
	draw_bar(y, 20, barw > 4 ? barw : 4, top ? (double)count / (double)top : 0);
	draw_rtext(y, COLS - 16, 7, DR_NORMAL, c);
	draw_text(y, COLS - 8, 8, DR_MARK, false, label);
}

/* Merge the populated buckets into about DETAIL_HIST_ROWS rows of equal
 * bucket counts: buckets are log-linear, so rows stay roughly logarithmic. */
static void detail_histogram(struct detail *d, struct detail_page *pg)
{
	uint32_t first = RETOP_HIST_BUCKETS, last = 0;
	int y;

	for (uint32_t b = 0; b < RETOP_HIST_BUCKETS; b++)
		if (d->hist[b]) {
			if (first == RETOP_HIST_BUCKETS)
				first = b;
			last = b;
		}
	if ((y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, DR_HEADER,
			   "Latency since start: %llu calls; p50/p99 within +-%.1f%% (log-linear buckets)",
			   (unsigned long long)d->hcalls, STATS_PERCENTILE_ERROR_PCT);
	if (first == RETOP_HIST_BUCKETS) {
		if ((y = detail_row(pg)) >= 0)
			draw_text(y, 2, COLS - 2, DR_DIM, false,
				  d->have_hist ? "no call has returned yet" : "waiting for a sample...");
		detail_row(pg);
		return;
	}
	uint32_t nb = last - first + 1, per = (nb + DETAIL_HIST_ROWS - 1) / DETAIL_HIST_ROWS;
	uint64_t top = 0, p[2];
	stats_p50_p99(d->hist, RETOP_HIST_BUCKETS, d->hmin, d->hmax, p);
	uint64_t p50 = p[0], p99 = p[1];
	for (uint32_t b = first; b <= last; b += per) {
		uint64_t sum = 0;
		for (uint32_t k = b; k < b + per && k <= last; k++)
			sum += d->hist[k];
		top = sum > top ? sum : top;
	}
	for (uint32_t b = first; b <= last; b += per)
		detail_hist_row(d, pg, b, b + per - 1 > last ? last : b + per - 1, top, p50, p99);
	detail_row(pg);
}

/* One set of calls' part: its bar and share, at x. */
static void detail_split_cell(int y, int x, int barw, const struct timesplit_figures *t, int k)
{
	char pct[16];

	draw_text(y, x, 1, DR_DIM, false, "[");
	if (t->total_ns)
		draw_bar(y, x + 1, barw, t->share[k]);
	draw_text(y, x + 1 + barw, 1, DR_DIM, false, "]");
	if (t->total_ns)
		snprintf(pct, sizeof(pct), "%5.1f%%", 100 * t->share[k]);
	else
		snprintf(pct, sizeof(pct), "-");
	draw_rtext(y, x + 2 + barw, 7, DR_NORMAL, pct);
}

/* "1000 split, 3 parked by Go, 2 without a split": what the parts are of. */
static void detail_split_calls(const struct timesplit_figures *t, char *buf, size_t len)
{
	char a[16], b[16], c[16], d[16], exact[40] = "";

	fmt_count((double)t->calls, a, sizeof(a));
	fmt_count((double)t->parked, b, sizeof(b));
	fmt_count((double)t->unsplit, c, sizeof(c));
	fmt_count((double)t->parked_split, d, sizeof(d));
	if (t->parked_split)
		snprintf(exact, sizeof(exact), " (%s split exactly)", d);
	snprintf(buf, len, "%s on one thread, %s parked%s%s%s%s", a, b, exact,
		 t->unsplit ? ", " : "", t->unsplit ? c : "", t->unsplit ? " unsplit" : "");
}

/* Where its timed calls' time went (timesplit.h): a bar per part, over
 * the last interval and since start, and what a bar cannot show. */
static void detail_split(struct ui *ui, const struct snapshot_func *sf, struct detail_page *pg)
{
	const struct timesplit_view *v = &sf->split;
	int y, x0 = 24, barw = (COLS - x0 - 2 * 10) / 2;
	char calls[96];

	if (sf->entry_only || ui->detail->f->inline_only)
		return;
	if (barw < 4)
		barw = 4;
	if ((y = detail_row(pg)) >= 0)
		draw_text(y, 0, COLS, DR_TITLE, true, "  WHERE THE TIME GOES");
	if (!v->on) {
		if ((y = detail_row(pg)) >= 0)
			draw_textf(y, 2, COLS - 2, DR_DIM, "time split %s",
				   ui->have_snap ? ui->snap.split_why : "off");
		detail_row(pg);
		return;
	}
	if ((y = detail_row(pg)) >= 0) {
		draw_text(y, x0, barw + 9, DR_HEADER, false, "last interval");
		draw_text(y, x0 + barw + 10, barw + 9, DR_HEADER, false, "since start");
	}
	for (int k = 0; k < RETOP_SPLIT_PARTS; k++) {
		if ((y = detail_row(pg)) < 0)
			continue;
		draw_text(y, 2, x0 - 3, DR_NORMAL, false, timesplit_part_words(k));
		detail_split_cell(y, x0, barw, &v->recent, k);
		detail_split_cell(y, x0 + barw + 10, barw, &v->total, k);
	}
	if ((y = detail_row(pg)) >= 0) {
		detail_split_calls(&v->total, calls, sizeof(calls));
		draw_textf(y, 2, COLS - 2, DR_DIM, "since start: %s (%.1f%% of the timed calls)%s",
			   calls, 100 * v->total.covered,
			   sf->timed_calls < sf->v.calls ? ", a sample (--budget)" : "");
	}
	/* At the defaults nothing tells a parked call's own CPU time from
	 * the time Go kept it off its thread. */
	if (v->total.parked > v->total.parked_split && (y = detail_row(pg)) >= 0)
		draw_textf(
		    y, 2, COLS - 2, DR_WARN,
		    "%s parked call's time is all counted parked: its CPU time between parks "
		    "is not told apart%s",
		    v->total.parked_split ? "an unprobed" : "a",
		    ui->have_snap && ui->snap.split_sched ? "" : " (--time-split sched does)");
	/* --time-split sched: why its goroutines were parked. */
	for (size_t i = 0; i < v->nreasons; i++)
		if ((y = detail_row(pg)) >= 0)
			draw_textf(
			    y, 2, COLS - 2, DR_NORMAL, "%s %-40.40s %5.1f%% of its parked time",
			    i ? "    " : "why:", v->reasons[i].name,
			    v->reasons_ns ? 100.0 * (double)v->reasons[i].ns / (double)v->reasons_ns
					  : 0);
	if (v->total.calls && (y = detail_row(pg)) >= 0)
		draw_textf(y, 2, COLS - 2, DR_DIM,
			   "its thread, a call on one thread: %.1f sleeps, %.1f preemptions",
			   v->total.vcsw_per_call, v->total.ivcsw_per_call);
	detail_row(pg);
}

static void detail_sites(struct ui *ui, const struct snapshot_func *sf, struct detail_page *pg)
{
	uint64_t total = 0;
	int y;

	for (size_t i = 0; i < sf->nsites; i++)
		total += sf->sites[i].hits;
	if ((y = detail_row(pg)) >= 0)
		draw_text(y, 0, COLS, DR_TITLE, true, "  #  RET AT   SOURCE                  HITS   HITS/S  SHARE");
	if (sf->nsites == 0 && (y = detail_row(pg)) >= 0)
		draw_text(y, 2, COLS - 2, DR_WARN, false, "no RET site traced (entry-only)");
	for (size_t i = 0; i < sf->nsites; i++) {
		const struct snapshot_site *s = &sf->sites[i];
		char src[64], hits[16], rate[16];
		if ((y = detail_row(pg)) < 0)
			continue;
		snprintf(src, sizeof(src), "%s:%d", fmt_basename(ui->detail->f->file), s->line);
		fmt_count((double)s->hits, hits, sizeof(hits));
		fmt_count(ui->snap.interval_s > 0 ? (double)s->hits_delta / ui->snap.interval_s : 0,
			  rate, sizeof(rate));
		draw_textf(y, 0, COLS, DR_NORMAL, "%3zu  +0x%-6x %-20.20s %7s %8s %5.1f%%", i + 1,
			   s->offset, src, hits, rate, total ? 100.0 * (double)s->hits / (double)total : 0);
	}
	detail_row(pg);
}

/* Latency by caller since start: which caller makes the function slow. */
static void detail_callers(const struct snapshot_func *sf, struct detail_page *pg)
{
	const struct callers_view *c = &sf->callers;
	uint64_t total = 0;
	int y;

	for (size_t i = 0; i < c->n; i++)
		total += c->rows[i].calls;
	if ((y = detail_row(pg)) >= 0)
		draw_text(y, 0, COLS, DR_TITLE, true,
			  "  CALLER                            CALLS  SHARE  ERR%    MEAN     P50     P99");
	if (c->n == 0 && (y = detail_row(pg)) >= 0)
		draw_text(y, 2, COLS - 2, DR_DIM, false,
			  sf->entry_only       ? "no caller: durations unavailable (entry-only)"
			  : sf->callers_unread ? "read at the next refresh"
					       : "no call has returned yet");
	for (size_t i = 0; i < c->n; i++) {
		const struct callers_row *r = &c->rows[i];
		char calls[16], mean[16], p50[16], p99[16], err[16] = "-";
		if ((y = detail_row(pg)) < 0)
			continue;
		fmt_count((double)r->calls, calls, sizeof(calls));
		/* Its calls' failing share: which caller gets the errors. */
		if (sf->errors_counted && r->calls)
			figure_share((double)r->errors / (double)r->calls,
				     sf->timed_calls < sf->v.calls, err, sizeof(err));
		else if (sf->errors_why[0])
			snprintf(err, sizeof(err), "?");
		figure_duration(sf, r->mean_ns, mean, sizeof(mean));
		figure_duration(sf, r->p50_ns, p50, sizeof(p50));
		figure_duration(sf, r->p99_ns, p99, sizeof(p99));
		draw_textf(y, 0, COLS, DR_NORMAL, "  %-31.31s %7s %5.1f%% %5s %7s %7s %7s", r->name,
			   calls, total ? 100.0 * (double)r->calls / (double)total : 0, err, mean,
			   p50, p99);
	}
	detail_row(pg);
}

/* A call's arguments and results, under it: "id=4242 key=\"k\" -> r0=4253". */
static void detail_call_args(const struct slowest_call *c, struct detail_page *pg)
{
	char values[SLOWEST_VALUES_LEN];
	int y;

	if (!c->vals)
		return;
	if ((y = detail_row(pg)) < 0)
		return;
	slowest_call_values(c, values, sizeof(values));
	draw_textf(y, 0, COLS, DR_DIM, "            %s", values);
}

/* The slowest calls since start: the outlier, which goroutine, from where,
 * and with what arguments once 'a' captures them. */
static void detail_slowest(struct ui *ui, const struct snapshot_func *sf, struct detail_page *pg)
{
	const struct slowest_list *l = &sf->slowest;
	char thr[16];
	int y;

	if ((y = detail_row(pg)) >= 0)
		draw_text(y, 0, COLS, DR_TITLE, true,
			  "  SLOWEST   STARTED          GOROUTINE      TID  CALLER");
	if ((y = detail_row(pg)) >= 0)
		draw_text(y, 2, COLS - 2, DR_DIM, false,
			  sf->args ? "arguments: captured for the calls below (a stops)"
				   : "arguments: not captured (a captures them)");
	if (ui->snap.slow_ns && (y = detail_row(pg)) >= 0) {
		fmt_duration(ui->snap.slow_ns, thr, sizeof(thr));
		draw_textf(y, 2, COLS - 2, sf->v.slow_lost ? DR_WARN : DR_NORMAL,
			   "calls >= %s (--slow): %llu, %llu in the last interval%s", thr,
			   (unsigned long long)sf->v.slow_over,
			   (unsigned long long)sf->v.slow_over_delta,
			   sf->v.slow_lost ? "; some not listed (ring buffer full)" : "");
	}
	if (sf->v.slow_lost && !ui->snap.slow_ns && (y = detail_row(pg)) >= 0)
		draw_textf(y, 2, COLS - 2, DR_WARN, "%llu slow calls not listed: ring buffer full",
			   (unsigned long long)sf->v.slow_lost);
	if (l->n == 0 && (y = detail_row(pg)) >= 0)
		draw_text(y, 2, COLS - 2, DR_DIM, false, "no call has returned yet");
	for (size_t i = 0; i < l->n; i++) {
		const struct slowest_call *c = &l->calls[i];
		char dur[16], when[32], gid[24];
		time_t sec = (time_t)c->time;
		struct tm tm;
		if ((y = detail_row(pg)) >= 0) {
			fmt_duration(c->dur_ns, dur, sizeof(dur));
			localtime_r(&sec, &tm);
			strftime(when, sizeof(when), "%H:%M:%S", &tm);
			snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%03d",
				 (int)((c->time - (double)sec) * 1000));
			if (c->goid)
				snprintf(gid, sizeof(gid), "%llu", (unsigned long long)c->goid);
			else
				snprintf(gid, sizeof(gid), "?");
			draw_textf(y, 0, COLS, i == 0 ? DR_MARK : DR_NORMAL,
				   "  %7s   %-14s %10s %8u  %s", dur, when, gid, c->tid, c->caller);
		}
		detail_call_args(c, pg);
	}
	detail_row(pg);
}

static void detail_disasm_site(struct detail *d, const struct snapshot_site *s, size_t n,
			       struct detail_page *pg)
{
	size_t k = 0;
	int y;

	while (k < d->dis.n && d->dis.insns[k].off < s->offset)
		k++;
	if ((y = detail_row(pg)) >= 0)
		draw_textf(y, 0, COLS, DR_HEADER, "RET #%zu at +0x%x, line %d", n, s->offset, s->line);
	if (k == d->dis.n || d->dis.insns[k].off != s->offset) {
		if ((y = detail_row(pg)) >= 0)
			draw_text(y, 2, COLS - 2, DR_ERROR, false, "not an instruction start?");
		return;
	}
	for (size_t j = k >= DETAIL_BEFORE_RET ? k - DETAIL_BEFORE_RET : 0; j <= k; j++) {
		if ((y = detail_row(pg)) < 0)
			continue;
		bool ret = j == k;
		draw_textf(y, 0, COLS, ret ? DR_MARK : DR_NORMAL, "  %s 0x%llx +0x%-5x %s",
			   ret ? draw_ret_mark() : " ",
			   (unsigned long long)(d->f->entry + d->dis.insns[j].off), d->dis.insns[j].off,
			   d->dis.insns[j].text);
	}
}

static void detail_disasm(struct ui *ui, const struct snapshot_func *sf, struct detail_page *pg)
{
	struct detail *d = ui->detail;
	int y;

	if ((y = detail_row(pg)) >= 0)
		draw_text(y, 0, COLS, DR_TITLE, true, "  Disassembly before each RET");
	if (!d->dis.f && (y = detail_row(pg)) >= 0)
		draw_text(y, 2, COLS - 2, DR_DIM, false, "decoding...");
	if (d->dis.err[0] && (y = detail_row(pg)) >= 0)
		draw_text(y, 2, COLS - 2, DR_WARN, false, d->dis.err);
	for (size_t i = 0; i < sf->nsites && d->dis.f && !d->dis.err[0]; i++)
		detail_disasm_site(d, &sf->sites[i], i + 1, pg);
}

static void detail_draw(struct ui *ui)
{
	struct detail *d = ui->detail;
	const struct snapshot_func *sf = d->f ? detail_row_of(ui, d->f) : NULL;
	struct detail_page pg = {.top = (int)d->scroll.top, .y0 = UI_BODY_TOP,
				 .h = ui_body_height()};
	char p50[16], p99[16];

	detail_sync(ui, d);
	ui_header_target(ui);
	if (!sf) {
		draw_textf(1, 0, COLS, DR_HEADER, "%s", d->f ? d->f->name : "?");
		draw_text(UI_BODY_TOP + 1, 2, COLS - 2, DR_DIM, false,
			  "not in the last sample: traced just now, or no longer traced");
		return;
	}
	figure_duration(sf, sf->v.p50_ns, p50, sizeof(p50));
	figure_duration(sf, sf->v.p99_ns, p99, sizeof(p99));
	draw_textf(1, 0, COLS, DR_HEADER, "%s  p50 %s  p99 %s  (+-%.1f%%)", sf->name, p50, p99,
		   STATS_PERCENTILE_ERROR_PCT);
	/* RET sites first: a few lines that fit even at 24 rows. */
	detail_summary(ui, sf, &pg);
	detail_sites(ui, sf, &pg);
	detail_callers(sf, &pg);
	detail_histogram(d, &pg);
	/* After the histogram: its header and p50/p99 stay on an 80x24 page. */
	detail_split(ui, sf, &pg);
	detail_slowest(ui, sf, &pg);
	detail_disasm(ui, sf, &pg);
	d->lines = pg.v;
}

static int detail_key_scroll(struct ui *ui, int key)
{
	struct detail *d = ui->detail;

	return ui_scroll_key(&d->scroll, key, d->lines, ui_body_height());
}

static int detail_key_untrace(struct ui *ui, int key)
{
	(void)key;
	if (ui->detail->f)
		ui_toggle_trace(ui, (const struct func_info *)ui->detail->f);
	return UI_REDRAW;
}

static int detail_key_args(struct ui *ui, int key)
{
	(void)key;
	if (ui->detail->f)
		worker_post(&ui->w, &(struct worker_job){.kind = JOB_ARGS,
							 .f = (const struct func_info *)ui->detail->f});
	return UI_REDRAW;
}

static const struct ui_key detail_keys[] = {
	{-3, "j/k", NULL, NULL, "scroll"},
	{' ', "Space", "untrace the function", detail_key_untrace, "untrace"},
	{'a', "a", "capture the arguments (and results) of its slowest calls, or stop",
	 detail_key_args, "args"},
	{27, "Esc", "back to the live table", NULL, "back"},
	{'d', NULL, NULL, NULL, "delay"},
	{'p', NULL, NULL, NULL, "pause"},
};

const struct ui_screen detail_screen = {
	.title = "Detail view",
	.keys = detail_keys,
	.nkeys = sizeof(detail_keys) / sizeof(detail_keys[0]),
	.draw = detail_draw,
	.nav = detail_key_scroll,
	.nav_letters = true,
};
