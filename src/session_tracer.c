/* The session's BPF side: loading the programs (again after auto-detach
 * closed them), --max-memory, watching the runtime, and what a probe hit
 * costs (timed on retop's own code, hitcost.h), handed to BPF. */
#include "session_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "elf_image.h"
#include "goid.h"
#include "log.h"

/* What a probe hit of each kind costs a call it is inside: the kernel's
 * trap as timed (the 20th percentile of the last hits on retop's own probes) plus
 * the programs' own run time as they measure it, on average so far.  BPF
 * takes it out of the durations of the calls the hits are inside. */
void session_hit_costs(struct session *s)
{
	uint64_t ns[RETOP_HIT_KINDS], n[RETOP_HIT_KINDS];

	if (!s->tracer)
		return;
	/* A few more timed hits every tenth sample: the percentile moves slowly,
	 * and 60 self-traps a refresh would be most of an idle dashboard's CPU. */
	if (s->samples++ % 10 == 0)
		hitcost_more(&s->hitcost);
	tracer_prog_time(s->tracer, ns, n);
	for (int k = 0; k < RETOP_HIT_KINDS; k++) {
		s->snap.prog_ns[k] = n[k] ? (double)ns[k] / (double)n[k] : 0;
		s->snap.trap_ns[k] = s->hitcost.trap_ns[k];
		s->snap.hit_cost_ns[k] =
		    s->hitcost.trap_ns[k] > 0 ? s->hitcost.trap_ns[k] + s->snap.prog_ns[k] : 0;
	}
	for (int k = 0; k < RETOP_OWN_KINDS; k++) {
		s->snap.own_window_ns[k] = s->hitcost.own_ns[k];
		s->snap.resolution_ns[k] = s->hitcost.resolution_ns[k];
	}
	s->snap.hit_resolution_ns = s->hitcost.hit_resolution_ns;
	/* BPF adds each hit's program time itself: the kernel's part here. */
	tracer_hit_costs(s->tracer, s->hitcost.trap_ns, s->hitcost.own_ns);
}

/* --max-memory: the maps are loaded (and charged) but nothing is attached
 * yet, so refusing here leaves the target untouched.  The in-flight map
 * grows with the calls in flight: counted full, the limit holds later. */
static int session_check_memory(struct session *s, char *err)
{
	uint64_t maps = tracer_map_bytes(s->tracer) + tracer_inflight_room_bytes(s->tracer);
	uint64_t user = guard_rss_bytes();
	char m[32], u[32], lim[32];

	if (!s->opts.max_memory || maps + user <= s->opts.max_memory)
		return 0;
	guard_format_bytes(maps, m, sizeof(m));
	guard_format_bytes(user, u, sizeof(u));
	guard_format_bytes(s->opts.max_memory, lim, sizeof(lim));
	return err_set(err, ENOMEM,
		       "not attaching: BPF maps %s (the in-flight map full) + retop %s exceed "
		       "--max-memory %s: "
		       "lower --max-in-flight or raise --max-memory",
		       m, u, lim);
}

/* Load the programs, check --max-memory, watch the runtime's panic and
 * goroutine exits.  Again after auto-detach closed it, on the next trace. */
int session_open_tracer(struct session *s, char *err)
{
	struct tracer_opts to = {
	    .max_functions = s->opts.max_functions,
	    .inflight_max = s->opts.max_in_flight,
	    .orphan_timeout_ns = (uint64_t)(s->opts.orphan_timeout_s * 1e9),
	    .latency_only = s->opts.latency_only,
	    .slow_ns = s->opts.slow_ns,
	};
	if (goid_offset(s->binary, elf_image_go_version(s->idx->img), &to.goid_offset) != 0)
		log_info("session", "offset of goid in runtime.g unknown (no DWARF, release not in "
				    "the table): the slowest calls show goroutine 0");
	int ret = tracer_open(&to, &s->tracer, err);

	if (ret)
		return ret;
	ret = session_check_memory(s, err);
	if (!ret) {
		ret = slowest_open(tracer_slow_fd(s->tracer), &s->names, &s->slow);
		if (ret)
			ret = err_set(err, -ret, "cannot read the slowest calls' ring buffer: %s",
				      strerror(-ret));
	}
	if (ret) {
		tracer_close(s->tracer);
		s->tracer = NULL;
		return ret;
	}
	for (size_t k = 0; k < s->nimages; k++)
		if (s->images[k].idx && !s->images[k].retired)
			session_watch_image(s, s->images[k].idx);
	if (s->attach_pid > 0 && tracer_watch_exec(s->tracer, s->attach_pid) == 0)
		s->exec_ns = tracer_exec_ns(s->tracer, s->attach_pid);
	return 0;
}

/* The cost of a probe hit of each kind: for --budget (a RET's), and to take
 * the traps of traced callees out of a call's duration.  When it cannot be
 * measured, the budget takes the dearest single-stepped hit measured on
 * this kind of machine (50 us), so that it errs on the target's side, and
 * durations are not corrected. */
void session_calibrate(struct session *s)
{
	char why[ERR_LEN];

	s->gov.pct = s->opts.budget_pct;
	s->gov.hits_per_s = s->opts.budget_hits;
	if (hitcost_calibrate(&s->hitcost, s->tracer, why) != 0) {
		memset(s->hitcost.trap_ns, 0, sizeof(s->hitcost.trap_ns));
		log_warn("session",
			 "cannot time a probe hit (%s): durations keep the traps of "
			 "traced callees; the budget assumes 50 us a hit",
			 why);
		s->gov.hit_ns = 50000;
	} else {
		s->gov.hit_ns = s->hitcost.trap_ns[RETOP_HIT_RET];
	}
	log_info("session",
		 "a probe hit costs %.0f ns (entry at the prologue's jump), %.0f ns "
		 "(entry single-stepped), %.0f ns (RET)",
		 s->hitcost.trap_ns[RETOP_HIT_ENTRY_EMULATED],
		 s->hitcost.trap_ns[RETOP_HIT_ENTRY_STEPPED], s->hitcost.trap_ns[RETOP_HIT_RET]);
	log_info("session",
		 "a call's own probe hits leave %.0f ns in its duration (entry at the prologue's "
		 "jump), %.0f ns (entry single-stepped), taken out; resolution %.0f ns, %.0f ns",
		 s->hitcost.own_ns[RETOP_OWN_EMULATED], s->hitcost.own_ns[RETOP_OWN_STEPPED],
		 s->hitcost.resolution_ns[RETOP_OWN_EMULATED],
		 s->hitcost.resolution_ns[RETOP_OWN_STEPPED]);
	if (s->gov.hits_per_s > 0)
		log_info("budget", "the budget allows %.0f hits/s", govern_allowed_hits(&s->gov));
	session_hit_costs(s);
}
