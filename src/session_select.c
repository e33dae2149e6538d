/* Turning the -t patterns into functions, then attaching them (or a list
 * of functions: the browser's package key). */
#include "session_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "funcs_inline.h"
#include "funcs_match.h"
#include "log.h"
#include "procs.h"
#include "sdk_facts.h"

/* Functions one -t pattern names: a glob, or an exact name (of a function
 * with code, else of one that exists only inlined). */
static size_t session_pattern_funcs(struct session *s, const char *pattern, struct func_info ***out)
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
		return err_set(err, E2BIG,
			       "the patterns match %zu functions, more than --max-functions %zu: "
			       "narrow them or raise the limit",
			       total, s->opts.max_functions);
	return 0;
}

int session_check_patterns(struct session *s, const char *const *patterns, size_t n, char *err)
{
	struct func_info *chosen[RETOP_MAX_FUNCS];
	size_t nchosen;

	return session_select(s, patterns, n, chosen, &nchosen, err);
}

/* Attach fs, the session's own entries. */
static int session_attach_list(struct session *s, struct func_info **fs, size_t n, size_t *attached,
			       char *err)
{
	size_t refused = 0;
	char first_refused[ERR_LEN] = "";

	*attached = 0;
	/* One SDK round for all of them, within one time budget. */
	sdk_facts_validate_all(s->sdk, fs, n);
	for (size_t i = 0; i < n; i++) {
		char why[ERR_LEN];
		/* A thousand take seconds: those in are governed meanwhile
		 * (each at full rate until its first slice, a query's burst
		 * spent twenty budgets a second while the rest went in). */
		session_tick_between(s);
		if (session_attach(s, fs[i], why) == 0) {
			(*attached)++;
			continue;
		}
		/* The target is gone: one line, not one per function. */
		if (s->attach_pid > 0 && !procs_alive(s->attach_pid))
			return err_set(err, ESRCH,
				       "PID %d exited while its functions were being "
				       "attached (%zu of %zu attached): nothing to trace",
				       s->attach_pid, *attached, n);
		/* A pattern over a package meets a few refused functions: one
		 * line for all of them; each one's status says why. */
		if ((fs[i]->rets_resolved && fs[i]->rets.traceable == TRACEABLE_NO) ||
		    fs[i]->inline_only) {
			if (refused++ == 0)
				snprintf(first_refused, sizeof(first_refused), "%s", why);
			continue;
		}
		log_warn("session", "%s", why);
	}
	if (refused == 1)
		log_warn("session", "%s", first_refused);
	else if (refused > 1)
		log_warn("session",
			 "%zu of %zu functions refused by the interlock (retop -l says why), "
			 "e.g. %s",
			 refused, n, first_refused);
	return 0;
}

/* After an attach, the pages of the binaries it read leave retop's resident
 * memory (a thousand functions' decodes touched most of the text). */
static void session_drop_file_pages(struct session *s)
{
	for (size_t k = 0; k < s->nimages; k++)
		funcs_drop_file_pages(s->images[k].idx);
	if (!s->nimages)
		funcs_drop_file_pages(s->idx);
}

int session_trace_list(struct session *s, const struct func_info *const *fs, size_t n,
		       size_t *attached, char *err)
{
	struct func_info **own = calloc(n ? n : 1, sizeof(*own));
	int ret = 0;

	*attached = 0;
	if (!own)
		return err_set(err, ENOMEM, "out of memory");
	for (size_t i = 0; !ret && i < n; i++)
		if (!(own[i] = session_own(s, fs[i])))
			ret = err_set(err, EINVAL, "not a function of the target's index");
	if (!ret)
		ret = session_attach_list(s, own, n, attached, err);
	session_drop_file_pages(s);
	free(own);
	return ret;
}

int session_trace_patterns(struct session *s, const char *const *patterns, size_t n, char *err)
{
	struct func_info *chosen[RETOP_MAX_FUNCS];
	size_t nchosen, attached;
	int ret = session_select(s, patterns, n, chosen, &nchosen, err);

	if (ret || (ret = session_attach_list(s, chosen, nchosen, &attached, err)))
		return ret;
	session_drop_file_pages(s);
	/* The first interval starts when the probes are in, not before; so
	 * does the first measure of retop's own CPU use. */
	s->last_ns = s->cpu_ns = clock_now_ns();
	s->last_cpu_s = session_cpu_seconds();
	if (attached == 0)
		return err_set(err, EINVAL, "nothing could be traced: %s",
			       s->nfuncs ? s->funcs[0].reason : "no function");
	return 0;
}
