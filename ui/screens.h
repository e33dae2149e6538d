/* What every screen of the dashboard shares: the ui state, the key table
 * (htop style: handlers return flags instead of one giant switch), the
 * screen interface, and small list and text-entry helpers. */
#ifndef RETOP_UI_SCREENS_H
#define RETOP_UI_SCREENS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifndef NCURSES_WIDECHAR
#define NCURSES_WIDECHAR 1
#endif
#include <curses.h>

#include "../src/cli.h"
#include "draw.h"
#include "worker.h"

/* What a key handler did. */
enum ui_flags { UI_HANDLED = 1, UI_REDRAW = 2, UI_RESCAN = 4, UI_QUIT = 8 };

struct ui;
typedef int (*ui_key_fn)(struct ui *ui, int key);
typedef int (*ui_confirm_fn)(struct ui *ui);

struct ui_key {
	int key;	  /* a character or a curses KEY_* code */
	const char *name; /* for the footer and help; NULL: an alias, not listed */
	const char *help;
	ui_key_fn fn;	    /* NULL: documented here, handled by the global table */
	const char *footer; /* short label for the footer, or NULL */
};

enum ui_screen_id { SCR_PICKER = 0, SCR_BROWSER, SCR_LIVE, SCR_DETAIL, SCR_HELP, SCR_COUNT };

struct ui_screen {
	const char *title;
	const struct ui_key *keys;
	size_t nkeys;
	void (*draw)(struct ui *ui);
	/* Text entry gets keys before the table; returns 0 when it did not
	 * take the key. */
	int (*input)(struct ui *ui, int key);
	void (*enter)(struct ui *ui); /* became the top screen */
	/* The shared movement keys (keys.c), given to the screen; letters
	 * (j/k/g/G) only where letters are not typed as text. */
	int (*nav)(struct ui *ui, int key);
	bool nav_letters;
};

/* A cursor over n rows shown height at a time. */
struct ui_list {
	long cur, top;
};

struct ui_input {
	char buf[128];
	size_t len;
};

struct picker;
struct browser;
struct live;
struct detail;

struct ui {
	const struct cli_options *opts;
	struct worker w;
	bool worker_up;
	enum ui_screen_id stack[8];
	int depth;
	bool quit;
	int exit_code;
	unsigned spin;

	/* Copied from the worker under its mutex: drawing never holds it long. */
	enum worker_state wstate; /* the UI's view: NONE on the picker */
	uint64_t open_gen;
	const struct func_index *idx; /* the engine's: read only */
	char target[600];
	int target_pid;
	bool can_trace;
	struct snapshot snap;
	struct snapshot_func *funcs;
	const struct func_info **fptr;
	size_t nfuncs;
	uint64_t snap_seq, ticks_seen, progress_seq;
	bool have_snap, busy;

	double delay;
	bool paused, interval_pct;

	char status[256];
	enum draw_role status_role;

	bool prompting; /* the status line is asking for the delay */
	bool editing;	/* a screen's text entry owns the status line */
	char edit[200];
	struct ui_input prompt;
	ui_confirm_fn confirm_fn; /* a yes/no question owns the keyboard */
	char confirm_text[160];
	const char *confirm_no; /* what any other key did; NULL: "cancelled: still tracing" */
	bool exited;	/* the -p target exited: the last snapshot stays */
	uint64_t draws; /* frames drawn, for -v and the benchmark */

	struct picker *picker;
	struct browser *browser;
	struct live *live;
	struct detail *detail;
	struct ui_list help;
};

/* Layout: two header lines, the body, a status line and the footer. */
#define UI_BODY_TOP 2

extern const struct ui_screen picker_screen, browser_screen, live_screen, detail_screen,
	help_screen;

/* ui.c: the screen stack and the loop */
void ui_push(struct ui *ui, enum ui_screen_id id);
void ui_pop(struct ui *ui);
void ui_replace(struct ui *ui, enum ui_screen_id id);
enum ui_screen_id ui_top(const struct ui *ui);
const struct ui_screen *ui_screen_of(enum ui_screen_id id);

/* frame.c: header, status line, footer */
void ui_status(struct ui *ui, enum draw_role role, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void ui_header_target(struct ui *ui); /* header line 0 */
void ui_draw(struct ui *ui);

/* keys.c: tables, dispatch, list and text helpers */
int ui_dispatch(struct ui *ui, int key);
int ui_list_key(struct ui_list *l, int key, long n, int height);
/* A page: the movement keys move its top line over lines. */
int ui_scroll_key(struct ui_list *l, int key, long lines, int height);
void ui_list_fix(struct ui_list *l, long n, int height);
/* 1 when the key edited the text, 0 when it is not a text key. */
int ui_input_key(struct ui_input *in, int key);
bool ui_is_backspace(int key);
/* The sort column after cur for s or > (before it for <), among the n
 * columns usable[] allows; the picker and the live table share it. */
int ui_sort_next(int cur, int key, int n, const bool *usable);
/* The keys every screen has (q, ?, Esc...), and the movement keys. */
const struct ui_key *ui_global_key_table(size_t *n);
const struct ui_key *ui_move_key_table(size_t *n);
/* Ask on the status line; y runs fn, any other key cancels (and says so:
 * ui->confirm_no, which each question may set after asking). */
void ui_confirm(struct ui *ui, ui_confirm_fn fn, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* session_view.c: the worker's publications, tracing, leaving a target */
bool ui_sync(struct ui *ui);
void ui_toggle_trace(struct ui *ui, const struct func_info *f);
int ui_back(struct ui *ui); /* Esc */

/* logsink.c: log lines and stderr while curses owns the terminal */
void logsink_begin(int wake_fd);
void logsink_end(void);
bool logsink_sync(struct ui *ui);

/* term.c: terminfo entry with fallbacks, curses on and off */
int term_choose(char *note, size_t len); /* -1 after one line on stderr */
int term_begin(void);
void term_end(void);

/* Screens' lifetimes, called by ui.c. */
int picker_open(struct ui *ui);
void picker_close(struct ui *ui);
int browser_open(struct ui *ui);
void browser_close(struct ui *ui);
int live_open(struct ui *ui);
void live_close(struct ui *ui);
int detail_open(struct ui *ui);
void detail_close(struct ui *ui);
/* Show the detail of f (the live table's Enter). */
void detail_show(struct ui *ui, const struct func_info *f);
static inline int ui_body_height(void) { return LINES - UI_BODY_TOP - 2; }

#endif
