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

void figure_error_share(const struct snapshot_func *f, bool interval, char *buf, size_t len)
{
	uint64_t timed = interval ? f->v.calls_delta : f->timed_calls;

	if (!f->errors_counted) {
		snprintf(buf, len, "%s", f->errors_why[0] ? "?" : "-");
		return;
	}
	if (!timed) {
		snprintf(buf, len, "-");
		return;
	}
	figure_share(interval ? f->error_share_interval : f->error_share,
		     f->timed_calls < f->v.calls && !f->entry_only, buf, len);
}

void figure_share(double share, bool sampled, char *buf, size_t len)
{
	double pct = share * 100;

	if (share <= 0)
		snprintf(buf, len, "0%%");
	else if (pct < 0.1)
		snprintf(buf, len, "<0.1%%");
	else if (pct < 9.95)
		snprintf(buf, len, "%.1f%%", pct);
	else /* 100% only when every call failed */
		snprintf(buf, len, "%.0f%%", share < 1 && pct >= 99.5 ? 99.0 : pct);
	if (sampled && (pct >= 0.1 || share <= 0))
		figure_prefix("~", buf, len);
}

size_t figure_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		w += ((unsigned char)*s & 0xC0) != 0x80;
	return w;
}
