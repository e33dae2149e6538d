#include "guard.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../bpf/retop.h"
#include "tracer.h"

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

/* The "name:\tvalue" field of a /proc file, read in one go (no stdio:
 * these are read at every refresh).  0: not there. */
static uint64_t guard_proc_field(const char *path, const char *name)
{
	char buf[2048];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	size_t len = strlen(name);
	for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, name, len) == 0 && p[len] == ':')
			return strtoull(p + len + 1, NULL, 10);
	return 0;
}

uint64_t guard_fd_memlock(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return guard_proc_field(path, "memlock");
}

uint64_t guard_rss_bytes(void)
{
	return guard_proc_field("/proc/self/status", "VmRSS") * 1024;
}

/* A preallocated hash map of n entries: an element header, key and value
 * rounded to 8 bytes, one bucket per entry rounded up to a power of two. */
static uint64_t guard_hash_bytes(uint32_t n, size_t key, size_t val)
{
	return (48 + ((key + 7) & ~7ul) + ((val + 7) & ~7ul)) * (uint64_t)n +
	       tracer_inflight_base_bytes(n);
}

uint64_t guard_maps_estimate(uint32_t inflight_max, size_t max_functions)
{
	/* The in-flight map, allocated per call: its buckets only. */
	uint64_t b = tracer_inflight_base_bytes(inflight_max);

	/* func_stats: an array, one row per slot, in whole pages (mmapped). */
	b += ((uint64_t)max_functions * ((sizeof(struct retop_func_stats) + 7) & ~7ul) + 4095) &
	     ~4095ull;
	/* goroutines, first_entry, recovered, drop_marks (bpf/retop.bpf.c). */
	b += guard_hash_bytes(TRACER_GOROUTINES, sizeof(struct retop_goroutine_key),
			      sizeof(struct retop_goroutine_val));
	b += guard_hash_bytes(TRACER_GOROUTINES, sizeof(struct retop_first_key),
			      sizeof(struct retop_first_val));
	b += guard_hash_bytes(TRACER_GOROUTINES_MARKED, sizeof(struct retop_goroutine_key),
			      sizeof(uint64_t));
	b += guard_hash_bytes(TRACER_GOROUTINES_MARKED, sizeof(struct retop_goroutine_key),
			      sizeof(struct retop_inflight_key) + 8);
	/* The slowest calls' ring buffer. */
	b += 256 * 1024;
	return b;
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
