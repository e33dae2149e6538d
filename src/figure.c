/* Figures as every face shows them (figure.h). */
#include "figure.h"

#include <stdio.h>
#include <string.h>

#include "snapshot.h"
#include "stats.h"

bool figure_under_resolution(const struct snapshot_func *f, uint64_t ns)
{
	return f->resolution_ns > 0 && (double)ns <= f->resolution_ns;
}

/* mark before buf's text, if it fits. */
static void figure_prefix(const char *mark, char *buf, size_t len)
{
	size_t n = strlen(buf), m = strlen(mark);

	if (!n || n + m + 1 > len)
		return;
	memmove(buf + m, buf, n + 1);
	memcpy(buf, mark, m);
}

void figure_duration(const struct snapshot_func *f, uint64_t ns, char *buf, size_t len)
{
	if (!ns) {
		snprintf(buf, len, "-");
		return;
	}
	if (figure_under_resolution(f, ns)) {
		stats_format_duration((uint64_t)(f->resolution_ns + 0.5), buf, len);
		figure_prefix("<", buf, len);
		return;
	}
	stats_format_duration(ns, buf, len);
	/* Durations of a sample of the calls (--budget). */
	if (f->timed_calls < f->v.calls && !f->entry_only)
		figure_prefix("~", buf, len);
}

static void figure_count(const struct snapshot_func *f, double v, bool utf8, char *buf, size_t len)
{
	stats_format_count(v, buf, len);
	if (f->calls_lower_bound)
		figure_prefix(utf8 ? "\u2265" : ">=", buf, len);
	else if (f->estimated)
		figure_prefix("~", buf, len);
}

void figure_calls(const struct snapshot_func *f, bool utf8, char *buf, size_t len)
{
	figure_count(f, (double)f->v.calls, utf8, buf, len);
	if (f->v.dropped && strlen(buf) + 1 < len)
		strcat(buf, "!");
}

void figure_rate(const struct snapshot_func *f, bool utf8, char *buf, size_t len)
{
	figure_count(f, f->v.calls_per_s, utf8, buf, len);
}

size_t figure_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}
