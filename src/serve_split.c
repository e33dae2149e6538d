/* The time split's families on /metrics (serve_internal.h): where the
 * timed calls' time went, how each call was split, and with --time-split
 * sched the time parked by Go's wait reason. */
#include "serve_internal.h"

#include <inttypes.h>

#include "prom_text.h"
#include "timesplit.h"

/* One series a function and label value of a time split family: the parts'
 * seconds (SPLIT_PARTS), the calls by how they were split (SPLIT_HOWS), or
 * the seconds parked by Go's wait reason (SPLIT_REASONS). */
enum serve_split_fig { SPLIT_PARTS, SPLIT_HOWS, SPLIT_REASONS };

static void serve_split_rows(struct render *r, const char *name, const char *key,
			     enum serve_split_fig fig)
{
	static const char *const hows[] = {"split", "parked", "unsplit"};

	for (size_t i = 0; i < r->snap->nfuncs; i++) {
		const struct snapshot_func *sn = &r->snap->funcs[i];
		const uint64_t calls[] = {sn->split.total.calls, sn->split.total.parked,
					  sn->split.total.unsplit};
		size_t n = fig == SPLIT_PARTS  ? RETOP_SPLIT_PARTS
			   : fig == SPLIT_HOWS ? 3
					       : sn->split.nreasons;
		if (!sn->raw || !sn->split.on || sn->entry_only)
			continue;
		for (size_t k = 0; k < n; k++) {
			fprintf(r->f, "%s{", name);
			serve_func_labels(r, i);
			fprintf(r->f, ",%s=\"", key);
			prom_text_put_label(r->f, fig == SPLIT_PARTS  ? timesplit_part_name((int)k)
						  : fig == SPLIT_HOWS ? hows[k]
								      : sn->split.reasons[k].name);
			fputs("\"} ", r->f);
			if (fig == SPLIT_HOWS)
				fprintf(r->f, "%" PRIu64, calls[k]);
			else
				prom_text_put_seconds(r->f, fig == SPLIT_PARTS
								? sn->split.total.ns[k]
								: sn->split.reasons[k].ns);
			fputc('\n', r->f);
		}
	}
}

/* Where the timed calls' time went (timesplit.h), for the functions it
 * splits: the parts summed, and the calls by how the split saw them. */
void serve_render_split(struct render *r)
{
	serve_family(r, "retop_function_time_split_seconds_total", "counter",
		     "Timed calls' durations by where the time went: part=\"on_cpu\" (their thread "
		     "ran them), \"runqueue\" (it waited for a CPU), \"kernel_blocked\" (it slept "
		     "in the kernel), \"go_parked\" (Go's scheduler took the goroutine off its "
		     "thread: such a call's whole duration).");
	serve_split_rows(r, "retop_function_time_split_seconds_total", "part", SPLIT_PARTS);
	serve_family(r, "retop_function_time_split_calls_total", "counter",
		     "Timed calls by how the time split saw them: how=\"split\" (on one thread, in "
		     "four parts), \"parked\" (its whole duration in part go_parked), \"unsplit\" "
		     "(in no part: its figures were evicted or unreadable).");
	serve_split_rows(r, "retop_function_time_split_calls_total", "how", SPLIT_HOWS);
	serve_family(
	    r, "retop_function_go_wait_seconds_total", "counter",
	    "With --time-split sched: time its goroutines were parked while its calls were "
	    "in flight, by Go's wait reason (the 5 busiest of each function).");
	serve_split_rows(r, "retop_function_go_wait_seconds_total", "reason", SPLIT_REASONS);
}
