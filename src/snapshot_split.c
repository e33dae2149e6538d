/* The time split in JSON and text (snapshot_split.h). */
#include "snapshot_split.h"

#include <stdio.h>
#include <string.h>

/* A double with a fixed number of decimals, as snapshot.c's. */
static struct json_object *snapshot_split_fixed(double v, int decimals)
{
	char buf[48];

	snprintf(buf, sizeof(buf), "%.*f", decimals, v);
	return json_object_new_double_s(v, buf);
}

/* A fraction with four decimals, as snapshot.c's ratios. */
static struct json_object *snapshot_split_ratio(double v)
{
	return snapshot_split_fixed(v, 4);
}

/* The parts of a set of calls, and how many calls they are of. */
static void snapshot_split_figures(struct json_object *o, const struct timesplit_figures *t)
{
	char key[32];

	for (int k = 0; k < RETOP_SPLIT_PARTS; k++) {
		snprintf(key, sizeof(key), "%s_ns", timesplit_part_name(k));
		json_object_object_add(o, key, json_object_new_uint64(t->ns[k]));
	}
	json_object_object_add(o, "calls_split", json_object_new_uint64(t->calls));
	json_object_object_add(o, "calls_parked", json_object_new_uint64(t->parked));
	/* Of those, split exactly (--time-split sched). */
	json_object_object_add(o, "calls_parked_split", json_object_new_uint64(t->parked_split));
	json_object_object_add(o, "calls_unsplit", json_object_new_uint64(t->unsplit));
	/* Of the timed calls, those whose time is in the parts. */
	json_object_object_add(o, "covered_share", snapshot_split_ratio(t->covered));
}

struct json_object *snapshot_split_func_json(const struct snapshot_func *f)
{
	struct json_object *o, *iv;

	if (!f->split.on || f->entry_only)
		return NULL;
	o = json_object_new_object();
	iv = json_object_new_object();
	/* Since tracing began; "interval": the last interval's. */
	snapshot_split_figures(o, &f->split.total);
	/* A parked call's own CPU, run-queue and kernel time between its
	 * parks are not told apart without probes on the scheduler: they are
	 * in go_parked_ns with the rest of its duration.  True when every
	 * parked call was split exactly (--time-split sched). */
	json_object_object_add(
	    o, "parked_calls_split",
	    json_object_new_boolean(f->split.total.parked_split == f->split.total.parked));
	/* Why its goroutines were parked (--time-split sched): the busiest
	 * reasons, over its calls in flight, since tracing began. */
	struct json_object *why = json_object_new_array();
	for (size_t i = 0; i < f->split.nreasons; i++) {
		struct json_object *r = json_object_new_object();
		json_object_object_add(r, "reason",
				       json_object_new_string(f->split.reasons[i].name));
		json_object_object_add(r, "ns", json_object_new_uint64(f->split.reasons[i].ns));
		json_object_object_add(r, "share",
				       snapshot_split_ratio(f->split.reasons_ns
								? (double)f->split.reasons[i].ns /
								      (double)f->split.reasons_ns
								: 0));
		json_object_array_add(why, r);
	}
	json_object_object_add(o, "wait_reasons", why);
	/* Over the timed calls only: a sample of the calls under --budget. */
	json_object_object_add(o, "sampled", json_object_new_boolean(f->timed_calls < f->v.calls));
	json_object_object_add(o, "voluntary_switches_per_call",
			       snapshot_split_ratio(f->split.total.vcsw_per_call));
	json_object_object_add(o, "involuntary_switches_per_call",
			       snapshot_split_ratio(f->split.total.ivcsw_per_call));
	snapshot_split_figures(iv, &f->split.recent);
	json_object_object_add(o, "interval", iv);
	return o;
}

struct json_object *snapshot_split_json(const struct snapshot *snap)
{
	struct json_object *o = json_object_new_object();

	json_object_object_add(o, "on", json_object_new_boolean(snap->split_on));
	json_object_object_add(o, "mode",
			       json_object_new_string(snap->split_sched ? "sched"
						      : snap->split_on	? "on"
									: "off"));
	/* The scheduler's probes are in now (sched mode; the budget may take
	 * them out with the runtime watchers, and parked calls are then
	 * counted whole again). */
	json_object_object_add(o, "sched_watched", json_object_new_boolean(snap->sched_watched));
	/* What they cost: their traps a second, and the targets' CPU. */
	json_object_object_add(o, "sched_hits_per_s",
			       snapshot_split_fixed(snap->sched_hits_per_s, 1));
	json_object_object_add(o, "sched_cpu_ns_per_s",
			       snapshot_split_fixed(snap->sched_cost_per_s, 0));
	json_object_object_add(o, "why_off",
			       snap->split_on ? NULL : json_object_new_string(snap->split_why));
	return o;
}

/* Why its goroutines were parked (--time-split sched), the busiest first,
 * as many as fit 80 columns. */
static void snapshot_split_reasons_text(FILE *out, const struct snapshot_func *f)
{
	char line[81], item[80];
	size_t n;

	if (!f->split.nreasons || !f->split.reasons_ns)
		return;
	n = (size_t)snprintf(line, sizeof(line), "    parked:");
	for (size_t i = 0; i < f->split.nreasons; i++) {
		int w = snprintf(
		    item, sizeof(item), "%s %s %.1f%%", i ? "," : "", f->split.reasons[i].name,
		    100.0 * (double)f->split.reasons[i].ns / (double)f->split.reasons_ns);
		if (w < 0 || n + (size_t)w >= sizeof(line))
			break;
		memcpy(line + n, item, (size_t)w + 1);
		n += (size_t)w;
	}
	fprintf(out, "%s\n", line);
}

void snapshot_split_text(FILE *out, const struct snapshot_func *f)
{
	const struct timesplit_figures *t = &f->split.total;
	uint64_t timed = t->calls + t->parked + t->unsplit;

	if (!f->split.on || f->entry_only || !t->total_ns)
		return;
	char parked[16];

	fprintf(out, "    time: on CPU %.1f%%, run queue %.1f%%, kernel %.1f%%, parked %.1f%%",
		100 * t->share[RETOP_SPLIT_CPU], 100 * t->share[RETOP_SPLIT_RUNQ],
		100 * t->share[RETOP_SPLIT_BLOCKED], 100 * t->share[RETOP_SPLIT_PARKED]);
	/* A parked call counts whole: its CPU time between parks is not
	 * told apart. */
	stats_format_count((double)t->parked, parked, sizeof(parked));
	fprintf(out, t->parked ? " (%s parked)\n" : "\n", parked);
	snapshot_split_reasons_text(out, f);
	if (t->unsplit)
		fprintf(out,
			"    time split of %llu of %llu timed calls (the others' figures lost)\n",
			(unsigned long long)(t->calls + t->parked), (unsigned long long)timed);
}

void snapshot_split_text_header(FILE *out, const struct snapshot *snap)
{
	char cost[16];

	if (!snap->nfuncs)
		return;
	if (!snap->split_on) {
		fprintf(out, "time split %s\n", snap->split_why);
		return;
	}
	if (!snap->split_sched)
		return;
	if (!snap->sched_watched) {
		fprintf(out, "time split: Go's scheduler not probed now (--budget): parked calls "
			     "counted whole\n");
		return;
	}
	stats_format_duration((uint64_t)(snap->sched_cost_per_s + 0.5), cost, sizeof(cost));
	fprintf(out, "time split: Go's scheduler probed, %.0f traps/s, %s/s of the target's CPU\n",
		snap->sched_hits_per_s, snap->sched_cost_per_s >= 1 ? cost : "0ns");
}
