/* The time split in JSON and text (snapshot_split.h). */
#include "snapshot_split.h"

#include <stdio.h>

/* A fraction with four decimals, as snapshot.c's ratios. */
static struct json_object *snapshot_split_ratio(double v)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%.4f", v);
	return json_object_new_double_s(v, buf);
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
	 * in go_parked_ns with the rest of its duration. */
	json_object_object_add(o, "parked_calls_split", json_object_new_boolean(false));
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
	json_object_object_add(o, "why_off",
			       snap->split_on ? NULL : json_object_new_string(snap->split_why));
	return o;
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
	if (t->unsplit)
		fprintf(out,
			"    time split of %llu of %llu timed calls (the others' figures lost)\n",
			(unsigned long long)(t->calls + t->parked), (unsigned long long)timed);
}

void snapshot_split_text_header(FILE *out, const struct snapshot *snap)
{
	if (!snap->split_on && snap->nfuncs)
		fprintf(out, "time split %s\n", snap->split_why);
}
