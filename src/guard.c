#include "guard.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "procs.h"

void guard_arm(struct guard *g, double max_s, uint64_t now_ns)
{
	g->max_duration_s = max_s;
	g->deadline_ns = max_s > 0 ? now_ns + (uint64_t)(max_s * 1e9) : 0;
	g->expired = false;
}

void guard_extend(struct guard *g, uint64_t now_ns)
{
	double step = g->max_duration_s > 0 ? g->max_duration_s : GUARD_DEFAULT_MAX_DURATION_S;
	uint64_t from = g->deadline_ns > now_ns ? g->deadline_ns : now_ns;

	if (!g->max_duration_s)
		return; /* no limit: nothing to extend */
	g->deadline_ns = from + (uint64_t)(step * 1e9);
	g->expired = false;
}

double guard_remaining_s(const struct guard *g, uint64_t now_ns)
{
	if (!g->deadline_ns)
		return -1;
	return g->deadline_ns > now_ns ? (double)(g->deadline_ns - now_ns) / 1e9 : 0;
}

bool guard_due(struct guard *g, uint64_t now_ns)
{
	if (!g->deadline_ns || g->expired || now_ns < g->deadline_ns)
		return false;
	g->expired = true;
	return true;
}

uint64_t guard_rss_bytes(void)
{
	return procs_field("/proc/self/status", "VmRSS") * 1024;
}

bool guard_parse_number(const char *s, double *v, const char **unit)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	*unit = end;
	return !errno && end != s && isfinite(*v) && *v > 0;
}

bool guard_parse_size(const char *s, uint64_t *out)
{
	const char *units = "KMG";
	const char *u, *end;
	double v;

	if (!guard_parse_number(s, &v, &end))
		return false;
	if (*end && (u = strchr(units, *end & ~0x20)) != NULL) {
		for (const char *k = units; k <= u; k++)
			v *= 1024.0;
		end++;
		if (*end == 'i')
			end++; /* "MiB" */
	}
	if (*end == 'B')
		end++;
	if (*end || v > (double)(1ull << 50))
		return false;
	*out = (uint64_t)v;
	return true;
}

void guard_format_bytes(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 1024ull * 1024 * 1024)
		snprintf(buf, len, "%.1f GiB", (double)bytes / (1024.0 * 1024 * 1024));
	else if (bytes >= 1024ull * 1024)
		snprintf(buf, len, "%.1f MiB", (double)bytes / (1024.0 * 1024));
	else
		snprintf(buf, len, "%.1f KiB", (double)bytes / 1024.0);
}

void guard_format_remaining(double s, char *buf, size_t len)
{
	unsigned t = s > 0 ? (unsigned)ceil(s) : 0;

	if (t >= 3600)
		snprintf(buf, len, "%u:%02u:%02u", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%u:%02u", t / 60, t % 60);
}
