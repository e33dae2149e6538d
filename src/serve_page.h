/* The /metrics page of --serve (Prometheus text exposition format 0.0.4).
 * Pure rendering: no HTTP, no threads; serve.c publishes the result. */
#ifndef RETOP_SERVE_PAGE_H
#define RETOP_SERVE_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

/* The whole page for snap into a fresh buffer (the caller frees *page);
 * sample_ns is how long session_sample() took; pid_label false leaves the
 * pid label out (--no-pid-label).  0 or -ENOMEM. */
int serve_page_render(const struct snapshot *snap, uint64_t sample_ns, bool pid_label, char **page,
		      size_t *len);
/* The page before the probes are in: retop_build_info, retop_ready 0 and
 * retop's own CPU time so far (cpu_s).  0 or -ENOMEM. */
int serve_page_render_starting(double cpu_s, char **page, size_t *len);

/* in[0..len) gzip-compressed into a fresh buffer.  0 or -ENOMEM. */
int serve_page_gzip(const char *in, size_t len, char **out, size_t *outlen);
/* Whether an Accept-Encoding header value (NULL: none) accepts gzip: named
 * (or x-gzip) with q > 0, or "*" with q > 0 and gzip not named. */
bool serve_page_accepts_gzip(const char *accept_encoding);

/* The `le` boundaries of retop_function_duration_seconds, in ns, fixed at
 * build time; exposed for tests.  Each one is E - 1 where E is a lower edge
 * of a log-linear bucket, so its cumulative count is an exact sum of
 * buckets.  Returns how many; *out points to a static array. */
size_t serve_page_le_bounds(const uint64_t **out);

#endif
