/* The function browser: every function of the binary (the Go compiler has
 * 14,000), flat in name order or folded by package, narrowed by an
 * incremental search.  Everything is allocated once when the session opens:
 * a keystroke only rewrites the row array, and RET sites are resolved by the
 * worker for the rows on screen. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pkgpath.h"
#include "screens.h"

struct browser_pkg {
	char *name;	 /* for display: "gopkg.in/yaml.v3" */
	const char *key; /* a member's name: its first keylen bytes are the path */
	uint16_t keylen;
	uint32_t first, count; /* range of by_pkg */
	uint32_t matches;      /* under the current filter */
	bool open;
};

struct browser {
	const struct func_index *idx;
	size_t n;
	uint16_t *pkglen;   /* length of each function's package prefix */
	uint32_t *by_pkg;   /* function indices by package, then name */
	struct browser_pkg *pkgs;
	size_t npkgs;
	int32_t *rows;      /* >= 0: function index; < 0: -(package + 1) */
	size_t nrows, cap;
	bool folded, searching;
	struct ui_input search;
	char applied[128];  /* the filter the rows reflect */
	int namew;	    /* the longest name among the rows: the NAME column's want */
	struct ui_list list;
	long pkg_pending;	  /* t: the package being decoded first; -1: none */
	struct worker_list *held; /* t: what a yes to the question acts on */
};

/* The package path of a function (pkgpath.h): "net/http.(*conn).serve"
 * folds under net/http with every method and closure of the package. */
static uint16_t browser_pkg_len(const char *name)
{
	size_t len = pkgpath_len(name);
	return len > 65535 ? 65535 : (uint16_t)len;
}

static struct browser *browser_sort_ctx; /* qsort has no context argument */

static int browser_cmp_pkg(const void *a, const void *b)
{
	const struct browser *br = browser_sort_ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const char *nx = br->idx->funcs[x].name, *ny = br->idx->funcs[y].name;
	size_t lx = br->pkglen[x], ly = br->pkglen[y];
	int c = strncmp(nx, ny, lx < ly ? lx : ly);

	if (c == 0 && lx != ly)
		return lx < ly ? -1 : 1;
	return c ? c : strcmp(nx, ny);
}

static int browser_build_pkgs(struct browser *br)
{
	for (size_t i = 0; i < br->n; i++) {
		br->pkglen[i] = browser_pkg_len(br->idx->funcs[i].name);
		br->by_pkg[i] = (uint32_t)i;
	}
	browser_sort_ctx = br;
	qsort(br->by_pkg, br->n, sizeof(*br->by_pkg), browser_cmp_pkg);
	for (size_t i = 0; i < br->n; i++) {
		uint32_t f = br->by_pkg[i];
		struct browser_pkg *last = br->npkgs ? &br->pkgs[br->npkgs - 1] : NULL;
		const char *name = br->idx->funcs[f].name;
		if (last && last->keylen == br->pkglen[f] &&
		    !strncmp(last->key, name, br->pkglen[f])) {
			last->count++;
			continue;
		}
		struct browser_pkg *p = &br->pkgs[br->npkgs++];
		p->name = malloc((size_t)br->pkglen[f] + 1);
		if (!p->name)
			return -1;
		pkgpath_display(name, br->pkglen[f], p->name, (size_t)br->pkglen[f] + 1);
		p->key = name;
		p->keylen = br->pkglen[f];
		p->first = (uint32_t)i;
		p->count = 1;
	}
	return 0;
}

/* Over all rows, not the page: columns must not move while scrolling. */
static void browser_measure(struct browser *br)
{
	br->namew = 0;
	for (size_t r = 0; r < br->nrows; r++) {
		int len = br->rows[r] >= 0 ? (int)strlen(br->idx->funcs[br->rows[r]].name) : 0;
		br->namew = len > br->namew ? len : br->namew;
	}
}

static bool browser_match(const struct browser *br, uint32_t f)
{
	return !br->applied[0] || strcasestr(br->idx->funcs[f].name, br->applied);
}

/* Rebuild the rows from scratch: O(n), no allocation. */
static void browser_rebuild(struct browser *br)
{
	int32_t keep = br->nrows ? br->rows[br->list.cur] : INT32_MIN;

	br->nrows = 0;
	if (!br->folded) {
		struct func_info *const *by_name = funcs_by_name(br->idx);
		for (size_t i = 0; by_name && i < br->n; i++) {
			uint32_t f = (uint32_t)(by_name[i] - br->idx->funcs);
			if (browser_match(br, f))
				br->rows[br->nrows++] = (int32_t)f;
		}
	} else {
		for (size_t p = 0; p < br->npkgs; p++) {
			struct browser_pkg *pk = &br->pkgs[p];
			size_t at = br->nrows;
			pk->matches = 0;
			br->rows[br->nrows++] = -(int32_t)p - 1;
			for (uint32_t k = pk->first; k < pk->first + pk->count; k++) {
				if (!browser_match(br, br->by_pkg[k]))
					continue;
				pk->matches++;
				if (pk->open || br->applied[0])
					br->rows[br->nrows++] = (int32_t)br->by_pkg[k];
			}
			if (pk->matches == 0)
				br->nrows = at; /* a package with no match is hidden */
		}
	}
	br->list.cur = 0;
	for (size_t r = 0; r < br->nrows; r++)
		if (br->rows[r] == keep)
			br->list.cur = (long)r;
	ui_list_fix(&br->list, (long)br->nrows, ui_body_height() - 1);
	browser_measure(br);
}

/* The filter grew by a character: only rows that matched can match. */
static void browser_narrow(struct browser *br)
{
	size_t out = 0;

	for (size_t r = 0; r < br->nrows; r++)
		if (br->rows[r] >= 0 && browser_match(br, (uint32_t)br->rows[r]))
			br->rows[out++] = br->rows[r];
	br->nrows = out;
	br->list.cur = 0;
	br->list.top = 0;
	browser_measure(br);
}

static void browser_apply(struct browser *br, const char *filter)
{
	bool grows = !br->folded && br->applied[0] && strlen(filter) > strlen(br->applied) &&
		     !strncmp(filter, br->applied, strlen(br->applied));

	snprintf(br->applied, sizeof(br->applied), "%s", filter);
	if (grows)
		browser_narrow(br);
	else
		browser_rebuild(br);
}

void browser_close(struct ui *ui)
{
	struct browser *br = ui->browser;

	if (!br)
		return;
	for (size_t p = 0; p < br->npkgs; p++)
		free(br->pkgs[p].name);
	free(br->pkgs);
	free(br->pkglen);
	free(br->by_pkg);
	free(br->rows);
	free(br->held);
	free(br);
	ui->browser = NULL;
}

int browser_open(struct ui *ui)
{
	struct browser *br = calloc(1, sizeof(*br));

	browser_close(ui);
	if (!br || !ui->idx) {
		free(br);
		return -1;
	}
	ui->browser = br;
	br->pkg_pending = -1;
	br->idx = ui->idx;
	br->n = br->idx->count;
	br->cap = 2 * br->n + 1; /* every package row and every function */
	br->pkglen = calloc(br->n + 1, sizeof(*br->pkglen));
	br->by_pkg = calloc(br->n + 1, sizeof(*br->by_pkg));
	br->pkgs = calloc(br->n + 1, sizeof(*br->pkgs));
	br->rows = calloc(br->cap, sizeof(*br->rows));
	if (!br->pkglen || !br->by_pkg || !br->pkgs || !br->rows || browser_build_pkgs(br) != 0) {
		browser_close(ui);
		return -1;
	}
	browser_rebuild(br);
	return 0;
}

static const char *browser_mark(uint8_t st)
{
	switch (st) {
	case TS_QUEUED: return "+";
	case TS_TRACING: case TS_ENTRY_ONLY: return "*";
	case TS_ERROR: return "!";
	default: return " ";
	}
}

/* Widths, 0 for a column left out.  The name is what an operator reads:
 * it gets what the longest name on screen needs, and the other columns
 * give way first: SOURCE, then the TRACE reason, then SIZE and RETS. */
struct browser_cols {
	int name, size, rets, trace, source;
};

#define BROWSER_NAME_MIN 20
#define BROWSER_TRACE_MIN 10 /* "entry-only" */

static struct browser_cols browser_layout(const struct browser *br, int h)
{
	struct browser_cols c = {.size = 6, .rets = 4, .trace = BROWSER_TRACE_MIN};
	int avail = COLS - 2, want = BROWSER_NAME_MIN;

	(void)h;
	if (br->namew + (br->folded ? 2 : 0) > want)
		want = br->namew + (br->folded ? 2 : 0);
	/* Separators: after the name, SIZE and RETS; SOURCE adds its own. */
	int fixed = 1 + c.size + 1 + c.rets + 1 + c.trace;
	if (avail - fixed < BROWSER_NAME_MIN) {
		fixed -= c.size + 1;
		c.size = 0;
	}
	if (avail - fixed < BROWSER_NAME_MIN) {
		fixed -= c.rets + 1;
		c.rets = 0;
	}
	c.name = avail - fixed < want ? avail - fixed : want;
	int spare = avail - fixed - c.name;
	int more = spare < 30 ? spare : 30; /* the reason why not "full" */
	c.trace += more;
	spare -= more;
	if (spare >= 13)
		c.source = spare - 1;
	else
		c.name += spare;
	return c;
}

static void browser_draw_func(struct ui *ui, uint32_t fi, int y, bool sel,
			      const struct browser_cols *c)
{
	struct browser *br = ui->browser;
	const struct func_info *f = &br->idx->funcs[fi];
	enum draw_role role = sel ? DR_SELECTED : DR_NORMAL;
	char size[16], rets[16], trace[160], src[300];

	worker_lock(&ui->w);
	struct worker_meta m = ui->w.meta ? ui->w.meta[fi] : (struct worker_meta){0};
	uint8_t st = ui->w.tstate ? ui->w.tstate[fi] : TS_NONE;
	worker_unlock(&ui->w);
	snprintf(size, sizeof(size), "%llu", (unsigned long long)m.size);
	if (m.resolved == RES_NO) {
		snprintf(rets, sizeof(rets), "...");
		snprintf(trace, sizeof(trace), "...");
	} else {
		snprintf(rets, sizeof(rets), "%u", m.nrets);
		snprintf(trace, sizeof(trace), "%s%s%s", traceable_name((enum traceable)m.traceable),
			 m.reason && m.reason[0] ? ": " : "", m.reason ? m.reason : "");
	}
	snprintf(src, sizeof(src), "%s:%d %s", f->file ? fmt_basename(f->file) : "?", f->line,
		 func_source_name(f->source));
	draw_fill(y, role);
	draw_text(y, 0, 1, sel ? role : DR_MARK, false, browser_mark(st));
	int x = 2 + (br->folded ? 2 : 0);
	draw_name(y, x, c->name - (x - 2), role, f->name);
	x = 2 + c->name + 1;
	if (c->size) {
		draw_rtext(y, x, c->size, role, size);
		x += c->size + 1;
	}
	if (c->rets) {
		draw_rtext(y, x, c->rets, role, rets);
		x += c->rets + 1;
	}
	draw_text(y, x, c->trace, m.traceable == TRACEABLE_FULL || sel ? role : DR_WARN, false,
		  trace);
	if (c->source)
		draw_text(y, x + c->trace + 1, c->source, sel ? role : DR_DIM, false, src);
}

static void browser_draw_pkg(struct ui *ui, uint32_t p, int y, bool sel)
{
	const struct browser_pkg *pk = &ui->browser->pkgs[p];
	const char *arrow = draw_utf8() ? (pk->open ? "\u25be" : "\u25b8") : (pk->open ? "-" : "+");

	draw_fill(y, sel ? DR_SELECTED : DR_NORMAL);
	draw_textf(y, 2, COLS - 2, sel ? DR_SELECTED : DR_HEADER, "%s %s (%u function%s)", arrow,
		   pk->name[0] ? pk->name : "(no package)", pk->matches, pk->matches == 1 ? "" : "s");
}

/* Ask the worker to resolve the RET sites of the rows on screen. */
static void browser_want_visible(struct ui *ui, int h)
{
	struct browser *br = ui->browser;
	uint32_t want[WORKER_WANT];
	size_t n = 0;

	worker_lock(&ui->w);
	for (int r = 0; r < h && br->list.top + r < (long)br->nrows && n < WORKER_WANT; r++) {
		int32_t row = br->rows[br->list.top + r];
		if (row >= 0 && ui->w.meta && ui->w.meta[row].resolved == RES_NO)
			want[n++] = (uint32_t)row;
	}
	if (n)
		worker_want_locked(&ui->w, want, n);
	worker_unlock(&ui->w);
}

/* ---- t: every traceable function of a package at once ---- */

/* The package's functions the rows show (those matching the filter), by
 * what the worker knows of them. */
struct browser_pkg_scan {
	struct worker_list *todo;   /* traceable as far as known, not traced */
	struct worker_list *traced; /* traced (or attaching) */
	size_t unknown;		    /* of todo, not decoded yet */
	size_t untraceable;	    /* decoded: no; or failed to attach (!) */
	size_t slots;		    /* --max-functions less those traced or queued */
};

static void browser_pkg_label(const struct browser *br, uint32_t p, char *buf, size_t len)
{
	const char *name = br->pkgs[p].name[0] ? br->pkgs[p].name : "(no package)";

	if (br->applied[0])
		snprintf(buf, len, "%.80s matching '%.30s'", name, br->applied);
	else
		snprintf(buf, len, "%s", name);
}

/* The functions that can still be traced (worker mutex held): attached
 * ones hold a slot, and so will those waiting to attach. */
static size_t browser_slots_locked(struct ui *ui)
{
	const struct worker *w = &ui->w;
	size_t busy = w->ntraced;

	for (size_t i = 0; w->tstate && i < ui->browser->n; i++)
		busy += w->tstate[i] == TS_QUEUED;
	return busy < w->sopts.max_functions ? w->sopts.max_functions - busy : 0;
}

static int browser_pkg_scan(struct ui *ui, uint32_t p, struct browser_pkg_scan *sc)
{
	struct browser *br = ui->browser;
	const struct browser_pkg *pk = &br->pkgs[p];
	struct worker *w = &ui->w;
	char label[128];

	browser_pkg_label(br, p, label, sizeof(label));
	memset(sc, 0, sizeof(*sc));
	sc->todo = worker_list_new(pk->count, label);
	sc->traced = worker_list_new(pk->count, label);
	if (!sc->todo || !sc->traced) {
		free(sc->todo);
		free(sc->traced);
		return -1;
	}
	worker_lock(w);
	for (uint32_t k = pk->first; w->meta && k < pk->first + pk->count; k++) {
		uint32_t fi = br->by_pkg[k];
		const struct worker_meta *m = &w->meta[fi];
		if (!browser_match(br, fi))
			continue;
		if (w->tstate[fi] == TS_TRACING || w->tstate[fi] == TS_ENTRY_ONLY ||
		    w->tstate[fi] == TS_QUEUED)
			sc->traced->f[sc->traced->n++] = &br->idx->funcs[fi];
		else if (w->tstate[fi] == TS_ERROR ||
			 (m->resolved != RES_NO && m->traceable == TRACEABLE_NO))
			sc->untraceable++;
		else {
			sc->unknown += m->resolved == RES_NO;
			sc->todo->f[sc->todo->n++] = &br->idx->funcs[fi];
		}
	}
	sc->slots = browser_slots_locked(ui);
	worker_unlock(w);
	return 0;
}

static void browser_pkg_hold(struct browser *br, struct worker_list *l)
{
	free(br->held);
	br->held = l;
}

static int browser_pkg_trace_held(struct ui *ui)
{
	struct browser *br = ui->browser;
	struct worker_list *l = br->held;

	br->held = NULL;
	if (!l)
		return UI_REDRAW;
	/* Slots may have gone while the question was asked. */
	worker_lock(&ui->w);
	size_t slots = browser_slots_locked(ui);
	worker_unlock(&ui->w);
	if (l->n > slots)
		l->n = slots;
	if (l->n == 0 ||
	    !worker_post(&ui->w, &(struct worker_job){.kind = JOB_TRACE_LIST, .list = l})) {
		ui_status(ui, DR_ERROR, "%s: no slot free any more: nothing traced", l->label);
		free(l);
	}
	return UI_REDRAW;
}

static int browser_pkg_untrace_held(struct ui *ui)
{
	struct browser *br = ui->browser;
	struct worker_list *l = br->held;
	size_t posted = 0;

	br->held = NULL;
	for (size_t i = 0; l && i < l->n; i++)
		posted +=
		    worker_post(&ui->w, &(struct worker_job){.kind = JOB_UNTRACE, .f = l->f[i]});
	if (l && posted < l->n)
		ui_status(ui, DR_ERROR, "too many requests queued: %zu of %zu untraced", posted,
			  l->n);
	free(l);
	return UI_REDRAW;
}

/* Everything the rows show of package p is decoded: trace what is left,
 * asking first when it would pass --max-functions; when all of it is
 * traced already, offer to untrace it. */
static void browser_pkg_decide(struct ui *ui, struct browser_pkg_scan *sc)
{
	struct browser *br = ui->browser;
	const char *label = sc->todo->label;
	size_t max = ui->w.sopts.max_functions, n = sc->todo->n;

	if (n == 0 && sc->traced->n) {
		browser_pkg_hold(br, sc->traced);
		ui_confirm(ui, browser_pkg_untrace_held,
			   "Untrace the package's %zu traced functions?", sc->traced->n);
		free(sc->todo);
		return;
	}
	free(sc->traced);
	if (n == 0) {
		ui_status(ui, DR_INFO, "%s: nothing to trace: %zu functions not traceable", label,
			  sc->untraceable);
		free(sc->todo);
	} else if (n <= sc->slots) {
		if (!worker_post(&ui->w,
				 &(struct worker_job){.kind = JOB_TRACE_LIST, .list = sc->todo})) {
			ui_status(ui, DR_ERROR, "too many requests queued: wait a moment");
			free(sc->todo);
		}
	} else if (sc->slots == 0) {
		ui_status(ui, DR_ERROR,
			  "%s: %zu functions to trace, no slot free of --max-functions %zu", label,
			  n, max);
		free(sc->todo);
	} else {
		/* Past the limit: say so, and trace only what the operator
		 * agrees to, the first ones by name.  The package is the row
		 * under the cursor: a long path would push [y/N] off. */
		browser_pkg_hold(br, sc->todo);
		ui_confirm(
		    ui, browser_pkg_trace_held,
		    "%zu functions, %zu slots left (--max-functions %zu): trace the first %zu?", n,
		    sc->slots, max, sc->slots);
		ui->confirm_no = "cancelled: nothing traced";
	}
}

/* t on package p: decode its functions first when some are not (the
 * worker does, off the draw loop), then decide.  Called again by
 * browser_draw while p is pending (again set), until all are decoded;
 * asks the worker again if it is idle and some are not (the filter
 * changed meanwhile). */
static void browser_pkg_go(struct ui *ui, uint32_t p, bool again)
{
	struct browser *br = ui->browser;
	struct browser_pkg_scan sc;

	br->pkg_pending = -1;
	if (browser_pkg_scan(ui, p, &sc) != 0) {
		ui_status(ui, DR_ERROR, "out of memory");
		return;
	}
	if (!sc.unknown) {
		browser_pkg_decide(ui, &sc);
		return;
	}
	free(sc.traced);
	worker_lock(&ui->w);
	bool busy = worker_busy_locked(&ui->w);
	worker_unlock(&ui->w);
	if (again && busy) {
		br->pkg_pending = (long)p; /* the worker is at it */
		free(sc.todo);
	} else if (worker_post(&ui->w,
			       &(struct worker_job){.kind = JOB_RESOLVE, .list = sc.todo})) {
		br->pkg_pending = (long)p;
	} else {
		ui_status(ui, DR_ERROR, "too many requests queued: wait a moment");
		free(sc.todo);
	}
}

static void browser_draw_header(struct ui *ui)
{
	struct browser *br = ui->browser;
	char line[400];
	int len = snprintf(line, sizeof(line), "Functions: %zu", br->n);

	if (br->applied[0] || br->searching)
		len += snprintf(line + len, sizeof(line) - (size_t)len, ", %zu rows match '%s'",
				br->nrows, br->searching ? br->search.buf : br->applied);
	if (br->folded)
		len += snprintf(line + len, sizeof(line) - (size_t)len, ", %zu packages", br->npkgs);
	snprintf(line + len, sizeof(line) - (size_t)len, ", %zu traced", ui->nfuncs);
	ui_header_target(ui);
	draw_text(1, 0, COLS, DR_HEADER, true, line);
}

static void browser_draw(struct ui *ui)
{
	struct browser *br = ui->browser;
	int h = ui_body_height() - 1, y = UI_BODY_TOP;
	char title[512];

	if (!br)
		return;
	ui_list_fix(&br->list, (long)br->nrows, h);
	struct browser_cols c = browser_layout(br, h);
	browser_draw_header(ui);
	snprintf(title, sizeof(title), "  %-*s %*s%s%*s%s%-*s %s", c.name, "NAME", c.size,
		 c.size ? "SIZE" : "", c.size ? " " : "", c.rets, c.rets ? "RETS" : "",
		 c.rets ? " " : "", c.trace, "TRACE", c.source ? "SOURCE" : "");
	draw_text(y, 0, COLS, DR_TITLE, true, title);
	for (int r = 0; r < h && br->list.top + r < (long)br->nrows; r++) {
		long i = br->list.top + r;
		int32_t row = br->rows[i];
		if (row >= 0)
			browser_draw_func(ui, (uint32_t)row, y + 1 + r, i == br->list.cur, &c);
		else
			browser_draw_pkg(ui, (uint32_t)(-row - 1), y + 1 + r, i == br->list.cur);
	}
	if (br->nrows == 0)
		draw_text(y + 2, 2, COLS - 2, DR_DIM, false, "no function matches the search");
	browser_want_visible(ui, h);
	/* Not over a question already asked: its y must do what it said. */
	if (br->pkg_pending >= 0 && !ui->confirm_fn)
		browser_pkg_go(ui, (uint32_t)br->pkg_pending, true);
	if (br->searching) {
		ui->editing = true;
		snprintf(ui->edit, sizeof(ui->edit), "/%s", br->search.buf);
	}
}

static int32_t browser_cur_row(const struct browser *br)
{
	return br->nrows ? br->rows[br->list.cur] : -(int32_t)(br->npkgs + 1);
}

static int browser_key_nav(struct ui *ui, int key)
{
	struct browser *br = ui->browser;
	return ui_list_key(&br->list, key, (long)br->nrows, ui_body_height() - 1);
}

static int browser_key_space(struct ui *ui, int key)
{
	struct browser *br = ui->browser;
	int32_t row = browser_cur_row(br);
	(void)key;

	if (row >= 0)
		ui_toggle_trace(ui, &br->idx->funcs[row]);
	else if (br->nrows)
		ui_status(ui, DR_INFO,
			  "Enter unfolds a package, t traces it; Space traces a function");
	return UI_REDRAW;
}

static int browser_key_package(struct ui *ui, int key)
{
	struct browser *br = ui->browser;
	int32_t row = browser_cur_row(br);
	(void)key;

	if (!br->nrows)
		return UI_HANDLED;
	if (row >= 0)
		ui_status(ui, DR_INFO, "t traces a package: on its row%s",
			  br->folded ? "" : " (f folds by package)");
	else if (ui->exited)
		ui_status(ui, DR_ERROR, "the target exited: Esc goes back to the processes");
	else if (!ui->can_trace)
		ui_status(ui, DR_ERROR, "cannot trace: %s", ui->w.trace_err);
	else
		browser_pkg_go(ui, (uint32_t)(-row - 1), false);
	return UI_REDRAW;
}

static int browser_key_enter(struct ui *ui, int key)
{
	struct browser *br = ui->browser;
	int32_t row = browser_cur_row(br);

	if (!br->nrows)
		return UI_HANDLED;
	if (row < 0) {
		br->pkgs[-row - 1].open = !br->pkgs[-row - 1].open;
		browser_rebuild(br);
		return UI_REDRAW;
	}
	if (key == KEY_RIGHT)
		return UI_HANDLED;
	worker_lock(&ui->w);
	uint8_t st = ui->w.tstate ? ui->w.tstate[row] : TS_NONE;
	worker_unlock(&ui->w);
	if (st == TS_TRACING || st == TS_ENTRY_ONLY) {
		detail_show(ui, &br->idx->funcs[row]);
		ui_push(ui, SCR_DETAIL);
	} else {
		ui_status(ui, DR_INFO, "%s is not traced: Space traces it", br->idx->funcs[row].name);
	}
	return UI_REDRAW;
}

/* Left on a function of an unfolded package folds it again. */
static int browser_key_left(struct ui *ui, int key)
{
	struct browser *br = ui->browser;
	int32_t row = browser_cur_row(br);
	(void)key;

	if (!br->folded || row < 0 || br->applied[0])
		return 0;
	for (long r = br->list.cur; r >= 0; r--) {
		if (br->rows[r] < 0) {
			br->pkgs[-br->rows[r] - 1].open = false;
			br->list.cur = r;
			browser_rebuild(br);
			return UI_HANDLED | UI_REDRAW;
		}
	}
	return 0;
}

static int browser_key_fold(struct ui *ui, int key)
{
	struct browser *br = ui->browser;
	(void)key;

	br->folded = !br->folded;
	browser_rebuild(br);
	ui_status(ui, DR_INFO, br->folded ? "folded by package: Enter unfolds one" : "flat list");
	return UI_REDRAW;
}

static int browser_key_search(struct ui *ui, int key)
{
	struct browser *br = ui->browser;
	(void)key;

	/* A fresh search, as in less or htop: the old filter stays until
	 * the first key of the new one. */
	br->searching = true;
	br->search.len = 0;
	br->search.buf[0] = '\0';
	return UI_REDRAW;
}

static int browser_key_live(struct ui *ui, int key)
{
	(void)key;
	ui_push(ui, SCR_LIVE);
	return UI_REDRAW;
}

/* While searching, keys edit the search; Enter keeps it, Esc clears it. */
static int browser_input(struct ui *ui, int key)
{
	struct browser *br = ui->browser;

	if (!br || !br->searching)
		return 0;
	if (key == '\r' || key == '\n' || key == KEY_ENTER) {
		br->searching = false;
		return UI_HANDLED | UI_REDRAW;
	}
	if (key == 27) {
		br->searching = false;
		br->search.len = 0;
		br->search.buf[0] = '\0';
		browser_apply(br, "");
		return UI_HANDLED | UI_REDRAW;
	}
	bool bs = key == KEY_BACKSPACE || key == 127 || key == 8;
	if (bs && br->search.len == 0) {
		br->searching = false;
		return UI_HANDLED | UI_REDRAW;
	}
	if (!ui_input_key(&br->search, key))
		return 0;
	browser_apply(br, br->search.buf);
	return UI_HANDLED | UI_REDRAW;
}

static const struct ui_key browser_keys[] = {
	{' ', "Space", "trace or untrace the function", browser_key_space, "trace"},
	{'t', "t", "on a package row: trace every traceable function of it", browser_key_package,
	 "trace pkg"},
	{-4, "", "past --max-functions it asks first: y traces those that fit", NULL, NULL},
	{-5, "", "when all are traced, t asks to untrace them", NULL, NULL},
	{'/', "/", "search: Enter keeps the filter, Esc clears it", browser_key_search, "search"},
	{'f', "f", "fold by package (Enter or Right unfolds one)", browser_key_fold, "fold"},
	{'\t', "Tab/l", "live table", browser_key_live, "live"},
	{'l', NULL, NULL, browser_key_live, NULL},
	{'\r', "Enter", "unfold a package; detail of a traced function", browser_key_enter, "open"},
	{'\n', NULL, NULL, browser_key_enter, NULL},
	{KEY_ENTER, NULL, NULL, browser_key_enter, NULL},
	{KEY_RIGHT, NULL, NULL, browser_key_enter, NULL},
	{KEY_LEFT, NULL, NULL, browser_key_left, NULL},
};

const struct ui_screen browser_screen = {
	.title = "Function browser (* traced, + attaching, ! failed)",
	.keys = browser_keys,
	.nkeys = sizeof(browser_keys) / sizeof(browser_keys[0]),
	.draw = browser_draw,
	.input = browser_input,
	.nav = browser_key_nav,
	.nav_letters = true,
};
