/* Drawing helpers shared by every screen: colours that degrade to
 * monochrome, UTF-8 glyphs with an ASCII fallback, clipped text, the header,
 * status and footer lines, and number formatting. */
#ifndef RETOP_UI_DRAW_H
#define RETOP_UI_DRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum draw_role {
	DR_NORMAL = 0,
	DR_TITLE,    /* table column titles */
	DR_SORT,     /* the sort column's title */
	DR_SELECTED, /* the cursor row */
	DR_HEADER,   /* header values */
	DR_KEY,	     /* a key in the footer */
	DR_INFO,     /* status line: progress */
	DR_WARN,
	DR_ERROR,
	DR_BAR,	  /* histogram bars */
	DR_MARK,  /* p50/p99 marks, RET markers, traced marks */
	DR_DIM,	  /* secondary text */
	DR_STUCK, /* an old in-flight call */
	DR_COUNT
};

/* Call once after initscr(). */
void draw_init(void);
bool draw_utf8(void);

/* Text at (y, x) clipped to width columns, padded with spaces when pad. */
void draw_text(int y, int x, int width, enum draw_role role, bool pad, const char *s);
void draw_textf(int y, int x, int width, enum draw_role role, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* A function name in width columns: when too long, its start gives way
 * ("...ssa.(*Value).String"): the end tells closures and methods apart. */
void draw_name(int y, int x, int width, enum draw_role role, const char *name);
/* Right-aligned in width columns. */
void draw_rtext(int y, int x, int width, enum draw_role role, const char *s);
/* A whole screen line filled with role. */
void draw_fill(int y, enum draw_role role);

/* A bar of value/max over width columns; eighths of a cell in UTF-8. */
void draw_bar(int y, int x, int width, double frac);
const char *draw_spinner(unsigned tick);
/* "^"/"v" or arrows, for the sort column. */
const char *draw_sort_mark(bool descending);
const char *draw_ret_mark(void);

/* Footer: "key label" pairs, keys highlighted, clipped to the width. */
struct draw_footer_item {
	const char *key, *label;
};
void draw_footer(int y, const struct draw_footer_item *items, size_t n);

/* Formatting into small caller buffers. */
void fmt_duration(uint64_t ns, char *buf, size_t len); /* "-" for 0 */
void fmt_count(double v, char *buf, size_t len);
void fmt_bytes(unsigned long long b, char *buf, size_t len); /* "12M" */
void fmt_uptime(double s, char *buf, size_t len);      /* "1:02:03" or "0:03" */
const char *fmt_basename(const char *path);

#endif
