/* The interactive dashboard (ncursesw): process picker, function browser,
 * live table, detail view, help.  It never traces by itself: a worker thread
 * drives the session API and the screens read its snapshots. */
#ifndef RETOP_UI_H
#define RETOP_UI_H

#include "../src/cli.h"

/* Run the dashboard until the operator quits, -n refreshes have been shown,
 * or SIGINT/SIGTERM.  Returns the process exit code: 0 ok, 1 runtime
 * failure (one line on stderr says what failed). */
int ui_run(const struct cli_options *opts);

#endif
