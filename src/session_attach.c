/* Attaching and detaching a function, and its arguments' capture. */
#include "session_internal.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "clock.h"
#include "elf_image.h"
#include "log.h"
#include "sdk_facts.h"

struct session_func *session_find(const struct session *s, const struct func_info *f)
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
		return err_set(why, ENOTSUP,
			       "unsupported Go version %s: retop traces Go >= 1.17 (register ABI)",
			       v);
	return 0;
}

/* Start or stop capturing sf's arguments and results. */
void session_set_args(struct session *s, struct session_func *sf, bool on)
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
		log_warn("session",
			 "%s: the SDK's argument registers disagree with Go's ABI: raw "
			 "registers instead",
			 sf->f->name);
	slowest_set_plan(s->slow, sf->slot, &plan);
	tracer_args_set(s->tracer, sf->slot, &plan.spec);
}

/* --args: capture the arguments of the matching functions, reported with
 * their slowest calls; a re-attach (budget, retrace) keeps the choice. */
static void session_args(struct session *s, struct session_func *sf)
{
	bool on = sf->args_on ||
		  (s->opts.args_pattern && fnmatch(s->opts.args_pattern, sf->f->name, 0) == 0);

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

struct func_info *session_own(struct session *s, const struct func_info *f)
{
	const struct func_index *idx = s->idx;

	if (!f || f < idx->funcs || f >= idx->funcs + idx->count)
		return NULL;
	return &s->idx->funcs[f - idx->funcs];
}

int session_trace(struct session *s, const struct func_info *cf, char *err)
{
	struct func_info *f = session_own(s, cf);

	if (!f)
		return err_set(err, EINVAL, "not a function of the target's index");
	if (!session_is_traced(s, f))
		sdk_facts_validate_all(s->sdk, &f, 1);
	return session_attach(s, f, err);
}

/* Attach f; the SDK, if any, was asked about it before. */
int session_attach(struct session *s, struct func_info *f, char *err)
{
	struct session_func *sf = session_find(s, f);
	char why[ERR_LEN] = "";
	bool entry_only;
	int ret;

	if (sf && sf->slot >= 0)
		return 0;
	if (s->guard.expired)
		return err_set(err, ETIME,
			       "%s: tracing time is up (--max-duration %g s): extend it first",
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
	session_baseline_drop(sf); /* its counters start again */
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
	/* Its errors are read from its first call on: where, before the
	 * probes go in. */
	if (!ret) {
		session_error_find(s, s->images[first].idx, sf->fi[first], &sf->err);
		session_errors_reset(sf);
	}
	if (!ret)
		ret = tracer_attach(s->tracer, &v, s->attach_pid,
				    sf->err.state == ARGS_ERROR_READ ? sf->err.reg : -1,
				    &entry_only, why);
	if (ret < 0) {
		sf->state = FUNC_ERROR;
		snprintf(sf->reason, sizeof(sf->reason), "%s", why);
		return err_set(err, -ret, "%s", why);
	}
	sf->slot = ret;
	for (size_t k = first + 1; k < s->nimages; k++)
		if (sf->fi[k] && !s->images[k].retired &&
		    session_probes_in_image(s, sf, k, why) != 0)
			session_not_followed(sf, k, why);
	sf->entry_only = entry_only;
	govern_func_start(&s->gov, &sf->gf, &v, clock_now_ns());
	/* The runtime watchers from the first traced function on; the budget
	 * takes them out if goroutine exits cost too much (govern.c). */
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

void session_untrace(struct session *s, const struct func_info *f)
{
	struct session_func *sf = session_find(s, f);

	if (!sf)
		return;
	tracer_detach(s->tracer, sf->slot);
	session_func_release(sf);
	govern_func_moved(&s->gov, (size_t)(sf - s->funcs), s->nfuncs - 1);
	*sf = s->funcs[--s->nfuncs];
	/* The entry moved into sf owns what it held now: the one left behind
	 * owns nothing (session_close releases every entry). */
	memset(&s->funcs[s->nfuncs], 0, sizeof(s->funcs[s->nfuncs]));
}

void session_detach_all(struct session *s, const char *why)
{
	/* Closed together: one function's grace periods, not a thousand's. */
	tracer_defer(s->tracer);
	for (size_t i = 0; i < s->nfuncs; i++) {
		if (s->funcs[i].slot < 0)
			continue;
		tracer_detach(s->tracer, s->funcs[i].slot);
		s->funcs[i].slot = -1;
		s->funcs[i].state = s->snap.funcs[i].state = FUNC_DETACHED;
		snprintf(s->funcs[i].reason, sizeof(s->funcs[i].reason), "%s", why);
		snprintf(s->snap.funcs[i].reason, sizeof(s->snap.funcs[i].reason), "%s", why);
	}
	tracer_flush(s->tracer);
}
