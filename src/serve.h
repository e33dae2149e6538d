/* Headless agent mode (--serve ADDR): no TUI; the traced functions' counters
 * and latency histograms are served over HTTP as /metrics in the Prometheus
 * text exposition format 0.0.4, with /healthz for liveness checks. */
#ifndef RETOP_SERVE_H
#define RETOP_SERVE_H

#include <stddef.h>
#include <stdint.h>

#include "cli.h"

/* Returns the process exit code: 0 after SIGTERM/SIGINT/SIGHUP (or when a -p
 * target exited, or after -n samples), 1 on a runtime failure (address in
 * use, cannot trace), 2 when ADDR is malformed. */
int serve_run(const struct cli_options *opts);

/* The `le` boundaries of retop_function_duration_seconds, in ns, fixed at
 * build time; exposed for tests.  Each one is E - 1 where E is a lower edge
 * of a log-linear bucket, so its cumulative count is an exact sum of
 * buckets.  Returns how many; *out points to a static array. */
size_t serve_le_bounds(const uint64_t **out);

#endif
