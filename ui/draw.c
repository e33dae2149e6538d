/* Drawing helpers: colours degrade to attributes when the terminal has none,
 * glyphs degrade to ASCII when the locale is not UTF-8. */
#define _GNU_SOURCE
#define NCURSES_WIDECHAR 1
#include "draw.h"

#include <curses.h>
#include <langinfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "../src/figure.h"
#include "../src/stats.h"

static bool draw_has_utf8;
static int draw_attrs[DR_COUNT];

/* fg, bg (-1: the terminal's default, thanks to use_default_colors) and the
 * attribute used with colours and without. */
static const struct {
	short fg, bg;
	int with, without;
} draw_roles[DR_COUNT] = {
	[DR_NORMAL] = {-1, -1, A_NORMAL, A_NORMAL},
	[DR_TITLE] = {COLOR_BLACK, COLOR_GREEN, A_NORMAL, A_REVERSE},
	[DR_SORT] = {COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE | A_BOLD | A_UNDERLINE},
	[DR_SELECTED] = {COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE},
	[DR_HEADER] = {COLOR_CYAN, -1, A_BOLD, A_BOLD},
	[DR_KEY] = {COLOR_BLACK, COLOR_CYAN, A_NORMAL, A_REVERSE},
	[DR_INFO] = {COLOR_GREEN, -1, A_NORMAL, A_NORMAL},
	[DR_WARN] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD},
	[DR_ERROR] = {COLOR_RED, -1, A_BOLD, A_BOLD | A_UNDERLINE},
	[DR_BAR] = {COLOR_GREEN, -1, A_NORMAL, A_NORMAL},
	[DR_MARK] = {COLOR_YELLOW, -1, A_BOLD, A_BOLD},
	[DR_DIM] = {COLOR_BLUE, -1, A_BOLD, A_DIM},
	[DR_STUCK] = {COLOR_RED, -1, A_BOLD, A_BOLD},
};

void draw_init(void)
{
	const char *cs = nl_langinfo(CODESET);
	const char *no_colour = getenv("NO_COLOR");
	/* https://no-color.org: set and not empty means no colour; every role
	 * keeps an attribute (reverse, bold, underline) and its text. */
	bool colour = !(no_colour && no_colour[0]) && has_colors() && start_color() == OK;

	draw_has_utf8 = cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
	if (colour)
		use_default_colors();
	for (int r = 0; r < DR_COUNT; r++) {
		if (!colour || r == DR_NORMAL || r >= COLOR_PAIRS) {
			draw_attrs[r] = draw_roles[r].without;
			continue;
		}
		init_pair((short)r, draw_roles[r].fg, draw_roles[r].bg);
		draw_attrs[r] = (int)COLOR_PAIR(r) | draw_roles[r].with;
	}
}

bool draw_utf8(void) { return draw_has_utf8; }


/* Write at most width columns of s; returns the columns written.  Bytes
 * that do not decode in the locale show as '?'. */
static int draw_put(const char *s, int width)
{
	mbstate_t st;
	int cols = 0;
	size_t len = strlen(s);

	memset(&st, 0, sizeof(st));
	while (len > 0 && cols < width) {
		wchar_t wc;
		size_t n = mbrtowc(&wc, s, len, &st);
		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			memset(&st, 0, sizeof(st));
			wc = L'?';
			n = 1;
		}
		int w = wcwidth(wc);
		if (w < 0) {
			wc = L'?';
			w = 1;
		}
		if (cols + w > width)
			break;
		addnwstr(&wc, 1);
		cols += w;
		s += n;
		len -= n;
	}
	return cols;
}

void draw_text(int y, int x, int width, enum draw_role role, bool pad, const char *s)
{
	if (width <= 0)
		return;
	attrset(draw_attrs[role]);
	move(y, x);
	int cols = draw_put(s, width);
	if (pad && cols < width)
		hline(' ', width - cols);
	attrset(A_NORMAL);
}

void draw_textf(int y, int x, int width, enum draw_role role, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	draw_text(y, x, width, role, false, buf);
}

void draw_name(int y, int x, int width, enum draw_role role, const char *name)
{
	int len = (int)strlen(name);

	if (len <= width || width < 8) {
		draw_text(y, x, width, role, false, name);
		return;
	}
	draw_text(y, x, 1, role == DR_NORMAL ? DR_DIM : role, false, draw_has_utf8 ? "\u2026" : "~");
	draw_text(y, x + 1, width - 1, role, false, name + len - (width - 1));
}

void draw_rtext(int y, int x, int width, enum draw_role role, const char *s)
{
	/* Columns, not bytes: a figure may hold a "\u2265" (figure.h). */
	int len = (int)figure_width(s);

	if (len > width) {
		while (len > width)
			len -= ((unsigned char)*++s & 0xC0) != 0x80;
		draw_text(y, x, width, role, false, s);
		return;
	}
	attrset(draw_attrs[role]);
	mvhline(y, x, ' ', width - len);
	attrset(A_NORMAL);
	draw_text(y, x + width - len, len, role, false, s);
}

void draw_fill(int y, enum draw_role role)
{
	attrset(draw_attrs[role]);
	mvhline(y, 0, ' ', COLS);
	attrset(A_NORMAL);
}

void draw_bar(int y, int x, int width, double frac)
{
	static const char *const eighths[] = {"", "\u258f", "\u258e", "\u258d",
					      "\u258c", "\u258b", "\u258a", "\u2589"};
	if (frac < 0)
		frac = 0;
	if (frac > 1)
		frac = 1;
	int units = (int)(frac * width * 8 + 0.5);
	if (units == 0 && frac > 0)
		units = 1; /* a populated bucket is never invisible */
	if (units == 0)
		return;
	attrset(draw_attrs[DR_BAR]);
	move(y, x);
	if (draw_has_utf8) {
		for (int i = 0; i < units / 8; i++)
			draw_put("\u2588", 1);
		if (units % 8)
			draw_put(eighths[units % 8], 1);
	} else {
		int full = (units + 4) / 8;
		hline('#', full ? full : 1);
	}
	attrset(A_NORMAL);
}

const char *draw_spinner(unsigned tick)
{
	static const char *const braille[] = {"\u280b", "\u2819", "\u2839", "\u2838", "\u283c",
					      "\u2834", "\u2826", "\u2827", "\u2807", "\u280f"};
	static const char *const ascii[] = {"|", "/", "-", "\\"};

	return draw_has_utf8 ? braille[tick % 10] : ascii[tick % 4];
}

const char *draw_sort_mark(bool descending)
{
	if (draw_has_utf8)
		return descending ? "\u25bc" : "\u25b2";
	return descending ? "v" : "^";
}

const char *draw_ret_mark(void) { return draw_has_utf8 ? "\u25c0" : "<"; }

void draw_footer(int y, const struct draw_footer_item *items, size_t n)
{
	int x = 0;

	draw_fill(y, DR_NORMAL);
	for (size_t i = 0; i < n && x < COLS; i++) {
		int kl = (int)strlen(items[i].key), ll = (int)strlen(items[i].label);
		if (x + kl + ll + 1 > COLS)
			break; /* never a half item */
		draw_text(y, x, kl, DR_KEY, false, items[i].key);
		draw_text(y, x + kl, ll + 2, DR_NORMAL, false, " ");
		draw_text(y, x + kl + 1, ll, DR_NORMAL, false, items[i].label);
		x += kl + ll + 2;
	}
}

void fmt_duration(uint64_t ns, char *buf, size_t len)
{
	if (ns == 0)
		snprintf(buf, len, "-");
	else
		stats_format_duration(ns, buf, len);
}

void fmt_count(double v, char *buf, size_t len) { stats_format_count(v, buf, len); }

void fmt_bytes(unsigned long long b, char *buf, size_t len)
{
	static const char units[] = "KMGT";
	double v = (double)b / 1024;
	int u = 0;

	while (v >= 1000 && u < 3) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, v < 10 ? "%.1f%c" : "%.0f%c", v, units[u]);
}

void fmt_uptime(double s, char *buf, size_t len)
{
	unsigned long t = s > 0 ? (unsigned long)s : 0;

	if (t >= 86400)
		snprintf(buf, len, "%lud %lu:%02lu", t / 86400, t % 86400 / 3600, t % 3600 / 60);
	else if (t >= 3600)
		snprintf(buf, len, "%lu:%02lu:%02lu", t / 3600, t % 3600 / 60, t % 60);
	else
		snprintf(buf, len, "%lu:%02lu", t / 60, t % 60);
}

const char *fmt_basename(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;
	return s ? s + 1 : path ? path : "";
}
