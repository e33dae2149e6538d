#include "batch.h"

#include <errno.h>
#include <langinfo.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "func_order.h"
#include "log.h"
#include "session.h"
#include "tracer.h"

static volatile sig_atomic_t batch_stop;

static void batch_on_signal(int sig)
{
	batch_stop = sig;
}

static void batch_install_signals(void)
{
	struct sigaction sa = {.sa_handler = batch_on_signal};

	/* No SA_RESTART: a signal must cut the sleep short. */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static bool batch_utf8;

/* In the live table's order (--sort, the dashboard's default), as top -b
 * sorts by its screen's key: the function to look at first comes first. */
static void batch_print(const struct cli_options *o, const struct snapshot *snap)
{
	size_t order[RETOP_MAX_FUNCS];
	struct snapshot_rows rows = {
	    .order = order, .top = (size_t)o->top, .idle = o->idle, .utf8 = batch_utf8};

	func_order_sort(snap->funcs, snap->nfuncs, &o->sort, order);
	if (o->output == CLI_OUT_JSON)
		snapshot_print_json(stdout, snap, order);
	else
		snapshot_print_text(stdout, snap, &rows);
}

int batch_run(const struct cli_options *o)
{
	struct session *s;

	if (session_launch(o, LAUNCH_ATTACH, &s, NULL) != EXIT_OK)
		return EXIT_RUNTIME;
	batch_install_signals();
	/* The terminal's character set, for the "\u2265" of a lower bound. */
	if (setlocale(LC_CTYPE, "")) {
		const char *cs = nl_langinfo(CODESET);
		batch_utf8 = cs && (!strcmp(cs, "UTF-8") || !strcmp(cs, "utf8"));
	}
	uint64_t period = (uint64_t)(o->delay_s * 1e9), due = clock_now_ns() + period;
	for (long n = 0; !batch_stop && (o->iterations == 0 || n < o->iterations);
	     n++, due = session_next_due(due, period)) {
		/* The engine's clock runs until the snapshot is due; a signal
		 * (its flag set) cuts it short. */
		while (!batch_stop && session_run(s, due, -1) != SESSION_DUE)
			;
		if (batch_stop)
			break;
		const struct snapshot *snap = session_sample(s);
		batch_print(o, snap);
		if (ferror(stdout))
			break; /* the reader went away (retop -b | head) */
		if (snap->auto_detached)
			break; /* time is up: the session said so, and detached */
		if (snap->target_exited) {
			fprintf(stderr, "retop: PID %d %s; tracing stopped\n", o->pid,
				snap->target_end[0] ? snap->target_end : "exited");
			break;
		}
	}
	/* Interrupted mid-interval: one last snapshot, so nothing is lost. */
	if (batch_stop && !ferror(stdout))
		batch_print(o, session_sample(s));
	session_close(s);
	return 0;
}
