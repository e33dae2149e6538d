/* The binaries a session traces: a deploy renamed over the -x path, an
 * exec() of the -p target, a binary no process runs any more; and the
 * target's end. */
#include "session_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "procs.h"

/* A runtime function for a watcher's entry probe: approved as a traced
 * function's entry where it is one, else on its bytes alone. */
static int session_approve_watch(struct session *s, struct func_index *idx, const char *name,
				 struct interlock_verdict *v, char *why)
{
	struct func_info *f = funcs_find(idx, name);

	if (!f)
		return err_set(why, ENOENT, "%s: not in the binary", name);
	if (interlock_judge(idx, f, &s->judge, why) != 0)
		return -EINVAL;
	if (interlock_approve(idx, f, v, why) == 0)
		return 0;
	return interlock_approve_watch(idx, f, v, why);
}

/* --time-split sched: Go's scheduler starting a goroutine on a thread
 * (runtime.execute) and its thread leaving it (runtime.schedule). */
static void session_watch_sched(struct session *s, struct func_index *idx)
{
	struct interlock_verdict run, stop;
	char why[ERR_LEN] = "";

	if (session_approve_watch(s, idx, "runtime.execute", &run, why) != 0 ||
	    session_approve_watch(s, idx, "runtime.schedule", &stop, why) != 0 ||
	    tracer_watch_sched(s->tracer, &run, &stop, s->attach_pid) != 0)
		log_warn("session",
			 "--time-split sched: Go's scheduler not watched (%s): parked calls "
			 "are not split",
			 why[0] ? why : "no probe");
}

/* Approve a binary's runtime.recovery and runtime.goexit1 for watching. */
void session_watch_image(struct session *s, struct func_index *idx)
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
	if (s->split_sched)
		session_watch_sched(s, idx);
}

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
void session_not_followed(struct session_func *sf, size_t k, const char *why)
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
struct func_info *session_func_in(struct session *s, struct session_func *sf, size_t k)
{
	struct func_index *idx = s->images[k].idx;
	struct func_info *g =
	    k == 0 ? sf->f : session_nth_named(idx, sf->f->name, session_name_rank(s->idx, sf->f));
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
	bool g_entry_only =
	    g->rets.traceable == TRACEABLE_ENTRY_ONLY || g->rets.count > RETOP_MAX_RET_SITES;
	bool f_entry_only = sf->f->rets.traceable == TRACEABLE_ENTRY_ONLY ||
			    sf->f->rets.count > RETOP_MAX_RET_SITES;
	if (k > 0 &&
	    (g_entry_only != f_entry_only || g->entry_counts_calls != sf->f->entry_counts_calls)) {
		session_not_followed(sf, k, "its probes would count calls differently");
		return NULL;
	}
	/* One register is read for its errors in every binary: the first's
	 * (found afresh: sf->err may be of an earlier attach). */
	struct args_error e, e0;
	session_error_find(s, idx, g, &e);
	session_error_find(s, s->idx, sf->f, &e0);
	if ((e.state == ARGS_ERROR_READ || e0.state == ARGS_ERROR_READ) &&
	    (e.state != e0.state || e.reg != e0.reg)) {
		session_not_followed(sf, k,
				     "its error result is not where it is in the first (the "
				     "signature changed, or is unknown there)");
		return NULL;
	}
	sf->fi[k] = g;
	return g;
}

static bool session_same_file(const struct func_index *idx, const struct stat *st)
{
	return idx && idx->file_dev == (uint64_t)st->st_dev &&
	       idx->file_ino == (uint64_t)st->st_ino;
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
			if (s->images[k].retired) { /* an old binary back: a rollback */
				log_warn("session",
					 "%s names an earlier binary again: tracing %zu "
					 "functions in it",
					 s->opts.exe, session_attach_image(s, k));
				session_mark_binary(s, k);
			}
			return;
		}
	if ((uint64_t)st.st_dev == s->refused_dev && (uint64_t)st.st_ino == s->refused_ino)
		return;
	s->refused_dev = (uint64_t)st.st_dev;
	s->refused_ino = (uint64_t)st.st_ino;
	if (s->nimages == RETOP_MAX_IMAGES) {
		log_warn("session",
			 "%s was replaced, not followed: retop follows %d binaries a "
			 "session; restart it to trace the new one",
			 s->opts.exe, RETOP_MAX_IMAGES);
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
		log_warn("session",
			 "%s was replaced by a binary without any of the traced functions: "
			 "not followed",
			 s->opts.exe);
		funcs_free(idx);
		return;
	}
	k = s->nimages++;
	idx->image = (unsigned)k;
	s->images[k].idx = idx;
	for (size_t i = 0; i < s->nfuncs; i++)
		traced += s->funcs[i].slot >= 0;
	log_warn("session",
		 "%s was replaced (a deploy): tracing %zu of %zu functions in the new "
		 "binary too; the old one stays traced while processes run it",
		 s->opts.exe, session_attach_image(s, k), traced);
	/* The operator deciding whether to roll back: each function's calls
	 * in the new binary against the old one's. */
	session_mark_binary(s, k);
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
		log_info("session",
			 "no process runs binary %zu (inode %llu) any more: its probes are out", k,
			 (unsigned long long)idx->file_ino);
	}
}

/* -p: the target ran exec() (BPF's execs, on every tick): the probes were
 * bound to the process's old program, so they are attached again, and the
 * load address read anew; the calls it had in flight are orphans (the
 * sweep).  Calls between the exec() and the new probes are not seen:
 * counted as time unseen, and said. */
void session_check_reexec(struct session *s)
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
	uint64_t now = clock_now_ns(), gap = now > at ? now - at : 0;
	s->snap.unseen_after_exec_s += (double)gap / 1e9;
	log_warn("session",
		 "PID %d ran exec() of its binary again: probes attached anew; its calls "
		 "in the %.1f ms between are not counted",
		 s->attach_pid, (double)gap / 1e6);
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
		snprintf(s->snap.target_end, sizeof(s->snap.target_end),
			 "ran exec() of another program (%s)", now[0] ? now : "unknown");
		return s->snap.target_end;
	}
	session_check_reexec(s);
	return NULL;
}

/* Who is being traced; why tracing ends when a -p target has just exited
 * or exec()ed another program (NULL: it goes on), so that the caller reads
 * the final counters before detaching. */
const char *session_check_target(struct session *s)
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
	session_baseline_old_gone(s);
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
