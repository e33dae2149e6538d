/* The live table: the traced functions of the latest snapshot, sortable like
 * htop.  Columns are laid out by priority: at 80 columns the essential ones
 * (ERR%, the failing share, stays before the hits per RET site, and goes
 * after MAX and INFL where even less fits), wider terminals add where the
 * time goes (TIME: the part of the time split with most of it), the age of
 * the oldest call in flight, unmatched returns and dropped calls (CALLS ends
 * in '!' when any were dropped, INFL when calls are overdue); once a
 * baseline is marked ('B'), CHANGE: p50 and p99 against it, '~' where not
 * significant; the function name takes what is left. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../src/figure.h"
#include "../src/func_order.h"
#include "../src/guard.h"
#include "screens.h"

enum live_col { LC_NAME, LC_CALLS, LC_RATE, LC_P50, LC_P99, LC_CHANGE, LC_ERR, LC_MAX, LC_TIME,
		LC_INFL, LC_OLDEST, LC_ORPH, LC_RETS, LC_UNM, LC_DROP, LC_COUNT };

/* Each sortable column sorts by its key of func_order.h, the one order
 * batch mode prints in too (--sort). */
static const struct {
	const char *title;
	int width, prio; /* lower prio: dropped last */
	int key;	 /* enum func_order_key; -1: not sortable */
} live_cols[LC_COUNT] = {
	[LC_NAME] = {"FUNCTION", 20, 0, ORDER_NAME},	[LC_CALLS] = {"CALLS", 6, 1, ORDER_CALLS},
	[LC_RATE] = {"CALLS/S", 7, 1, ORDER_RATE},	[LC_P50] = {"P50", 7, 1, ORDER_P50},
	[LC_P99] = {"P99", 7, 1, ORDER_P99},		[LC_CHANGE] = {"CHANGE", 11, 1, -1},
	[LC_ERR] = {"ERR%", 5, 2, ORDER_ERRORS},
	[LC_MAX] = {"MAX", 7, 2, ORDER_MAX},
	[LC_TIME] = {"TIME", 9, 4, -1},
	[LC_INFL] = {"INFL", 4, 2, ORDER_INFLIGHT},	[LC_OLDEST] = {"OLDEST", 7, 4, ORDER_OLDEST},
	[LC_ORPH] = {"ORPH", 4, 3, ORDER_ORPHANS},	[LC_RETS] = {"RETS", 9, 3, -1},
	[LC_UNM] = {"UNMATCH", 7, 5, ORDER_UNMATCHED},	[LC_DROP] = {"DROP", 4, 5, ORDER_DROPPED},
};

struct live {
	enum live_col sort;
	struct func_order order_by; /* sort's key, the direction, interval */
	size_t order[RETOP_MAX_FUNCS];
	struct ui_list list;
	const struct func_info *sel; /* the cursor follows the function */
	int width[LC_COUNT];	     /* 0: hidden at this terminal width */
};

int live_open(struct ui *ui)
{
	struct live *lv = calloc(1, sizeof(*lv));

	if (!lv)
		return -1;
	ui->live = lv;
	/* --sort, else the default every face shares. */
	lv->order_by = ui->opts ? ui->opts->sort : func_order_default();
	for (int c = 0; c < LC_COUNT; c++)
		if (live_cols[c].key == (int)lv->order_by.key)
			lv->sort = (enum live_col)c;
	return 0;
}

void live_close(struct ui *ui)
{
	free(ui->live);
	ui->live = NULL;
}


/* A baseline was marked (the 'B' key, --baseline, a deploy under -x):
 * some function carries a change. */
static bool live_has_baseline(const struct ui *ui)
{
	for (size_t i = 0; i < ui->nfuncs; i++)
		if (ui->funcs[i].change.against != CHANGE_NONE)
			return true;
	return false;
}

/* Drop the least important columns until the row fits; then the name
 * takes the rest, and RETS some of it when the terminal is wide.  CHANGE
 * only once there is a baseline. */
static void live_layout(struct ui *ui, struct live *lv)
{
	int total = 0;

	for (int c = 0; c < LC_COUNT; c++) {
		lv->width[c] = live_cols[c].width;
		if (c == LC_CHANGE && !live_has_baseline(ui))
			lv->width[c] = 0;
		total += lv->width[c] ? lv->width[c] + (c ? 1 : 0) : 0;
	}
	for (int prio = 5; prio > 0 && total > COLS; prio--)
		for (int c = LC_COUNT - 1; c > 0 && total > COLS; c--)
			if (live_cols[c].prio == prio && lv->width[c]) {
				total -= lv->width[c] + 1;
				lv->width[c] = 0;
			}
	int spare = COLS - total;
	if (spare > 0 && lv->width[LC_RETS] && spare > 24) {
		int extra = (spare - 24) / 2 > 16 ? 16 : (spare - 24) / 2;
		lv->width[LC_RETS] += extra;
		spare -= extra;
	}
	if (spare > 0)
		lv->width[LC_NAME] += spare;
}

static uint64_t live_p50(const struct ui *ui, const struct snapshot_func *f)
{
	return ui->interval_pct ? f->v.p50_interval_ns : f->v.p50_ns;
}

static uint64_t live_p99(const struct ui *ui, const struct snapshot_func *f)
{
	return ui->interval_pct ? f->v.p99_interval_ns : f->v.p99_ns;
}

static bool live_inline_only(const struct snapshot_func *f)
{
	return f->f && f->f->inline_only;
}

static void live_sort(struct ui *ui)
{
	struct live *lv = ui->live;

	lv->order_by.interval = ui->interval_pct;
	func_order_sort(ui->funcs, ui->nfuncs, &lv->order_by, lv->order);
	for (size_t i = 0; i < ui->nfuncs; i++)
		if (ui->fptr[lv->order[i]] == lv->sel)
			lv->list.cur = (long)i;
	ui_list_fix(&lv->list, (long)ui->nfuncs, ui_body_height() - 1);
	lv->sel = ui->nfuncs ? ui->fptr[lv->order[lv->list.cur]] : NULL;
}

/* "301/99": hits per RET site, clipped to width with a trailing '+'. */
static void live_rets(const struct snapshot_func *f, int width, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < f->nsites && n + 1 < len; i++) {
		char c[16];
		fmt_count((double)f->sites[i].hits, c, sizeof(c));
		size_t need = strlen(c) + (i ? 1 : 0);
		if ((int)(n + need) > width || n + need + 1 >= len) {
			if (n > 0 && (int)n < width)
				buf[n++] = '+';
			else if (n > 0)
				buf[n - 1] = '+';
			buf[n] = '\0';
			return;
		}
		n += (size_t)snprintf(buf + n, len - n, "%s%s", i ? "/" : "", c);
	}
}

/* '~': from a sample (--budget): estimated counts (mark set), or the
 * durations of timed calls that are a sample of every call. */
static void live_mark(bool mark, char *buf, size_t len)
{
	size_t n = strlen(buf);

	if (!mark || n + 2 > len || !n)
		return;
	memmove(buf + 1, buf, n + 1);
	buf[0] = '~';
}

static bool live_durations_sampled(const struct snapshot_func *f)
{
	return f->timed_calls < f->v.calls && !f->entry_only;
}

/* "cpu 97%": where most of its time went (timesplit.h), over the last
 * interval or since start as p50/p99; "-" when nothing was split. */
static void live_time(const struct ui *ui, const struct snapshot_func *f, char *buf, size_t len)
{
	const struct timesplit_figures *t = ui->interval_pct ? &f->split.recent : &f->split.total;
	int k = f->split.on && !f->entry_only ? timesplit_dominant(t) : -1;

	if (k < 0)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%s %.0f%%", timesplit_part_short(k), 100 * t->share[k]);
}

/* "+96%/+40%": p50/p99 against the baseline where significant; '~' where
 * not (as benchstat); '?' too few calls for a verdict; blank: no baseline
 * for this function (traced after the mark). */
static void live_change(const struct snapshot_func *f, char *buf, size_t len)
{
	const struct change_result *r = &f->change.r;
	char p50[16], p99[16];

	buf[0] = '\0';
	if (f->change.against == CHANGE_NONE || f->entry_only)
		return;
	if (r->verdict != CHANGE_SIGNIFICANT) {
		snprintf(buf, len, "%s", r->verdict == CHANGE_SAME ? "~" : "?");
		return;
	}
	change_format_ratio(r->p50.ratio, p50, sizeof(p50));
	change_format_ratio(r->p99.ratio, p99, sizeof(p99));
	snprintf(buf, len, "%s/%s", p50, p99);
}

/* A significant slowdown is what the operator looks for first. */
static bool live_change_slower(const struct snapshot_func *f)
{
	const struct change_result *r = &f->change.r;

	return f->change.against != CHANGE_NONE && r->verdict == CHANGE_SIGNIFICANT &&
	       ((r->p50.moved && r->p50.ratio > 1) || (r->p99.moved && r->p99.ratio > 1));
}

static void live_cell(const struct ui *ui, const struct snapshot_func *f, enum live_col c,
		      int width, char *buf, size_t len)
{
	switch (c) {
	case LC_NAME: snprintf(buf, len, "%s", f->name); break;
	case LC_CALLS:
		if (live_inline_only(f)) {
			/* 'i': its inlined calls, the only ones it has. */
			buf[0] = 'i';
			fmt_count((double)f->inlined_calls, buf + 1, len - 1);
			live_mark(!f->inlined_calls_exact, buf, len);
			break;
		}
		/* '~' estimated, '\u2265' a lower bound, '!' calls dropped. */
		figure_calls(f, draw_utf8(), buf, len);
		break;
	case LC_RATE:
		if (live_inline_only(f)) {
			buf[0] = 'i';
			fmt_count(f->inlined_calls_per_s, buf + 1, len - 1);
			break;
		}
		figure_rate(f, draw_utf8(), buf, len);
		break;
	/* '<' under the resolution, '~' of a sample of the calls. */
	case LC_P50: figure_duration(f, f->entry_only ? 0 : live_p50(ui, f), buf, len); break;
	case LC_P99: figure_duration(f, f->entry_only ? 0 : live_p99(ui, f), buf, len); break;
	case LC_CHANGE: live_change(f, buf, len); break;
	/* The failing share, over the same span as P50 and P99. */
	case LC_ERR: figure_error_share(f, ui->interval_pct, buf, len); break;
	case LC_MAX: figure_duration(f, f->entry_only ? 0 : f->v.max_ns, buf, len); break;
	case LC_TIME: live_time(ui, f, buf, len); break;
	case LC_INFL:
		fmt_count((double)f->in_flight, buf, len);
		/* '!': some are overdue (past --orphan-timeout), still awaited. */
		if (f->overdue && strlen(buf) + 1 < len)
			strcat(buf, "!");
		break;
	case LC_OLDEST: fmt_duration(f->oldest_in_flight_ns, buf, len); break;
	case LC_ORPH: fmt_count((double)f->orphans, buf, len); break;
	case LC_UNM: fmt_count((double)f->v.unmatched, buf, len); break;
	case LC_DROP: fmt_count((double)f->v.dropped, buf, len); break;
	case LC_RETS: live_rets(f, width, buf, len); break;
	default: buf[0] = '\0';
	}
}

/* A row that is not "tracing" shows its status where the numbers that do
 * not apply would be. */
static void live_draw_row(struct ui *ui, const struct snapshot_func *f, int y, bool sel)
{
	struct live *lv = ui->live;
	enum draw_role role = sel ? DR_SELECTED : DR_NORMAL;
	/* After the target exited every function is detached, and its final
	 * counters are what the operator came for. */
	bool tracing = f->state == FUNC_TRACING || f->state == FUNC_TIMING ||
		       f->state == FUNC_SAMPLED ||
		       (ui->exited && f->state == FUNC_DETACHED);
	int x = 0;

	draw_fill(y, role);
	for (int c = 0; c < LC_COUNT; c++) {
		char buf[256];
		int w = lv->width[c];
		if (!w)
			continue;
		if (!tracing && (c > LC_RATE || (!f->entry_only && c > LC_NAME))) {
			/* Only a failure is an error: detached and entry-only
			 * functions did what they could. */
			enum draw_role r = sel ? role : f->state == FUNC_ERROR ? DR_ERROR : DR_WARN;
			char status[SNAPSHOT_STATUS_LEN + 16];
			snapshot_func_status(f, status, sizeof(status));
			draw_text(y, x, COLS - x, r, false, status);
			return;
		}
		live_cell(ui, f, (enum live_col)c, w, buf, sizeof(buf));
		enum draw_role r = role;
		if (!sel && (c == LC_INFL || c == LC_OLDEST) &&
		    (f->overdue || f->oldest_in_flight_ns >= 1000000000ull))
			r = DR_STUCK; /* a call stuck for a second is worth a colour */
		if (!sel && c == LC_CHANGE && live_change_slower(f))
			r = DR_WARN;
		if (c == LC_NAME)
			draw_name(y, x, w, r, buf);
		else if (c == LC_RETS)
			draw_text(y, x, w, r, false, buf);
		else
			draw_rtext(y, x, w, r, buf);
		x += w + 1;
	}
}

static void live_draw_title(struct ui *ui, int y)
{
	struct live *lv = ui->live;
	int x = 0;

	draw_fill(y, DR_TITLE);
	for (int c = 0; c < LC_COUNT; c++) {
		int w = lv->width[c];
		char t[32];
		if (!w)
			continue;
		bool sorted = (enum live_col)c == lv->sort;
		enum draw_role r = sorted ? DR_SORT : DR_TITLE;
		snprintf(t, sizeof(t), "%s", live_cols[c].title);
		if (c == LC_NAME || c == LC_RETS) {
			draw_text(y, x, w, r, false, t);
			if (sorted)
				draw_text(y, x + (int)strlen(t), 1, r, false,
					  draw_sort_mark(!lv->order_by.ascending));
		} else {
			draw_rtext(y, x, w, r, t);
			if (sorted && w > (int)strlen(t))
				draw_text(y, x + w - (int)strlen(t) - 1, 1, r, false,
					  draw_sort_mark(!lv->order_by.ascending));
		}
		x += w + 1;
	}
}

static void live_draw_header(struct ui *ui)
{
	double rate = 0;
	char r[16], line[300], maps[32], user[32];

	size_t estimated = 0, timing = 0;
	for (size_t i = 0; i < ui->nfuncs; i++) {
		rate += ui->funcs[i].v.calls_per_s;
		estimated += ui->funcs[i].estimated;
		timing += !ui->funcs[i].estimated && live_durations_sampled(&ui->funcs[i]);
	}
	fmt_count(rate, r, sizeof(r));
	guard_format_bytes(ui->have_snap ? ui->snap.bpf_map_bytes : 0, maps, sizeof(maps));
	guard_format_bytes(ui->have_snap ? ui->snap.user_bytes : 0, user, sizeof(user));
	ui_header_target(ui);
	snprintf(line, sizeof(line),
		 "%zu traced, %s calls/s, cpu %.1f%%, p50/p99 %s +-%.1f%%, every %gs%s, mem bpf %s + %s",
		 ui->nfuncs, r, ui->have_snap ? ui->snap.self_cpu_pct : 0.0,
		 ui->interval_pct ? "last interval" : "since start", STATS_PERCENTILE_ERROR_PCT,
		 ui->delay, ui->have_snap && ui->snap.target_exited ? ", TARGET EXITED" : "", maps,
		 user);
	if (ui->have_snap && ui->snap.resolution_ns[RETOP_OWN_STEPPED] > 0) {
		/* How far durations may be off once retop's traps are out: by
		 * how the entry runs (at a jump / single-stepped). */
		char emu[16], step[16];
		size_t n = strlen(line);
		fmt_duration((uint64_t)(ui->snap.resolution_ns[RETOP_OWN_EMULATED] + 0.5), emu,
			     sizeof(emu));
		fmt_duration((uint64_t)(ui->snap.resolution_ns[RETOP_OWN_STEPPED] + 0.5), step,
			     sizeof(step));
		snprintf(line + n, sizeof(line) - n, ", resolution %s/%s", emu, step);
	}
	if (ui->have_snap && ui->nfuncs) {
		/* What retop's probes cost the target: their traps' CPU. */
		char c[16];
		size_t n = strlen(line);
		fmt_duration((uint64_t)(ui->snap.cost_per_s + 0.5), c, sizeof(c));
		snprintf(line + n, sizeof(line) - n, ", probes %s/s (%.1f%% of its cpu)",
			 ui->snap.cost_per_s >= 1 ? c : "0ns", 100 * ui->snap.cost_share);
	}
	if (ui->have_snap && ui->snap.unseen_after_exec_s > 0) {
		size_t n = strlen(line);
		snprintf(line + n, sizeof(line) - n, ", calls unseen %.3fs (exec)",
			 ui->snap.unseen_after_exec_s);
	}
	if (live_has_baseline(ui)) {
		size_t n = strlen(line);
		snprintf(line + n, sizeof(line) - n,
			 ", CHANGE: p50/p99 vs baseline, ~ not significant, ? too few calls");
	}
	if (estimated || timing) {
		/* --budget: say which figures come from a sample. */
		size_t n = strlen(line);
		snprintf(line + n, sizeof(line) - n, ", --budget: ~ = from a sample (%zu estimated, "
			 "%zu timed in part)", estimated, timing);
	}
	draw_text(1, 0, COLS, DR_HEADER, true, line);
}

static void live_draw(struct ui *ui)
{
	struct live *lv = ui->live;
	int h = ui_body_height() - 1;

	live_layout(ui, lv);
	live_sort(ui);
	live_draw_header(ui);
	live_draw_title(ui, UI_BODY_TOP);
	for (int r = 0; r < h && lv->list.top + r < (long)ui->nfuncs; r++) {
		long i = lv->list.top + r;
		live_draw_row(ui, &ui->funcs[lv->order[i]], UI_BODY_TOP + 1 + r, i == lv->list.cur);
	}
	if (ui->nfuncs == 0)
		draw_text(UI_BODY_TOP + 2, 2, COLS - 2, DR_DIM, false,
			  ui->have_snap || ui->w.npatterns == 0
				  ? "nothing traced yet: Tab goes to the browser, Space there traces"
				  : "waiting for the first sample...");
}

static int live_key_nav(struct ui *ui, int key)
{
	struct live *lv = ui->live;
	int flags = ui_list_key(&lv->list, key, (long)ui->nfuncs, ui_body_height() - 1);

	if (ui->nfuncs)
		lv->sel = ui->fptr[lv->order[lv->list.cur]];
	return flags;
}

static int live_key_sort(struct ui *ui, int key)
{
	struct live *lv = ui->live;
	bool usable[LC_COUNT];

	if (key == 'I') {
		lv->order_by.ascending = !lv->order_by.ascending;
	} else {
		/* Only to columns that are on screen and sortable. */
		for (int c = 0; c < LC_COUNT; c++)
			usable[c] = live_cols[c].key >= 0 && lv->width[c];
		lv->sort = (enum live_col)ui_sort_next((int)lv->sort, key, LC_COUNT, usable);
		lv->order_by.key = (enum func_order_key)live_cols[lv->sort].key;
		lv->order_by.ascending = func_order_ascending(lv->order_by.key);
	}
	ui_status(ui, DR_INFO, "sorted by %s, %s", live_cols[lv->sort].title,
		  lv->order_by.ascending ? "ascending" : "descending");
	return UI_REDRAW;
}

static int live_key_enter(struct ui *ui, int key)
{
	struct live *lv = ui->live;
	(void)key;

	if (!ui->nfuncs || !lv->sel)
		return UI_HANDLED;
	detail_show(ui, (const struct func_info *)lv->sel);
	ui_push(ui, SCR_DETAIL);
	return UI_REDRAW;
}

static int live_key_space(struct ui *ui, int key)
{
	struct live *lv = ui->live;
	(void)key;

	if (lv->sel)
		ui_toggle_trace(ui, (const struct func_info *)lv->sel);
	return UI_REDRAW;
}

static int live_key_reset(struct ui *ui, int key)
{
	(void)key;
	worker_post(&ui->w, &(struct worker_job){.kind = JOB_RESET});
	ui_status(ui, DR_INFO, "counters reset");
	return UI_REDRAW;
}

static int live_key_baseline(struct ui *ui, int key)
{
	(void)key;
	if (!ui->nfuncs) {
		ui_status(ui, DR_INFO, "nothing traced: no baseline to mark");
		return UI_REDRAW;
	}
	worker_post(&ui->w, &(struct worker_job){.kind = JOB_BASELINE});
	ui_status(ui, DR_INFO, "baseline marked: CHANGE compares the calls from now on with "
			       "those before (B again: a new baseline)");
	return UI_REDRAW;
}

static int live_key_interval(struct ui *ui, int key)
{
	(void)key;
	ui->interval_pct = !ui->interval_pct;
	ui_status(ui, DR_INFO, "p50/p99 %s", ui->interval_pct ? "of the last interval" : "since start");
	return UI_REDRAW;
}

static int live_key_browser(struct ui *ui, int key)
{
	(void)key;
	if (ui->depth > 1 && ui->stack[ui->depth - 2] == SCR_BROWSER)
		ui_pop(ui);
	else
		ui_replace(ui, SCR_BROWSER);
	return UI_REDRAW;
}

static const struct ui_key live_keys[] = {
	{'\r', "Enter", "detail view of the function", live_key_enter, "detail"},
	{'\n', NULL, NULL, live_key_enter, NULL},
	{KEY_ENTER, NULL, NULL, live_key_enter, NULL},
	{KEY_RIGHT, NULL, NULL, live_key_enter, NULL},
	{' ', "Space", "untrace the function", live_key_space, "untrace"},
	{'\t', "Tab", "back to the function browser", live_key_browser, "browser"},
	{'s', "s", "next sort column", live_key_sort, "sort"},
	{'>', "< >", "previous, next sort column", live_key_sort, NULL},
	{'<', NULL, NULL, live_key_sort, NULL},
	{'d', NULL, NULL, NULL, "delay"},
	{'p', NULL, NULL, NULL, "pause"},
	{'I', "I", "invert the sort order", live_key_sort, "invert"},
	{'i', "i", "p50/p99 of the last interval or since start", live_key_interval, "interval"},
	{'r', "r", "reset the counters", live_key_reset, "reset"},
	{'B', "B", "mark now as the baseline: CHANGE compares later calls with it",
	 live_key_baseline, "baseline"},
};

const struct ui_screen live_screen = {
	.title = "Live table",
	.keys = live_keys,
	.nkeys = sizeof(live_keys) / sizeof(live_keys[0]),
	.draw = live_draw,
	.nav = live_key_nav,
	.nav_letters = true,
};
