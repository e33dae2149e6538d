/* The process picker: every Go process, rescanned every 2 s by the worker
 * (scanning reads each candidate's ELF, which is I/O), with CPU and memory
 * as top shows them, sortable, and filtered by command or PID after `/`. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "screens.h"

enum picker_col {
	PC_PID,
	PC_USER,
	PC_CPU,
	PC_MEM,
	PC_GO,
	PC_STRIP,
	PC_DWARF,
	PC_SDK,
	PC_CMD,
	PC_COUNT
};

static const struct {
	const char *title;
	int width; /* the command takes the rest */
	bool right, sortable;
} picker_cols[PC_COUNT] = {
    [PC_PID] = {"PID", 7, true, true},	     [PC_USER] = {"USER", 9, false, true},
    [PC_CPU] = {"CPU%", 5, true, true},	     [PC_MEM] = {"MEM", 6, true, true},
    [PC_GO] = {"GO", 9, false, false},	     [PC_STRIP] = {"STRIP", 5, false, false},
    [PC_DWARF] = {"DWARF", 5, false, false}, [PC_SDK] = {"SDK", 3, false, false},
    [PC_CMD] = {"COMMAND", 0, false, true},
};

struct picker_proc {
	struct proc_info info;
	double cpu_pct; /* since the previous scan; -1 before a second one */
};

struct picker {
	struct picker_proc *procs;
	size_t nprocs;
	uint64_t seq;
	size_t *rows; /* indices into procs that pass the filter */
	size_t nrows;
	struct ui_list list;
	int selected_pid; /* the cursor follows the process across rescans */
	struct ui_input filter;
	bool filtering; /* `/` was pressed: keys are the filter's text */
	bool scanned;
	enum picker_col sort;
	bool descending;
};

int picker_open(struct ui *ui)
{
	ui->picker = calloc(1, sizeof(*ui->picker));
	return ui->picker ? 0 : -1;
}

void picker_close(struct ui *ui)
{
	if (!ui->picker)
		return;
	free(ui->picker->procs);
	free(ui->picker->rows);
	free(ui->picker);
	ui->picker = NULL;
}

/* The COMMAND cell: a process in a container is marked, with its PID
 * there when it has its own PID namespace ("[container 1] /app/api"). */
static void picker_command(const struct proc_info *pi, char *buf, size_t len)
{
	const char *cmd = pi->cmdline[0] ? pi->cmdline : pi->comm;

	if (pi->in_container && pi->ns_pid)
		snprintf(buf, len, "[container %d] %s", pi->ns_pid, cmd);
	else if (pi->in_container)
		snprintf(buf, len, "[container] %s", cmd);
	else
		snprintf(buf, len, "%s", cmd);
}

static bool picker_matches(const struct picker *p, const struct proc_info *pi)
{
	char pid[16], cmd[sizeof(pi->cmdline) + 32];

	if (p->filter.len == 0)
		return true;
	snprintf(pid, sizeof(pid), "%d", pi->pid);
	picker_command(pi, cmd, sizeof(cmd));
	return strstr(pid, p->filter.buf) || strcasestr(cmd, p->filter.buf) ||
	       strcasestr(pi->comm, p->filter.buf) || strcasestr(pi->exe, p->filter.buf);
}

static void picker_refilter(struct picker *p)
{
	p->nrows = 0;
	for (size_t i = 0; i < p->nprocs; i++)
		if (picker_matches(p, &p->procs[i].info))
			p->rows[p->nrows++] = i;
	p->list.cur = 0;
	for (size_t r = 0; r < p->nrows; r++)
		if (p->procs[p->rows[r]].info.pid == p->selected_pid)
			p->list.cur = (long)r;
	ui_list_fix(&p->list, (long)p->nrows, ui_body_height() - 1);
}

static const struct picker *picker_sort_ctx; /* qsort has no context argument */

static int picker_cmp(const void *a, const void *b)
{
	const struct picker_proc *x = a, *y = b;
	int r = 0;

	switch (picker_sort_ctx->sort) {
	case PC_USER:
		r = strcmp(x->info.user, y->info.user);
		break;
	case PC_CPU:
		r = (x->cpu_pct > y->cpu_pct) - (x->cpu_pct < y->cpu_pct);
		break;
	case PC_MEM:
		r = (x->info.rss_bytes > y->info.rss_bytes) -
		    (x->info.rss_bytes < y->info.rss_bytes);
		break;
	case PC_CMD:
		r = strcmp(x->info.cmdline, y->info.cmdline);
		break;
	default:
		break;
	}
	if (r == 0) /* ties, and the PID column, in PID order */
		r = (x->info.pid > y->info.pid) - (x->info.pid < y->info.pid);
	return picker_sort_ctx->descending ? -r : r;
}

/* CPU% over the time between this scan and the previous one. */
static void picker_cpu(struct picker_proc *np, size_t n, const struct picker_proc *old, size_t nold)
{
	long hz = sysconf(_SC_CLK_TCK);

	for (size_t i = 0; i < n; i++) {
		np[i].cpu_pct = -1;
		for (size_t k = 0; k < nold; k++) {
			const struct proc_info *o = &old[k].info, *c = &np[i].info;
			if (o->pid != c->pid)
				continue;
			np[i].cpu_pct = old[k].cpu_pct; /* the same scan again */
			if (c->sampled_ns <= o->sampled_ns || c->cpu_ticks < o->cpu_ticks)
				break;
			double s = (double)(c->sampled_ns - o->sampled_ns) / 1e9;
			np[i].cpu_pct =
			    100.0 * (double)(c->cpu_ticks - o->cpu_ticks) / (double)hz / s;
			break;
		}
	}
}

/* Take the worker's latest scan, if there is a new one. */
static void picker_sync(struct ui *ui)
{
	struct picker *p = ui->picker;
	struct worker *w = &ui->w;

	worker_lock(w);
	if (w->procs_seq != p->seq) {
		size_t n = w->nprocs ? w->nprocs : 1;
		struct picker_proc *np = calloc(n, sizeof(*np));
		size_t *nr = malloc(n * sizeof(*nr));
		if (np && nr) { /* else keep the previous scan */
			for (size_t i = 0; i < w->nprocs; i++)
				np[i].info = w->procs[i];
			picker_cpu(np, w->nprocs, p->procs, p->nprocs);
			free(p->procs);
			free(p->rows);
			p->procs = np;
			p->rows = nr;
			p->nprocs = w->nprocs;
			p->seq = w->procs_seq;
			np = NULL;
			nr = NULL;
		}
		free(np);
		free(nr);
	}
	p->scanned = w->scanned;
	worker_unlock(w);
	picker_sort_ctx = p;
	qsort(p->procs, p->nprocs, sizeof(*p->procs), picker_cmp);
	picker_refilter(p);
}

static void picker_cell(const struct picker_proc *pp, enum picker_col c, char *buf, size_t len)
{
	const struct proc_info *pi = &pp->info;

	switch (c) {
	case PC_PID:
		snprintf(buf, len, "%d", pi->pid);
		break;
	case PC_USER:
		snprintf(buf, len, "%s", pi->user);
		break;
	case PC_CPU:
		if (pp->cpu_pct < 0)
			snprintf(buf, len, "-");
		else
			snprintf(buf, len, "%.1f", pp->cpu_pct);
		break;
	case PC_MEM:
		fmt_bytes(pi->rss_bytes, buf, len);
		break;
	case PC_GO:
		snprintf(buf, len, "%s", pi->go_version);
		break;
	case PC_STRIP:
		snprintf(buf, len, "%s", pi->stripped ? "yes" : "no");
		break;
	case PC_DWARF:
		snprintf(buf, len, "%s", pi->has_dwarf ? "yes" : "no");
		break;
	case PC_SDK:
		snprintf(buf, len, "-");
		break;
	default:
		picker_command(pi, buf, len);
	}
}

static void picker_draw_row(const struct picker_proc *pp, int y, bool sel)
{
	enum draw_role role = sel ? DR_SELECTED : DR_NORMAL;
	int x = 0;

	draw_fill(y, role);
	for (int c = 0; c < PC_COUNT && x < COLS; c++) {
		char buf[512];
		int w = picker_cols[c].width ? picker_cols[c].width : COLS - x;
		picker_cell(pp, (enum picker_col)c, buf, sizeof(buf));
		if (picker_cols[c].right)
			draw_rtext(y, x, w, role, buf);
		else
			draw_text(y, x, w < COLS - x ? w : COLS - x, role, false, buf);
		x += w + 1;
	}
}

/* Column titles, the sorted one marked with an arrow. */
static void picker_draw_title(const struct picker *p, int y)
{
	int x = 0;

	draw_fill(y, DR_TITLE);
	for (int c = 0; c < PC_COUNT && x < COLS; c++) {
		const char *t = picker_cols[c].title;
		int w = picker_cols[c].width ? picker_cols[c].width : COLS - x, tl = (int)strlen(t);
		bool sorted = (enum picker_col)c == p->sort;
		enum draw_role r = sorted ? DR_SORT : DR_TITLE;
		int tx = picker_cols[c].right ? x + w - tl : x;
		draw_text(y, tx, tl, r, false, t);
		if (sorted)
			draw_text(y, picker_cols[c].right ? tx - 1 : tx + tl, 1, r, false,
				  draw_sort_mark(p->descending));
		x += w + 1;
	}
}

static void picker_draw(struct ui *ui)
{
	struct picker *p = ui->picker;
	int h = ui_body_height() - 1;

	picker_sync(ui);
	ui_header_target(ui);
	if (p->filter.len || p->filtering)
		draw_textf(1, 0, COLS, DR_HEADER, "Go processes: %zu of %zu match '%s'", p->nrows,
			   p->nprocs, p->filter.buf);
	else
		draw_textf(1, 0, COLS, DR_HEADER, "Go processes: %zu%s", p->nprocs,
			   p->scanned ? " (rescanned every 2 s)" : " (scanning...)");
	picker_draw_title(p, UI_BODY_TOP);
	ui_list_fix(&p->list, (long)p->nrows, h);
	for (int r = 0; r < h && p->list.top + r < (long)p->nrows; r++) {
		long i = p->list.top + r;
		picker_draw_row(&p->procs[p->rows[i]], UI_BODY_TOP + 1 + r, i == p->list.cur);
	}
	if (p->nrows == 0 && p->scanned)
		draw_text(UI_BODY_TOP + 2, 2, COLS - 2, DR_DIM, false,
			  p->nprocs ? "no process matches the filter (/ edits it, Esc clears it)"
				    : "no Go process found (retop needs root to see them all)");
	if (p->filtering) {
		ui->editing = true;
		snprintf(ui->edit, sizeof(ui->edit), "/%s", p->filter.buf);
	}
}

static int picker_key_nav(struct ui *ui, int key)
{
	struct picker *p = ui->picker;
	int flags = ui_list_key(&p->list, key, (long)p->nrows, ui_body_height() - 1);

	if (p->nrows)
		p->selected_pid = p->procs[p->rows[p->list.cur]].info.pid;
	return flags;
}

static int picker_key_open(struct ui *ui, int key)
{
	struct picker *p = ui->picker;
	(void)key;

	p->filtering = false;
	if (p->nrows == 0 || ui->wstate == WS_OPENING)
		return UI_HANDLED | UI_REDRAW;
	const struct proc_info *pi = &p->procs[p->rows[p->list.cur]].info;
	worker_lock(&ui->w);
	ui->open_gen = ui->w.session_gen;
	worker_post_locked(&ui->w, &(struct worker_job){.kind = JOB_OPEN, .pid = pi->pid});
	if (ui->opts->npatterns)
		worker_post_locked(&ui->w, &(struct worker_job){.kind = JOB_PATTERNS});
	worker_unlock(&ui->w);
	ui->wstate = WS_OPENING;
	ui_status(ui, DR_INFO, "indexing PID %d (%s)...", pi->pid, pi->comm);
	return UI_REDRAW;
}

static int picker_key_filter(struct ui *ui, int key)
{
	(void)key;
	ui->picker->filtering = true; /* the old filter stays, to be edited */
	return UI_REDRAW;
}

static int picker_key_sort(struct ui *ui, int key)
{
	struct picker *p = ui->picker;
	bool usable[PC_COUNT];

	if (key == 'I') {
		p->descending = !p->descending;
	} else {
		for (int c = 0; c < PC_COUNT; c++)
			usable[c] = picker_cols[c].sortable;
		p->sort = (enum picker_col)ui_sort_next((int)p->sort, key, PC_COUNT, usable);
		/* The busiest first; names and PIDs in reading order. */
		p->descending = p->sort == PC_CPU || p->sort == PC_MEM;
	}
	picker_sort_ctx = p;
	qsort(p->procs, p->nprocs, sizeof(*p->procs), picker_cmp);
	picker_refilter(p);
	ui_status(ui, DR_INFO, "processes sorted by %s, %s", picker_cols[p->sort].title,
		  p->descending ? "descending" : "ascending");
	return UI_REDRAW;
}

/* While filtering every printable key is text, q included; Enter opens
 * the process under the cursor, Esc leaves the filter and clears it. */
static int picker_input(struct ui *ui, int key)
{
	struct picker *p = ui->picker;

	if (!p->filtering)
		return 0;
	if (key == 27 || (ui_is_backspace(key) && !p->filter.len)) {
		p->filtering = false;
		p->filter.len = 0;
		p->filter.buf[0] = '\0';
		picker_refilter(p);
		return UI_HANDLED | UI_REDRAW;
	}
	if (key == '\r' || key == '\n' || key == KEY_ENTER)
		return 0; /* the table's Enter */
	if (!ui_input_key(&p->filter, key))
		return 0;
	picker_refilter(p);
	if (p->nrows)
		p->selected_pid = p->procs[p->rows[p->list.cur]].info.pid;
	return UI_HANDLED | UI_REDRAW;
}

static const struct ui_key picker_keys[] = {
    {'\r', "Enter", "open the functions of the process", picker_key_open, "open"},
    {'\n', NULL, NULL, picker_key_open, NULL},
    {KEY_ENTER, NULL, NULL, picker_key_open, NULL},
    {KEY_RIGHT, NULL, NULL, picker_key_open, NULL},
    {'/', "/", "filter by command or PID (q is text there; Esc clears)", picker_key_filter,
     "filter"},
    {'s', "s", "next sort column", picker_key_sort, "sort"},
    {'>', "< >", "previous, next sort column", picker_key_sort, NULL},
    {'<', NULL, NULL, picker_key_sort, NULL},
    {'I', "I", "invert the sort order", picker_key_sort, NULL},
};

static void picker_enter(struct ui *ui)
{
	ui->picker->seq = 0; /* take the latest scan at once */
}

const struct ui_screen picker_screen = {
    .title = "Process picker (/ filters by command or PID; Esc clears the filter)",
    .keys = picker_keys,
    .nkeys = sizeof(picker_keys) / sizeof(picker_keys[0]),
    .draw = picker_draw,
    .input = picker_input,
    .enter = picker_enter,
    .nav = picker_key_nav,
    .nav_letters = true,
};
