/* Help: the keys of every screen, generated from the same key tables the
 * dispatcher uses, so help and behaviour cannot drift apart. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "../src/stats.h"
#include "screens.h"

static int help_keys_of(const struct ui_key *keys, size_t n, int v, int top, int h)
{
	for (size_t i = 0; i < n; i++) {
		if (!keys[i].name || !keys[i].help)
			continue;
		if (v >= top && v < top + h)
			draw_textf(UI_BODY_TOP + v - top, 0, COLS, DR_NORMAL, "  %-11s %s", keys[i].name,
				   keys[i].help);
		v++;
	}
	return v;
}

static int help_section(const char *title, int v, int top, int h)
{
	if (v >= top && v < top + h)
		draw_text(UI_BODY_TOP + v - top, 0, COLS, DR_HEADER, false, title);
	return v + 1;
}

static int help_page(struct ui *ui, int top, int h)
{
	static const enum ui_screen_id order[] = {SCR_PICKER, SCR_BROWSER, SCR_LIVE, SCR_DETAIL};
	size_t ng;
	const struct ui_key *g = ui_global_key_table(&ng);
	int v = 0;
	(void)ui;

	v = help_section("Every screen", v, top, h);
	v = help_keys_of(g, ng, v, top, h);
	g = ui_move_key_table(&ng);
	v = help_keys_of(g, ng, v, top, h);
	for (size_t s = 0; s < sizeof(order) / sizeof(order[0]); s++) {
		const struct ui_screen *sc = ui_screen_of(order[s]);
		v++;
		v = help_section(sc->title, v, top, h);
		v = help_keys_of(sc->keys, sc->nkeys, v, top, h);
	}
	v++;
	v = help_section("Numbers", v, top, h);
	static const char *const notes[] = {
		"  CALLS counts returns; INFL calls in flight; ORPH entries never returned",
		"  RETS hits per RET site; p50/p99 from log-linear buckets, within +-1.6%",
		"  CALLS ends in '!' when calls were DROPped (map full): --max-in-flight",
		"  CALLS and durations are of calls out of line; inlined calls are counted",
		"  apart (detail view), at sites whose inline mark is proven, never timed",
		"  i2.00k in CALLS: a function that exists only inlined, its inlined calls",
		"  Lines marked * trace, + attaching, ! failed (holds no slot).",
	};
	for (size_t i = 0; i < sizeof(notes) / sizeof(notes[0]); i++, v++)
		if (v >= top && v < top + h)
			draw_text(UI_BODY_TOP + v - top, 0, COLS, DR_NORMAL, false, notes[i]);
	return v;
}

static void help_draw(struct ui *ui)
{
	int h = ui_body_height();
	int total = help_page(ui, 1 << 30, 0); /* count only */

	if (ui->help.top > total - h)
		ui->help.top = total - h > 0 ? total - h : 0;
	ui_header_target(ui);
	draw_textf(1, 0, COLS, DR_HEADER, "Help: retop keys (Esc or q%s)",
		   total > h ? ", j/k scroll" : "");
	help_page(ui, (int)ui->help.top, h);
}

static int help_key_scroll(struct ui *ui, int key)
{
	int h = ui_body_height();

	return ui_scroll_key(&ui->help, key, help_page(ui, 1 << 30, 0), h);
}

static const struct ui_key help_keys[] = {
	{-3, "j/k", NULL, NULL, "scroll"},
	{27, "Esc", NULL, NULL, "back"},
};

const struct ui_screen help_screen = {
	.title = "Help",
	.keys = help_keys,
	.nkeys = sizeof(help_keys) / sizeof(help_keys[0]),
	.draw = help_draw,
	.nav = help_key_scroll,
	.nav_letters = true,
};
