/* One refresh worth of data: what the batch printer and the dashboard show.
 * Neither of them talks to libbpf; both read this. */
#ifndef RETOP_SNAPSHOT_H
#define RETOP_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../bpf/retop.h"
#include "callers.h"
#include "slowest.h"
#include "stats.h"

#define SNAPSHOT_MAX_PIDS 64
#define SNAPSHOT_STATUS_LEN 160

struct snapshot_site {
	uint32_t offset; /* from the function's entry */
	int line;
	uint64_t hits;
	uint64_t hits_delta;
};

struct snapshot_func {
	const char *name;
	char status[SNAPSHOT_STATUS_LEN]; /* tracing, entry-only: why, detached: why, error: why */
	bool entry_only;
	struct stats_view v;
	uint64_t in_flight;
	uint64_t oldest_in_flight_ns;
	uint64_t orphans;
	uint64_t before_attach; /* RETs of calls begun before the entry probe */
	uint64_t entries;
	double sampled;	 /* duty cycle of its probes (--budget): 1 = all in */
	bool estimated;	 /* counts and rates scaled from a sample */
	size_t nsites;
	struct snapshot_site sites[RETOP_MAX_RET_SITES];
	struct callers_view callers; /* since tracing began */
	struct slowest_list slowest;	      /* since tracing began */
	struct slowest_list slowest_interval; /* in the last interval */
};

struct snapshot {
	double time;	   /* wall clock, seconds since the epoch */
	double interval_s; /* since the previous snapshot */
	double uptime_s;   /* since tracing began */
	const char *exe;
	int pids[SNAPSHOT_MAX_PIDS];
	size_t npids;
	bool target_exited;
	double self_cpu_pct; /* retop's own CPU use over the interval */
	double max_duration_s;	 /* --max-duration; 0: no limit */
	double remaining_s;	 /* before auto-detach; negative: no limit */
	size_t auto_detached;	 /* functions detached because time was up */
	uint64_t bpf_map_bytes;	 /* kernel memory of retop's BPF maps */
	uint64_t user_bytes;	 /* retop's resident memory */
	double budget_pct;	 /* --budget; 0: none */
	double hit_ns;		 /* calibrated cost of one probe hit */
	struct snapshot_func *funcs;
	size_t nfuncs;
};

void snapshot_print_text(FILE *out, const struct snapshot *snap);
void snapshot_print_json(FILE *out, const struct snapshot *snap);

#endif
