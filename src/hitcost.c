/* What a probe hit costs, timed on retop's own code (docs/ARCHITECTURE.md,
 * "Durations without retop's own traps"): a uprobe of each kind on an
 * instruction of retop itself, with the tracer's own programs and link
 * type, and single hits timed against the unprobed call. */
#include "hitcost.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "probes.h"
#include "tracer.h"
#include "clock.h"

/* Hits timed per kind of probe at the start, after HITCOST_WARM untimed;
 * then HITCOST_MORE every tenth sample, into the same ring. */
#define HITCOST_HITS 201
#define HITCOST_WARM 10
#define HITCOST_MORE 20

/* The calibration targets: the three kinds of probed instruction, as the
 * kernel sees them in a Go function (docs/UPROBES.md): the prologue's jump
 * (jbe, emulated), an entry compare (single-stepped out of line; it reads
 * [rsp], not Go's [r14+16]) and a RET (single-stepped).  Each is a
 * function.  jcc, cmp and ret have one probe, on their first instruction:
 * a whole hit of each kind.  jcc_w and cmp_w are a call from its entry
 * probe to its RET probe: the window a call's own two hits leave inside
 * its duration. */
__asm__(".text\n"
	".globl retop_hitcost_jcc\n"
	".type retop_hitcost_jcc, @function\n"
	"retop_hitcost_jcc:\n"
	"\t.byte 0x76, 0x00\n" /* jbe .+2 */
	"\tret\n"
	".size retop_hitcost_jcc, 3\n"
	".globl retop_hitcost_cmp\n"
	".type retop_hitcost_cmp, @function\n"
	"retop_hitcost_cmp:\n"
	"\t.byte 0x48, 0x3b, 0x24, 0x24\n" /* cmp rsp, [rsp] */
	"\tret\n"
	".size retop_hitcost_cmp, 5\n"
	".globl retop_hitcost_ret\n"
	".type retop_hitcost_ret, @function\n"
	"retop_hitcost_ret:\n"
	"\tret\n"
	".size retop_hitcost_ret, 1\n"
	".globl retop_hitcost_jcc_w\n"
	".type retop_hitcost_jcc_w, @function\n"
	"retop_hitcost_jcc_w:\n"
	"\t.byte 0x76, 0x00\n" /* jbe .+2 */
	"\tret\n"
	".size retop_hitcost_jcc_w, 3\n"
	".globl retop_hitcost_cmp_w\n"
	".type retop_hitcost_cmp_w, @function\n"
	"retop_hitcost_cmp_w:\n"
	"\t.byte 0x48, 0x3b, 0x24, 0x24\n" /* cmp rsp, [rsp] */
	"\tret\n"
	".size retop_hitcost_cmp_w, 5\n");
/* The calibration's calls run with a g of retop's own in R14, as a Go
 * function runs with its goroutine's: the programs key the call by it
 * and read its stack.hi (offset 8), so they take the path a traced
 * function's calls take.  (fn in RDI, g in RSI; R14 is callee-saved.) */
__asm__(".text\n"
	".globl retop_hitcost_call\n"
	".type retop_hitcost_call, @function\n"
	"retop_hitcost_call:\n"
	"\tpush %r14\n"
	"\tmov %rsi, %r14\n"
	"\tcall *%rdi\n"
	"\tpop %r14\n"
	"\tret\n"
	".size retop_hitcost_call, .-retop_hitcost_call\n");
void retop_hitcost_call(void (*fn)(void), void *g);
static uint64_t hitcost_g[4] = {0, 0x7ffffffff000ull};

void retop_hitcost_jcc(void);
void retop_hitcost_cmp(void);
void retop_hitcost_ret(void);
void retop_hitcost_jcc_w(void);
void retop_hitcost_cmp_w(void);

/* What each target times: a whole hit of kind RETOP_HIT_* (K), or a
 * call's own window by how its entry runs, RETOP_OWN_* (W). */
static const struct hitcost_target {
	void (*fn)(void);
	int k_kind;	     /* RETOP_HIT_*; -1: a window target */
	int w_kind;	     /* RETOP_OWN_*; -1: a hit target */
	int probes[2];	     /* the kinds of its probes (-1: none) */
	unsigned offsets[2]; /* their offsets in fn */
} hitcost_targets[HITCOST_TARGETS] = {
    {retop_hitcost_jcc, RETOP_HIT_ENTRY_EMULATED, -1, {RETOP_HIT_ENTRY_EMULATED, -1}, {0, 0}},
    {retop_hitcost_cmp, RETOP_HIT_ENTRY_STEPPED, -1, {RETOP_HIT_ENTRY_STEPPED, -1}, {0, 0}},
    {retop_hitcost_ret, RETOP_HIT_RET, -1, {RETOP_HIT_RET, -1}, {0, 0}},
    {retop_hitcost_jcc_w,
     -1,
     RETOP_OWN_EMULATED,
     {RETOP_HIT_RET, RETOP_HIT_ENTRY_EMULATED},
     {2, 0}},
    {retop_hitcost_cmp_w, -1, RETOP_OWN_STEPPED, {RETOP_HIT_RET, RETOP_HIT_ENTRY_STEPPED}, {4, 0}},
};

/* File and offset of addr in this process, from /proc/self/maps. */
static int hitcost_self_offset(uintptr_t addr, char *path, size_t len, uint64_t *off)
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

static int hitcost_cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median ns of one call of fn, unprobed: what a timed hit is less. */
static double hitcost_bare_ns(void (*fn)(void))
{
	int64_t d[HITCOST_HITS];

	for (int i = 0; i < HITCOST_HITS; i++) {
		uint64_t t0 = clock_now_ns();
		retop_hitcost_call(fn, hitcost_g);
		d[i] = (int64_t)(clock_now_ns() - t0);
	}
	qsort(d, HITCOST_HITS, sizeof(d[0]), hitcost_cmp_i64);
	return (double)d[HITCOST_HITS / 2];
}

/* The q-quantile (0..1) of target j's ring. */
static double hitcost_quantile(const struct hitcost *b, int j, double q)
{
	int64_t sorted[HITCOST_RING];
	size_t m = b->n[j] < HITCOST_RING ? b->n[j] : HITCOST_RING;

	if (!m)
		return 0;
	memcpy(sorted, b->ring[j], m * sizeof(sorted[0]));
	qsort(sorted, m, sizeof(sorted[0]), hitcost_cmp_i64);
	size_t i = (size_t)(q * (double)(m - 1) + 0.5);
	return (double)sorted[i];
}

/* The figures from the rings: the 20th percentile of each.  A hit during
 * which retop's own thread was preempted says nothing about the target's
 * traps, and on a loaded CPU many are (the median then took out more than
 * the traps cost, and showed calls shorter than they were); on this kind
 * of VM a single step also costs ~18 us most of the time and ~50 us the
 * rest, in proportions that change with the load (a median caught at a
 * slow moment took 23 us out of calls whose steps cost 18); the very
 * fastest took out too little.  What a call may still hold above it, or
 * lack below it, in eight calls out of ten is the resolution. */
static void hitcost_figures(struct hitcost *b)
{
	b->hit_resolution_ns = 0;
	for (int j = 0; j < HITCOST_TARGETS; j++) {
		const struct hitcost_target *x = &hitcost_targets[j];
		if (x->k_kind >= 0) {
			double ns = hitcost_quantile(b, j, 0.2), q90 = hitcost_quantile(b, j, 0.9);
			if (q90 - ns > b->hit_resolution_ns)
				b->hit_resolution_ns = q90 - ns;
			log_debug("hitcost",
				  "hit %d: 10%% %.0f ns, 20%% %.0f ns, 50%% %.0f ns, 90%% %.0f ns",
				  x->k_kind, hitcost_quantile(b, j, 0.1), ns,
				  hitcost_quantile(b, j, 0.5), hitcost_quantile(b, j, 0.9));
			b->trap_ns[x->k_kind] = ns > 1 ? ns : 1;
			continue;
		}
		double q10 = hitcost_quantile(b, j, 0.1), q20 = hitcost_quantile(b, j, 0.2),
		       q90 = hitcost_quantile(b, j, 0.9);
		log_debug("hitcost", "window %d: 10%% %.0f ns, 20%% %.0f ns, 90%% %.0f ns",
			  x->w_kind, q10, q20, q90);
		b->own_ns[x->w_kind] = q20 > 1 ? q20 : 1;
		/* At least what is taken out, however tight the calibration:
		 * the target's traps are not retop's own (its caches, its CPU,
		 * its neighbours), nor are they what they were at the
		 * calibration.  On one VM, with the two CPUs shared by other
		 * work, a median call still held 0.3-1.7 us of an emulated
		 * entry's 5 us window, and up to 5 us of a single-stepped
		 * entry's 18 us; on another, the stepped window was calibrated
		 * at 8.9, 11.5 and 12.1 us in three runs seconds apart (each
		 * run's own spread 0.4 us), and a traced leaf of 50 ns read
		 * 1.6-6.1 us once 8.9 us were taken out. */
		double spread = q90 - q20 > q20 - q10 ? q90 - q20 : q20 - q10;
		b->resolution_ns[x->w_kind] = spread > q20 ? spread : q20;
	}
}

/* n more calls of target j, each timed, into its ring: a whole hit, less
 * the unprobed call and the program's own run time (each hit adds its own,
 * measured, in the target); or the window BPF measured between the entry's
 * program and the RET's. */
static int hitcost_time(struct hitcost *b, struct tracer *t, int j, int n, char *err)
{
	const struct hitcost_target *x = &hitcost_targets[j];
	uint64_t before = tracer_cal_hits(t), prog, window;
	int per_call = x->probes[1] >= 0 ? 2 : 1;

	for (int i = 0; i < n; i++) {
		tracer_cal_clear(t);
		uint64_t t0 = clock_now_ns();
		retop_hitcost_call(x->fn, hitcost_g);
		int64_t d = (int64_t)(clock_now_ns() - t0);
		tracer_cal_last(t, &prog, &window);
		if (x->k_kind >= 0)
			d -= (int64_t)b->bare[j] + (int64_t)prog;
		else if (!window)
			return err_set(err, EIO, "the calibration's window was not measured");
		else
			d = (int64_t)window;
		b->ring[j][b->n[j]++ % HITCOST_RING] = d;
	}
	/* The probes must really have fired, every call. */
	uint64_t hits = tracer_cal_hits(t) - before;
	if (hits != (uint64_t)(n * per_call))
		return err_set(err, EIO, "the calibration probes fired %llu times, expected %d",
			       (unsigned long long)hits, n * per_call);
	return 0;
}

/* Target j's probes, on retop's own text. */
static int hitcost_attach(struct hitcost *b, struct tracer *t, int j, char *err)
{
	const struct hitcost_target *x = &hitcost_targets[j];
	char path[600];
	uint64_t off = 0;
	int ret;

	if (hitcost_self_offset((uintptr_t)x->fn, path, sizeof(path), &off) != 0)
		return err_set(err, ENOENT, "retop's own text is not in /proc/self/maps");
	/* RET probes first, as for a traced function. */
	for (int p = 0; p < 2; p++) {
		if (x->probes[p] < 0)
			continue;
		/* A whole hit's entry keeps no call in flight. */
		ret = tracer_cal_attach(t, x->probes[p], x->k_kind >= 0, path, off + x->offsets[p],
					&b->cal_ps[j * 2 + p]);
		if (ret < 0)
			return err_set(err, -ret, "a uprobe on retop itself: %s", strerror(-ret));
	}
	return 0;
}

int hitcost_calibrate(struct hitcost *b, struct tracer *t, char *err)
{
	int ret;

	hitcost_close(b);
	for (int j = 0; j < HITCOST_TARGETS; j++) {
		/* Before the probes exist. */
		b->bare[j] = hitcost_bare_ns(hitcost_targets[j].fn);
		b->n[j] = 0;
		if ((ret = hitcost_attach(b, t, j, err)) < 0)
			goto fail;
		/* The first hits set up the process's out-of-line page. */
		for (int i = 0; i < HITCOST_WARM; i++)
			retop_hitcost_call(hitcost_targets[j].fn, hitcost_g);
		if ((ret = hitcost_time(b, t, j, HITCOST_HITS, err)) < 0)
			goto fail;
	}
	hitcost_figures(b);
	b->cal_tracer = t;
	return 0;
fail:
	hitcost_close(b);
	return ret;
}

void hitcost_more(struct hitcost *b)
{
	char err[ERR_LEN];

	if (!b->cal_tracer)
		return;
	for (int j = 0; j < HITCOST_TARGETS; j++)
		if (hitcost_time(b, b->cal_tracer, j, HITCOST_MORE, err) < 0) {
			log_warn("hitcost", "probe costs no longer timed: %s", err);
			hitcost_close(b);
			return;
		}
	hitcost_figures(b);
}

void hitcost_close(struct hitcost *b)
{
	probe_sets_destroy(b->cal_ps, HITCOST_PROBES);
	b->cal_tracer = NULL;
}

double hitcost_traps_ns(const struct hitcost *b, bool entry_emulated, uint64_t entries,
			uint64_t rets, uint64_t marks)
{
	const double *k = b->trap_ns;

	return (double)entries *
		   k[entry_emulated ? RETOP_HIT_ENTRY_EMULATED : RETOP_HIT_ENTRY_STEPPED] +
	       (double)rets * k[RETOP_HIT_RET] + (double)marks * k[RETOP_HIT_ENTRY_EMULATED];
}
