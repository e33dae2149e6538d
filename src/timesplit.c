/* The time split's figures (timesplit.h). */
#include "timesplit.h"

#include <stdio.h>
#include <string.h>

#include "go_waitreasons.h"

static const struct {
	const char *name, *words, *brief;
} timesplit_parts[RETOP_SPLIT_PARTS] = {
    [RETOP_SPLIT_CPU] = {"on_cpu", "on CPU", "cpu"},
    [RETOP_SPLIT_RUNQ] = {"runqueue", "waiting for a CPU", "runq"},
    [RETOP_SPLIT_BLOCKED] = {"kernel_blocked", "blocked in the kernel", "kern"},
    [RETOP_SPLIT_PARKED] = {"go_parked", "parked by Go", "park"},
};

static const char *const timesplit_modes[] = {
    [TIMESPLIT_ON] = "on", [TIMESPLIT_OFF] = "off", [TIMESPLIT_SCHED] = "sched"};

const char *timesplit_mode_name(enum timesplit_mode m)
{
	return (size_t)m < sizeof(timesplit_modes) / sizeof(timesplit_modes[0]) ? timesplit_modes[m]
										: "?";
}

int timesplit_mode_parse(const char *s, enum timesplit_mode *out)
{
	for (size_t i = 0; i < sizeof(timesplit_modes) / sizeof(timesplit_modes[0]); i++)
		if (!strcmp(s, timesplit_modes[i])) {
			*out = (enum timesplit_mode)i;
			return 0;
		}
	return -1;
}

const char *timesplit_part_name(int part)
{
	return part >= 0 && part < RETOP_SPLIT_PARTS ? timesplit_parts[part].name : "?";
}

const char *timesplit_part_words(int part)
{
	return part >= 0 && part < RETOP_SPLIT_PARTS ? timesplit_parts[part].words : "?";
}

const char *timesplit_part_short(int part)
{
	return part >= 0 && part < RETOP_SPLIT_PARTS ? timesplit_parts[part].brief : "?";
}

/* Every counter only grows: one that went back means a reset. */
static bool timesplit_went_back(const struct retop_split_stats *c,
				const struct retop_split_stats *p)
{
	if (c->calls < p->calls || c->parked < p->parked || c->parked_split < p->parked_split ||
	    c->lost < p->lost || c->unreadable < p->unreadable || c->vcsw < p->vcsw ||
	    c->ivcsw < p->ivcsw)
		return true;
	for (int k = 0; k < RETOP_SPLIT_PARTS; k++)
		if (c->ns[k] < p->ns[k])
			return true;
	return false;
}

/* The figures of cur less prev (prev NULL: cur's). */
static void timesplit_figures_of(const struct retop_split_stats *c,
				 const struct retop_split_stats *p, struct timesplit_figures *f)
{
	static const struct retop_split_stats none;

	if (!p)
		p = &none;
	memset(f, 0, sizeof(*f));
	f->calls = c->calls - p->calls;
	f->parked = c->parked - p->parked;
	f->parked_split = c->parked_split - p->parked_split;
	f->unsplit = (c->lost - p->lost) + (c->unreadable - p->unreadable);
	for (int k = 0; k < RETOP_SPLIT_PARTS; k++) {
		f->ns[k] = c->ns[k] - p->ns[k];
		f->total_ns += f->ns[k];
	}
	for (int k = 0; k < RETOP_SPLIT_PARTS && f->total_ns; k++)
		f->share[k] = (double)f->ns[k] / (double)f->total_ns;
	uint64_t timed = f->calls + f->parked + f->unsplit;
	f->covered = timed ? (double)(f->calls + f->parked) / (double)timed : 0;
	if (f->calls) {
		f->vcsw_per_call = (double)(c->vcsw - p->vcsw) / (double)f->calls;
		f->ivcsw_per_call = (double)(c->ivcsw - p->ivcsw) / (double)f->calls;
	}
}

void timesplit_reason_name(int go_minor, unsigned r, char *buf, size_t len)
{
	const char *w = go_wait_reason(go_minor, r);

	if (r == RETOP_SPLIT_RUNNABLE)
		snprintf(buf, len, "runnable (preempted or yielded)");
	else if (r == RETOP_SPLIT_SUSPENDED)
		snprintf(buf, len, "suspended (GC stack scan)");
	else if (w)
		snprintf(buf, len, "%s", w);
	else if (r)
		snprintf(buf, len, "wait reason %u", r);
	else
		snprintf(buf, len, "unknown");
}

/* The busiest reasons since tracing began. */
static void timesplit_reasons(const struct retop_split_stats *c, int go_minor,
			      struct timesplit_view *out)
{
	bool taken[RETOP_SPLIT_REASONS] = {false};

	for (unsigned r = 0; r < RETOP_SPLIT_REASONS; r++)
		out->reasons_ns += c->reason_ns[r];
	while (out->nreasons < TIMESPLIT_REASONS) {
		int best = -1;
		for (int r = 0; r < RETOP_SPLIT_REASONS; r++)
			if (!taken[r] && c->reason_ns[r] &&
			    (best < 0 || c->reason_ns[r] > c->reason_ns[best]))
				best = r;
		if (best < 0)
			break;
		taken[best] = true;
		struct timesplit_reason *o = &out->reasons[out->nreasons++];
		timesplit_reason_name(go_minor, (unsigned)best, o->name, sizeof(o->name));
		o->ns = c->reason_ns[best];
	}
}

void timesplit_compute(const struct retop_split_stats *cur, const struct retop_split_stats *prev,
		       bool on, int go_minor, struct timesplit_view *out)
{
	memset(out, 0, sizeof(*out));
	out->on = on;
	if (prev && timesplit_went_back(cur, prev))
		prev = NULL;
	timesplit_figures_of(cur, NULL, &out->total);
	timesplit_figures_of(cur, prev, &out->recent);
	timesplit_reasons(cur, go_minor, out);
}

int timesplit_dominant(const struct timesplit_figures *f)
{
	int best = -1;

	for (int k = 0; k < RETOP_SPLIT_PARTS; k++)
		if (f->ns[k] && (best < 0 || f->ns[k] > f->ns[best]))
			best = k;
	return best;
}
