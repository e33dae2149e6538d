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

/* Hits timed per kind of probe at the start, after HITCOST_WARM untimed;
 * then HITCOST_MORE every tenth sample, into the same ring. */
#define HITCOST_HITS 201
#define HITCOST_WARM 10
#define HITCOST_MORE 20

/* The calibration targets: the three kinds of probed instruction, as the
 * kernel sees them in a Go function (docs/UPROBES.md): the prologue's jump
 * (jbe, emulated), an entry compare (single-stepped out of line; it reads
 * [rsp], not Go's [r14+16]) and a RET (single-stepped).  Each is a
 * function: the probe sits on its first instruction. */
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
	".globl retop_hitcost_target\n"
	".type retop_hitcost_target, @function\n"
	"retop_hitcost_target:\n"
	"\tret\n"
	".size retop_hitcost_target, 1\n");
void retop_hitcost_jcc(void);
void retop_hitcost_cmp(void);
void retop_hitcost_target(void);

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

static int hitcost_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The median ns of one call of fn, unprobed: what a timed hit is less. */
static double hitcost_bare_ns(void (*volatile fn)(void))
{
	uint64_t d[HITCOST_HITS];

	for (int i = 0; i < HITCOST_HITS; i++) {
		uint64_t t0 = tracer_now_ns();
		fn();
		d[i] = tracer_now_ns() - t0;
	}
	qsort(d, HITCOST_HITS, sizeof(d[0]), hitcost_cmp_u64);
	return (double)d[HITCOST_HITS / 2];
}

static void (*const hitcost_targets[RETOP_HIT_KINDS])(void) = {
    [RETOP_HIT_ENTRY_EMULATED] = retop_hitcost_jcc,
    [RETOP_HIT_ENTRY_STEPPED] = retop_hitcost_cmp,
    [RETOP_HIT_RET] = retop_hitcost_target,
};

/* n more hits of kind k, each timed, into the last HITCOST_RING; the
 * cost is their 20th percentile: a hit during which retop's own thread was
 * preempted says nothing about the target's traps, and on a loaded CPU
 * many are (the median then took out more than the traps cost, and showed
 * calls shorter than they were); the very fastest took out too little. */
static int hitcost_time_hits(struct hitcost *b, struct tracer *t, int k, int n, char *err)
{
	void (*volatile fn)(void) = hitcost_targets[k];
	uint64_t before = tracer_cal_hits(t), sorted[HITCOST_RING];

	for (int i = 0; i < n; i++) {
		uint64_t t0 = tracer_now_ns();
		fn();
		b->cal_ring[k][b->cal_n[k]++ % HITCOST_RING] = tracer_now_ns() - t0;
	}
	/* The probe must really have fired, every call. */
	uint64_t hits = tracer_cal_hits(t) - before;
	if (hits != (uint64_t)n)
		return err_set(err, EIO, "the calibration probe fired %llu times, expected %d",
			       (unsigned long long)hits, n);
	size_t m = b->cal_n[k] < HITCOST_RING ? b->cal_n[k] : HITCOST_RING;
	memcpy(sorted, b->cal_ring[k], m * sizeof(sorted[0]));
	qsort(sorted, m, sizeof(sorted[0]), hitcost_cmp_u64);
	double ns = (double)sorted[m / 5] - b->cal_bare[k];
	b->trap_ns[k] = ns > 1 ? ns : 1;
	return 0;
}

int hitcost_calibrate(struct hitcost *b, struct tracer *t, char *err)
{
	char path[600];
	uint64_t off = 0;
	int ret;

	hitcost_close(b);
	for (int k = 0; k < RETOP_HIT_KINDS; k++) {
		if (hitcost_self_offset((uintptr_t)hitcost_targets[k], path, sizeof(path), &off) !=
		    0) {
			ret = err_set(err, ENOENT, "retop's own text is not in /proc/self/maps");
			goto fail;
		}
		/* Before the probe exists. */
		b->cal_bare[k] = hitcost_bare_ns(hitcost_targets[k]);
		b->cal_n[k] = 0;
		if ((ret = tracer_cal_attach(t, k, path, off, &b->cal_ps[k])) < 0) {
			err_set(err, -ret, "a uprobe on retop itself: %s", strerror(-ret));
			goto fail;
		}
		/* The first hits set up the process's out-of-line page. */
		for (int i = 0; i < HITCOST_WARM; i++)
			hitcost_targets[k]();
		if ((ret = hitcost_time_hits(b, t, k, HITCOST_HITS, err)) < 0)
			goto fail;
	}
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
	for (int k = 0; k < RETOP_HIT_KINDS; k++)
		if (hitcost_time_hits(b, b->cal_tracer, k, HITCOST_MORE, err) < 0) {
			log_warn("hitcost", "probe costs no longer timed: %s", err);
			hitcost_close(b);
			return;
		}
}

void hitcost_close(struct hitcost *b)
{
	probe_sets_destroy(b->cal_ps, RETOP_HIT_KINDS);
	b->cal_tracer = NULL;
}
