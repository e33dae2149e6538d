/* Sampling the session into its snapshot: counters, rates, callers, the
 * slowest calls, the guard's figures. */
#include "session_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "clock.h"
#include "elf_image.h"
#include "log.h"
#include "procs.h"

/* What sf's probes cost the target: each hit's program, measured, and the
 * kernel's part, at the timed cost of its kind; added up from each
 * interval's hits at that interval's costs, so the total only grows. */
static void session_fill_cost(struct session *s, struct session_func *sf, double interval,
			      struct snapshot_func *out)
{
	const struct retop_func_stats *c = &sf->cur.st, *p = &sf->prev.st;
	const double *k = s->hitcost.trap_ns;
	int entry = sf->f->entry_emulated ? RETOP_HIT_ENTRY_EMULATED : RETOP_HIT_ENTRY_STEPPED;

	if (sf->slot >= 0 && sf->have_prev && c->prog_ns >= p->prog_ns &&
	    c->entries >= p->entries && c->rets >= p->rets && c->inlined >= p->inlined) {
		double d =
		    (double)(c->prog_ns - p->prog_ns) +
		    hitcost_traps_ns(&s->hitcost, sf->f->entry_emulated, c->entries - p->entries,
				     c->rets - p->rets, c->inlined - p->inlined);
		sf->cost_ns += d;
		out->cost_per_s = interval > 0 ? d / interval : 0;
		s->snap.cost_per_s += out->cost_per_s;
		s->snap.cost_ns += d;
	}
	out->cost_ns = sf->cost_ns;
	/* A call's own two hits, as its callers see them: the kernel's part of
	 * each and the programs' mean run time a hit. */
	uint64_t hits = c->entries + c->rets + c->inlined;
	double prog = hits ? (double)c->prog_ns / (double)hits : 0;
	out->cost_per_call_ns = k[entry] + prog + (out->entry_only ? 0 : k[RETOP_HIT_RET] + prog);
}

/* The runtime watchers' traps (goexit1, recovery: on their first
 * instruction, single-stepped, with a short program). */
static void session_watch_cost(struct session *s, double interval)
{
	uint64_t n = s->tracer ? tracer_watch_hits(s->tracer) : s->watch_hits;
	double d = n > s->watch_hits ? (double)(n - s->watch_hits) *
					   (s->hitcost.trap_ns[RETOP_HIT_ENTRY_STEPPED] +
					    s->snap.prog_ns[RETOP_HIT_ENTRY_EMULATED])
				     : 0;

	s->watch_hits = n;
	s->snap.cost_ns += d;
	s->snap.cost_per_s += interval > 0 ? d / interval : 0;
}

/* The hits the budget counts, over the interval (a BPF side loaded anew
 * counts from 0). */
static void session_budget_hits(struct session *s, double interval)
{
	uint64_t n = s->tracer ? tracer_budget_hits(s->tracer) : s->budget_hits;
	uint64_t d = n >= s->budget_hits ? n - s->budget_hits : n;

	s->budget_hits = n;
	s->snap.probe_hits += d;
	s->snap.probe_hits_per_s = interval > 0 ? (double)d / interval : 0;
}

/* The targets' CPU time, and the share retop's probes took of it over the
 * interval. */
static void session_target_cpu(struct session *s, double interval)
{
	uint64_t cpu = 0;

	for (size_t i = 0; i < s->snap.npids; i++)
		cpu += procs_cpu_ns(s->snap.pids[i]);
	/* A process that exited took its time with it: no figure then. */
	double d =
	    s->target_cpu_ns && cpu >= s->target_cpu_ns ? (double)(cpu - s->target_cpu_ns) : 0;
	s->target_cpu_ns = cpu;
	s->snap.target_cpu_per_s = interval > 0 ? d / interval : 0;
	s->snap.cost_share = d > 0 ? s->snap.cost_per_s * interval / d : 0;
	if (s->snap.cost_share > 1)
		s->snap.cost_share = 1;
}

/* A PIE's load bias in the traced process, so that return addresses (the
 * callers) map to the index's link addresses: from where the process maps
 * the first function's entry.  0 for a fixed-address binary, and for every
 * process of a binary (-x): their biases may differ, their callers are '?'. */
uint64_t session_load_bias(struct session *s)
{
	uint64_t addr;

	if (s->bias_known || !elf_image_is_pie(s->idx->img) || s->attach_pid <= 0 || !s->idx->count)
		return s->load_bias;
	const struct func_info *f = &s->idx->funcs[0];
	if (procs_map_addr(s->attach_pid, s->idx->file_dev, s->idx->file_ino, f->file_offset,
			   &addr) == 0) {
		s->load_bias = addr - f->entry;
		s->bias_known = true;
	}
	s->names.bias[s->idx->image] = s->load_bias;
	return s->load_bias;
}

/* The RET sites of every binary the function was traced in, each with the
 * hits of its own range of ret_hits (tracer_site_base), over the interval
 * out->v was computed for from cur and prev (cur NULL: never read). */
static void session_fill_sites(struct session *s, struct session_func *sf,
			       const struct stats_read *cur, const struct stats_read *prev,
			       struct snapshot_func *out)
{
	out->nsites = 0;
	if (sf->entry_only)
		return;
	for (size_t k = 0; k < s->nimages; k++) {
		const struct func_info *g = s->images[k].shared ? NULL : sf->fi[k];
		int base = s->tracer && sf->slot >= 0
			       ? tracer_site_base(s->tracer, sf->slot, (unsigned)k)
			       : (k == 0 ? 0 : -1);
		if (!g || base < 0)
			continue;
		for (size_t i = 0; i < g->rets.count && base + i < RETOP_MAX_RET_SITES &&
				   out->nsites < RETOP_MAX_RET_SITES;
		     i++) {
			struct snapshot_site *site = &out->sites[out->nsites++];
			site->offset = retsites_get(&g->rets, i)->offset;
			site->line = retsites_get(&g->rets, i)->line;
			site->image = (unsigned)k;
			site->hits = cur ? cur->st.ret_hits[base + i] : 0;
			site->hits_delta =
			    cur ? stats_site_hits_delta(cur, prev, &out->v, base + i) : 0;
		}
	}
}

/* sf's histogram, read again (a syscall) only when its calls moved since
 * the last read: a thousand idle functions cost none.  cur.hist points at
 * one of the two buffers, prev.hist (the read before) may at the other. */
static void session_read_hist(struct session *s, struct session_func *sf)
{
	struct stats_read *c = &sf->cur;

	if (!c->st.calls) {
		c->hist = NULL;
		return;
	}
	if (c->hist && sf->hist_calls == c->st.calls)
		return;
	int k = sf->hist_buf[0] && sf->prev.hist == sf->hist_buf[0]->hist ? 1 : 0;
	if (!sf->hist_buf[k])
		sf->hist_buf[k] = malloc(sizeof(*sf->hist_buf[k]));
	/* No memory, or no histogram (every timed call lost its place:
	 * hist_lost): the percentiles stay unknown. */
	if (!sf->hist_buf[k] || tracer_read_hist(s->tracer, sf->slot, sf->hist_buf[k]) != 0) {
		c->hist = NULL;
		return;
	}
	c->hist = sf->hist_buf[k]->hist;
	stats_hist_span(c);
	sf->hist_calls = c->st.calls;
}

static bool session_callers_wanted(const struct session *s, const struct func_info *f)
{
	return s->callers_all || f == s->callers_f;
}

/* The reads of a function never called: all 0. */
static const struct stats_read no_read;
static const struct retop_split_stats no_split;

/* Whether sf's reads are those of a function never called: every counter,
 * both splits, no histogram, no slow call kept (the hit counters first: a
 * function with calls stops there, before the whole rows are compared). */
static bool session_reads_unused(const struct session_func *sf)
{
	return !sf->cur.st.entries && !sf->cur.st.rets && !sf->cur.st.inlined && !sf->cur.hist &&
	       !sf->slowest.n && !memcmp(&sf->cur.st, &no_read.st, sizeof(no_read.st)) &&
	       !memcmp(&sf->prev.st, &no_read.st, sizeof(no_read.st)) &&
	       !memcmp(&sf->split_cur, &no_split, sizeof(no_split)) &&
	       !memcmp(&sf->split_prev, &no_split, sizeof(no_split));
}

/* Still never called: its last reads were all 0 (sf->unused) and no hit
 * has moved its counters since.  Every counter moves after one of entries,
 * rets or inlined (each BPF program counts its hit first); the time split
 * only for calls in flight; a slow call, and a caller, with a RET.  So
 * reading them again (some 3 KiB a function, cold) would read 0: a
 * thousand functions traced, most never called, cost a sample little. */
static bool session_still_unused(const struct session *s, const struct session_func *sf)
{
	const struct tracer_inflight *fl = &s->inflight[sf->slot];

	return sf->unused && sf->have_prev && !fl->count && !fl->orphans &&
	       tracer_hits_still(s->tracer, sf->slot, 0, 0, 0, 0);
}

/* sf's reads of this sample (counters, histogram, callers if wanted, time
 * split, slow calls) and out's figures from them; what the interval is
 * from. */
static const struct stats_read *session_read_func(struct session *s, struct session_func *sf,
						  bool wanted, double interval,
						  struct snapshot_func *out)
{
	const struct stats_read *from;

	session_read_errors(s, sf);
	sf->prev = sf->cur;
	/* Unreadable (a slot out of range: none is handed out), the row keeps
	 * its last counters rather than showing none. */
	if (tracer_read(s->tracer, sf->slot, &sf->cur.st) != 0)
		sf->cur = sf->prev;
	else
		session_read_hist(s, sf);
	from = sf->have_prev ? &sf->prev : NULL;
	stats_compute_cached(&sf->cur, from, interval, &out->v, &sf->pct_cache);
	sf->have_prev = true;
	session_load_bias(s);
	if (wanted)
		tracer_read_callers(s->tracer, sf->slot, &s->names, &sf->callers);
	else
		sf->callers.n = 0;
	sf->split_prev = sf->split_cur;
	if (tracer_read_split(s->tracer, sf->slot, &sf->split_cur) != 0)
		sf->split_cur = sf->split_prev;
	timesplit_compute(&sf->split_cur, &sf->split_prev, s->split_on, s->split_go_minor,
			  &out->split);
	slowest_take(s->slow, sf->slot, &out->slowest_interval);
	slowest_take_over(s->slow, sf->slot, &out->slow_calls);
	tracer_slow_rearm(s->tracer, sf->slot);
	slowest_merge(&sf->slowest, &out->slowest_interval);
	sf->unused = session_reads_unused(sf);
	return from;
}

/* The figures of every row still never called this sample: those of 0s
 * over the interval, with the split as it is now. */
static void session_unused_figures(struct session *s, double interval)
{
	stats_compute_cached(&no_read, &no_read, interval, &s->unused_v, NULL);
	timesplit_compute(&no_split, &no_split, s->split_on, s->split_go_minor, &s->unused_split);
}

static void session_fill_func(struct session *s, struct session_func *sf, double interval,
			      struct snapshot_func *out)
{
	const struct stats_read *from = NULL;	 /* what the interval is from */
	const struct stats_read *now = &sf->cur; /* what the interval is to */

	/* Not the slowest lists: written below, their calls only. */
	snapshot_func_clear_values(out);
	slowest_clear(&out->slowest_interval);
	slowest_clear(&out->slow_calls);
	out->name = sf->f->name;
	out->f = sf->f;
	out->state = sf->state;
	snapshot_text_set(out->reason, sizeof(out->reason), sf->reason);
	/* Traced, but not in every binary a deploy brought: say where not. */
	if (!out->reason[0] && sf->follow_reason[0] && sf->slot >= 0)
		snapshot_text_set(out->reason, sizeof(out->reason), sf->follow_reason);
	out->entry_only = sf->entry_only;
	out->inlined_sites = s->idx->inl_known ? (int64_t)sf->f->inlined_sites : -1;
	out->inlined_sites_counted = (int64_t)sf->inl_counted;
	snapshot_text_set(out->inlined_uncounted_why, sizeof(out->inlined_uncounted_why),
			  sf->inl_why);
	out->args = sf->args_on && sf->slot >= 0;
	if (sf->slot >= 0) {
		/* Under --latency-only none are read, and none is missing. */
		bool wanted = session_callers_wanted(s, sf->f);
		sf->callers_unread = !wanted && !s->opts.latency_only;
		if (session_still_unused(s, sf)) {
			/* What the reads would find: 0s, and no caller (none
			 * without a call); their figures from one copy, made
			 * for this sample (session_unused_figures). */
			from = now = &no_read;
			out->v = s->unused_v;
			sf->callers.n = 0;
			out->split = s->unused_split;
		} else {
			from = session_read_func(s, sf, wanted, interval, out);
		}
		out->in_flight = s->inflight[sf->slot].count;
		out->overdue = s->inflight[sf->slot].overdue;
		out->oldest_in_flight_ns = s->inflight[sf->slot].oldest_ns;
		/* Proven dead by the sweep, plus those the BPF side saw
		 * abandoned (a new call in the same frame after a panic). */
		out->orphans = s->inflight[sf->slot].orphans + now->st.abandoned;
		out->before_attach = now->st.before_attach;
	} else if (sf->have_prev) {
		/* Detached: keep showing the last numbers. */
		from = &sf->cur;
		stats_compute(&sf->cur, from, interval, &out->v);
		timesplit_compute(&sf->split_cur, &sf->split_cur, s->split_on, s->split_go_minor,
				  &out->split);
	}
	if (sf->slot >= 0 || sf->have_prev)
		out->raw = &sf->cur;
	/* Detached: the last callers read stay shown, like the counters. */
	callers_view_copy(&out->callers, &sf->callers);
	out->callers_unread = sf->callers_unread;
	slowest_copy(&out->slowest, &sf->slowest);
	out->entries = sf->cur.st.entries;
	/* Calls as the governor counts them: at their RET when timed, at their
	 * entry when not (or estimated); the rates follow. */
	govern_fill(sf, out);
	out->v.calls_delta = out->v.calls > sf->calls_shown ? out->v.calls - sf->calls_shown : 0;
	out->v.calls_per_s =
	    interval > 0 && sf->have_prev ? (double)out->v.calls_delta / interval : 0;
	/* Estimated now: the estimate moves only when a sampled slice is
	 * read (at a share of 10%, none in half of the half-second
	 * intervals), so its step is no rate.  The rate its sampled slices
	 * saw, with the probes in (the traps slow the target: at most its
	 * rate untraced). */
	if (out->estimated && sf->gf.mode == BUDGET_ESTIMATED && sf->have_prev && interval > 0) {
		out->v.calls_per_s = sf->gf.calls_per_s;
		out->v.calls_delta = (uint64_t)(sf->gf.calls_per_s * interval + 0.5);
	}
	sf->calls_shown = out->v.calls;
	session_fill_errors(s, sf, interval, out);
	out->inlined_calls = sf->cur.st.inlined;
	/* Exact only while every site where it was inlined is counted, and
	 * the budget never took the marks out. */
	out->inlined_calls_exact = !sf->gf.marks_missed && out->inlined_sites >= 0 &&
				   (int64_t)sf->inl_counted >= out->inlined_sites;
	out->inlined_calls_per_s =
	    interval > 0 && sf->have_prev && out->inlined_calls >= sf->inlined_shown
		? (double)(out->inlined_calls - sf->inlined_shown) / interval
		: 0;
	sf->inlined_shown = out->inlined_calls;
	session_fill_cost(s, sf, interval, out);
	/* Its own two hits' resolution, by how its entry runs, and its
	 * traced callees' (each hit inside). */
	if (!out->entry_only && s->snap.resolution_ns[RETOP_OWN_STEPPED] > 0)
		out->resolution_ns =
		    s->snap.resolution_ns[sf->f->entry_emulated ? RETOP_OWN_EMULATED
								: RETOP_OWN_STEPPED] +
		    out->v.hits_inside * s->snap.hit_resolution_ns;
	/* An entry-only function keeps its state (and reason); the estimate
	 * marks show it is sampled. */
	if (sf->slot >= 0 && out->mode == BUDGET_TIMING && out->state == FUNC_TRACING)
		out->state = FUNC_TIMING;
	else if (sf->slot >= 0 && out->mode == BUDGET_ESTIMATED && out->state == FUNC_TRACING)
		out->state = FUNC_SAMPLED;
	session_fill_sites(s, sf, out->raw ? now : NULL, from, out);
	session_fill_change(sf, out);
}

/* Once a session: calls were lost to a full in-flight map, so the counts
 * are not exact; the snapshot carries the per-function numbers. */
static void session_warn_dropped(struct session *s)
{
	uint64_t dropped = 0;

	for (size_t i = 0; i < s->snap.nfuncs; i++)
		dropped += s->snap.funcs[i].v.dropped;
	if (!dropped || s->warned_dropped)
		return;
	s->warned_dropped = true;
	log_warn("session",
		 "%llu calls dropped, counts are not exact: the in-flight map is full "
		 "(--max-in-flight %u): raise --max-in-flight",
		 (unsigned long long)dropped,
		 s->opts.max_in_flight ? s->opts.max_in_flight : TRACER_DEFAULT_IN_FLIGHT);
}

/* Whether the time split runs, else why not: the binary's Go layout is
 * unknown, or the kernel lacks what it reads (as BPF found). */
static void session_split_state(struct session *s)
{
	if (s->split_on && s->tracer && (tracer_split_missing(s->tracer) & RETOP_SPLIT_NO_TASK)) {
		s->split_on = false;
		snprintf(s->split_why, sizeof(s->split_why),
			 "off: the kernel keeps no run-queue clock or delay per thread "
			 "(CONFIG_SCHED_INFO, CONFIG_FAIR_GROUP_SCHED)");
		log_warn("session", "time split %s", s->split_why);
	}
	s->snap.split_on = s->split_on;
	s->snap.sched_hits_per_s = s->snap.sched_cost_per_s = 0;
	if (s->tracer && s->split_sched) {
		/* On the functions' first instruction, single-stepped, with a
		 * short program: a watcher's hit (session_watch_cost). */
		uint64_t n = tracer_sched_hits(s->tracer);
		double d = n > s->sched_hits ? (double)(n - s->sched_hits) : 0;
		s->snap.sched_hits_per_s = s->snap.interval_s > 0 ? d / s->snap.interval_s : 0;
		s->snap.sched_cost_per_s =
		    s->snap.sched_hits_per_s * (s->hitcost.trap_ns[RETOP_HIT_ENTRY_STEPPED] +
						s->snap.prog_ns[RETOP_HIT_ENTRY_EMULATED]);
		s->sched_hits = n;
	}
	s->snap.split_sched = s->split_on && s->split_sched;
	s->snap.sched_watched = s->snap.split_sched && tracer_sched_watched(s->tracer);
	snprintf(s->snap.split_why, sizeof(s->snap.split_why), "%s", s->split_why);
}

/* Time and memory for the status line; auto-detach once time is up, after
 * the counters above were read, so the last interval is kept. */
static void session_sample_guard(struct session *s, uint64_t now)
{
	s->snap.max_duration_s = s->guard.max_duration_s;
	s->snap.budget_pct = s->gov.pct;
	s->snap.budget_hits = govern_allowed_hits(&s->gov);
	s->snap.exits_watched = s->tracer && tracer_watchers_in(s->tracer);
	session_split_state(s);
	s->snap.hit_ns = s->gov.hit_ns;
	session_hit_costs(s);
	s->snap.slow_ns = s->opts.slow_ns;
	if (s->tracer && guard_due(&s->guard, now)) {
		for (size_t i = 0; i < s->nfuncs; i++)
			s->guard.auto_detached += s->funcs[i].slot >= 0;
		char why[64];
		snprintf(why, sizeof(why), "--max-duration %g s reached", s->guard.max_duration_s);
		session_detach_all(s, why);
		/* Every probe, the runtime watchers too, and the maps: nothing of
		 * retop stays in the kernel once time is up. */
		slowest_close(s->slow);
		s->slow = NULL;
		hitcost_close(&s->hitcost);
		tracer_close(s->tracer);
		s->tracer = NULL;
		log_warn("session",
			 "tracing stopped after --max-duration %g s: %zu functions "
			 "detached (--max-duration 0: no limit)",
			 s->guard.max_duration_s, s->guard.auto_detached);
	}
	s->snap.remaining_s = guard_remaining_s(&s->guard, now);
	s->snap.bpf_map_bytes = tracer_map_bytes(s->tracer);
	if (s->tracer)
		s->snap.evidence_lost = tracer_evidence_lost(s->tracer);
	s->snap.user_bytes = guard_rss_bytes();
	s->snap.auto_detached = s->guard.auto_detached;
}

double session_cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

struct snapshot_func *session_swap_rows(struct session *s, struct snapshot_func *rows)
{
	struct snapshot_func *was = s->snap.funcs;

	s->snap.funcs = rows;
	return was;
}

void session_callers_of(struct session *s, bool all, const struct func_info *f)
{
	s->callers_all = all;
	s->callers_f = all ? NULL : f;
}

const struct snapshot *session_sample(struct session *s)
{
	uint64_t now = clock_now_ns();
	double interval = (double)(now - s->last_ns) / 1e9, cpu = session_cpu_seconds();
	struct timeval tv;

	const char *ended = session_check_target(s);

	if (s->tracer) {
		/* Every estimated call so far, up to now (the last sample, at
		 * exit, too). */
		govern_sample(s, clock_now_ns());
		tracer_sweep(s->tracer, s->inflight);
		/* One read of the caller map for every function. */
		if (!s->opts.latency_only && (s->callers_all || s->callers_f))
			tracer_callers_refresh(s->tracer);
	}
	if (s->slow) {
		session_load_bias(s);
		slowest_poll(s->slow, tracer_slot_gens(s->tracer));
	}
	gettimeofday(&tv, NULL);
	s->snap.time = (double)tv.tv_sec + tv.tv_usec / 1e6;
	s->snap.interval_s = interval;
	s->snap.uptime_s = (double)(now - s->start_ns) / 1e9;
	s->snap.exe = s->display;
	s->snap.attach_pid = s->attach_pid;
	s->snap.target_exited = s->target_exited;
	/* Over half a second at least: CPU time comes in clock ticks, and a
	 * snapshot taken right after another (the last one, on SIGINT) would
	 * show one tick as a busy CPU. */
	if (now > s->cpu_ns && (now - s->cpu_ns >= 500000000ull || !s->cpu_pct_set)) {
		s->cpu_pct = 100.0 * (cpu - s->last_cpu_s) / ((double)(now - s->cpu_ns) / 1e9);
		s->cpu_pct_set = true;
		if (now - s->cpu_ns >= 500000000ull) {
			s->last_cpu_s = cpu;
			s->cpu_ns = now;
		}
	}
	s->snap.self_cpu_pct = s->cpu_pct;
	s->snap.self_cpu_s = cpu;
	s->last_ns = now;
	size_t shed = 0;
	s->snap.cost_per_s = 0;
	session_baseline_due(s, now);
	session_unused_figures(s, interval);
	for (size_t i = 0; i < s->nfuncs; i++) {
		session_fill_func(s, &s->funcs[i], interval, &s->snap.funcs[i]);
		shed += s->funcs[i].gf.ever_shed;
	}
	session_watch_cost(s, interval);
	session_budget_hits(s, interval);
	session_target_cpu(s, interval);
	/* A function's probes out for a time: the hits inside every other's
	 * calls, whose callee it may be, are a sample (retop cannot tell
	 * callees).  Its own calls lose none of theirs, but where it calls
	 * itself: an estimate's entry probe is out between its slices. */
	for (size_t i = 0; i < s->nfuncs; i++) {
		const struct govern_func *gf = &s->funcs[i].gf;
		s->snap.funcs[i].probes_shed = gf->ever_shed;
		s->snap.funcs[i].hits_inside_sampled =
		    shed > (size_t)gf->ever_shed || gf->ledger.ever_estimated;
	}
	s->snap.nfuncs = s->nfuncs;
	session_warn_dropped(s);
	session_sample_guard(s, now);
	if (ended) {
		/* The counters above are final: the process is gone, or runs
		 * another program. */
		s->target_exited = s->snap.target_exited = true;
		char why[SNAPSHOT_STATUS_LEN];
		if (snprintf(why, sizeof(why), "process %s", ended) >= (int)sizeof(why))
			why[sizeof(why) - 1] = '\0';
		session_detach_all(s, why);
	}
	return &s->snap;
}

void session_reset(struct session *s)
{
	for (size_t i = 0; i < s->nfuncs; i++) {
		if (s->funcs[i].slot >= 0) {
			tracer_reset(s->tracer, s->funcs[i].slot);
			/* The reset cleared the capture in BPF, not the choice. */
			session_set_args(s, &s->funcs[i], s->funcs[i].args_on);
		}
		memset(&s->funcs[i].cur, 0, sizeof(s->funcs[i].cur));
		memset(&s->funcs[i].split_cur, 0, sizeof(s->funcs[i].split_cur));
		memset(&s->funcs[i].split_prev, 0, sizeof(s->funcs[i].split_prev));
		session_errors_reset(&s->funcs[i]);
		govern_func_reset(&s->funcs[i].gf);
		s->funcs[i].calls_shown = 0;
		memset(&s->funcs[i].callers, 0, sizeof(s->funcs[i].callers));
		slowest_clear(&s->funcs[i].slowest);
		s->funcs[i].have_prev = false;
		s->funcs[i].pct_cache.valid = false;
		/* The counts the baseline was marked on are gone. */
		session_baseline_drop(&s->funcs[i]);
	}
}
