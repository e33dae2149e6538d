#include "budget.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interlock.h"
#include "log.h"
#include "probes.h"
#include "procs.h"
#include "session_internal.h"
#include "snapshot.h"
#include "tracer.h"

#include <math.h>

/* Hits timed per kind of probe at the start, after BUDGET_CALIBRATE_WARM
 * untimed; then BUDGET_CALIBRATE_MORE every tenth sample, into the same mean. */
#define BUDGET_CALIBRATE_HITS 201
#define BUDGET_CALIBRATE_WARM 10
#define BUDGET_CALIBRATE_MORE 20
/* The budget is a ceiling, and demand is measured after the fact: aim
 * below it. */
#define BUDGET_AIM 0.9
/* How long the calls timed in a slice get to return once it ended, with
 * the RET probes still in; those still in flight then lose their duration
 * (they were counted, at their entry). */
#define BUDGET_DRAIN_NS 1000000000ull
/* A constrained function goes back to a dearer mode only when that fits
 * with room to spare (HEADROOM) and after HOLD in its mode: no flapping. */
#define BUDGET_HOLD_NS 2000000000ull
#define BUDGET_HEADROOM 0.7
/* The least share of time an estimated function is sampled. */
#define BUDGET_MIN_SHARE 0.002
#define BUDGET_FIRST_NS 20000000ull
/* Quiet: every function in full, and the last second's hits under a tenth
 * of the budget.  Then a slice lasts a second, and BPF wakes the engine
 * the moment the slice's hits reach a fifth of the budget (twice the rate
 * that let it go quiet): a burst of ten budgets a second spends a fifth of
 * one before the plan sees it, where a 100 ms slice spends a whole one;
 * and nine wake-ups a second fewer. */
#define BUDGET_QUIET_NS 1000000000ull
#define BUDGET_QUIET_SHARE 0.10
#define BUDGET_WAKE_SHARE 0.20
/* How early the probes go in before a sampled slice (an attach takes about
 * a millisecond). */
#define BUDGET_LEAD_NS 5000000ull
/* Sampled slices with calls an estimate needs before its interval has an
 * upper end. */
#define BUDGET_MIN_SLICES 10

/* The calibration targets: the three kinds of probed instruction, as the
 * kernel sees them in a Go function (docs/UPROBES.md): the prologue's jump
 * (jbe, emulated), an entry compare (single-stepped out of line; it reads
 * [rsp], not Go's [r14+16]) and a RET (single-stepped).  Each is a
 * function: the probe sits on its first instruction. */
__asm__(".text\n"
	".globl retop_budget_jcc\n"
	".type retop_budget_jcc, @function\n"
	"retop_budget_jcc:\n"
	"\t.byte 0x76, 0x00\n" /* jbe .+2 */
	"\tret\n"
	".size retop_budget_jcc, 3\n"
	".globl retop_budget_cmp\n"
	".type retop_budget_cmp, @function\n"
	"retop_budget_cmp:\n"
	"\t.byte 0x48, 0x3b, 0x24, 0x24\n" /* cmp rsp, [rsp] */
	"\tret\n"
	".size retop_budget_cmp, 5\n"
	".globl retop_budget_target\n"
	".type retop_budget_target, @function\n"
	"retop_budget_target:\n"
	"\tret\n"
	".size retop_budget_target, 1\n");
void retop_budget_jcc(void);
void retop_budget_cmp(void);
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

static int budget_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median ns of one call of fn, unprobed: what a timed hit is less. */
static double budget_bare_ns(void (*volatile fn)(void))
{
	uint64_t d[BUDGET_CALIBRATE_HITS];

	for (int i = 0; i < BUDGET_CALIBRATE_HITS; i++) {
		uint64_t t0 = tracer_now_ns();
		fn();
		d[i] = tracer_now_ns() - t0;
	}
	qsort(d, BUDGET_CALIBRATE_HITS, sizeof(d[0]), budget_cmp_u64);
	return (double)d[BUDGET_CALIBRATE_HITS / 2];
}

static void (*const budget_targets[RETOP_HIT_KINDS])(void) = {
    [RETOP_HIT_ENTRY_EMULATED] = retop_budget_jcc,
    [RETOP_HIT_ENTRY_STEPPED] = retop_budget_cmp,
    [RETOP_HIT_RET] = retop_budget_target,
};

/* n more hits of kind k, each timed, into the last BUDGET_CAL_RING; the
 * cost is their 20th percentile: a hit during which retop's own thread was
 * preempted says nothing about the target's traps, and on a loaded CPU
 * many are (the median then took out more than the traps cost, and showed
 * calls shorter than they were); the very fastest took out too little. */
static int budget_time_hits(struct budget *b, struct tracer *t, int k, int n, char *err)
{
	void (*volatile fn)(void) = budget_targets[k];
	uint64_t before = tracer_cal_hits(t), sorted[BUDGET_CAL_RING];

	for (int i = 0; i < n; i++) {
		uint64_t t0 = tracer_now_ns();
		fn();
		b->cal_ring[k][b->cal_n[k]++ % BUDGET_CAL_RING] = tracer_now_ns() - t0;
	}
	/* The probe must really have fired, every call. */
	uint64_t hits = tracer_cal_hits(t) - before;
	if (hits != (uint64_t)n)
		return err_set(err, EIO, "the calibration probe fired %llu times, expected %d",
			       (unsigned long long)hits, n);
	size_t m = b->cal_n[k] < BUDGET_CAL_RING ? b->cal_n[k] : BUDGET_CAL_RING;
	memcpy(sorted, b->cal_ring[k], m * sizeof(sorted[0]));
	qsort(sorted, m, sizeof(sorted[0]), budget_cmp_u64);
	double ns = (double)sorted[m / 5] - b->cal_bare[k];
	b->trap_ns[k] = ns > 1 ? ns : 1;
	return 0;
}

int budget_calibrate(struct budget *b, struct tracer *t, char *err)
{
	char path[600];
	uint64_t off = 0;
	int ret;

	budget_calibrate_close(b);
	for (int k = 0; k < RETOP_HIT_KINDS; k++) {
		if (budget_self_offset((uintptr_t)budget_targets[k], path, sizeof(path), &off) != 0) {
			ret = err_set(err, ENOENT, "retop's own text is not in /proc/self/maps");
			goto fail;
		}
		/* Before the probe exists. */
		b->cal_bare[k] = budget_bare_ns(budget_targets[k]);
		b->cal_n[k] = 0;
		if ((ret = tracer_cal_attach(t, k, path, off, &b->cal_ps[k])) < 0) {
			err_set(err, -ret, "a uprobe on retop itself: %s", strerror(-ret));
			goto fail;
		}
		/* The first hits set up the process's out-of-line page. */
		for (int i = 0; i < BUDGET_CALIBRATE_WARM; i++)
			budget_targets[k]();
		if ((ret = budget_time_hits(b, t, k, BUDGET_CALIBRATE_HITS, err)) < 0)
			goto fail;
	}
	b->cal_tracer = t;
	return 0;
fail:
	budget_calibrate_close(b);
	return ret;
}

void budget_calibrate_more(struct budget *b)
{
	char err[ERR_LEN];

	if (!b->cal_tracer)
		return;
	for (int k = 0; k < RETOP_HIT_KINDS; k++)
		if (budget_time_hits(b, b->cal_tracer, k, BUDGET_CALIBRATE_MORE, err) < 0) {
			log_warn("budget", "probe costs no longer timed: %s", err);
			budget_calibrate_close(b);
			return;
		}
}

void budget_calibrate_close(struct budget *b)
{
	probe_sets_destroy(b->cal_ps, RETOP_HIT_KINDS);
	b->cal_tracer = NULL;
}

double budget_allowed_hits(const struct budget *b)
{
	double allowed = b->hits_per_s;

	if (b->hits_per_s <= 0)
		return 0;
	if (b->pct > 0 && b->hit_ns > 0) {
		/* A target busy on a CPU that spends a share c of its time in
		 * traps does the same work 1/(1-c) times slower: for a
		 * slowdown of at most p, c = p/(1+p). */
		double p = b->pct / 100.0, cpu = p / (1 + p) * 1e9 / b->hit_ns;
		if (cpu < allowed)
			allowed = cpu;
	}
	return allowed;
}

void budget_func_start(struct budget *b, struct budget_func *bf, const struct interlock_verdict *v,
		       uint64_t now_ns)
{
	/* Its first measure soon: a load far over budget costs a slice at
	 * full rate before the plan sees it. */
	if (!b->next_ns || b->next_ns > now_ns + BUDGET_FIRST_NS)
		b->next_ns = now_ns + BUDGET_FIRST_NS;
	/* Its demand is unknown: a second of 100 ms slices first. */
	b->loud_until_ns = now_ns + BUDGET_QUIET_NS;
	*bf = (struct budget_func){.mode = BUDGET_FULL,
				   .counts_at_entry = v->entry_counts_calls,
				   .entry_only = v->entry_only,
				   .marks_only = v->marks_only,
				   .attached_ns = now_ns,
				   .mode_since_ns = now_ns,
				   .slice_cost = 2.0,
				   .share = 1.0};
}

void budget_func_reset(struct budget_func *bf)
{
	/* Its counters start again from zero in BPF: so does the ledger, and
	 * the demand is measured afresh.  The mode and its probes stay. */
	bf->last_hits = bf->last_begun = 0;
	memset(bf->hits_ring, 0, sizeof(bf->hits_ring));
	memset(bf->begun_ring, 0, sizeof(bf->begun_ring));
	bf->drained = bf->exact_base = bf->period_start = 0;
	bf->ht_sum = bf->ht_var = bf->ht_seen = 0;
	bf->ht_slices_with_calls = bf->ht_partial = 0;
	bf->trap_ns = bf->cpu_ns = 0;
	bf->ever_estimated = bf->mode == BUDGET_ESTIMATED;
	bf->ever_shed = bf->mode != BUDGET_FULL;
	bf->last_inlined = 0;
	memset(bf->inl_ring, 0, sizeof(bf->inl_ring));
	bf->marks_missed = bf->mode != BUDGET_FULL && bf->mode != BUDGET_TIMING;
}

/* The marks in while the function's calls are all counted (full, timing),
 * out while it is estimated; the inlined calls of that time are missed. */
static void budget_marks(struct session *s, struct session_func *sf, bool want)
{
	struct budget_func *bf = &sf->bf;
	char err[ERR_LEN];

	if (!sf->inl_counted)
		return;
	if (!want)
		bf->marks_missed = true;
	if (want == tracer_marks_are_in(s->tracer, sf->slot) || (want && bf->marks_failed))
		return;
	if (session_marks(s, sf, want, err) != 0) {
		log_warn("budget", "%s: inline marks: %s", sf->f->name, err);
		bf->marks_failed = true;
		bf->marks_missed = true;
		session_marks(s, sf, false, err);
	}
}

static double budget_rand(struct budget *b)
{
	if (!b->rng)
		b->rng = tracer_now_ns() * 0x9E3779B97F4A7C15ull | 1;
	b->rng ^= b->rng << 13;
	b->rng ^= b->rng >> 7;
	b->rng ^= b->rng << 17;
	return (double)(b->rng >> 11) / 9007199254740992.0;
}

/* Calls counted exactly so far: timed at their RET, counted at their entry
 * (not timing), and those whose timing was given up. */
static uint64_t budget_counted(const struct budget_func *bf, const struct retop_func_stats *st)
{
	if (bf->entry_only)
		return st->begun;
	return st->calls + st->untimed + bf->drained;
}

static int budget_probes_in(struct session *s, struct session_func *sf, bool entry, bool rets,
			    char *err)
{
	return session_probes_in(s, sf, entry, rets, err);
}

/* The RET probes stay while timed calls are in flight, up to the drain's
 * deadline; then the calls left lose their duration (counted all the
 * same) and the probes go. */
static void budget_drain(struct session *s, struct session_func *sf, uint64_t now)
{
	struct budget_func *bf = &sf->bf;
	int slot = sf->slot;

	if (!tracer_rets_are_in(s->tracer, slot))
		return;
	if (!bf->drain_until_ns) {
		bf->drain_until_ns = now + BUDGET_DRAIN_NS;
		/* Short calls return within microseconds: wait a little for
		 * them rather than a slice of RET traps. */
		for (int i = 0; i < 5 && tracer_slot_inflight(s->tracer, slot) > 0; i++)
			usleep(1000);
	}
	if (tracer_slot_inflight(s->tracer, slot) > 0 && now < bf->drain_until_ns)
		return;
	uint64_t n = tracer_slot_inflight(s->tracer, slot) > 0 ? tracer_untime_inflight(s->tracer, slot) : 0;
	if (bf->mode != BUDGET_ESTIMATED)
		bf->drained += n; /* counted exactly: at their entry */
	tracer_rets_out(s->tracer, slot);
	bf->drain_until_ns = 0;
}

/* ---- the estimate's slices */

/* The slice under way at now (the gate may have been set after now was
 * read). */
static uint64_t budget_slice_of(const struct budget_func *bf, uint64_t now)
{
	return now > bf->gate_base ? (now - bf->gate_base) / BUDGET_SLICE_NS : 0;
}

static void budget_stop_estimate(struct session_func *sf, const char *why)
{
	if (sf->bf.stopped)
		return;
	sf->bf.stopped = true;
	snprintf(sf->bf.why, sizeof(sf->bf.why), "%.150s", why);
	log_warn("budget", "%s: the estimate of its calls stopped: %s", sf->f->name, why);
}

/* Slices [k_read, c) are over: add what the sampled ones counted. */
static void budget_read_slices(struct session *s, struct session_func *sf, uint64_t c)
{
	struct budget_func *bf = &sf->bf;

	for (; bf->k_read < c; bf->k_read++) {
		uint64_t k = bf->k_read, n = tracer_gate_take(s->tracer, sf->slot, k);
		size_t i = k % RETOP_GATE_RING;
		if (k >= bf->k_plan) {
			/* retop fell behind: a slice went unplanned, and its
			 * chance of being sampled was not the one stated. */
			budget_stop_estimate(sf, "retop fell behind its sampling slices");
			continue;
		}
		double p = bf->slice_p[i];
		/* A slice left out by chance is time nobody saw. */
		bf->ht_partial += p < 1;
		if (!bf->slice_on[i] || bf->stopped)
			continue;
		bf->ht_sum += (double)n / p;
		bf->ht_seen += (double)n;
		bf->ht_slices_with_calls += n > 0 && p < 1;
		bf->ht_var += (double)n * (double)n * (1 - p) / (p * p);
		double rate = (double)n * 1e9 / BUDGET_SLICE_NS;
		bf->calls_per_s = bf->calls_per_s > 0 ? 0.7 * bf->calls_per_s + 0.3 * rate : rate;
		bf->rate_per_s = bf->calls_per_s;
	}
}

/* Decide slices up to c + 2 at random, each sampled with the share: a
 * tick up to a slice late still finds the slice under way planned. */
static void budget_plan_slices(struct session *s, struct session_func *sf, uint64_t c)
{
	struct budget_func *bf = &sf->bf;

	for (; bf->k_plan <= c + 2; bf->k_plan++) {
		uint64_t k = bf->k_plan;
		size_t i = k % RETOP_GATE_RING;
		bool on = budget_rand(&s->budget) < bf->share;
		if (k <= c) {
			/* Its time began unplanned: never sampled. */
			on = false;
			budget_stop_estimate(sf, "retop fell behind its sampling slices");
		}
		bf->slice_on[i] = on;
		bf->slice_p[i] = bf->share;
		tracer_gate_plan(s->tracer, sf->slot, k, on);
	}
}

/* Probes in for the sampled slices (the entry one slice early at most),
 * out between them. */
static void budget_run_estimate(struct session *s, struct session_func *sf, uint64_t now)
{
	struct budget_func *bf = &sf->bf;
	uint64_t c = budget_slice_of(bf, now);
	uint64_t next_start = bf->gate_base + (c + 1) * BUDGET_SLICE_NS;
	char err[ERR_LEN];

	budget_read_slices(s, sf, c);
	budget_plan_slices(s, sf, c);
	/* The probes go in just before a sampled slice: the governor wakes
	 * for it. */
	bool next_on = bf->slice_on[(c + 1) % RETOP_GATE_RING];
	bool want = bf->slice_on[c % RETOP_GATE_RING] || (next_on && now + BUDGET_LEAD_NS >= next_start);
	uint64_t wake = next_on && !want ? next_start - BUDGET_LEAD_NS
			: want && !next_on ? next_start + BUDGET_LEAD_NS / 5 /* out as it ends */
					   : UINT64_MAX;
	if (s->budget.next_ns > wake)
		s->budget.next_ns = wake;
	bool in = tracer_entry_is_in(s->tracer, sf->slot) &&
		  (bf->entry_only || tracer_rets_are_in(s->tracer, sf->slot));
	if (want && !bf->stopped && !in) {
		if (budget_probes_in(s, sf, true, !bf->entry_only, err) != 0) {
			/* Slices planned in are not sampled: the estimate ends. */
			tracer_gate_plan(s->tracer, sf->slot, c, false);
			tracer_gate_plan(s->tracer, sf->slot, c + 1, false);
			budget_stop_estimate(sf, err);
		}
		bf->drain_until_ns = 0;
	} else if ((!want || bf->stopped) && tracer_entry_is_in(s->tracer, sf->slot)) {
		tracer_entry_out(s->tracer, sf->slot);
	}
	if (!tracer_entry_is_in(s->tracer, sf->slot))
		budget_drain(s, sf, now);
}

/* ---- modes */

static void budget_enter_estimate(struct session *s, struct session_func *sf, uint64_t now,
				  const struct retop_func_stats *st)
{
	struct budget_func *bf = &sf->bf;

	struct retop_func_stats *now_st = malloc(sizeof(*now_st));

	/* Slices from now, the first one sampled at random like the others:
	 * from the moment the gate is set, a call counts in a sampled slice
	 * or not at all. */
	for (size_t i = 0; i < RETOP_GATE_RING; i++)
		bf->slice_on[i] = false;
	bf->gate_base = tracer_now_ns();
	bf->k_read = 0;
	bf->k_plan = 1;
	bf->slice_on[0] = budget_rand(&s->budget) < bf->share;
	bf->slice_p[0] = bf->share;
	tracer_gate(s->tracer, sf->slot, bf->gate_base, BUDGET_SLICE_NS, bf->slice_on[0]);
	/* The exact period ends: the counters as the gate closed it, and the
	 * calls still in flight, counted at their entry as the estimate
	 * counts every call. */
	if (now_st && tracer_read_counters(s->tracer, sf->slot, now_st) == 0)
		st = now_st;
	uint64_t begun = budget_counted(bf, st) + (uint64_t)tracer_slot_inflight(s->tracer, sf->slot);
	free(now_st);
	bf->exact_base += begun > bf->period_start ? begun - bf->period_start : 0;
	bf->ever_estimated = true;
	/* The calls of sampled slices are timed: their RETs go in first (the
	 * timing mode may have taken them out). */
	char err[ERR_LEN];
	if (!bf->entry_only && !tracer_rets_are_in(s->tracer, sf->slot) &&
	    budget_probes_in(s, sf, false, true, err) != 0) {
		budget_stop_estimate(sf, err);
		tracer_gate_plan(s->tracer, sf->slot, 0, false);
		return;
	}
	tracer_record(s->tracer, sf->slot, true);
}

static void budget_leave_estimate(struct session *s, struct session_func *sf, uint64_t now,
				  const struct retop_func_stats *st)
{
	struct budget_func *bf = &sf->bf;
	uint64_t c = budget_slice_of(bf, now);

	budget_read_slices(s, sf, c);
	/* The slice under way was sampled with chance 1 (see budget_tick):
	 * what it counted so far is exact. */
	uint64_t part = tracer_gate_take(s->tracer, sf->slot, c);
	tracer_gate(s->tracer, sf->slot, 0, 0, false);
	if (!bf->stopped)
		bf->ht_sum += (double)part;
	/* Calls timed in flight were counted in their slice. */
	bf->period_start = budget_counted(bf, st) + (uint64_t)tracer_slot_inflight(s->tracer, sf->slot);
}

/* Move a function to the mode the plan gave it. */
static void budget_apply(struct session *s, struct session_func *sf, enum budget_mode to,
			 uint64_t now, const struct retop_func_stats *st)
{
	struct budget_func *bf = &sf->bf;
	char err[ERR_LEN];

	if (bf->marks_only) {
		/* No entry, no RETs: its marks are in, or out. */
		bf->mode = to == BUDGET_FULL ? BUDGET_FULL : BUDGET_ESTIMATED;
		budget_marks(s, sf, bf->mode == BUDGET_FULL);
		return;
	}
	if (to != bf->mode) {
		if (bf->mode == BUDGET_ESTIMATED) {
			/* Leave on a sampled slice only, so no call goes unseen:
			 * the next one is sampled for sure. */
			uint64_t c = budget_slice_of(bf, now);
			if (!bf->slice_on[c % RETOP_GATE_RING] || bf->stopped ||
			    !tracer_entry_is_in(s->tracer, sf->slot)) {
				bf->share = 1.0;
				budget_run_estimate(s, sf, now);
				if (!bf->stopped)
					return;
			}
			budget_leave_estimate(s, sf, now, st);
		}
		if (to == BUDGET_ESTIMATED)
			budget_enter_estimate(s, sf, now, st);
		log_debug("budget", "%s: %s -> %s", sf->f->name,
			  bf->mode == BUDGET_FULL ? "full" : bf->mode == BUDGET_TIMING ? "timing" : "estimated",
			  to == BUDGET_FULL ? "full" : to == BUDGET_TIMING ? "timing" : "estimated");
		bf->mode = to;
		bf->mode_since_ns = now;
		bf->ever_shed |= to != BUDGET_FULL;
	}
	switch (bf->mode) {
	case BUDGET_FULL:
		if (!bf->stopped &&
		    (!tracer_entry_is_in(s->tracer, sf->slot) ||
		     (!bf->entry_only && !tracer_rets_are_in(s->tracer, sf->slot))) &&
		    budget_probes_in(s, sf, true, !bf->entry_only, err) != 0)
			log_warn("budget", "%s", err);
		tracer_record(s->tracer, sf->slot, true);
		bf->drain_until_ns = 0;
		break;
	case BUDGET_TIMING: {
		/* This slice times calls or not, at random. */
		bool timing = budget_rand(&s->budget) < bf->share;
		if (timing && !tracer_rets_are_in(s->tracer, sf->slot) &&
		    budget_probes_in(s, sf, false, true, err) != 0) {
			log_warn("budget", "%s", err);
			timing = false;
		}
		tracer_record(s->tracer, sf->slot, timing);
		if (timing)
			bf->drain_until_ns = 0;
		else
			budget_drain(s, sf, now);
		break;
	}
	case BUDGET_ESTIMATED:
		budget_run_estimate(s, sf, now);
		break;
	}
	budget_marks(s, sf, bf->mode != BUDGET_ESTIMATED);
}

/* ---- the plan */

struct budget_need {
	struct session_func *sf;
	double hits; /* a second, with every probe in */
};

static int budget_need_cmp(const void *a, const void *b)
{
	double x = ((const struct budget_need *)a)->hits, y = ((const struct budget_need *)b)->hits;
	return x < y ? -1 : x > y;
}

/* Calls begun in the last second: the budget is hits in any second, so a
 * burst may spend a second's worth at once, and a load that rises past it
 * is seen within a slice. */
static void budget_measure(struct session *s, struct session_func *sf, uint64_t now,
			   const struct retop_func_stats *st)
{
	struct budget_func *bf = &sf->bf;
	uint64_t hits = st->entries + st->rets, begun = st->begun;
	size_t i = s->budget.slice % BUDGET_RING;

	hits += st->inlined;
	/* The marks' demand, measured while they are in; out, the last
	 * measure, halved every 2 s (0.966 a slice), so that a load that fell
	 * gets them back (and a load that did not, out again after a slice). */
	if (tracer_marks_are_in(s->tracer, sf->slot)) {
		uint64_t sum = 0;
		bf->inl_ring[i] = st->inlined - bf->last_inlined;
		for (size_t k = 0; k < BUDGET_RING; k++)
			sum += bf->inl_ring[k];
		bf->inlined_per_s = (double)sum / s->budget.ring_s;
	} else {
		bf->inlined_per_s *= 0.966;
		memset(bf->inl_ring, 0, sizeof(bf->inl_ring));
	}
	bf->last_inlined = st->inlined;
	bf->hits_ring[i] = hits - bf->last_hits;
	bf->begun_ring[i] = begun - bf->last_begun;
	bf->last_hits = hits;
	bf->last_begun = begun;
	if (bf->mode == BUDGET_ESTIMATED) {
		/* Demand from its sampled slices (budget_read_slices).  What a
		 * sampled slice costs, against the slice itself: the entry goes
		 * in early, the RETs drain, the kernel takes time to remove
		 * them.  Measured over the last second, so the share follows. */
		uint64_t hits_1s = 0;
		for (size_t k = 0; k < BUDGET_RING; k++)
			hits_1s += bf->hits_ring[k];
		double planned = bf->share * bf->rate_per_s * (bf->entry_only ? 1 : 2);
		if (now - bf->mode_since_ns >= 1000000000ull && planned > 0) {
			double f = (double)hits_1s / s->budget.ring_s / planned;
			f = f < 1 ? 1 : f > 20 ? 20 : f;
			bf->slice_cost = 0.7 * bf->slice_cost + 0.3 * f;
		}
		return;
	}
	uint64_t sum = 0;
	for (size_t k = 0; k < BUDGET_RING; k++)
		sum += bf->begun_ring[k];
	/* Over the time the ring covers: late ticks stretch it. */
	bf->calls_per_s = (double)sum / s->budget.ring_s;
	/* The rate, for the shares: over the time the ring covers. */
	double covered = (double)(now - bf->attached_ns) / 1e9;
	bf->rate_per_s = covered > 0 && covered < 1 ? (double)sum / covered : bf->calls_per_s;
	if (bf->rate_per_s < bf->calls_per_s)
		bf->rate_per_s = bf->calls_per_s;
}

/* Water-filling: the cheapest functions in full while each fits in an
 * equal share of what is left.  Then, cheapest first, the others keep
 * their entries in (every call counted) while those fit in what is left,
 * less a fifth for the rest; the ones that do not fit are estimated.
 * What remains is shared: RET slices of the timed, sampled slices of the
 * estimated. */
static void budget_plan(struct budget_need *need, size_t n, double allowed,
			uint64_t now, enum budget_mode *to)
{
	double left = allowed * BUDGET_AIM;
	size_t i = 0;

	qsort(need, n, sizeof(*need), budget_need_cmp);
	for (; i < n; i++) {
		struct budget_func *bf = &need[i].sf->bf;
		bool settled = now - bf->mode_since_ns >= BUDGET_HOLD_NS;
		double cost = bf->mode == BUDGET_FULL ? need[i].hits
			      : settled		  ? need[i].hits / BUDGET_HEADROOM
						  : INFINITY;
		if (cost > left / (double)(n - i))
			break;
		to[i] = BUDGET_FULL;
		bf->share = 1.0;
		left -= need[i].hits;
	}
	for (size_t j = i; j < n; j++) {
		struct budget_func *bf = &need[j].sf->bf;
		double entries = bf->entry_only ? need[j].hits : bf->calls_per_s + bf->inlined_per_s;
		bool settled = now - bf->mode_since_ns >= BUDGET_HOLD_NS;
		double room = bf->mode != BUDGET_ESTIMATED ? 0.8 : settled ? 0.8 * BUDGET_HEADROOM : 0;
		if (bf->counts_at_entry && !bf->entry_only && entries <= left * room) {
			to[j] = BUDGET_TIMING;
			left -= entries;
		} else
			to[j] = BUDGET_ESTIMATED;
	}
	double each = n > i && left > 0 ? left / (double)(n - i) : 0;
	for (size_t j = i; j < n; j++) {
		struct budget_func *bf = &need[j].sf->bf;
		/* Shares on the rate (calls_per_s is a second's count, which
		 * a new function has not filled yet). */
		double rate = bf->rate_per_s, hits = rate * (bf->entry_only ? 1 : 2);
		if (to[j] == BUDGET_TIMING)
			bf->share = rate > 0 ? each / rate : 1.0;
		else /* the cost of a sampled slice, as measured (budget_measure) */
			bf->share = hits > 0 ? each / (bf->slice_cost * hits) : 1.0;
		if (bf->share >= 1) {
			/* Every slice timed: that is the full mode. */
			bf->share = 1;
			to[j] = to[j] == BUDGET_TIMING ? BUDGET_FULL : to[j];
		}
		if (bf->share < BUDGET_MIN_SHARE)
			bf->share = BUDGET_MIN_SHARE;
	}
}

/* The CPU time of the targets, for the estimates' bounds. */
static uint64_t budget_target_cpu(struct session *s)
{
	uint64_t sum = 0;

	if (s->attach_pid > 0)
		return procs_cpu_ns(s->attach_pid);
	for (size_t i = 0; i < s->snap.npids; i++)
		sum += procs_cpu_ns(s->snap.pids[i]);
	return sum;
}

/* Traps against CPU time over the slice that ended, for the functions
 * estimated with their probes in during it. */
static void budget_trap_share(struct session *s, struct budget_need *need, size_t n)
{
	bool any = false;

	for (size_t j = 0; j < n; j++)
		any |= need[j].sf->bf.mode == BUDGET_ESTIMATED;
	if (!any) {
		s->budget.cpu_ns = 0;
		return;
	}
	uint64_t cpu = budget_target_cpu(s), last = s->budget.cpu_ns;
	s->budget.cpu_ns = cpu;
	if (!last || cpu < last)
		return; /* a thread's time left with it: this slice says nothing */
	for (size_t j = 0; j < n; j++) {
		struct budget_func *bf = &need[j].sf->bf;
		if (bf->mode != BUDGET_ESTIMATED || !bf->probes_were_in)
			continue;
		bf->trap_ns += (double)bf->hits_ring[s->budget.slice % BUDGET_RING] * s->budget.hit_ns;
		bf->cpu_ns += (double)(cpu - last);
	}
}

/* The runtime watchers trap at every goroutine exit: they stay in while
 * that fits in half the budget.  Over it they come out (exits then prove
 * no call dead: their calls stay in flight until other evidence) and
 * are tried again, for a slice, every WATCH_RETRY. */
#define BUDGET_WATCH_RETRY_NS 10000000000ull
static void budget_watchers(struct session *s, double allowed, uint64_t now)
{
	struct budget *b = &s->budget;
	bool in = tracer_watchers_in(s->tracer), any = false, want;
	uint64_t sum = 0, last = b->watch_ring[b->slice % BUDGET_RING];

	for (size_t i = 0; i < s->nfuncs; i++)
		any |= s->funcs[i].slot >= 0;
	for (size_t i = 0; i < BUDGET_RING; i++)
		sum += b->watch_ring[i];
	double rate = (double)sum / b->ring_s > (double)last * BUDGET_RING ? (double)sum / b->ring_s
									      : (double)last * BUDGET_RING;
	if (!any)
		want = false;
	else if (b->hits_per_s <= 0)
		want = true;
	else if (in && rate > 0.5 * allowed) {
		want = false;
		b->watch_off_until = now + BUDGET_WATCH_RETRY_NS;
		if (!b->watch_warned)
			log_info("budget", "runtime.goexit1 traps %.0f times a second, over half the "
					   "budget: unwatched (calls of exited goroutines stay in flight "
					   "until other evidence), tried again every %llu s",
				 rate, BUDGET_WATCH_RETRY_NS / 1000000000ull);
		b->watch_warned = true;
	} else
		want = in || now >= b->watch_off_until;
	if (want != in && tracer_watchers(s->tracer, want) != 0)
		log_debug("budget", "runtime watchers not attached");
	if (want != in)
		memset(b->watch_ring, 0, sizeof(b->watch_ring));
}

/* End of a tick: go quiet (budget.h) when the face can be woken, a second
 * passed since the last wake or attach, every function is in full with
 * nothing draining, and the last second's hits are under a tenth of the
 * budget.  Else disarm BPF's wake-up. */
static void budget_go_quiet(struct session *s, const struct budget_need *need, size_t n,
			    double allowed, uint64_t now)
{
	struct budget *b = &s->budget;
	double hits = 0;
	bool ok = b->wakeable && now >= b->loud_until_ns && b->slice >= BUDGET_RING;

	for (size_t j = 0; ok && j < n; j++) {
		const struct budget_func *bf = &need[j].sf->bf;
		ok = bf->mode == BUDGET_FULL && !bf->drain_until_ns;
		for (size_t k = 0; k < BUDGET_RING; k++)
			hits += (double)bf->hits_ring[k];
	}
	for (size_t k = 0; k < BUDGET_RING; k++)
		hits += (double)b->watch_ring[k];
	if (ok && b->hits_per_s > 0)
		ok = hits / b->ring_s < BUDGET_QUIET_SHARE * allowed;
	if (!ok) {
		tracer_wake_arm(s->tracer, 0);
		return;
	}
	b->quiet = true;
	b->quiet_until_ns = now + BUDGET_QUIET_NS;
	b->next_ns = b->quiet_until_ns;
	double wake = BUDGET_WAKE_SHARE * allowed;
	tracer_wake_arm(s->tracer, b->hits_per_s > 0 ? (wake < 1 ? 1 : (uint64_t)wake) : 0);
}

/* A quiet slice ended: ten slices of the rings must not stand for ten
 * seconds once the load rises, so they start again from this slice. */
static void budget_rings_restart(struct session *s)
{
	struct budget *b = &s->budget;

	memset(b->slice_end_ns, 0, sizeof(b->slice_end_ns));
	memset(b->watch_ring, 0, sizeof(b->watch_ring));
	for (size_t i = 0; i < s->nfuncs; i++) {
		memset(s->funcs[i].bf.hits_ring, 0, sizeof(s->funcs[i].bf.hits_ring));
		memset(s->funcs[i].bf.begun_ring, 0, sizeof(s->funcs[i].bf.begun_ring));
		memset(s->funcs[i].bf.inl_ring, 0, sizeof(s->funcs[i].bf.inl_ring));
	}
}

void budget_wake(struct budget *b)
{
	b->next_ns = 0;
}

void budget_wakeable(struct budget *b, bool on)
{
	b->wakeable = on;
}

/* budget_tick's buffers for cap functions, grown when more are traced. */
static int budget_tick_buffers(struct budget *b, size_t cap)
{
	if (cap <= b->tick_cap)
		return 0;
	struct retop_func_stats *st = realloc(b->tick_st, cap * sizeof(*st));
	if (st)
		b->tick_st = st;
	struct budget_need *need = realloc(b->tick_need, cap * sizeof(*need));
	if (need)
		b->tick_need = need;
	enum budget_mode *to = realloc(b->tick_to, cap * sizeof(*to));
	if (to)
		b->tick_to = to;
	if (!st || !need || !to)
		return -ENOMEM;
	b->tick_cap = cap;
	return 0;
}

uint64_t budget_tick(struct session *s, uint64_t now_ns)
{
	struct budget *b = &s->budget;
	struct retop_func_stats *st;
	struct budget_need *need;
	enum budget_mode *to;
	size_t n = 0, cap = s->nfuncs ? s->nfuncs : 1;

	if (!s->tracer)
		return now_ns + BUDGET_SLICE_NS;
	if (now_ns < b->next_ns)
		return b->next_ns;
	/* A quiet slice cut short: BPF woke the engine (the hits rose, or an
	 * exec()).  Slices of 100 ms for a second. */
	bool after_quiet = b->quiet;
	if (after_quiet && now_ns + BUDGET_SLICE_NS / 2 < b->quiet_until_ns)
		b->loud_until_ns = now_ns + BUDGET_QUIET_NS;
	b->quiet = false;
	/* The next slice, or sooner where a sampled slice starts (below). */
	b->next_ns = now_ns + BUDGET_SLICE_NS;
	if (budget_tick_buffers(b, cap) != 0)
		return b->next_ns;
	st = b->tick_st;
	need = b->tick_need;
	to = b->tick_to;
	memset(need, 0, cap * sizeof(*need));
	memset(to, 0, cap * sizeof(*to));
	b->slice++;
	if (after_quiet)
		budget_rings_restart(s);
	/* The ring's oldest slice began where the one it replaces ended. */
	uint64_t began = b->slice_end_ns[b->slice % BUDGET_RING];
	b->slice_end_ns[b->slice % BUDGET_RING] = now_ns;
	b->ring_s = began && now_ns > began + 1000000000ull ? (double)(now_ns - began) / 1e9 : 1.0;
	uint64_t wh = tracer_watch_hits(s->tracer);
	b->watch_ring[b->slice % BUDGET_RING] = wh - b->watch_hits;
	b->watch_hits = wh;
	double allowed = budget_allowed_hits(b), funcs_allowed = allowed;
	for (size_t i = 0; i < BUDGET_RING; i++)
		funcs_allowed -= (double)b->watch_ring[i] / b->ring_s;
	for (size_t i = 0; i < s->nfuncs; i++) {
		struct session_func *sf = &s->funcs[i];
		if (sf->slot < 0 || tracer_read_counters(s->tracer, sf->slot, &st[i]) != 0)
			continue;
		budget_measure(s, sf, now_ns, &st[i]);
		need[n].sf = sf;
		need[n].hits =
		    sf->bf.calls_per_s * (sf->bf.entry_only ? 1 : 2) + sf->bf.inlined_per_s;
		n++;
	}
	budget_trap_share(s, need, n);
	if (b->hits_per_s > 0)
		budget_plan(need, n, funcs_allowed, now_ns, to);
	for (size_t j = 0; j < n; j++) {
		struct session_func *sf = need[j].sf;
		budget_apply(s, sf, b->hits_per_s > 0 ? to[j] : BUDGET_FULL, now_ns,
			     &st[sf - s->funcs]);
		sf->bf.probes_were_in = tracer_entry_is_in(s->tracer, sf->slot);
	}
	budget_watchers(s, allowed, now_ns);
	budget_go_quiet(s, need, n, allowed, now_ns);
	return b->next_ns;
}

void budget_close(struct budget *b)
{
	budget_calibrate_close(b);
	free(b->tick_st);
	free(b->tick_need);
	free(b->tick_to);
	b->tick_st = NULL;
	b->tick_need = NULL;
	b->tick_to = NULL;
	b->tick_cap = 0;
}

void budget_fill(struct session_func *sf, struct snapshot_func *out)
{
	struct budget_func *bf = &sf->bf;
	uint64_t counted = budget_counted(bf, &sf->cur);

	out->mode = bf->mode;
	out->sampled = bf->mode == BUDGET_FULL ? 1.0 : bf->share;
	out->timed_calls = sf->cur.calls;
	out->estimate_stopped = bf->stopped;
	memcpy(out->estimate_why, bf->why, sizeof(out->estimate_why));
	if (!bf->ever_estimated) {
		out->v.calls = counted - bf->period_start + bf->exact_base;
		return;
	}
	/* The calls in flight when the estimate ended were counted in it: the
	 * exact period counts from when as many returned (never below 0, so
	 * the total never goes back). */
	double since = bf->mode == BUDGET_ESTIMATED || counted < bf->period_start
			       ? 0
			       : (double)(counted - bf->period_start);
	double exact = (double)bf->exact_base + since;
	double half = 1.96 * sqrt(bf->ht_var), est = bf->ht_sum;
	out->estimated = true;
	out->v.calls = (uint64_t)(exact + est + 0.5);
	/* Below: the calls seen are sure; the normal interval only once
	 * enough sampled slices saw calls (few say nothing of the spread). */
	bool enough = bf->ht_slices_with_calls >= BUDGET_MIN_SLICES || !bf->ht_partial;
	out->calls_ci95[0] = enough && est - half > bf->ht_seen ? exact + est - half : exact + bf->ht_seen;
	/* The slices count the calls made with the probes in; without them the
	 * target runs faster, by 1/(1 - share of its CPU in traps) at most
	 * where its work is what the traps delay.  Past half, unbounded; and
	 * unbounded until enough sampled slices saw calls: a burst between
	 * them is invisible, and the variance of a few slices says nothing
	 * of it. */
	double trap = bf->cpu_ns > 0 ? bf->trap_ns / bf->cpu_ns : 0;
	out->trap_share = trap;
	bool bounded = trap < 0.5 && !bf->stopped && enough;
	out->calls_ci95[1] = bounded ? exact + (est + half) / (1 - trap) : INFINITY;
}
