/* How every face shows a function's numbers (batch text, the dashboard):
 * a figure that is not exact says so, the same way everywhere.
 *   "<1.23us"  a duration under the function's resolution: retop cannot
 *              tell it from what its own traps leave in (snapshot.h);
 *   "~"        from a sample: estimated calls, or durations of a sample
 *              of the calls (--budget);
 *   ">="/"≥"   a lower bound: an estimate whose upper end is open;
 *   "!"        calls were dropped (the in-flight map was full): a lower
 *              bound too. */
#ifndef RETOP_FIGURE_H
#define RETOP_FIGURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snapshot_func;

/* ns is under f's resolution. */
bool figure_under_resolution(const struct snapshot_func *f, uint64_t ns);
/* A duration of f, "-" for 0; in 8 bytes at most. */
void figure_duration(const struct snapshot_func *f, uint64_t ns, char *buf, size_t len);
/* f's calls and calls a second; utf8: "≥" rather than ">=". */
void figure_calls(const struct snapshot_func *f, bool utf8, char *buf, size_t len);
void figure_rate(const struct snapshot_func *f, bool utf8, char *buf, size_t len);
/* f's failing share of its timed calls, since start or (interval) in the
 * last interval, in 5 columns: "12%", "0.5%", "<0.1%", "0%"; '~' when
 * the timed calls are a sample (--budget); "-" where it returns no error
 * or no call was timed, "?" where its errors are not read (errors_why). */
void figure_error_share(const struct snapshot_func *f, bool interval, char *buf, size_t len);
/* A share (0..1) as ERR% shows one, '~' when of a sample. */
void figure_share(double share, bool sampled, char *buf, size_t len);
/* Columns s takes on a terminal (UTF-8: one per character). */
size_t figure_width(const char *s);

#endif
