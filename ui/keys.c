/* Keys: the tables every screen shares (global keys, movement), the
 * dispatcher, the delay prompt, the yes/no question, and the list and
 * text-entry helpers screens build on. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "screens.h"

/* ---- movement: one table, one meaning, every screen ---- */

static const struct ui_key ui_move_keys[] = {
    {KEY_UP, "Up/Down j/k", "move (scroll on the detail and help pages)", NULL, NULL},
    {KEY_DOWN, NULL, NULL, NULL, NULL},
    {'k', NULL, NULL, NULL, NULL},
    {'j', NULL, NULL, NULL, NULL},
    {KEY_PPAGE, "PgUp/PgDn", "page up, page down", NULL, NULL},
    {KEY_NPAGE, NULL, NULL, NULL, NULL},
    {KEY_HOME, "Home/End", "first, last (g, G too)", NULL, NULL},
    {KEY_END, NULL, NULL, NULL, NULL},
    {'g', NULL, NULL, NULL, NULL},
    {'G', NULL, NULL, NULL, NULL},
};

const struct ui_key *ui_move_key_table(size_t *n)
{
	*n = sizeof(ui_move_keys) / sizeof(ui_move_keys[0]);
	return ui_move_keys;
}

/* Where a movement key takes pos among n positions, height at a time;
 * false when key is not a movement key. */
static bool ui_move_target(int key, long pos, long n, int height, long *to)
{
	long page = height > 1 ? height - 1 : 1;

	switch (key) {
	case KEY_UP:
	case 'k':
		*to = pos - 1;
		return true;
	case KEY_DOWN:
	case 'j':
		*to = pos + 1;
		return true;
	case KEY_PPAGE:
		*to = pos - page;
		return true;
	case KEY_NPAGE:
		*to = pos + page;
		return true;
	case KEY_HOME:
	case 'g':
		*to = 0;
		return true;
	case KEY_END:
	case 'G':
		*to = n - 1;
		return true;
	default:
		return false;
	}
}

void ui_list_fix(struct ui_list *l, long n, int height)
{
	if (height < 1)
		height = 1;
	if (l->cur >= n)
		l->cur = n - 1;
	if (l->cur < 0)
		l->cur = 0;
	if (l->top > l->cur)
		l->top = l->cur;
	if (l->cur >= l->top + height)
		l->top = l->cur - height + 1;
	if (l->top > n - height)
		l->top = n - height;
	if (l->top < 0)
		l->top = 0;
}

int ui_list_key(struct ui_list *l, int key, long n, int height)
{
	if (!ui_move_target(key, l->cur, n, height, &l->cur))
		return 0;
	ui_list_fix(l, n, height);
	return UI_HANDLED | UI_REDRAW;
}

/* A page of lines rather than a cursor: the keys move the top line. */
int ui_scroll_key(struct ui_list *l, int key, long lines, int height)
{
	long max = lines > height ? lines - height : 0, to;

	if (!ui_move_target(key, l->top, max + 1, height, &to))
		return 0;
	l->top = to > max ? max : to < 0 ? 0 : to;
	return UI_HANDLED | UI_REDRAW;
}

static bool ui_is_move_key(const struct ui_screen *sc, int key)
{
	long to;

	if (!sc->nav || !ui_move_target(key, 0, 1, 1, &to))
		return false;
	return sc->nav_letters || key >= KEY_MIN; /* the picker types letters */
}

int ui_input_key(struct ui_input *in, int key)
{
	if (key == KEY_BACKSPACE || key == 127 || key == 8) {
		if (in->len == 0)
			return 0;
		in->buf[--in->len] = '\0';
		return 1;
	}
	if (key == 21) { /* ^U, as in a shell */
		in->len = 0;
		in->buf[0] = '\0';
		return 1;
	}
	if (key < 32 || key > 126 || in->len + 1 >= sizeof(in->buf))
		return 0;
	in->buf[in->len++] = (char)key;
	in->buf[in->len] = '\0';
	return 1;
}

int ui_sort_next(int cur, int key, int n, const bool *usable)
{
	int step = key == '<' ? -1 : 1, c = cur;

	for (int tries = 0; tries < n; tries++) {
		c = (c + step + n) % n;
		if (usable[c])
			return c;
	}
	return cur;
}

bool ui_is_backspace(int key)
{
	return key == KEY_BACKSPACE || key == 127 || key == 8;
}

/* ---- a yes/no question on the status line ---- */

void ui_confirm(struct ui *ui, ui_confirm_fn fn, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ui->confirm_text, sizeof(ui->confirm_text), fmt, ap);
	va_end(ap);
	ui->confirm_fn = fn;
	ui->confirm_no = NULL;
}

static int ui_confirm_key(struct ui *ui, int key)
{
	ui_confirm_fn fn = ui->confirm_fn;

	ui->confirm_fn = NULL;
	if (key == 'y' || key == 'Y')
		return fn(ui) | UI_HANDLED | UI_REDRAW;
	ui_status(ui, DR_INFO, "%s", ui->confirm_no ? ui->confirm_no : "cancelled: still tracing");
	return UI_HANDLED | UI_REDRAW;
}

/* ---- global keys ---- */

static int ui_key_quit(struct ui *ui, int key)
{
	(void)key;
	ui->quit = true;
	return UI_QUIT;
}

static int ui_key_help(struct ui *ui, int key)
{
	(void)key;
	if (ui_top(ui) != SCR_HELP)
		ui_push(ui, SCR_HELP);
	return UI_REDRAW;
}

static int ui_key_back(struct ui *ui, int key)
{
	(void)key;
	return ui_back(ui);
}

static int ui_key_redraw(struct ui *ui, int key)
{
	(void)ui;
	(void)key;
	clearok(curscr, TRUE);
	return UI_REDRAW;
}

static int ui_key_pause(struct ui *ui, int key)
{
	(void)key;
	ui->paused = !ui->paused;
	ui_status(ui, DR_INFO, ui->paused ? "paused: p resumes" : "resumed");
	return UI_REDRAW;
}

static int ui_key_delay(struct ui *ui, int key)
{
	(void)key;
	ui->prompting = true;
	ui->prompt.len = (size_t)snprintf(ui->prompt.buf, sizeof(ui->prompt.buf), "%g", ui->delay);
	return UI_REDRAW;
}

static int ui_key_extend(struct ui *ui, int key)
{
	(void)key;
	if (!ui->have_snap || ui->snap.max_duration_s <= 0) {
		ui_status(ui, DR_INFO, "no time limit (--max-duration 0)");
		return UI_REDRAW;
	}
	worker_post(&ui->w, &(struct worker_job){.kind = JOB_EXTEND});
	ui_status(ui, DR_INFO, "tracing time extended by %g s%s", ui->snap.max_duration_s,
		  ui->snap.auto_detached ? ": Space traces again" : "");
	return UI_REDRAW;
}

static const struct ui_key ui_global_keys[] = {
    {'q', "q", "quit (detaches every probe)", ui_key_quit, "quit"},
    {'?', "?", "help", ui_key_help, "help"},
    {KEY_F(1), NULL, NULL, ui_key_help, NULL},
    {27, "Esc", "back to the previous screen (asks before detaching)", ui_key_back, NULL},
    {KEY_BACKSPACE, NULL, NULL, ui_key_back, NULL},
    {127, NULL, NULL, ui_key_back, NULL},
    {'h', NULL, NULL, ui_key_back, NULL},
    {KEY_LEFT, NULL, NULL, ui_key_back, NULL},
    {'d', "d", "set the refresh delay", ui_key_delay, NULL},
    {'p', "p", "pause the display", ui_key_pause, NULL},
    {'+', "+", "trace another --max-duration before auto-detach", ui_key_extend, NULL},
    {12, "^L", "redraw the screen", ui_key_redraw, NULL},
};

const struct ui_key *ui_global_key_table(size_t *n)
{
	*n = sizeof(ui_global_keys) / sizeof(ui_global_keys[0]);
	return ui_global_keys;
}

/* The delay prompt owns the keyboard while it is open. */
static int ui_prompt_key(struct ui *ui, int key)
{
	if (key == 27) {
		ui->prompting = false;
		return UI_REDRAW;
	}
	if (key == '\n' || key == '\r' || key == KEY_ENTER) {
		char *end;
		double v = strtod(ui->prompt.buf, &end);
		ui->prompting = false;
		if (end == ui->prompt.buf || *end || v < 0.05 || v > 86400) {
			ui_status(ui, DR_ERROR, "delay must be seconds >= 0.05, got '%s'",
				  ui->prompt.buf);
			return UI_REDRAW;
		}
		ui->delay = v;
		worker_lock(&ui->w);
		worker_set_delay_locked(&ui->w, v);
		worker_unlock(&ui->w);
		ui_status(ui, DR_INFO, "refreshing every %g s", v);
		return UI_REDRAW;
	}
	if ((key >= '0' && key <= '9') || key == '.' || key < 32 || key == 127 ||
	    key == KEY_BACKSPACE)
		ui_input_key(&ui->prompt, key);
	return UI_REDRAW;
}

static int ui_dispatch_in(struct ui *ui, const struct ui_key *keys, size_t n, int key)
{
	for (size_t i = 0; i < n; i++)
		if (keys[i].key == key && keys[i].fn)
			return keys[i].fn(ui, key) | UI_HANDLED;
	return 0;
}

int ui_dispatch(struct ui *ui, int key)
{
	const struct ui_screen *sc = ui_screen_of(ui_top(ui));
	int flags;

	if (key == KEY_RESIZE)
		return UI_REDRAW;
	if (key == 3) /* ^C arrives as a key when the terminal is raw */
		return ui_key_quit(ui, key);
	if (ui->confirm_fn)
		return ui_confirm_key(ui, key);
	if (ui->prompting)
		return ui_prompt_key(ui, key);
	if (sc->input && (flags = sc->input(ui, key)))
		return flags;
	if ((flags = ui_dispatch_in(ui, sc->keys, sc->nkeys, key)))
		return flags;
	if (ui_is_move_key(sc, key))
		return sc->nav(ui, key) | UI_HANDLED;
	size_t n;
	const struct ui_key *g = ui_global_key_table(&n);
	return ui_dispatch_in(ui, g, n, key);
}
