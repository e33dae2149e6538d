/* Headless agent mode (--serve ADDR): no TUI; the traced functions' counters
 * and latency histograms are served over HTTP as /metrics in the Prometheus
 * text exposition format 0.0.4, with /healthz for liveness checks. */
#ifndef RETOP_SERVE_H
#define RETOP_SERVE_H

#include "cli.h"

/* Returns the process exit code: 0 after SIGTERM/SIGINT/SIGHUP (or when a -p
 * target exited, or after -n samples), 1 on a runtime failure (address in
 * use, cannot trace), 2 when ADDR is malformed. */
int serve_run(const struct cli_options *opts);

#endif
