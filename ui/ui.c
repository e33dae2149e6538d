/* The dashboard's main loop: a screen stack, key dispatch through tables,
 * and a poll() on the keyboard and a self-pipe that the worker thread, the
 * log sink and the signal handlers write to, so keys stay responsive while
 * the worker attaches probes. */
#define _GNU_SOURCE
#include "ui.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <locale.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../src/log.h"
#include "screens.h"

#define UI_RESCAN_NS 2000000000ull
#define UI_SPIN_MS 100

static int ui_pipe[2] = {-1, -1};
static volatile sig_atomic_t ui_signalled;

/* ---- log lines while curses owns the terminal ---- */

/* Lines reach the status line at once and are replayed on stderr after
 * endwin(): a warning seen for a second on a busy screen is not lost. */
static struct {
	pthread_mutex_t mu;
	char *replay;
	size_t len, cap;
	char last[256];
	enum log_level level;
	uint64_t seq;
} ui_log = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void ui_log_sink(enum log_level level, const char *line, void *ctx)
{
	size_t n = strlen(line);
	(void)ctx;

	pthread_mutex_lock(&ui_log.mu);
	if (ui_log.len + n + 2 > ui_log.cap && ui_log.cap < (1u << 20)) {
		size_t cap = ui_log.cap ? ui_log.cap * 2 : 4096;
		while (cap < ui_log.len + n + 2)
			cap *= 2;
		char *p = realloc(ui_log.replay, cap);
		if (p) {
			ui_log.replay = p;
			ui_log.cap = cap;
		}
	}
	if (ui_log.len + n + 2 <= ui_log.cap) {
		memcpy(ui_log.replay + ui_log.len, line, n);
		ui_log.len += n;
		ui_log.replay[ui_log.len++] = '\n';
	}
	/* The status line has no room for the "retop: " prefix. */
	snprintf(ui_log.last, sizeof(ui_log.last), "%s",
		 strncmp(line, "retop: ", 7) == 0 ? line + 7 : line);
	ui_log.level = level;
	ui_log.seq++;
	pthread_mutex_unlock(&ui_log.mu);
	char c = 2;
	ssize_t r = write(ui_pipe[1], &c, 1);
	(void)r;
}

static void ui_log_replay(void)
{
	if (ui_log.len)
		fwrite(ui_log.replay, 1, ui_log.len, stderr);
	free(ui_log.replay);
	ui_log.replay = NULL;
	ui_log.len = ui_log.cap = 0;
}

/* Anything else written to fd 2 (a library's own message) would tear the
 * screen: send it to a file and copy it out after endwin(), as htop does. */
static int ui_stderr_begin(FILE **tmp)
{
	int saved = dup(STDERR_FILENO);

	*tmp = tmpfile();
	if (saved < 0 || !*tmp) {
		if (*tmp)
			fclose(*tmp);
		*tmp = NULL;
		if (saved >= 0)
			close(saved);
		return -1;
	}
	fflush(stderr);
	dup2(fileno(*tmp), STDERR_FILENO);
	return saved;
}

static void ui_stderr_end(FILE *tmp, int saved)
{
	char buf[4096];
	size_t n;

	if (saved < 0)
		return;
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	rewind(tmp);
	while ((n = fread(buf, 1, sizeof(buf), tmp)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(tmp);
}

static void ui_on_signal(int sig)
{
	char c = 3;
	ui_signalled = sig;
	ssize_t r = write(ui_pipe[1], &c, 1);
	(void)r;
}

static void ui_install_signals(void)
{
	struct sigaction sa = {.sa_handler = ui_on_signal};

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

/* ---- screens ---- */

const struct ui_screen *ui_screen_of(enum ui_screen_id id)
{
	static const struct ui_screen *const screens[SCR_COUNT] = {
		[SCR_PICKER] = &picker_screen, [SCR_BROWSER] = &browser_screen,
		[SCR_LIVE] = &live_screen,     [SCR_DETAIL] = &detail_screen,
		[SCR_HELP] = &help_screen,
	};
	return screens[id];
}

enum ui_screen_id ui_top(const struct ui *ui) { return ui->stack[ui->depth - 1]; }

static void ui_entered(struct ui *ui)
{
	const struct ui_screen *sc = ui_screen_of(ui_top(ui));
	if (sc->enter)
		sc->enter(ui);
	clear();
}

void ui_push(struct ui *ui, enum ui_screen_id id)
{
	if (ui->depth == (int)(sizeof(ui->stack) / sizeof(ui->stack[0])))
		ui->depth--;
	ui->stack[ui->depth++] = id;
	ui_entered(ui);
}

void ui_pop(struct ui *ui)
{
	if (ui->depth > 1) {
		ui->depth--;
		ui_entered(ui);
	}
}

void ui_replace(struct ui *ui, enum ui_screen_id id)
{
	ui->stack[ui->depth - 1] = id;
	ui_entered(ui);
}

void ui_status(struct ui *ui, enum draw_role role, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ui->status, sizeof(ui->status), fmt, ap);
	va_end(ap);
	ui->status_role = role;
}

void ui_toggle_trace(struct ui *ui, struct func_info *f)
{
	struct worker *w = &ui->w;
	bool full = false, queued = false;

	worker_lock(w);
	uint8_t st = w->tstate ? w->tstate[f - w->idx->funcs] : TS_NONE;
	struct worker_job job = {.kind = st == TS_NONE ? JOB_TRACE : JOB_UNTRACE, .f = f};
	if (st == TS_NONE && w->ntraced >= w->sopts.max_functions)
		full = true;
	else if (st != TS_QUEUED)
		queued = worker_post_locked(w, &job);
	worker_unlock(w);
	if (full)
		ui_status(ui, DR_ERROR, "at most %zu functions are traced at once: raise --max-functions",
			  ui->w.sopts.max_functions);
	else if (!queued && st != TS_QUEUED)
		ui_status(ui, DR_ERROR, "too many requests queued: wait a moment");
	else if (queued && job.kind == JOB_TRACE && !ui->can_trace)
		ui_status(ui, DR_ERROR, "cannot trace: %s", ui->w.trace_err);
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
		snprintf(line, sizeof(line), "retop - %s up %s, pid %d %s", clock, up, ui->target_pid,
			 ui->target);
	else
		snprintf(line, sizeof(line), "retop - %s up %s, every process running %s", clock, up,
			 ui->target);
	draw_text(0, 0, COLS, DR_NORMAL, true, line);
}

/* ---- list and text helpers ---- */

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
	switch (key) {
	case KEY_UP: case 'k': l->cur--; break;
	case KEY_DOWN: case 'j': l->cur++; break;
	case KEY_PPAGE: l->cur -= height > 1 ? height - 1 : 1; break;
	case KEY_NPAGE: l->cur += height > 1 ? height - 1 : 1; break;
	case KEY_HOME: case 'g': l->cur = 0; break;
	case KEY_END: case 'G': l->cur = n - 1; break;
	default: return 0;
	}
	ui_list_fix(l, n, height);
	return UI_HANDLED | UI_REDRAW;
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
	enum ui_screen_id top = ui_top(ui);

	if (ui->depth == 1)
		return UI_HANDLED;
	if (top == SCR_BROWSER && ui->stack[ui->depth - 2] == SCR_PICKER) {
		/* Back to the picker: the session goes, with all its probes. */
		browser_close(ui);
		ui->nfuncs = 0;
		ui->have_snap = false;
		ui->wstate = WS_NONE;
		ui->idx = NULL;
		worker_post(&ui->w, &(struct worker_job){.kind = JOB_CLOSE});
		ui_status(ui, DR_INFO, "detached from PID %d", ui->target_pid);
	}
	ui_pop(ui);
	return UI_REDRAW;
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

static const struct ui_key ui_global_keys[] = {
	{'q', "q", "quit (detaches every probe)", ui_key_quit, "quit"},
	{'?', "?", "help", ui_key_help, "help"},
	{KEY_F(1), NULL, NULL, ui_key_help, NULL},
	{27, "Esc", "back to the previous screen", ui_key_back, NULL},
	{KEY_BACKSPACE, NULL, NULL, ui_key_back, NULL},
	{127, NULL, NULL, ui_key_back, NULL},
	{'h', NULL, NULL, ui_key_back, NULL},
	{KEY_LEFT, NULL, NULL, ui_key_back, NULL},
	{'d', "d", "set the refresh delay", ui_key_delay, NULL},
	{'p', "p", "pause the display", ui_key_pause, NULL},
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
			ui_status(ui, DR_ERROR, "delay must be seconds >= 0.05, got '%s'", ui->prompt.buf);
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

static int ui_dispatch(struct ui *ui, int key)
{
	const struct ui_screen *sc = ui_screen_of(ui_top(ui));
	int flags;

	if (key == KEY_RESIZE)
		return UI_REDRAW;
	if (key == 3) /* ^C arrives as a key when the terminal is raw */
		return ui_key_quit(ui, key);
	if (ui->prompting)
		return ui_prompt_key(ui, key);
	if (sc->input && (flags = sc->input(ui, key)))
		return flags;
	if ((flags = ui_dispatch_in(ui, sc->keys, sc->nkeys, key)))
		return flags;
	size_t n;
	const struct ui_key *g = ui_global_key_table(&n);
	return ui_dispatch_in(ui, g, n, key);
}

/* ---- frame ---- */

static void ui_draw_status(struct ui *ui)
{
	int y = LINES - 2, x = 0;

	draw_fill(y, DR_NORMAL);
	if (ui->prompting || ui->editing) {
		if (ui->prompting)
			snprintf(ui->edit, sizeof(ui->edit), "Delay in seconds: %s", ui->prompt.buf);
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
static void ui_draw_footer(struct ui *ui)
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

static void ui_draw(struct ui *ui)
{
	erase();
	if (LINES < 8 || COLS < 40) {
		draw_text(0, 0, COLS, DR_ERROR, false, "terminal too small for retop (40x8 at least)");
		refresh();
		return;
	}
	ui->editing = false;
	ui_screen_of(ui_top(ui))->draw(ui);
	ui_draw_footer(ui);
	ui_draw_status(ui); /* last: the cursor stays in a text entry */
	refresh();
}

/* Copy what the worker published (under its mutex, briefly). */
static bool ui_sync(struct ui *ui)
{
	struct worker *w = &ui->w;
	bool changed = false;
	enum worker_state was = ui->wstate;

	worker_lock(w);
	if (w->snap_seq != ui->snap_seq && !ui->paused) {
		ui->snap_seq = w->snap_seq;
		ui->snap = w->snap;
		ui->nfuncs = w->snap_n;
		memcpy(ui->funcs, w->snap_funcs, w->snap_n * sizeof(*ui->funcs));
		memcpy(ui->fptr, w->snap_fptr, w->snap_n * sizeof(*ui->fptr));
		ui->snap.funcs = ui->funcs;
		ui->have_snap = w->snap_seq > 0 && w->state == WS_READY;
		changed = true;
	}
	if (w->ticks != ui->ticks_seen) {
		ui->ticks_seen = w->ticks;
		changed = true;
	}
	if (w->progress_seq != ui->progress_seq) {
		ui->progress_seq = w->progress_seq;
		ui_status(ui, DR_INFO, "%s", w->progress);
		changed = true;
	}
	bool busy = worker_busy_locked(w);
	changed |= busy != ui->busy;
	ui->busy = busy;
	/* A session counts only when it is newer than the request: a close
	 * queued before the open must not show the old one. */
	if (was == WS_OPENING && w->session_gen > ui->open_gen && w->state != WS_NONE &&
	    w->state != WS_OPENING) {
		ui->wstate = w->state;
		if (w->state == WS_FAILED) {
			ui_status(ui, DR_ERROR, "%s", w->open_err);
			ui->wstate = WS_NONE;
		}
	}
	if (ui->wstate == WS_READY) {
		ui->idx = w->idx;
		snprintf(ui->target, sizeof(ui->target), "%s", w->target);
		ui->target_pid = w->pid;
		ui->can_trace = w->can_trace;
	}
	worker_unlock(w);
	if (was == WS_OPENING && ui->wstate == WS_READY) {
		if (browser_open(ui) == 0)
			ui_push(ui, SCR_BROWSER);
		else
			ui_status(ui, DR_ERROR, "out of memory");
		changed = true;
	}
	return changed;
}

static bool ui_sync_log(struct ui *ui)
{
	static uint64_t seen;
	bool changed = false;

	pthread_mutex_lock(&ui_log.mu);
	if (ui_log.seq != seen) {
		seen = ui_log.seq;
		ui_status(ui, ui_log.level <= LOG_ERROR ? DR_ERROR
			      : ui_log.level == LOG_WARN ? DR_WARN : DR_INFO,
			  "%s", ui_log.last);
		changed = true;
	}
	pthread_mutex_unlock(&ui_log.mu);
	return changed;
}

static uint64_t ui_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Wait for a key, the worker, a signal or the next timer. */
static void ui_wait(struct ui *ui, int timeout_ms)
{
	struct pollfd fds[2] = {{.fd = STDIN_FILENO, .events = POLLIN},
				{.fd = ui_pipe[0], .events = POLLIN}};
	char buf[64];

	if (poll(fds, 2, timeout_ms) <= 0)
		return;
	/* The terminal went away (ssh dropped): stdin would poll readable
	 * forever, so leave, detaching everything, instead of spinning. */
	if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL))
		ui->quit = true;
	if (fds[1].revents & POLLIN)
		while (read(ui_pipe[0], buf, sizeof(buf)) > 0)
			;
}

static void ui_loop(struct ui *ui)
{
	uint64_t next_scan = 0, next_spin = 0;
	bool dirty = true;

	while (!ui->quit && !ui_signalled) {
		uint64_t now = ui_now_ns();
		if (ui_top(ui) == SCR_PICKER && now >= next_scan) {
			worker_post(&ui->w, &(struct worker_job){.kind = JOB_SCAN});
			next_scan = now + UI_RESCAN_NS;
		}
		if ((ui->busy || ui->wstate == WS_OPENING) && now >= next_spin) {
			ui->spin++;
			next_spin = now + UI_SPIN_MS * 1000000ull;
			dirty = true;
		}
		dirty |= ui_sync(ui);
		dirty |= ui_sync_log(ui);
		if (dirty)
			ui_draw(ui);
		dirty = false;
		if (ui->opts->iterations && ui->ticks_seen >= (uint64_t)ui->opts->iterations)
			break; /* -n: the last refresh is on the screen */
		ui_wait(ui, ui->busy || ui->wstate == WS_OPENING ? UI_SPIN_MS : 1000);
		int key;
		while ((key = getch()) != ERR) {
			int flags = ui_dispatch(ui, key);
			if (flags & UI_REDRAW || key == KEY_RESIZE)
				dirty = true;
			if (flags & UI_QUIT || ui->quit)
				break;
		}
		/* The clock in the header moves even when nothing else does. */
		dirty = true;
	}
}

/* ---- start and end ---- */

/* With -p/-x: open the session before curses, so that a PID that is not
 * Go or a pattern that matches nothing is one clear line on stderr. */
static int ui_open_target(const struct cli_options *o, const struct session_opts *so,
			  struct session **s, char *trace_err)
{
	char err[ERR_LEN];

	if (session_open(so, s, err) != 0) {
		fprintf(stderr, "retop: %s\n", err);
		return -1;
	}
	if (session_start_tracing(*s, trace_err) != 0 && o->npatterns) {
		fprintf(stderr, "retop: %s\n", trace_err);
		session_close(*s);
		return -1;
	}
	if (session_check_patterns(*s, o->patterns, o->npatterns, err) != 0) {
		fprintf(stderr, "retop: %s\n", err);
		session_close(*s);
		return -1;
	}
	return 0;
}

static int ui_setup(struct ui *ui, const struct cli_options *o)
{
	struct session_opts so;
	struct session *s = NULL;
	char err[ERR_LEN], trace_err[ERR_LEN] = "";

	session_opts_from_cli(o, &so);
	if ((o->pid || o->exe) && ui_open_target(o, &so, &s, trace_err) != 0)
		return -1;
	ui->funcs = calloc(RETOP_MAX_FUNCS, sizeof(*ui->funcs));
	ui->fptr = calloc(RETOP_MAX_FUNCS, sizeof(*ui->fptr));
	if (!ui->funcs || !ui->fptr || pipe2(ui_pipe, O_NONBLOCK | O_CLOEXEC) != 0) {
		fprintf(stderr, "retop: cannot set up the dashboard: %s\n", strerror(errno));
		session_close(s);
		return -1;
	}
	if (worker_start(&ui->w, s, &so, trace_err, o->patterns, o->npatterns, o->delay_s,
			 ui_pipe[1], err) != 0) {
		fprintf(stderr, "retop: %s\n", err);
		session_close(s);
		return -1;
	}
	ui->worker_up = true;
	if (s && trace_err[0])
		ui_status(ui, DR_WARN, "browsing only: %s", trace_err);
	return 0;
}

static void ui_first_screens(struct ui *ui)
{
	if (!ui->opts->pid && !ui->opts->exe) {
		ui->stack[ui->depth++] = SCR_PICKER;
		ui_status(ui, DR_INFO, "type to filter, Enter opens a process");
		return;
	}
	ui->wstate = WS_READY;
	ui_sync(ui);
	if (browser_open(ui) == 0)
		ui->stack[ui->depth++] = SCR_BROWSER;
	if (ui->opts->npatterns)
		ui->stack[ui->depth++] = SCR_LIVE;
	if (ui->depth == 0)
		ui->stack[ui->depth++] = SCR_PICKER;
	ui_entered(ui);
}

static void ui_curses_begin(void)
{
	initscr();
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	nodelay(stdscr, TRUE);
	set_escdelay(25); /* Esc is "back": do not wait a second for it */
	curs_set(0);
	draw_init();
}

int ui_run(const struct cli_options *opts)
{
	struct ui ui = {.opts = opts, .delay = opts->delay_s, .interval_pct = false};
	FILE *errtmp = NULL;

	setlocale(LC_ALL, "");
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "retop: the dashboard needs a terminal on stdin and stdout: use -b for "
				"text or JSON snapshots\n");
		return 2;
	}
	if (ui_setup(&ui, opts) != 0) {
		free(ui.funcs);
		free(ui.fptr);
		return 1;
	}
	picker_open(&ui);
	live_open(&ui);
	detail_open(&ui);
	ui_install_signals();
	log_set_sink(ui_log_sink, NULL);
	int saved_err = ui_stderr_begin(&errtmp);
	ui_curses_begin();
	ui_first_screens(&ui);
	ui_loop(&ui);
	/* Detach first: the probes go even if the terminal is gone.  The
	 * kernel waits for a grace period per probe: say so meanwhile. */
	if (ui.nfuncs) {
		ui_status(&ui, DR_INFO, "detaching %zu functions...", ui.nfuncs);
		ui.busy = false;
		ui_draw(&ui);
	}
	browser_close(&ui);
	worker_stop(&ui.w);
	endwin();
	ui_stderr_end(errtmp, saved_err);
	log_set_sink(NULL, NULL);
	ui_log_replay();
	picker_close(&ui);
	live_close(&ui);
	detail_close(&ui);
	free(ui.funcs);
	free(ui.fptr);
	close(ui_pipe[0]);
	close(ui_pipe[1]);
	return ui.exit_code;
}
