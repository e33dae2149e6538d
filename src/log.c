#include "log.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

static enum log_level current_level = LOG_WARN;
static log_sink_fn current_sink;
static void *current_sink_ctx;

void log_set_level(enum log_level level) { current_level = level; }


void log_set_sink(log_sink_fn sink, void *ctx)
{
	current_sink = sink;
	current_sink_ctx = ctx;
}

static void log_emit(enum log_level level, const char *module, const char *fmt, va_list ap)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	char line[1024];
	int n = snprintf(line, sizeof(line), "retop: %s%s%s: ", module ? module : "",
			 module ? ": " : "", names[level]);
	if (n < 0 || (size_t)n >= sizeof(line))
		n = 0;
	vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	size_t len = strlen(line);
	while (len && line[len - 1] == '\n')
		line[--len] = '\0';
	if (current_sink)
		current_sink(level, line, current_sink_ctx);
	else
		fprintf(stderr, "%s\n", line);
}

void log_msg(enum log_level level, const char *module, const char *fmt, ...)
{
	if (level > current_level)
		return;
	va_list ap;
	va_start(ap, fmt);
	log_emit(level, module, fmt, ap);
	va_end(ap);
}

int err_set(char *err, int errnum, const char *fmt, ...)
{
	if (err) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(err, ERR_LEN, fmt, ap);
		va_end(ap);
	}
	return errnum > 0 ? -errnum : -EINVAL;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (current_level < LOG_DEBUG && level != LIBBPF_WARN)
		return 0;
	if (current_level < LOG_INFO)
		return 0;
	/* libbpf hands over whole verifier logs: print them uncut. */
	if (!current_sink) {
		vfprintf(stderr, fmt, ap);
		return 0;
	}
	log_emit(level == LIBBPF_WARN ? LOG_WARN : LOG_DEBUG, "libbpf", fmt, ap);
	return 0;
}

void log_route_libbpf(void) { libbpf_set_print(libbpf_print); }
