#define _GNU_SOURCE /* ppoll */
#include "session_internal.h"

#include <errno.h>
#include <fnmatch.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/time.h>

#include "elf_image.h"
#include "funcs_inline.h"
#include "funcs_match.h"
#include "goid.h"
#include "log.h"
#include "procs.h"
#include "sdk_facts.h"

static int session_resolve_target(struct session *s, char *err)
{
	struct stat st;
	int ret;

	if (s->opts.pid) {
		ret = procs_exe_path(s->opts.pid, s->binary, sizeof(s->binary), err);
		if (ret)
			return ret;
		struct proc_info p;
		procs_describe(s->opts.pid, &p);
		snprintf(s->display, sizeof(s->display), "%s", p.exe[0] ? p.exe : s->binary);
		s->attach_pid = s->opts.pid;
		return 0;
	}
	if (stat(s->opts.exe, &st) != 0)
		return err_set(err, errno, "%s: %s", s->opts.exe, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return err_set(err, EINVAL,
			       "%s: not a regular file: give the path of a Go executable",
			       s->opts.exe);
	snprintf(s->binary, sizeof(s->binary), "%s", s->opts.exe);
	snprintf(s->display, sizeof(s->display), "%s", s->opts.exe);
	s->attach_pid = -1;
	return 0;
}

void session_opts_from_cli(const struct cli_options *o, struct session_opts *so)
{
	*so = (struct session_opts){
		.pid = o->pid, .exe = o->exe, .no_dwarf = o->no_dwarf,
		.latency_only = o->latency_only,
		.args_pattern = o->args_pattern,
		.max_functions = (size_t)o->max_functions, .orphan_timeout_s = o->orphan_timeout_s,
		.max_in_flight = (uint32_t)o->max_in_flight,
		.sdk_url = o->sdk_url, .max_duration_s = o->max_duration_s,
		.max_memory = o->max_memory, .budget_pct = o->budget_pct,
		.budget_hits = o->budget_hits,
		.slow_ns = o->slow_ns,
		.entry_probe_first = o->entry_probe_first,
	};
}

/* An SDK confirms the index's facts; for -x only when asked for, since the
 * default address may belong to another program. */
static void session_open_sdk(struct session *s)
{
	if (!s->opts.sdk_url && !s->opts.pid)
		return;
	if (sdk_facts_open(s->idx, s->opts.sdk_url, s->opts.pid, &s->sdk) != 0 || !s->sdk->status[0])
		return;
	log_msg(s->sdk->warn ? LOG_WARN : LOG_INFO, "sdk", "%s", s->sdk->status);
}

int session_open(const struct session_opts *opts, struct session **out, char *err)
{
	struct session *s = calloc(1, sizeof(*s));
	int ret;

	*out = NULL;
	if (!s)
		return err_set(err, ENOMEM, "out of memory");
	s->opts = *opts;
	s->judge.entry_probe_first = opts->entry_probe_first;
	s->funcs = calloc(RETOP_MAX_FUNCS, sizeof(*s->funcs));
	s->snap.funcs = calloc(RETOP_MAX_FUNCS, sizeof(*s->snap.funcs));
	if (!s->funcs || !s->snap.funcs) {
		session_close(s);
		return err_set(err, ENOMEM, "out of memory");
	}
	ret = session_resolve_target(s, err);
	if (!ret)
		ret = funcs_load(s->binary, opts->no_dwarf ? FUNCS_NO_DWARF : 0, &s->idx, err);
	if ((ret == -ENOEXEC || ret == -ENODATA) && opts->pid)
		procs_explain_not_go(opts->pid, ret, err);
	if (ret) {
		session_close(s);
		return ret;
	}
	/* From here on the file is the index's open descriptor: every probe,
	 * and the list of processes running it, go by it, not by the path. */
	funcs_file_path(s->idx, s->binary, sizeof(s->binary));
	s->images[0].idx = s->idx;
	s->nimages = 1;
	s->names.idx[0] = s->idx;
	session_open_sdk(s);
	*out = s;
	return 0;
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
	return err_set(err, ENOMEM, "not attaching: BPF maps %s (the in-flight map full) + retop %s exceed --max-memory %s: "
		       "lower --max-in-flight or raise --max-memory", m, u, lim);
}

/* Approve a binary's runtime.recovery and runtime.goexit1 for watching. */
static void session_watch_image(struct session *s, struct func_index *idx)
{
	struct func_info *rec = funcs_find(idx, "runtime.recovery");
	struct interlock_verdict v;
	char why[ERR_LEN];

	if (!rec || interlock_judge(idx, rec, &s->judge, why) != 0 ||
	    interlock_approve(idx, rec, &v, why) != 0 ||
	    tracer_watch_recovery(s->tracer, &v, s->attach_pid) != 0)
		log_info("session", "runtime.recovery not watched: panics count as restarts");
	struct func_info *gx = funcs_find(idx, "runtime.goexit1");
	if (!gx || interlock_judge(idx, gx, &s->judge, why) != 0 ||
	    interlock_approve(idx, gx, &v, why) != 0 ||
	    tracer_watch_goexit(s->tracer, &v, s->attach_pid) != 0)
		log_info("session", "runtime.goexit1 not watched: calls of exited goroutines "
				    "stay in flight (overdue after --orphan-timeout)");
}

/* Load the programs, check --max-memory, watch the runtime's panic and
 * goroutine exits.  Again after auto-detach closed it, on the next trace. */
static int session_open_tracer(struct session *s, char *err)
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

/* What a probe hit of each kind costs a call it is inside: the kernel's
 * trap as timed (the 20th percentile of the last hits on retop's own probes) plus
 * the programs' own run time as they measure it, on average so far.  BPF
 * takes it out of the durations of the calls the hits are inside. */
static void session_hit_costs(struct session *s)
{
	uint64_t ns[RETOP_HIT_KINDS], n[RETOP_HIT_KINDS];

	if (!s->tracer)
		return;
	/* A few more timed hits every tenth sample: the percentile moves slowly,
	 * and 60 self-traps a refresh would be most of an idle dashboard's CPU. */
	if (s->samples++ % 10 == 0)
		budget_calibrate_more(&s->budget);
	tracer_prog_time(s->tracer, ns, n);
	for (int k = 0; k < RETOP_HIT_KINDS; k++) {
		s->snap.prog_ns[k] = n[k] ? (double)ns[k] / (double)n[k] : 0;
		s->snap.trap_ns[k] = s->budget.trap_ns[k];
		s->snap.hit_cost_ns[k] =
		    s->budget.trap_ns[k] > 0 ? s->budget.trap_ns[k] + s->snap.prog_ns[k] : 0;
	}
	tracer_hit_costs(s->tracer, s->snap.hit_cost_ns);
}

/* The cost of a probe hit of each kind: for --budget (a RET's), and to take
 * the traps of traced callees out of a call's duration.  When it cannot be
 * measured, the budget takes the dearest single-stepped hit measured on
 * this kind of machine (50 us), so that it errs on the target's side, and
 * durations are not corrected. */
static void session_calibrate(struct session *s)
{
	char why[ERR_LEN];

	s->budget.pct = s->opts.budget_pct;
	s->budget.hits_per_s = s->opts.budget_hits;
	if (budget_calibrate(&s->budget, s->tracer, why) != 0) {
		memset(s->budget.trap_ns, 0, sizeof(s->budget.trap_ns));
		log_warn("session", "cannot time a probe hit (%s): durations keep the traps of "
				    "traced callees; the budget assumes 50 us a hit", why);
		s->budget.hit_ns = 50000;
	} else {
		s->budget.hit_ns = s->budget.trap_ns[RETOP_HIT_RET];
	}
	log_info("session", "a probe hit costs %.0f ns (entry at the prologue's jump), %.0f ns "
			    "(entry single-stepped), %.0f ns (RET)",
		 s->budget.trap_ns[RETOP_HIT_ENTRY_EMULATED],
		 s->budget.trap_ns[RETOP_HIT_ENTRY_STEPPED], s->budget.trap_ns[RETOP_HIT_RET]);
	if (s->budget.hits_per_s > 0)
		log_info("budget", "the budget allows %.0f hits/s", budget_allowed_hits(&s->budget));
	session_hit_costs(s);
}

int session_start_tracing(struct session *s, char *err)
{
	if (s->tracer)
		return 0;
	int ret = session_open_tracer(s, err);
	if (ret)
		return ret;
	session_calibrate(s);
	s->start_ns = s->last_ns = s->cpu_ns = tracer_now_ns();
	guard_arm(&s->guard, s->opts.max_duration_s, s->start_ns);
	s->last_cpu_s = session_cpu_seconds();
	return 0;
}

static void session_forget_marks(struct session_func *sf)
{
	for (size_t k = 0; k < RETOP_MAX_IMAGES; k++) {
		free(sf->marks_v[k]);
		sf->marks_v[k] = NULL;
	}
}

void session_close(struct session *s)
{
	if (!s)
		return;
	budget_close(&s->budget);
	slowest_close(s->slow);
	tracer_close(s->tracer);
	sdk_facts_close(s->sdk);
	for (size_t k = 0; k < s->nimages; k++)
		if (!s->images[k].shared)
			funcs_free(s->images[k].idx);
	if (!s->nimages)
		funcs_free(s->idx);
	for (size_t i = 0; s->funcs && i < RETOP_MAX_FUNCS; i++) {
		slowest_clear(&s->funcs[i].slowest);
		session_forget_marks(&s->funcs[i]);
	}
	free(s->funcs);
	snapshot_funcs_free(s->snap.funcs, RETOP_MAX_FUNCS);
	free(s);
}

static struct session_func *session_find(const struct session *s, const struct func_info *f)
{
	for (size_t i = 0; i < s->nfuncs; i++)
		if (s->funcs[i].f == f)
			return &s->funcs[i];
	return NULL;
}

bool session_is_traced(const struct session *s, const struct func_info *f)
{
	const struct session_func *sf = session_find(s, f);
	return sf && sf->slot >= 0;
}

/* "go1.19.8" -> 19; -1 when the string is not a Go release version. */
static int go_minor_version(const char *v)
{
	int major, minor;

	if (sscanf(v, "go%d.%d", &major, &minor) != 2 || major != 1)
		return -1;
	return minor;
}

/* The pairing key reads g from R14, where the register ABI keeps it since
 * Go 1.17; an older program would get garbage keys, so refuse it. */
static int session_check_go_version(const struct session *s, char *why)
{
	const char *v = elf_image_go_version(s->idx->img);
	int minor = go_minor_version(v);

	if (minor >= 0 && minor < 17)
		return err_set(why, ENOTSUP, "unsupported Go version %s: retop traces Go >= 1.17 (register ABI)", v);
	return 0;
}

static int session_attach(struct session *s, struct func_info *f, char *err);

/* The n-th of the functions named like f in idx (same-named copies: ABI
 * wrappers, generic shapes), in address order. */
static size_t session_name_rank(const struct func_index *idx, const struct func_info *f)
{
	size_t rank = 0;

	for (const struct func_info *g = idx->funcs; g < f; g++)
		rank += strcmp(g->name, f->name) == 0;
	return rank;
}

static struct func_info *session_nth_named(struct func_index *idx, const char *name, size_t rank)
{
	for (size_t i = 0; i < idx->count; i++)
		if (strcmp(idx->funcs[i].name, name) == 0 && rank-- == 0)
			return &idx->funcs[i];
	return NULL;
}

/* Why sf is not traced in binary k; shown with the function's status. */
static void session_not_followed(struct session_func *sf, size_t k, const char *why)
{
	sf->fi[k] = NULL;
	/* Cut to the status's width: the start says it all. */
	if (snprintf(sf->follow_reason, sizeof(sf->follow_reason), "not traced in binary %zu: %s",
		     k, why) >= (int)sizeof(sf->follow_reason))
		sf->follow_reason[sizeof(sf->follow_reason) - 1] = '\0';
}

/* sf's function in binary k (a deploy's new file), resolved and checked
 * by the interlock, and counted the same way as in the first: the budget
 * reads one set of counters for all of them.  NULL, and why in sf. */
static struct func_info *session_func_in(struct session *s, struct session_func *sf, size_t k)
{
	struct func_index *idx = s->images[k].idx;
	struct func_info *g = k == 0 ? sf->f
				     : session_nth_named(idx, sf->f->name,
							 session_name_rank(s->idx, sf->f));
	char why[ERR_LEN];

	sf->fi[k] = NULL;
	if (k == 0) /* the first binary's: interlock_approve() says why not */
		return sf->fi[0] = sf->f;
	if (!g) {
		session_not_followed(sf, k, "no such function there");
		return NULL;
	}
	if (interlock_judge(idx, g, &s->judge, why) != 0) {
		session_not_followed(sf, k, why);
		return NULL;
	}
	if (g->rets.traceable == TRACEABLE_NO) {
		session_not_followed(sf, k, retsites_reason(&g->rets));
		return NULL;
	}
	bool g_entry_only = g->rets.traceable == TRACEABLE_ENTRY_ONLY ||
			    g->rets.count > RETOP_MAX_RET_SITES;
	bool f_entry_only = sf->f->rets.traceable == TRACEABLE_ENTRY_ONLY ||
			    sf->f->rets.count > RETOP_MAX_RET_SITES;
	if (k > 0 && (g_entry_only != f_entry_only ||
		      g->entry_counts_calls != sf->f->entry_counts_calls)) {
		session_not_followed(sf, k, "its probes would count calls differently");
		return NULL;
	}
	sf->fi[k] = g;
	return g;
}

/* Put into binary k the probes sf has in now (the budget may hold its
 * RETs or its entry out): RETs first, as at the attach. */
static int session_probes_in_one(struct session *s, struct session_func *sf, size_t k,
				 bool entry, bool rets, char *err)
{
	struct interlock_verdict v;
	/* Approved again each time: a file may have been written since. */
	int ret = interlock_approve(s->images[k].idx, sf->fi[k], &v, err);

	if (!ret && rets)
		ret = tracer_rets_in(s->tracer, sf->slot, &v, s->attach_pid, err);
	if (!ret && entry)
		ret = tracer_entry_in(s->tracer, sf->slot, &v, s->attach_pid, err);
	return ret;
}

/* Keep v, whose marks were just proven in binary k. */
static void session_keep_marks(struct session_func *sf, size_t k, const struct interlock_verdict *v)
{
	if (!sf->marks_v[k] && !(sf->marks_v[k] = malloc(sizeof(*v))))
		return; /* proven again next time */
	*sf->marks_v[k] = *v;
}

/* sf's inline marks in binary k: as proven before in the same file, else
 * proven now. */
static int session_marks_in_one(struct session *s, struct session_func *sf, size_t k, char *err)
{
	struct interlock_verdict v;
	size_t sites, counted;
	int ret = interlock_approve(s->images[k].idx, sf->fi[k], &v, err);

	if (!ret && (!sf->marks_v[k] || interlock_copy_marks(sf->marks_v[k], &v, err) != 0)) {
		ret = interlock_approve_marks(s->images[k].idx, sf->fi[k], &v, &sites, &counted,
					      NULL, err);
		if (!ret)
			session_keep_marks(sf, k, &v);
	}
	if (!ret)
		ret = tracer_marks_in(s->tracer, sf->slot, &v, s->attach_pid, err);
	return ret;
}

int session_marks(struct session *s, struct session_func *sf, bool on, char *err)
{
	int ret = 0;

	if (!on) {
		tracer_marks_out(s->tracer, sf->slot);
		return 0;
	}
	if (!sf->inl_counted || tracer_marks_are_in(s->tracer, sf->slot))
		return 0;
	for (size_t k = 0; !ret && k < s->nimages; k++)
		if (sf->fi[k] && !s->images[k].retired)
			ret = session_marks_in_one(s, sf, k, err);
	return ret;
}

static int session_probes_in_image(struct session *s, struct session_func *sf, size_t k,
				   char *why)
{
	int ret = session_probes_in_one(s, sf, k, tracer_entry_is_in(s->tracer, sf->slot),
					tracer_rets_are_in(s->tracer, sf->slot), why);

	if (!ret && tracer_marks_are_in(s->tracer, sf->slot))
		ret = session_marks_in_one(s, sf, k, why);
	return ret;
}

int session_probes_in(struct session *s, struct session_func *sf, bool entry, bool rets,
		      char *err)
{
	int ret = 0;

	for (size_t k = 0; !ret && k < s->nimages; k++)
		if (sf->fi[k] && !s->images[k].retired)
			ret = session_probes_in_one(s, sf, k, entry, rets, err);
	return ret;
}

/* Start or stop capturing sf's arguments and results. */
static void session_set_args(struct session *s, struct session_func *sf, bool on)
{
	const struct sdk_arg *sdk, *rets;
	struct args_plan plan;
	size_t nsdk, nrets;

	sf->args_on = on;
	slowest_set_plan(s->slow, sf->slot, NULL);
	tracer_args_set(s->tracer, sf->slot, NULL);
	if (!on)
		return;
	nsdk = sdk_facts_args(s->sdk, sf->f, &sdk, &rets, &nrets);
	if (args_plan_make(sf->f, sdk, nsdk, rets, nrets, &plan) != 0)
		log_warn("session", "%s: the SDK's argument registers disagree with Go's ABI: raw "
			 "registers instead", sf->f->name);
	slowest_set_plan(s->slow, sf->slot, &plan);
	tracer_args_set(s->tracer, sf->slot, &plan.spec);
}

/* --args: capture the arguments of the matching functions, reported with
 * their slowest calls; a re-attach (budget, retrace) keeps the choice. */
static void session_args(struct session *s, struct session_func *sf)
{
	bool on = sf->args_on || (s->opts.args_pattern &&
				  fnmatch(s->opts.args_pattern, sf->f->name, 0) == 0);

	session_set_args(s, sf, on && !sf->entry_only && !s->opts.latency_only);
}

int session_toggle_args(struct session *s, const struct func_info *f, bool *on)
{
	struct session_func *sf = session_find(s, f);

	if (!sf || sf->slot < 0)
		return -ENOENT;
	if (sf->entry_only || s->opts.latency_only)
		return -ENOTSUP;
	/* The slowest list starts over, so that every call it shows from now
	 * on has its arguments (or none, after stop). */
	struct slowest_list stale = {.n = 0};
	slowest_poll(s->slow, tracer_slot_gens(s->tracer));
	slowest_take(s->slow, sf->slot, &stale);
	slowest_clear(&stale);
	slowest_clear(&sf->slowest);
	session_set_args(s, sf, !sf->args_on);
	*on = sf->args_on;
	return 0;
}

int session_trace(struct session *s, struct func_info *f, char *err)
{
	if (!session_is_traced(s, f))
		sdk_facts_validate_all(s->sdk, &f, 1);
	return session_attach(s, f, err);
}

/* Attach f; the SDK, if any, was asked about it before. */
static int session_attach(struct session *s, struct func_info *f, char *err)
{
	struct session_func *sf = session_find(s, f);
	char why[ERR_LEN] = "";
	bool entry_only;
	int ret;

	if (sf && sf->slot >= 0)
		return 0;
	if (s->guard.expired)
		return err_set(err, ETIME, "%s: tracing time is up (--max-duration %g s): extend it first",
			       f->name, s->guard.max_duration_s);
	if (!s->tracer && s->start_ns && (ret = session_open_tracer(s, why)) != 0)
		return err_set(err, -ret, "%s", why);
	if (!sf) {
		if (s->nfuncs == RETOP_MAX_FUNCS)
			return err_set(err, ENOSPC, "%s: too many functions listed", f->name);
		sf = &s->funcs[s->nfuncs++];
		memset(sf, 0, sizeof(*sf));
		sf->f = f;
	}
	sf->slot = -1;
	sf->have_prev = false;
	sf->pct_cache.valid = false;
	ret = session_check_go_version(s, why);
	if (!ret && !f->inline_only)
		ret = interlock_judge(s->idx, f, &s->judge, why);
	/* The one gate for every attach path: dashboard, batch, --serve.  In
	 * the first binary still run (a deploy may have retired the first),
	 * then in the others. */
	struct interlock_verdict v;
	size_t first = s->nimages;
	sf->follow_reason[0] = '\0';
	for (size_t k = 0; !ret && k < s->nimages; k++) {
		sf->fi[k] = k == 0 ? f : NULL;
		if (s->images[k].retired || !session_func_in(s, sf, k))
			continue;
		if (first == s->nimages)
			first = k;
	}
	if (!ret && first == s->nimages)
		ret = err_set(why, ENOENT, "%s: %s", f->name, sf->follow_reason);
	if (!ret)
		ret = interlock_approve(s->images[first].idx, sf->fi[first], &v, why);
	/* Its inlined calls too, where a mark proves each one (the reason of
	 * an entry-only verdict stays in why). */
	if (!ret)
		ret = interlock_approve_marks(s->images[first].idx, sf->fi[first], &v,
					      &sf->inl_sites, &sf->inl_counted, sf->inl_why, why);
	if (!ret)
		session_keep_marks(sf, first, &v);
	if (!ret)
		ret = tracer_attach(s->tracer, &v, s->attach_pid, &entry_only, why);
	if (ret < 0) {
		sf->state = FUNC_ERROR;
		snprintf(sf->reason, sizeof(sf->reason), "%s", why);
		return err_set(err, -ret, "%s", why);
	}
	sf->slot = ret;
	for (size_t k = first + 1; k < s->nimages; k++)
		if (sf->fi[k] && !s->images[k].retired && session_probes_in_image(s, sf, k, why) != 0)
			session_not_followed(sf, k, why);
	sf->entry_only = entry_only;
	budget_func_start(&s->budget, &sf->bf, &v, tracer_now_ns());
	/* The runtime watchers from the first traced function on; the budget
	 * takes them out if goroutine exits cost too much (budget.c). */
	if (!tracer_watchers_in(s->tracer))
		tracer_watchers(s->tracer, true);
	session_args(s, sf);
	sf->state = entry_only ? FUNC_ENTRY_ONLY : FUNC_TRACING;
	snprintf(sf->reason, sizeof(sf->reason), "%s", entry_only ? why : "");
	if (f->inline_only)
		snprintf(sf->reason, sizeof(sf->reason),
			 "exists only inlined: its inlined calls are counted, it has no durations");
	sf->inlined_shown = 0;
	return 0;
}

void session_untrace(struct session *s, struct func_info *f)
{
	struct session_func *sf = session_find(s, f);

	if (!sf)
		return;
	tracer_detach(s->tracer, sf->slot);
	session_forget_marks(sf);
	*sf = s->funcs[--s->nfuncs];
	/* The entry moved into sf holds them now. */
	memset(s->funcs[s->nfuncs].marks_v, 0, sizeof(s->funcs[s->nfuncs].marks_v));
}

/* Functions one -t pattern names: a glob, or an exact name (of a function
 * with code, else of one that exists only inlined). */
static size_t session_pattern_funcs(struct session *s, const char *pattern,
				    struct func_info ***out)
{
	if (strpbrk(pattern, "*?[") != NULL) {
		/* A glob picks functions with code: one that exists only
		 * inlined is traced when named exactly (method names such as
		 * main.(*T).M hold a '*'). */
		size_t n = funcs_match(s->idx, pattern, out), k = 0;
		for (size_t i = 0; i < n; i++)
			if (!(*out)[i]->inline_only || !strcmp((*out)[i]->name, pattern))
				(*out)[k++] = (*out)[i];
		return k;
	}
	*out = calloc(1, sizeof(**out));
	if (!*out || !((*out)[0] = funcs_find(s->idx, pattern)))
		return 0;
	return 1;
}

/* The functions the -t patterns name, without duplicates.  Every pattern
 * is checked before anything is attached.  A pattern that names nothing is
 * one warning and the others still count; only when none names anything is
 * it an error (the first one's, with the nearest names). */
static int session_select(struct session *s, const char *const *patterns, size_t n,
			  struct func_info **chosen, size_t *nchosen, char *err)
{
	size_t total = 0, unmatched = 0;
	char first[ERR_LEN] = "";

	*nchosen = 0;
	/* Functions that exist only inlined are names too. */
	funcs_inline_scan(s->idx);
	for (size_t i = 0; i < n; i++) {
		struct func_info **m;
		size_t k = session_pattern_funcs(s, patterns[i], &m);
		if (k == 0) {
			char why[ERR_LEN];
			free(m);
			funcs_no_match(s->idx, patterns[i], unmatched++ ? why : first);
			if (unmatched > 1 || n > 1)
				log_warn("session", "%s", unmatched > 1 ? why : first);
			continue;
		}
		for (size_t j = 0; j < k; j++) {
			bool dup = false;
			for (size_t c = 0; c < *nchosen && !dup; c++)
				dup = chosen[c] == m[j];
			if (dup)
				continue;
			if (*nchosen < s->opts.max_functions)
				chosen[(*nchosen)++] = m[j];
			total++;
		}
		free(m);
	}
	if (n > 0 && unmatched == n)
		return err_set(err, ENOENT, "%s%s", n > 1 ? "no pattern matches a function: " : "",
			       first);
	if (total > s->opts.max_functions)
		return err_set(err, E2BIG, "the patterns match %zu functions, more than --max-functions %zu: narrow them or raise the limit",
			       total, s->opts.max_functions);
	return 0;
}

int session_check_patterns(struct session *s, const char *const *patterns, size_t n, char *err)
{
	struct func_info *chosen[RETOP_MAX_FUNCS];
	size_t nchosen;

	return session_select(s, patterns, n, chosen, &nchosen, err);
}

int session_trace_patterns(struct session *s, const char *const *patterns, size_t n, char *err)
{
	struct func_info *chosen[RETOP_MAX_FUNCS];
	size_t nchosen, attached = 0, refused = 0;
	char first_refused[ERR_LEN] = "";
	int ret = session_select(s, patterns, n, chosen, &nchosen, err);

	if (ret)
		return ret;
	/* One SDK round for all of them, within one time budget. */
	sdk_facts_validate_all(s->sdk, chosen, nchosen);
	for (size_t i = 0; i < nchosen; i++) {
		char why[ERR_LEN];
		if (session_attach(s, chosen[i], why) == 0) {
			attached++;
			continue;
		}
		/* The target is gone: one line, not one per function. */
		if (s->attach_pid > 0 && !procs_alive(s->attach_pid))
			return err_set(err, ESRCH, "PID %d exited while its functions were being "
				       "attached (%zu of %zu attached): nothing to trace",
				       s->attach_pid, attached, nchosen);
		/* A pattern over a package meets a few refused functions: one
		 * line for all of them; each one's status says why. */
		if ((chosen[i]->rets_resolved && chosen[i]->rets.traceable == TRACEABLE_NO) ||
		    chosen[i]->inline_only) {
			if (refused++ == 0)
				snprintf(first_refused, sizeof(first_refused), "%s", why);
			continue;
		}
		log_warn("session", "%s", why);
	}
	if (refused == 1)
		log_warn("session", "%s", first_refused);
	else if (refused > 1)
		log_warn("session", "%zu of %zu functions refused by the interlock (retop -l says why), "
			 "e.g. %s", refused, nchosen, first_refused);
	/* The first interval starts when the probes are in, not before; so
	 * does the first measure of retop's own CPU use. */
	s->last_ns = s->cpu_ns = tracer_now_ns();
	s->last_cpu_s = session_cpu_seconds();
	if (attached == 0)
		return err_set(err, EINVAL, "nothing could be traced: %s",
			       s->nfuncs ? s->funcs[0].reason : "no function");
	return 0;
}

double session_cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static bool session_same_file(const struct func_index *idx, const struct stat *st)
{
	return idx && idx->file_dev == (uint64_t)st->st_dev && idx->file_ino == (uint64_t)st->st_ino;
}

/* Trace the functions in binary k too (a deploy's new file, or an old one
 * back), with the probes each has in now.  Returns how many follow. */
static size_t session_attach_image(struct session *s, size_t k)
{
	size_t followed = 0;
	char why[ERR_LEN];

	s->images[k].retired = false;
	s->names.idx[k] = s->images[k].idx;
	s->names.bias[k] = 0;
	if (s->tracer) {
		session_watch_image(s, s->images[k].idx);
		if (tracer_watchers_in(s->tracer))
			tracer_watchers(s->tracer, true);
	}
	for (size_t i = 0; i < s->nfuncs; i++) {
		struct session_func *sf = &s->funcs[i];
		if (sf->slot < 0 || !session_func_in(s, sf, k))
			continue;
		if (session_probes_in_image(s, sf, k, why) != 0) {
			session_not_followed(sf, k, why);
			continue;
		}
		followed++;
	}
	return followed;
}

/* -x: when the path names another file (a deploy renamed a new binary
 * over it), index that file and trace the functions in it too.  The old
 * file keeps its probes while processes run it (session_retire_images). */
static void session_follow_deploy(struct session *s)
{
	char err[ERR_LEN];
	struct func_index *idx;
	struct stat st;
	size_t k, traced = 0;

	if (!s->opts.exe || stat(s->opts.exe, &st) != 0 || !S_ISREG(st.st_mode))
		return;
	for (k = 0; k < s->nimages; k++)
		if (session_same_file(s->images[k].idx, &st)) {
			if (s->images[k].retired) /* an old binary back: a rollback */
				log_warn("session", "%s names an earlier binary again: tracing %zu "
					 "functions in it", s->opts.exe, session_attach_image(s, k));
			return;
		}
	if ((uint64_t)st.st_dev == s->refused_dev && (uint64_t)st.st_ino == s->refused_ino)
		return;
	s->refused_dev = (uint64_t)st.st_dev;
	s->refused_ino = (uint64_t)st.st_ino;
	if (s->nimages == RETOP_MAX_IMAGES) {
		log_warn("session", "%s was replaced, not followed: retop follows %d binaries a "
			 "session; restart it to trace the new one", s->opts.exe, RETOP_MAX_IMAGES);
		return;
	}
	int ret = funcs_load(s->opts.exe, s->opts.no_dwarf ? FUNCS_NO_DWARF : 0, &idx, err);
	if (ret == -ESTALE) {
		s->refused_dev = s->refused_ino = 0; /* replaced again meanwhile: next time */
		return;
	}
	if (ret) {
		log_warn("session", "%s was replaced, not followed: %s", s->opts.exe, err);
		return;
	}
	for (size_t j = 0; j < s->nimages; j++)
		if (idx->file_dev == s->images[j].idx->file_dev &&
		    idx->file_ino == s->images[j].idx->file_ino) {
			funcs_free(idx); /* replaced again while indexed: the next check sees it */
			return;
		}
	size_t named = 0;
	for (size_t i = 0; i < s->nfuncs; i++)
		named += session_nth_named(idx, s->funcs[i].f->name, 0) != NULL;
	if (s->nfuncs && !named) {
		/* Another program, not a new build of this one. */
		log_warn("session", "%s was replaced by a binary without any of the traced functions: "
			 "not followed", s->opts.exe);
		funcs_free(idx);
		return;
	}
	k = s->nimages++;
	idx->image = (unsigned)k;
	s->images[k].idx = idx;
	for (size_t i = 0; i < s->nfuncs; i++)
		traced += s->funcs[i].slot >= 0;
	log_warn("session", "%s was replaced (a deploy): tracing %zu of %zu functions in the new "
		 "binary too; the old one stays traced while processes run it", s->opts.exe,
		 session_attach_image(s, k), traced);
}

/* A binary no process runs any more, and that the path no longer names,
 * gives up its probes; its index stays, to name the callers it recorded. */
static void session_retire_images(struct session *s)
{
	char path[32];
	int pid;
	struct stat st;
	bool have_st = s->opts.exe && stat(s->opts.exe, &st) == 0;

	for (size_t k = 0; k < s->nimages; k++) {
		struct func_index *idx = s->images[k].idx;
		if (s->images[k].retired || (have_st && session_same_file(idx, &st)) || !have_st)
			continue;
		funcs_file_path(idx, path, sizeof(path));
		if (procs_running(path, &pid, 1) > 0)
			continue;
		if (s->tracer)
			tracer_image_out(s->tracer, (unsigned)k);
		s->images[k].retired = true;
		log_info("session", "no process runs binary %zu (inode %llu) any more: its probes are out",
			 k, (unsigned long long)idx->file_ino);
	}
}

/* -p: the target ran exec() (BPF's execs, on every tick): the probes were
 * bound to the process's old program, so they are attached again, and the
 * load address read anew; the calls it had in flight are orphans (the
 * sweep).  Calls between the exec() and the new probes are not seen:
 * counted as time unseen, and said. */
static void session_check_reexec(struct session *s)
{
	char why[ERR_LEN];
	uint64_t at;

	if (s->attach_pid <= 0 || !s->tracer || s->target_exited ||
	    (at = tracer_exec_ns(s->tracer, s->attach_pid)) == s->exec_ns)
		return;
	char exe[64];
	struct stat st;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", s->attach_pid);
	if (stat(exe, &st) != 0 || !session_same_file(s->idx, &st))
		return; /* gone, or another program: session_check_exec() ends it */
	s->exec_ns = at;
	s->bias_known = false;
	size_t old = s->idx->image, k = s->nimages;
	if (k == RETOP_MAX_IMAGES) {
		snprintf(s->snap.target_end, sizeof(s->snap.target_end),
			 "ran exec() more than %d times: restart retop to trace it further",
			 RETOP_MAX_IMAGES - 1);
		s->exec_ended = true;
		return;
	}
	/* A new address space: a new image number, so that the callers the
	 * old program recorded keep their load address.  Same file, same RET
	 * sites' hits. */
	bool watchers = tracer_watchers_in(s->tracer);
	bool entry[RETOP_MAX_FUNCS] = {false}, rets[RETOP_MAX_FUNCS] = {false};
	for (size_t i = 0; i < s->nfuncs; i++)
		if (s->funcs[i].slot >= 0) {
			entry[i] = tracer_entry_is_in(s->tracer, s->funcs[i].slot);
			rets[i] = tracer_rets_are_in(s->tracer, s->funcs[i].slot);
		}
	tracer_image_out(s->tracer, (unsigned)old);
	tracer_image_alias(s->tracer, (unsigned)k, (unsigned)old);
	s->images[old].retired = true;
	s->images[k] = (struct session_image){.idx = s->idx, .shared = true};
	s->nimages++;
	s->idx->image = (unsigned)k;
	s->names.idx[k] = s->idx;
	session_watch_image(s, s->idx);
	for (size_t i = 0; i < s->nfuncs; i++) {
		struct session_func *sf = &s->funcs[i];
		sf->fi[k] = sf->fi[old];
		if (sf->slot >= 0 && sf->fi[k] &&
		    session_probes_in(s, sf, entry[i], rets[i], why) != 0)
			log_warn("session", "%s", why);
	}
	if (watchers)
		tracer_watchers(s->tracer, true);
	uint64_t now = tracer_now_ns(), gap = now > at ? now - at : 0;
	s->snap.unseen_after_exec_s += (double)gap / 1e9;
	log_warn("session", "PID %d ran exec() of its binary again: probes attached anew; its calls "
		 "in the %.1f ms between are not counted", s->attach_pid, (double)gap / 1e6);
}

/* -p: the target exec()ed another program: tracing ends (returns why). */
static const char *session_check_exec(struct session *s)
{
	char exe[64];
	struct stat st;

	snprintf(exe, sizeof(exe), "/proc/%d/exe", s->attach_pid);
	if (stat(exe, &st) != 0)
		return NULL; /* exiting: procs_alive() tells */
	if (s->exec_ended)
		return s->snap.target_end;
	if (!session_same_file(s->idx, &st)) {
		char now[600] = "";
		ssize_t n = readlink(exe, now, sizeof(now) - 1);
		if (n > 0)
			now[n] = '\0';
		snprintf(s->snap.target_end, sizeof(s->snap.target_end), "ran exec() of another program (%s)",
			 now[0] ? now : "unknown");
		return s->snap.target_end;
	}
	session_check_reexec(s);
	return NULL;
}

/* Who is being traced; why tracing ends when a -p target has just exited
 * or exec()ed another program (NULL: it goes on), so that the caller reads
 * the final counters before detaching. */
static const char *session_check_target(struct session *s)
{
	if (s->attach_pid > 0) {
		s->snap.pids[0] = s->attach_pid;
		s->snap.npids = 1;
		if (s->target_exited)
			return NULL;
		if (!procs_alive(s->attach_pid)) {
			snprintf(s->snap.target_end, sizeof(s->snap.target_end), "exited");
			return s->snap.target_end;
		}
		return session_check_exec(s);
	}
	session_follow_deploy(s);
	session_retire_images(s);
	/* By the files, not the path: every process of every binary traced. */
	s->snap.npids = 0;
	for (size_t k = 0; k < s->nimages; k++) {
		char path[32];
		if (s->images[k].retired)
			continue;
		funcs_file_path(s->images[k].idx, path, sizeof(path));
		s->snap.npids += procs_running(path, s->snap.pids + s->snap.npids,
					       SNAPSHOT_MAX_PIDS - s->snap.npids);
	}
	return NULL;
}

static void session_detach_all(struct session *s, const char *why)
{
	for (size_t i = 0; i < s->nfuncs; i++) {
		if (s->funcs[i].slot < 0)
			continue;
		tracer_detach(s->tracer, s->funcs[i].slot);
		s->funcs[i].slot = -1;
		s->funcs[i].state = s->snap.funcs[i].state = FUNC_DETACHED;
		snprintf(s->funcs[i].reason, sizeof(s->funcs[i].reason), "%s", why);
		snprintf(s->snap.funcs[i].reason, sizeof(s->snap.funcs[i].reason), "%s", why);
	}
}

/* A PIE's load bias in the traced process, so that return addresses (the
 * callers) map to the index's link addresses: from where the process maps
 * the first function's entry.  0 for a fixed-address binary, and for every
 * process of a binary (-x): their biases may differ, their callers are '?'. */
static uint64_t session_load_bias(struct session *s)
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
 * hits of its own range of ret_hits (tracer_site_base). */
static void session_fill_sites(struct session *s, struct session_func *sf,
			       struct snapshot_func *out)
{
	out->nsites = 0;
	if (sf->entry_only)
		return;
	for (size_t k = 0; k < s->nimages; k++) {
		const struct func_info *g = s->images[k].shared ? NULL : sf->fi[k];
		int base = s->tracer && sf->slot >= 0 ? tracer_site_base(s->tracer, sf->slot, (unsigned)k)
						      : (k == 0 ? 0 : -1);
		if (!g || base < 0)
			continue;
		for (size_t i = 0; i < g->rets.count && base + i < RETOP_MAX_RET_SITES &&
				   out->nsites < RETOP_MAX_RET_SITES; i++) {
			struct snapshot_site *site = &out->sites[out->nsites++];
			site->offset = retsites_get(&g->rets, i)->offset;
			site->line = retsites_get(&g->rets, i)->line;
			site->image = (unsigned)k;
			site->hits = out->v.ret_hits[base + i];
			site->hits_delta = out->v.ret_hits_delta[base + i];
		}
	}
}

static void session_fill_func(struct session *s, struct session_func *sf, double interval,
			      struct snapshot_func *out)
{
	/* Not the slowest lists: written below, their calls only. */
	memset(out, 0, offsetof(struct snapshot_func, slowest));
	slowest_clear(&out->slowest_interval);
	slowest_clear(&out->slow_calls);
	out->name = sf->f->name;
	out->f = sf->f;
	out->state = sf->state;
	snprintf(out->reason, sizeof(out->reason), "%s", sf->reason);
	/* Traced, but not in every binary a deploy brought: say where not. */
	if (!out->reason[0] && sf->follow_reason[0] && sf->slot >= 0)
		snprintf(out->reason, sizeof(out->reason), "%s", sf->follow_reason);
	out->entry_only = sf->entry_only;
	out->inlined_sites = s->idx->inl_known ? (int64_t)sf->f->inlined_sites : -1;
	out->inlined_sites_counted = (int64_t)sf->inl_counted;
	snprintf(out->inlined_uncounted_why, sizeof(out->inlined_uncounted_why), "%s", sf->inl_why);
	out->args = sf->args_on && sf->slot >= 0;
	if (sf->slot >= 0) {
		sf->prev = sf->cur;
		if (tracer_read(s->tracer, sf->slot, &sf->cur) != 0)
			return;
		stats_compute_cached(&sf->cur, sf->have_prev ? &sf->prev : NULL, interval, &out->v,
				     &sf->pct_cache);
		sf->have_prev = true;
		out->in_flight = s->inflight[sf->slot].count;
		out->overdue = s->inflight[sf->slot].overdue;
		out->oldest_in_flight_ns = s->inflight[sf->slot].oldest_ns;
		/* Proven dead by the sweep, plus those the BPF side saw
		 * abandoned (a new call in the same frame after a panic). */
		out->orphans = s->inflight[sf->slot].orphans + sf->cur.abandoned;
		out->before_attach = sf->cur.before_attach;
		session_load_bias(s);
		tracer_read_callers(s->tracer, sf->slot, &s->names, &sf->callers);
		slowest_take(s->slow, sf->slot, &out->slowest_interval);
		slowest_take_over(s->slow, sf->slot, &out->slow_calls);
		tracer_slow_rearm(s->tracer, sf->slot);
		slowest_merge(&sf->slowest, &out->slowest_interval);
	} else if (sf->have_prev) {
		/* Detached: keep showing the last numbers. */
		stats_compute(&sf->cur, &sf->cur, interval, &out->v);
	}
	if (sf->slot >= 0 || sf->have_prev)
		out->raw = &sf->cur;
	/* Detached: the last callers read stay shown, like the counters. */
	out->callers = sf->callers;
	slowest_copy(&out->slowest, &sf->slowest);
	out->entries = sf->cur.entries;
	/* Calls as the governor counts them: at their RET when timed, at their
	 * entry when not (or estimated); the rates follow. */
	budget_fill(sf, out);
	out->v.calls_delta = out->v.calls > sf->calls_shown ? out->v.calls - sf->calls_shown : 0;
	out->v.calls_per_s = interval > 0 && sf->have_prev ? (double)out->v.calls_delta / interval : 0;
	sf->calls_shown = out->v.calls;
	out->inlined_calls = sf->cur.inlined;
	out->inlined_calls_exact = !sf->bf.marks_missed;
	out->inlined_calls_per_s =
	    interval > 0 && sf->have_prev && out->inlined_calls >= sf->inlined_shown
		? (double)(out->inlined_calls - sf->inlined_shown) / interval
		: 0;
	sf->inlined_shown = out->inlined_calls;
	/* An entry-only function keeps its state (and reason); the estimate
	 * marks show it is sampled. */
	if (sf->slot >= 0 && out->mode == BUDGET_TIMING && out->state == FUNC_TRACING)
		out->state = FUNC_TIMING;
	else if (sf->slot >= 0 && out->mode == BUDGET_ESTIMATED && out->state == FUNC_TRACING)
		out->state = FUNC_SAMPLED;
	session_fill_sites(s, sf, out);
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
	log_warn("session", "%llu calls dropped, counts are not exact: the in-flight map is full "
			    "(--max-in-flight %u): raise --max-in-flight",
		 (unsigned long long)dropped, s->opts.max_in_flight ? s->opts.max_in_flight
								   : TRACER_DEFAULT_IN_FLIGHT);
}

/* Time and memory for the status line; auto-detach once time is up, after
 * the counters above were read, so the last interval is kept. */
static void session_sample_guard(struct session *s, uint64_t now)
{
	s->snap.max_duration_s = s->guard.max_duration_s;
	s->snap.budget_pct = s->budget.pct;
	s->snap.budget_hits = budget_allowed_hits(&s->budget);
	s->snap.exits_watched = s->tracer && tracer_watchers_in(s->tracer);
	s->snap.hit_ns = s->budget.hit_ns;
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
		budget_calibrate_close(&s->budget);
		tracer_close(s->tracer);
		s->tracer = NULL;
		log_warn("session", "tracing stopped after --max-duration %g s: %zu functions "
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

uint64_t session_tick(struct session *s)
{
	session_check_reexec(s);
	return budget_tick(s, tracer_now_ns());
}

void session_wakeable(struct session *s, bool on)
{
	budget_wakeable(&s->budget, on);
}

int session_wake_fd(const struct session *s)
{
	return s->budget.wakeable ? tracer_wake_fd(s->tracer) : -1;
}

void session_wake(struct session *s)
{
	tracer_wake_drain(s->tracer);
	budget_wake(&s->budget);
}

int session_sleep(struct session *s, uint64_t deadline_ns, int fd)
{
	uint64_t now = tracer_now_ns();
	struct pollfd p[2];
	nfds_t n = 0;
	int wfd = s ? session_wake_fd(s) : -1;

	if (deadline_ns <= now)
		return 0;
	struct timespec ts = {.tv_sec = (time_t)((deadline_ns - now) / 1000000000ull),
			      .tv_nsec = (long)((deadline_ns - now) % 1000000000ull)};
	if (fd >= 0)
		p[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
	if (wfd >= 0)
		p[n++] = (struct pollfd){.fd = wfd, .events = POLLIN};
	if (ppoll(p, n, &ts, NULL) <= 0)
		return 0;
	if (fd >= 0 && (p[0].revents & POLLIN))
		return 1;
	if (wfd >= 0 && (p[n - 1].revents & POLLIN)) {
		session_wake(s);
		return -1;
	}
	return 0;
}

const struct snapshot *session_sample(struct session *s)
{
	uint64_t now = tracer_now_ns();
	double interval = (double)(now - s->last_ns) / 1e9, cpu = session_cpu_seconds();
	struct timeval tv;

	const char *ended = session_check_target(s);

	if (s->tracer) {
		tracer_sweep(s->tracer, s->inflight);
		/* One read of the caller map for every function. */
		if (!s->opts.latency_only)
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
	for (size_t i = 0; i < s->nfuncs; i++) {
		session_fill_func(s, &s->funcs[i], interval, &s->snap.funcs[i]);
		shed += s->funcs[i].bf.ever_shed;
	}
	/* A function's probes out for a time: the hits inside every other's
	 * calls, whose callee it may be, are a sample (retop cannot tell
	 * callees).  Its own calls lose none of theirs, but where it calls
	 * itself: an estimate's entry probe is out between its slices. */
	for (size_t i = 0; i < s->nfuncs; i++) {
		const struct budget_func *bf = &s->funcs[i].bf;
		s->snap.funcs[i].probes_shed = bf->ever_shed;
		s->snap.funcs[i].hits_inside_sampled =
			shed > (size_t)bf->ever_shed || bf->ever_estimated;
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
		budget_func_reset(&s->funcs[i].bf);
		s->funcs[i].calls_shown = 0;
		memset(&s->funcs[i].callers, 0, sizeof(s->funcs[i].callers));
		slowest_clear(&s->funcs[i].slowest);
		s->funcs[i].have_prev = false;
		s->funcs[i].pct_cache.valid = false;
	}
}

void session_extend(struct session *s)
{
	guard_extend(&s->guard, tracer_now_ns());
}

int session_launch(const struct cli_options *o, enum session_launch_mode mode,
		   struct session **out, char *trace_err)
{
	struct session_opts so;
	char err[ERR_LEN], terr[ERR_LEN] = "";
	int ret;

	*out = NULL;
	session_opts_from_cli(o, &so);
	ret = session_open(&so, out, err);
	if (!ret && session_start_tracing(*out, terr) != 0 && o->npatterns)
		ret = err_set(err, EPERM, "%s", terr);
	if (!ret)
		ret = mode == LAUNCH_ATTACH
			      ? session_trace_patterns(*out, o->patterns, o->npatterns, err)
			      : session_check_patterns(*out, o->patterns, o->npatterns, err);
	if (trace_err)
		snprintf(trace_err, ERR_LEN, "%s", terr);
	if (ret) {
		fprintf(stderr, "retop: %s\n", err);
		session_close(*out);
		*out = NULL;
		return EXIT_RUNTIME;
	}
	return EXIT_OK;
}

int session_judge(struct session *s, struct func_info *f, char *why)
{
	return interlock_judge(s->idx, f, &s->judge, why);
}

struct func_index *session_index(struct session *s)
{
	return s->idx;
}

const char *session_target(const struct session *s)
{
	return s->display;
}

int session_attach_pid(const struct session *s)
{
	return s->attach_pid;
}

bool session_started(const struct session *s)
{
	/* After auto-detach the tracer is closed, but the countdown and the
	 * detached rows still show. */
	return s->tracer || s->start_ns;
}

size_t session_count(const struct session *s)
{
	return s->nfuncs;
}

void session_entry_at(const struct session *s, size_t i, struct session_entry *out)
{
	const struct session_func *sf = &s->funcs[i];

	out->f = sf->f;
	out->state = sf->state;
	out->reason = sf->reason;
	out->probes = sf->slot >= 0 ? tracer_probe_count(s->tracer, sf->slot) : 0;
}
