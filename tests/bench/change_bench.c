/* What the comparison with a baseline costs a refresh, side by side with
 * what tracing alone costs it (tests/bench/change.sh).  N functions, each
 * with a histogram of a few thousand to a hundred thousand calls spread
 * over a log-normal of its own (median 1 us to 10 ms), and every one's
 * calls moved since the last refresh (the worst case: a function with no
 * new call costs neither side anything, both are cached).  One refresh:
 *   read     each histogram from a BPF hash map like func_hist (10 KiB a
 *            function, one lookup each: what session_read_hist does)
 *   stats    stats_compute_cached(): since-start and interval p50/p99
 *   change   change_compare_cumulative(): before, after, the rank test,
 *            the percentiles' intervals
 * Prints the median of R refreshes of each and change / (read + stats).
 * Usage: change_bench [N] [R].  Without root (no BPF map), the read is a
 * memcpy of each histogram, a floor of the real lookup, and it says so. */
#include <bpf/bpf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "change.h"
#include "stats.h"

struct func {
	__u64 before_to[RETOP_HIST_BUCKETS]; /* the baseline: cumulative at the mark */
	__u64 prev[RETOP_HIST_BUCKETS];	     /* the last refresh's read */
	__u64 cur[RETOP_HIST_BUCKETS];	     /* this refresh's */
	struct retop_func_stats st_prev, st_cur;
	struct stats_cache cache;
};

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

static double lognormal(double median, double sigma)
{
	double z = sqrt(-2 * log(uniform())) * cos(2 * M_PI * uniform());
	return median * exp(sigma * z);
}

static void add_calls(__u64 *h, struct retop_func_stats *st, double median, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t v = (uint64_t)lognormal(median, 0.4) + 1;
		h[retop_hist_bucket(v)]++;
		st->calls++;
		st->sum_ns += v;
		if (!st->min_ns || v < st->min_ns)
			st->min_ns = v;
		if (v > st->max_ns)
			st->max_ns = v;
	}
}

/* Before the mark, between it and the last refresh, and in the interval:
 * a third of the functions 30% slower after it. */
static void make_func(struct func *f)
{
	double median = exp(log(1000) + uniform() * log(10000)); /* 1 us to 10 ms */
	uint64_t n = 2000 + (uint64_t)(uniform() * 100000);
	double after = uniform() < 1.0 / 3 ? median * 1.3 : median;

	memset(f, 0, sizeof(*f));
	add_calls(f->before_to, &f->st_prev, median, n);
	memcpy(f->prev, f->before_to, sizeof(f->prev));
	add_calls(f->prev, &f->st_prev, after, n / 2);
	memcpy(f->cur, f->prev, sizeof(f->cur));
	f->st_cur = f->st_prev;
	add_calls(f->cur, &f->st_cur, after, n / 20);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, r = argc > 2 ? atoi(argv[2]) : 30;
	struct func *fs = calloc((size_t)n, sizeof(*fs));
	static struct retop_func_hist buf;
	double *t_read = calloc((size_t)r, sizeof(double)),
	       *t_stats = calloc((size_t)r, sizeof(double)),
	       *t_change = calloc((size_t)r, sizeof(double));
	uint64_t significant = 0;

	if (!fs || !t_read || !t_stats || !t_change || n < 1 || r < 1)
		return 1;
	for (int i = 0; i < n; i++)
		make_func(&fs[i]);
	/* func_hist's shape: a hash of one histogram a slot. */
	int map = bpf_map_create(BPF_MAP_TYPE_HASH, "change_bench", sizeof(__u32),
				 sizeof(struct retop_func_hist), (__u32)n, NULL);
	for (int i = 0; map >= 0 && i < n; i++) {
		__u32 k = (__u32)i;
		memcpy(buf.hist, fs[i].cur, sizeof(buf.hist));
		if (bpf_map_update_elem(map, &k, &buf, BPF_ANY) != 0)
			return 1;
	}
	for (int k = 0; k < r; k++) {
		double t0 = now_s();
		for (int i = 0; i < n; i++) {
			__u32 key = (__u32)i;
			if (map >= 0)
				bpf_map_lookup_elem(map, &key, &buf);
			else
				memcpy(buf.hist, fs[i].cur, sizeof(buf.hist));
		}
		double t1 = now_s();
		for (int i = 0; i < n; i++) {
			struct stats_read cur = {.st = fs[i].st_cur, .hist = fs[i].cur},
					  prev = {.st = fs[i].st_prev, .hist = fs[i].prev};
			struct stats_view v;
			fs[i].cache.valid = false; /* its calls moved */
			stats_compute_cached(&cur, &prev, 1.0, &v, &fs[i].cache);
		}
		double t2 = now_s();
		significant = 0;
		for (int i = 0; i < n; i++) {
			struct change_result res;
			change_compare_cumulative(NULL, fs[i].before_to, fs[i].before_to, fs[i].cur,
						  &res);
			significant += res.verdict == CHANGE_SIGNIFICANT;
		}
		double t3 = now_s();
		t_read[k] = t1 - t0;
		t_stats[k] = t2 - t1;
		t_change[k] = t3 - t2;
	}
	double read = median(t_read, r), stats = median(t_stats, r), change = median(t_change, r);
	printf("change_bench: %d functions, every one's calls moved, median of %d refreshes\n", n,
	       r);
	printf("  read   %8.3f ms  (%s)\n", read * 1e3,
	       map >= 0 ? "BPF hash lookups of 10 KiB"
			: "memcpy: no BPF map without root, a floor");
	printf("  stats  %8.3f ms\n", stats * 1e3);
	printf("  change %8.3f ms  (%.2f us a function; %llu of %d significant)\n", change * 1e3,
	       change * 1e6 / n, (unsigned long long)significant, n);
	printf("  change / (read + stats) = %.2f\n", change / (read + stats));
	return 0;
}
