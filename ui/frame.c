/* The frame around every screen: the target line at the top, the status
 * line and the footer of keys at the bottom, and a message that fits when
 * the terminal is too small for anything else. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../src/guard.h"
#include "screens.h"

#define FRAME_MIN_COLS 40
#define FRAME_MIN_LINES 8

void ui_status(struct ui *ui, enum draw_role role, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ui->status, sizeof(ui->status), fmt, ap);
	va_end(ap);
	ui->status_role = role;
}

/* When tracing stops by itself (--max-duration), after the target. */
static void frame_header_limit(struct ui *ui, char *line, size_t len)
{
	size_t n = strlen(line);
	char t[16];

	if (ui->wstate != WS_READY || !ui->have_snap || n >= len)
		return;
	if (ui->snap.remaining_s < 0)
		return;
	if (ui->snap.auto_detached && ui->snap.remaining_s == 0) {
		snprintf(line + n, len - n, ", TIME UP: detached (+ extends)");
		return;
	}
	guard_format_remaining(ui->snap.remaining_s, t, sizeof(t));
	snprintf(line + n, len - n, ", detach in %s (+ extends)", t);
}

/* Header line 0, shared: what is watched, since when. */
void ui_header_target(struct ui *ui)
{
	char clock[16], up[24], line[700];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	strftime(clock, sizeof(clock), "%H:%M:%S", &tm);
	fmt_uptime(ui->have_snap ? ui->snap.uptime_s : 0, up, sizeof(up));
	if (ui->wstate != WS_READY)
		snprintf(line, sizeof(line), "retop - %s", clock);
	else if (ui->target_pid > 0)
		snprintf(line, sizeof(line), "retop - %s up %s, pid %d %s", clock, up,
			 ui->target_pid, ui->target);
	else
		snprintf(line, sizeof(line), "retop - %s up %s, every process running %s", clock,
			 up, ui->target);
	frame_header_limit(ui, line, sizeof(line));
	draw_text(0, 0, COLS, DR_NORMAL, true, line);
	if (ui->exited) /* over the clock's line: the one thing that matters now */
		draw_text(0, COLS > 52 ? COLS - 52 : 0, 52, DR_ERROR, true,
			  " [TARGET EXITED: last numbers kept, Esc: processes] ");
}

static void frame_draw_status(struct ui *ui)
{
	int y = LINES - 2, x = 0;

	draw_fill(y, DR_NORMAL);
	if (ui->prompting || ui->editing || ui->confirm_fn) {
		if (ui->prompting)
			snprintf(ui->edit, sizeof(ui->edit), "Delay in seconds: %s",
				 ui->prompt.buf);
		if (ui->confirm_fn)
			snprintf(ui->edit, sizeof(ui->edit), "%s [y/N] ", ui->confirm_text);
		draw_text(y, 0, COLS, DR_WARN, false, ui->edit);
		move(y, (int)strlen(ui->edit) < COLS ? (int)strlen(ui->edit) : COLS - 1);
		curs_set(1);
		return;
	}
	curs_set(0);
	if (ui->busy || ui->wstate == WS_OPENING) {
		draw_text(y, 0, 2, DR_INFO, false, draw_spinner(ui->spin));
		x = 2;
	}
	if (ui->paused) {
		draw_text(y, x, 9, DR_WARN, false, "[paused] ");
		x += 9;
	}
	draw_text(y, x, COLS - x, ui->status_role, true, ui->status);
}

/* The current screen's keys, then help and quit, which always fit. */
static void frame_draw_footer(struct ui *ui)
{
	const struct ui_screen *sc = ui_screen_of(ui_top(ui));
	struct draw_footer_item items[40];
	size_t n = 0, ng;
	const struct ui_key *g = ui_global_key_table(&ng);
	int room = COLS;

	for (size_t i = 0; i < ng; i++)
		if (g[i].footer)
			room -= (int)(strlen(g[i].name) + strlen(g[i].footer) + 2);
	for (size_t i = 0; i < sc->nkeys && n < 32; i++) {
		const struct ui_key *k = &sc->keys[i];
		const char *name = k->name ? k->name : keyname(k->key);
		int w = (int)(strlen(name) + strlen(k->footer ? k->footer : "") + 2);
		if (!k->footer || w > room)
			continue;
		items[n++] = (struct draw_footer_item){name, k->footer};
		room -= w;
	}
	for (size_t i = 0; i < ng; i++)
		if (g[i].footer)
			items[n++] = (struct draw_footer_item){g[i].name, g[i].footer};
	draw_footer(LINES - 1, items, n);
}

/* The longest lines that fit, centred: even 20x3 says what is wrong. */
static void frame_draw_too_small(void)
{
	char size[48], need[48];
	const char *lines[3] = {"terminal too small", need, size};
	int n = 3, y0;

	snprintf(need, sizeof(need), "retop needs %dx%d", FRAME_MIN_COLS, FRAME_MIN_LINES);
	snprintf(size, sizeof(size), "this one is %dx%d", COLS, LINES);
	if (COLS < 18 || LINES < 3) {
		lines[0] = "too small";
		snprintf(need, sizeof(need), "%dx%d<%dx%d", COLS, LINES, FRAME_MIN_COLS,
			 FRAME_MIN_LINES);
		lines[1] = need;
		n = LINES >= 2 ? 2 : 1;
	}
	y0 = LINES > n ? (LINES - n) / 2 : 0;
	for (int i = 0; i < n && i < LINES; i++) {
		int len = (int)strlen(lines[i]);
		draw_text(y0 + i, len < COLS ? (COLS - len) / 2 : 0, COLS, DR_ERROR, false,
			  lines[i]);
	}
}

void ui_draw(struct ui *ui)
{
	erase();
	if (LINES < FRAME_MIN_LINES || COLS < FRAME_MIN_COLS) {
		frame_draw_too_small();
		refresh();
		return;
	}
	ui->editing = false;
	ui_screen_of(ui_top(ui))->draw(ui);
	frame_draw_footer(ui);
	frame_draw_status(ui); /* last: the cursor stays in a text entry */
	refresh();
}
