#include "budget.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interlock.h"
#include "log.h"
#include "session_internal.h"
#include "snapshot.h"
#include "tracer.h"

/* The first window at full rate, to measure; the shortest window with the
 * probes in (an attach takes about a millisecond); the cycle under budget. */
#define BUDGET_MEASURE_NS 20000000ull
#define BUDGET_MIN_ON_NS 20000000ull
#define BUDGET_CYCLE_NS 1000000000ull
/* Under budget, how often the rate is measured again: a load that starts
 * is at full probe cost for at most this long. */
#define BUDGET_RECHECK_NS 20000000ull
#define BUDGET_CALIBRATE_HITS 4000
/* The budget is a ceiling, and the cost of a hit an estimate (timed in
 * retop's own process; the windows that measure a load run with every
 * probe in): aim below it. */
#define BUDGET_AIM 0.9

/* The calibration target: one RET instruction, as the kernel sees a Go
 * function's RET (single-stepped out of line, not emulated). */
__asm__(".text\n"
	".globl retop_budget_target\n"
	".type retop_budget_target, @function\n"
	"retop_budget_target:\n"
	"\tret\n"
	".size retop_budget_target, 1\n");
void retop_budget_target(void);

/* File and offset of addr in this process, from /proc/self/maps. */
static int budget_self_offset(uintptr_t addr, char *path, size_t len, uint64_t *off)
{
	char line[700];
	FILE *f = fopen("/proc/self/maps", "r");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, foff;
		char file[600] = "";
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %599s", &lo, &hi, &foff, file) < 3)
			continue;
		if (addr < lo || addr >= hi || file[0] != '/')
			continue;
		snprintf(path, len, "%s", file);
		*off = addr - lo + foff;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

static int budget_uprobe_type(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	int type = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%d", &type) != 1)
		type = -1;
	fclose(f);
	return type;
}

/* ns for n calls of the target; the best of three bursts. */
static double budget_burst_ns(void (*volatile fn)(void), int n)
{
	double best = 0;

	for (int r = 0; r < 3; r++) {
		uint64_t t0 = tracer_now_ns();
		for (int i = 0; i < n; i++)
			fn();
		double d = (double)(tracer_now_ns() - t0);
		if (r == 0 || d < best)
			best = d;
	}
	return best;
}

double budget_calibrate(char *err)
{
	struct perf_event_attr attr = {.size = sizeof(attr)};
	void (*volatile fn)(void) = retop_budget_target;
	char path[600];
	uint64_t off = 0, hits = 0;
	int type = budget_uprobe_type(), fd;

	if (type < 0) {
		err_set(err, ENOTSUP, "no uprobe PMU (/sys/bus/event_source/devices/uprobe)");
		return 0;
	}
	if (budget_self_offset((uintptr_t)retop_budget_target, path, sizeof(path), &off) != 0) {
		err_set(err, ENOENT, "retop's own text is not in /proc/self/maps");
		return 0;
	}
	/* Before the probe exists: a disabled uprobe event may still trap. */
	double bare = budget_burst_ns(fn, BUDGET_CALIBRATE_HITS);
	attr.type = (uint32_t)type;
	attr.config1 = (uint64_t)(uintptr_t)path; /* uprobe_path */
	attr.config2 = off;			  /* probe_offset */
	attr.disabled = 1;
	attr.exclude_kernel = 0;
	fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		err_set(err, errno, "a uprobe on retop itself: %s", strerror(errno));
		return 0;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	double probed = budget_burst_ns(fn, BUDGET_CALIBRATE_HITS);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	/* The probe must really have fired: 3 bursts, every call. */
	if (read(fd, &hits, sizeof(hits)) != sizeof(hits) || hits != 3u * BUDGET_CALIBRATE_HITS) {
		close(fd);
		err_set(err, EIO, "the calibration probe fired %llu times, expected %u",
			(unsigned long long)hits, 3u * BUDGET_CALIBRATE_HITS);
		return 0;
	}
	close(fd);
	double ns = (probed - bare) / BUDGET_CALIBRATE_HITS;
	return ns > 1 ? ns : 1;
}

void budget_func_start(struct budget_func *bf, uint64_t now_ns)
{
	*bf = (struct budget_func){.attached_ns = now_ns,
				   .on_since_ns = now_ns,
				   .rate_since_ns = now_ns,
				   .switch_ns = now_ns + BUDGET_MEASURE_NS,
				   .fraction = 1.0};
}

/* Probe hits of a function so far: its entries and every RET. */
static uint64_t budget_hits(struct session *s, const struct session_func *sf)
{
	struct retop_func_stats *st = malloc(sizeof(*st));
	uint64_t hits = 0;

	if (!st)
		return 0;
	if (tracer_read(s->tracer, sf->slot, st) == 0) {
		hits = st->entries;
		for (size_t i = 0; i < RETOP_MAX_RET_SITES; i++)
			hits += st->ret_hits[i];
	}
	free(st);
	return hits;
}

/* The duty cycle every function gets: the allowed hits a second over what
 * all of them would make with every probe in.  A target busy on a CPU that
 * spends a share c of its time in traps does the same work 1/(1-c) times
 * slower: for a slowdown of at most p, c = p/(1+p). */
double budget_allowed_hits(const struct budget *b)
{
	double p = b->pct / 100.0;
	double allowed = b->hit_ns > 0 ? BUDGET_AIM * p / (1 + p) * 1e9 / b->hit_ns : 0;

	return allowed > BUDGET_MAX_HITS_PER_S ? BUDGET_MAX_HITS_PER_S : allowed;
}

static double budget_fraction(struct session *s)
{
	double allowed = budget_allowed_hits(&s->budget), total = 0;

	for (size_t i = 0; i < s->nfuncs; i++)
		if (s->funcs[i].slot >= 0)
			total += s->funcs[i].bf.rate;
	return total > allowed ? allowed / total : 1.0;
}

/* The end of a window with the probes in: measure, then pause or go on. */
static void budget_end_window(struct session *s, struct session_func *sf, uint64_t now)
{
	struct budget_func *bf = &sf->bf;
	uint64_t hits = budget_hits(s, sf), window = now - bf->rate_since_ns;
	double r = window ? (double)(hits - bf->hits_on) * 1e9 / (double)window : 0;

	/* Up at once, down slowly: the budget errs on the target's side.  A
	 * load that rose (or started inside the window) is measured again in
	 * the shortest window before a long one. */
	bf->remeasure = r > 1.5 * bf->rate;
	bf->rate = r > bf->rate ? r : (bf->rate + r) / 2;
	s->budget.fraction = budget_fraction(s);
	bf->fraction = s->budget.fraction;
	if (s->budget.fraction >= 1.0) {
		bf->on_ns += now - bf->on_since_ns;
		bf->on_since_ns = bf->rate_since_ns = now;
		bf->hits_on = hits;
		bf->switch_ns = now + BUDGET_RECHECK_NS;
		return;
	}
	double frac = s->budget.fraction;
	tracer_pause(s->tracer, sf->slot);
	/* The probes were in until the kernel had removed them, which takes
	 * tens of milliseconds on a busy machine: that time is on-time too,
	 * for the cost (the pause that follows is sized on it) and for the
	 * estimates (scaled by it). */
	uint64_t off_at = tracer_now_ns(), on = off_at - bf->on_since_ns;
	bf->on_ns += on;
	bf->paused = true;
	bf->switch_ns = off_at + (uint64_t)((double)on * (1 - frac) / frac);
}

static void budget_start_window(struct session *s, struct session_func *sf)
{
	struct budget_func *bf = &sf->bf;
	double frac = s->budget.fraction;
	struct interlock_verdict v;
	char err[ERR_LEN];
	/* Some probes are in before the attach returns: on-time from here. */
	uint64_t start = tracer_now_ns();

	/* Approved again: the file on disk may have changed since. */
	if (interlock_approve(s->idx, sf->f, s->binary, &v, err) != 0 ||
	    tracer_resume(s->tracer, sf->slot, &v, s->binary, s->attach_pid, err) != 0) {
		/* Stays paused: counted as time without probes, tried again. */
		log_warn("budget", "%s", err);
		bf->switch_ns = tracer_now_ns() + BUDGET_CYCLE_NS;
		return;
	}
	bf->paused = false;
	bf->on_since_ns = start;
	bf->rate_since_ns = tracer_now_ns();
	bf->hits_on = budget_hits(s, sf);
	uint64_t on = frac * BUDGET_CYCLE_NS > BUDGET_MIN_ON_NS && !bf->remeasure
			  ? (uint64_t)(frac * BUDGET_CYCLE_NS)
			  : BUDGET_MIN_ON_NS;
	bf->switch_ns = bf->on_since_ns + (frac >= 1.0 ? BUDGET_RECHECK_NS : on);
}

uint64_t budget_tick(struct session *s, uint64_t now_ns)
{
	uint64_t next = now_ns + BUDGET_CYCLE_NS;

	if (!s->tracer || s->budget.pct <= 0)
		return next;
	for (size_t i = 0; i < s->nfuncs; i++) {
		struct session_func *sf = &s->funcs[i];
		if (sf->slot < 0)
			continue;
		if (now_ns >= sf->bf.switch_ns) {
			if (sf->bf.paused)
				budget_start_window(s, sf);
			else
				budget_end_window(s, sf, now_ns);
		}
		if (sf->bf.switch_ns < next)
			next = sf->bf.switch_ns;
	}
	return next;
}

void budget_scale(struct session_func *sf, uint64_t now_ns, uint64_t interval_ns,
		  struct snapshot_func *out)
{
	struct budget_func *bf = &sf->bf;
	uint64_t on = bf->on_ns + (bf->paused ? 0 : now_ns - bf->on_since_ns);
	uint64_t elapsed = now_ns - bf->attached_ns, on_int = on - bf->on_ns_sample;

	bf->on_ns_sample = on;
	out->sampled = bf->attached_ns ? bf->fraction : 1.0;
	if (!bf->attached_ns || on >= elapsed || !on)
		return; /* every probe in all along: exact */
	/* An interval without any window in: its rate is the overall one. */
	double k = (double)elapsed / (double)on;
	double ki = on_int ? (double)interval_ns / (double)on_int : 0;
	struct stats_view *v = &out->v;
	out->estimated = true;
	v->calls = (uint64_t)((double)v->calls * k + 0.5);
	v->calls_delta = (uint64_t)((double)v->calls_delta * ki + 0.5);
	v->calls_per_s = on_int ? v->calls_per_s * ki : (double)v->calls * 1e9 / (double)elapsed;
	out->entries = (uint64_t)((double)out->entries * k + 0.5);
	for (size_t i = 0; i < RETOP_MAX_RET_SITES; i++) {
		v->ret_hits[i] = (uint64_t)((double)v->ret_hits[i] * k + 0.5);
		v->ret_hits_delta[i] = (uint64_t)((double)v->ret_hits_delta[i] * ki + 0.5);
	}
	if (out->state == FUNC_TRACING)
		out->state = FUNC_SAMPLED;
}
