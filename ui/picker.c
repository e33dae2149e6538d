/* The process picker: every Go process, rescanned every 2 s by the worker
 * (scanning reads each candidate's ELF, which is I/O), filtered as you type. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "screens.h"

struct picker {
	struct proc_info *procs;
	size_t nprocs;
	uint64_t seq;
	size_t *rows; /* indices into procs that pass the filter */
	size_t nrows;
	struct ui_list list;
	int selected_pid; /* the cursor follows the process across rescans */
	struct ui_input filter;
	bool scanned;
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

static bool picker_matches(const struct picker *p, const struct proc_info *pi)
{
	char pid[16];

	if (p->filter.len == 0)
		return true;
	snprintf(pid, sizeof(pid), "%d", pi->pid);
	return strstr(pid, p->filter.buf) || strcasestr(pi->cmdline, p->filter.buf) ||
	       strcasestr(pi->comm, p->filter.buf) || strcasestr(pi->exe, p->filter.buf);
}

static void picker_refilter(struct picker *p)
{
	p->nrows = 0;
	for (size_t i = 0; i < p->nprocs; i++)
		if (picker_matches(p, &p->procs[i]))
			p->rows[p->nrows++] = i;
	p->list.cur = 0;
	for (size_t r = 0; r < p->nrows; r++)
		if (p->procs[p->rows[r]].pid == p->selected_pid)
			p->list.cur = (long)r;
	ui_list_fix(&p->list, (long)p->nrows, ui_body_height() - 1);
}

static int picker_cmp_pid(const void *a, const void *b)
{
	const struct proc_info *x = a, *y = b;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Take the worker's latest scan, if there is a new one. */
static void picker_sync(struct ui *ui)
{
	struct picker *p = ui->picker;
	struct worker *w = &ui->w;

	worker_lock(w);
	if (w->procs_seq != p->seq) {
		struct proc_info *np = malloc((w->nprocs ? w->nprocs : 1) * sizeof(*np));
		size_t *nr = malloc((w->nprocs ? w->nprocs : 1) * sizeof(*nr));
		if (np && nr) {
			memcpy(np, w->procs, w->nprocs * sizeof(*np));
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
	qsort(p->procs, p->nprocs, sizeof(*p->procs), picker_cmp_pid);
	picker_refilter(p);
}

static void picker_draw_row(const struct proc_info *pi, int y, bool sel)
{
	enum draw_role role = sel ? DR_SELECTED : DR_NORMAL;
	char line[512];

	snprintf(line, sizeof(line), "%7d %-9.9s %-9.9s %-5s %-5s %-3s %s", pi->pid, pi->user,
		 pi->go_version, pi->stripped ? "yes" : "no", pi->has_dwarf ? "yes" : "no", "-",
		 pi->cmdline[0] ? pi->cmdline : pi->comm);
	draw_text(y, 0, COLS, role, true, line);
}

static void picker_draw(struct ui *ui)
{
	struct picker *p = ui->picker;
	int h = ui_body_height() - 1;

	picker_sync(ui);
	ui_header_target(ui);
	if (p->filter.len)
		draw_textf(1, 0, COLS, DR_HEADER, "Go processes: %zu of %zu match '%s'", p->nrows,
			   p->nprocs, p->filter.buf);
	else
		draw_textf(1, 0, COLS, DR_HEADER, "Go processes: %zu%s", p->nprocs,
			   p->scanned ? " (rescanned every 2 s)" : " (scanning...)");
	draw_text(UI_BODY_TOP, 0, COLS, DR_TITLE, true,
		  "    PID USER      GO        STRIP DWARF SDK COMMAND");
	ui_list_fix(&p->list, (long)p->nrows, h);
	for (int r = 0; r < h && p->list.top + r < (long)p->nrows; r++) {
		long i = p->list.top + r;
		picker_draw_row(&p->procs[p->rows[i]], UI_BODY_TOP + 1 + r, i == p->list.cur);
	}
	if (p->nrows == 0 && p->scanned)
		draw_text(UI_BODY_TOP + 2, 2, COLS - 2, DR_DIM, false,
			  p->nprocs ? "no process matches the filter (Backspace edits it)"
				    : "no Go process found (retop needs root to see them all)");
}

static int picker_key_nav(struct ui *ui, int key)
{
	struct picker *p = ui->picker;
	int flags = ui_list_key(&p->list, key, (long)p->nrows, ui_body_height() - 1);

	if (p->nrows)
		p->selected_pid = p->procs[p->rows[p->list.cur]].pid;
	return flags;
}

static int picker_key_open(struct ui *ui, int key)
{
	struct picker *p = ui->picker;
	(void)key;

	if (p->nrows == 0 || ui->wstate == WS_OPENING)
		return UI_HANDLED;
	const struct proc_info *pi = &p->procs[p->rows[p->list.cur]];
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

/* Typing filters; q and ? stay keys, arrows move. */
static int picker_input(struct ui *ui, int key)
{
	struct picker *p = ui->picker;

	if (key == 27 && p->filter.len) {
		p->filter.len = 0;
		p->filter.buf[0] = '\0';
		picker_refilter(p);
		return UI_HANDLED | UI_REDRAW;
	}
	bool bs = key == KEY_BACKSPACE || key == 127 || key == 8;
	if (key == 'q' || key == '?' || (bs && !p->filter.len))
		return 0;
	if (!ui_input_key(&p->filter, key))
		return 0;
	picker_refilter(p);
	if (p->nrows)
		p->selected_pid = p->procs[p->rows[p->list.cur]].pid;
	return UI_HANDLED | UI_REDRAW;
}

static const struct ui_key picker_keys[] = {
	{'\r', "Enter", "open the functions of the process", picker_key_open, "open"},
	{'\n', NULL, NULL, picker_key_open, NULL},
	{KEY_ENTER, NULL, NULL, picker_key_open, NULL},
	{KEY_RIGHT, NULL, NULL, picker_key_open, NULL},
	{-2, "type", "filter by command or PID (Backspace edits, Esc clears)", NULL, "filter"},
	{KEY_UP, "Up/Down", "move", picker_key_nav, NULL},
	{KEY_DOWN, NULL, NULL, picker_key_nav, NULL},
	{KEY_PPAGE, "PgUp/PgDn", "page", picker_key_nav, NULL},
	{KEY_NPAGE, NULL, NULL, picker_key_nav, NULL},
	{KEY_HOME, "Home/End", "first, last", picker_key_nav, NULL},
	{KEY_END, NULL, NULL, picker_key_nav, NULL},
};

static void picker_enter(struct ui *ui)
{
	ui->picker->seq = 0; /* take the latest scan at once */
}

const struct ui_screen picker_screen = {
	.title = "Process picker (type to filter by command or PID; Backspace edits, Esc clears)",
	.keys = picker_keys,
	.nkeys = sizeof(picker_keys) / sizeof(picker_keys[0]),
	.draw = picker_draw,
	.input = picker_input,
	.enter = picker_enter,
};
