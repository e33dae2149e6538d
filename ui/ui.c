/* The dashboard's main loop: a screen stack, and a poll() on the keyboard
 * and a self-pipe that the worker thread, the log sink and the signal
 * handlers write to, so keys stay responsive while the worker attaches
 * probes.  The screen is redrawn only when something changed: a key, a
 * publication of the worker, a log line, the spinner or the clock. */
#define _GNU_SOURCE
#include "ui.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../src/bigmem.h"
#include "../src/clock.h"

#include "screens.h"

#define UI_RESCAN_NS 2000000000ull
#define UI_SPIN_MS 100

static int ui_pipe[2] = {-1, -1};
static volatile sig_atomic_t ui_signalled;

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

/* ---- the screen stack ---- */

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
	bool detail = false;

	/* The detail page left the stack: no function's callers are read. */
	for (int i = 0; i < ui->depth; i++)
		detail |= ui->stack[i] == SCR_DETAIL;
	if (ui->worker_up) {
		worker_lock(&ui->w);
		if (!detail && ui->w.detail_f)
			worker_detail_locked(&ui->w, NULL);
		worker_unlock(&ui->w);
	}
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

/* ---- the loop ---- */

/* Wait for a key, the worker, a log line, a signal or the next timer;
 * true when the worker or the log sink published something. */
static bool ui_wait(struct ui *ui, int timeout_ms)
{
	struct pollfd fds[2] = {{.fd = STDIN_FILENO, .events = POLLIN},
				{.fd = ui_pipe[0], .events = POLLIN}};
	char buf[64];
	bool woke = false;
	ssize_t n;

	if (poll(fds, 2, timeout_ms) <= 0)
		return false;
	/* The terminal went away (ssh dropped): stdin would poll readable
	 * forever, so leave, detaching everything, instead of spinning. */
	if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL))
		ui->quit = true;
	if (fds[1].revents & POLLIN)
		while ((n = read(ui_pipe[0], buf, sizeof(buf))) > 0)
			woke = true;
	return woke;
}

/* Milliseconds to the next second of the wall clock the header shows. */
static int ui_ms_to_next_second(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int)((1000000000l - ts.tv_nsec) / 1000000) + 1;
}

static void ui_loop(struct ui *ui)
{
	uint64_t next_scan = 0, next_spin = 0;
	time_t drawn_at = 0;
	bool dirty = true;

	while (!ui->quit && !ui_signalled) {
		uint64_t now = clock_now_ns();
		if (ui_top(ui) == SCR_PICKER && now >= next_scan) {
			worker_post(&ui->w, &(struct worker_job){.kind = JOB_SCAN});
			next_scan = now + UI_RESCAN_NS;
		}
		bool spinning = ui->busy || ui->wstate == WS_OPENING;
		if (spinning && now >= next_spin) {
			ui->spin++;
			next_spin = now + UI_SPIN_MS * 1000000ull;
			dirty = true;
		}
		dirty |= ui_sync(ui);
		dirty |= logsink_sync(ui);
		dirty |= time(NULL) != drawn_at; /* the header's clock */
		if (dirty) {
			ui_draw(ui);
			ui->draws++;
			drawn_at = time(NULL);
		}
		dirty = false;
		if (ui->opts->iterations && ui->ticks_seen >= (uint64_t)ui->opts->iterations)
			break; /* -n: the last refresh is on the screen */
		dirty = ui_wait(ui, spinning ? UI_SPIN_MS : ui_ms_to_next_second());
		int key;
		while ((key = getch()) != ERR) {
			int flags = ui_dispatch(ui, key);
			if (flags & UI_REDRAW || key == KEY_RESIZE)
				dirty = true;
			if (flags & UI_QUIT || ui->quit)
				break;
		}
	}
}

/* ---- start and end ---- */

static int ui_setup(struct ui *ui, const struct cli_options *o)
{
	struct session_opts so;
	struct session *s = NULL;
	char err[ERR_LEN], trace_err[ERR_LEN] = "";

	session_opts_from_cli(o, &so);
	/* With -p/-x the session opens before curses, so that a PID that is
	 * not Go or a pattern that matches nothing is one clear line. */
	if ((o->pid || o->exe) && session_launch(o, LAUNCH_CHECK, &s, trace_err) != EXIT_OK)
		return -1;
	ui->funcs = bigmem_calloc(RETOP_MAX_FUNCS, sizeof(*ui->funcs));
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
		ui_status(ui, DR_INFO, "/ filters by command or PID, Enter opens a process");
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

/* After the loop: detach first, so the probes go even if the terminal is
 * gone; the kernel waits for a grace period per probe: say so meanwhile. */
static void ui_teardown(struct ui *ui, bool curses)
{
	if (curses && ui->nfuncs && !ui->exited) {
		ui_status(ui, DR_INFO, "detaching %zu functions...", ui->nfuncs);
		ui->busy = false;
		ui_draw(ui);
	}
	browser_close(ui);
	worker_stop(&ui->w);
	if (curses)
		term_end();
	logsink_end();
	picker_close(ui);
	live_close(ui);
	detail_close(ui);
	snapshot_funcs_free(ui->funcs, RETOP_MAX_FUNCS);
	free(ui->fptr);
	close(ui_pipe[0]);
	close(ui_pipe[1]);
}

int ui_run(const struct cli_options *opts)
{
	struct ui ui = {.opts = opts, .delay = opts->delay_s, .interval_pct = false};
	char note[256];

	setlocale(LC_ALL, "");
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		fprintf(stderr, "retop: the dashboard needs a terminal on stdin and stdout: use -b for "
				"text or JSON snapshots\n");
		return 2;
	}
	if (term_choose(note, sizeof(note)) != 0)
		return 2;
	if (ui_setup(&ui, opts) != 0) {
		snapshot_funcs_free(ui.funcs, RETOP_MAX_FUNCS);
		free(ui.fptr);
		return 1;
	}
	if (picker_open(&ui) || live_open(&ui) || detail_open(&ui)) {
		fprintf(stderr, "retop: cannot set up the dashboard: out of memory\n");
		ui_teardown(&ui, false);
		return 1;
	}
	ui_install_signals();
	logsink_begin(ui_pipe[1]);
	if (term_begin() != 0) {
		ui_teardown(&ui, false);
		fprintf(stderr, "retop: cannot start the terminal '%s': set TERM or use -b\n",
			getenv("TERM"));
		return 1;
	}
	ui_first_screens(&ui);
	if (note[0]) /* on the status line, and again on exit */
		ui_status(&ui, DR_WARN, "%s", note);
	uint64_t t0 = clock_now_ns();
	ui_loop(&ui);
	double secs = (double)(clock_now_ns() - t0) / 1e9;
	ui_teardown(&ui, true);
	if (note[0])
		fprintf(stderr, "retop: %s\n", note);
	if (opts->verbose) /* what the dashboard cost, in frames drawn */
		fprintf(stderr, "retop: ui: %llu frames drawn in %.1f s\n",
			(unsigned long long)ui.draws, secs);
	return ui.exit_code;
}
