#include "session_internal.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>

#include "elf_image.h"
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
		ret = slowest_open(tracer_slow_fd(s->tracer), s->idx, &s->slow);
		if (ret)
			ret = err_set(err, -ret, "cannot read the slowest calls' ring buffer: %s",
				      strerror(-ret));
	}
	if (ret) {
		tracer_close(s->tracer);
		s->tracer = NULL;
		return ret;
	}
	struct func_info *rec = funcs_find(s->idx, "runtime.recovery");
	struct interlock_verdict v;
	char why[ERR_LEN];
	if (!rec || funcs_resolve_rets(s->idx, rec, why) != 0 ||
	    interlock_approve(s->idx, rec, s->binary, &v, why) != 0 ||
	    tracer_watch_recovery(s->tracer, &v, s->binary, s->attach_pid) != 0)
		log_info("session", "runtime.recovery not watched: panics count as restarts");
	struct func_info *gx = funcs_find(s->idx, "runtime.goexit1");
	if (!gx || funcs_resolve_rets(s->idx, gx, why) != 0 ||
	    interlock_approve(s->idx, gx, s->binary, &v, why) != 0 ||
	    tracer_watch_goexit(s->tracer, &v, s->binary, s->attach_pid) != 0)
		log_info("session", "runtime.goexit1 not watched: calls of exited goroutines "
				    "become orphans after --orphan-timeout");
	return 0;
}

/* The cost of a probe hit, for --budget; when it cannot be measured, the
 * dearest single-stepped hit measured on this kind of machine (50 us), so
 * that the budget errs on the target's side. */
static void session_calibrate(struct session *s)
{
	char why[ERR_LEN];

	s->budget.pct = s->opts.budget_pct;
	s->budget.hits_per_s = s->opts.budget_hits;
	if (s->budget.hits_per_s <= 0)
		return;
	s->budget.hit_ns = budget_calibrate(why);
	if (s->budget.hit_ns <= 0) {
		log_warn("budget", "cannot time a probe hit (%s): assuming 50 us a hit", why);
		s->budget.hit_ns = 50000;
	}
	log_info("budget", "a probe hit costs %.0f ns: the budget allows %.0f hits/s",
		 s->budget.hit_ns, budget_allowed_hits(&s->budget));
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

void session_close(struct session *s)
{
	if (!s)
		return;
	slowest_close(s->slow);
	tracer_close(s->tracer);
	sdk_facts_close(s->sdk);
	funcs_free(s->idx);
	for (size_t i = 0; s->funcs && i < RETOP_MAX_FUNCS; i++)
		slowest_clear(&s->funcs[i].slowest);
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
	ret = session_check_go_version(s, why);
	if (!ret)
		ret = funcs_resolve_rets(s->idx, f, why);
	/* The one gate for every attach path: dashboard, batch, --serve. */
	struct interlock_verdict v;
	if (!ret)
		ret = interlock_approve(s->idx, f, s->binary, &v, why);
	if (!ret)
		ret = tracer_attach(s->tracer, &v, s->binary, s->attach_pid, &entry_only, why);
	if (ret < 0) {
		sf->state = FUNC_ERROR;
		snprintf(sf->reason, sizeof(sf->reason), "%s", why);
		return err_set(err, -ret, "%s", why);
	}
	sf->slot = ret;
	sf->entry_only = entry_only;
	budget_func_start(&s->budget, &sf->bf, &v, tracer_now_ns());
	/* The runtime watchers from the first traced function on; the budget
	 * takes them out if goroutine exits cost too much (budget.c). */
	if (!tracer_watchers_in(s->tracer))
		tracer_watchers(s->tracer, true);
	session_args(s, sf);
	sf->state = entry_only ? FUNC_ENTRY_ONLY : FUNC_TRACING;
	snprintf(sf->reason, sizeof(sf->reason), "%s", entry_only ? why : "");
	return 0;
}

void session_untrace(struct session *s, struct func_info *f)
{
	struct session_func *sf = session_find(s, f);

	if (!sf)
		return;
	tracer_detach(s->tracer, sf->slot);
	*sf = s->funcs[--s->nfuncs];
}

/* Functions one -t pattern names: a glob, or an exact name. */
static size_t session_pattern_funcs(struct session *s, const char *pattern,
				    struct func_info ***out)
{
	if (strpbrk(pattern, "*?[") != NULL)
		return funcs_match(s->idx, pattern, out);
	*out = calloc(1, sizeof(**out));
	if (!*out || !((*out)[0] = funcs_find(s->idx, pattern)))
		return 0;
	return 1;
}

/* The functions the -t patterns name, without duplicates.  Every pattern
 * is checked before anything is attached, so a bad one attaches nothing. */
static int session_select(struct session *s, const char *const *patterns, size_t n,
			  struct func_info **chosen, size_t *nchosen, char *err)
{
	size_t total = 0;

	*nchosen = 0;
	for (size_t i = 0; i < n; i++) {
		struct func_info **m;
		size_t k = session_pattern_funcs(s, patterns[i], &m);
		if (k == 0) {
			free(m);
			return funcs_no_match(s->idx, patterns[i], err);
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
		if (chosen[i]->rets_resolved && chosen[i]->rets.traceable == TRACEABLE_NO) {
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

/* Who is being traced; true when a -p target has just exited, so that the
 * caller reads the final counters before detaching. */
static bool session_check_target(struct session *s)
{
	if (s->attach_pid > 0) {
		s->snap.pids[0] = s->attach_pid;
		s->snap.npids = 1;
		return !s->target_exited && !procs_alive(s->attach_pid);
	}
	s->snap.npids = procs_running(s->binary, s->snap.pids, SNAPSHOT_MAX_PIDS);
	return false;
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
	return s->load_bias;
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
	out->entry_only = sf->entry_only;
	out->args = sf->args_on && sf->slot >= 0;
	if (sf->slot >= 0) {
		sf->prev = sf->cur;
		if (tracer_read(s->tracer, sf->slot, &sf->cur) != 0)
			return;
		stats_compute(&sf->cur, sf->have_prev ? &sf->prev : NULL, interval, &out->v);
		sf->have_prev = true;
		out->in_flight = s->inflight[sf->slot].count;
		out->oldest_in_flight_ns = s->inflight[sf->slot].oldest_ns;
		/* Swept after the timeout, plus those the BPF side saw abandoned
		 * (a new call in the same frame after a panic). */
		out->orphans = s->inflight[sf->slot].orphans + sf->cur.abandoned;
		out->before_attach = sf->cur.before_attach;
		tracer_read_callers(s->tracer, sf->slot, s->idx, session_load_bias(s), &sf->callers);
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
	/* An entry-only function keeps its state (and reason); the estimate
	 * marks show it is sampled. */
	if (sf->slot >= 0 && out->mode == BUDGET_TIMING && out->state == FUNC_TRACING)
		out->state = FUNC_TIMING;
	else if (sf->slot >= 0 && out->mode == BUDGET_ESTIMATED && out->state == FUNC_TRACING)
		out->state = FUNC_SAMPLED;
	out->nsites = sf->entry_only ? 0 : sf->f->rets.count;
	if (out->nsites > RETOP_MAX_RET_SITES)
		out->nsites = RETOP_MAX_RET_SITES;
	for (size_t i = 0; i < out->nsites; i++) {
		out->sites[i].offset = retsites_get(&sf->f->rets, i)->offset;
		out->sites[i].line = retsites_get(&sf->f->rets, i)->line;
		out->sites[i].hits = out->v.ret_hits[i];
		out->sites[i].hits_delta = out->v.ret_hits_delta[i];
	}
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
	return budget_tick(s, tracer_now_ns());
}

const struct snapshot *session_sample(struct session *s)
{
	uint64_t now = tracer_now_ns();
	double interval = (double)(now - s->last_ns) / 1e9, cpu = session_cpu_seconds();
	struct timeval tv;

	bool exited = session_check_target(s);

	if (s->tracer) {
		tracer_sweep(s->tracer, s->inflight);
		/* One read of the caller map for every function. */
		if (!s->opts.latency_only)
			tracer_callers_refresh(s->tracer);
	}
	if (s->slow) {
		slowest_set_bias(s->slow, session_load_bias(s));
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
	for (size_t i = 0; i < s->nfuncs; i++)
		session_fill_func(s, &s->funcs[i], interval, &s->snap.funcs[i]);
	s->snap.nfuncs = s->nfuncs;
	session_warn_dropped(s);
	session_sample_guard(s, now);
	if (exited) {
		/* The counters above are final: the process is gone. */
		s->target_exited = s->snap.target_exited = true;
		session_detach_all(s, "process exited");
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
