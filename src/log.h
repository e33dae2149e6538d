/* Messages and errors.
 *
 * Every module reports failures the libbpf way: functions returning int
 * return a negative errno and, when given an error buffer, fill it with one
 * line that names the object that failed and what to do about it.  Log lines
 * go to stderr, or to a sink the UI installs while curses owns the terminal.
 */
#ifndef RETOP_LOG_H
#define RETOP_LOG_H

#include <stdarg.h>
#include <stddef.h>

#define ERR_LEN 512

enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG };

typedef void (*log_sink_fn)(enum log_level level, const char *line, void *ctx);

void log_set_level(enum log_level level);
/* NULL restores stderr. */
void log_set_sink(log_sink_fn sink, void *ctx);
void log_msg(enum log_level level, const char *module, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#define log_error(mod, ...) log_msg(LOG_ERROR, mod, __VA_ARGS__)
#define log_warn(mod, ...) log_msg(LOG_WARN, mod, __VA_ARGS__)
#define log_info(mod, ...) log_msg(LOG_INFO, mod, __VA_ARGS__)
#define log_debug(mod, ...) log_msg(LOG_DEBUG, mod, __VA_ARGS__)

/* Write one line into err (ERR_LEN bytes, may be NULL); return -errnum.
 * errnum is a positive errno value. */
int err_set(char *err, int errnum, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Route libbpf's own messages into ours: silent unless -v. */
void log_route_libbpf(void);

#endif
