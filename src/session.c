#define _GNU_SOURCE /* ppoll */
#include "session_internal.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "bigmem.h"
#include "clock.h"
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
	    .pid = o->pid,
	    .exe = o->exe,
	    .no_dwarf = o->no_dwarf,
	    .latency_only = o->latency_only,
	    .args_pattern = o->args_pattern,
	    .max_functions = (size_t)o->max_functions,
	    .orphan_timeout_s = o->orphan_timeout_s,
	    .max_in_flight = (uint32_t)o->max_in_flight,
	    .sdk_url = o->sdk_url,
	    .max_duration_s = o->max_duration_s,
	    .max_memory = o->max_memory,
	    .budget_pct = o->budget_pct,
	    .budget_hits = o->budget_hits,
	    .slow_ns = o->slow_ns,
	    .entry_probe_first = o->entry_probe_first,
	    .time_split = o->time_split,
	    .baseline_s = o->baseline_s,
	};
}

/* An SDK confirms the index's facts; for -x only when asked for, since the
 * default address may belong to another program. */
static void session_open_sdk(struct session *s)
{
	if (!s->opts.sdk_url && !s->opts.pid)
		return;
	if (sdk_facts_open(s->idx, s->opts.sdk_url, s->opts.pid, &s->sdk) != 0 ||
	    !s->sdk->status[0])
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
	s->callers_all = true;
	s->judge.entry_probe_first = opts->entry_probe_first;
	s->funcs = bigmem_calloc(RETOP_MAX_FUNCS, sizeof(*s->funcs));
	s->snap.funcs = bigmem_calloc(RETOP_MAX_FUNCS, sizeof(*s->snap.funcs));
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

int session_start_tracing(struct session *s, char *err)
{
	if (s->tracer)
		return 0;
	int ret = session_open_tracer(s, err);
	if (ret)
		return ret;
	session_calibrate(s);
	s->start_ns = s->last_ns = s->cpu_ns = clock_now_ns();
	guard_arm(&s->guard, s->opts.max_duration_s, s->start_ns);
	s->last_cpu_s = session_cpu_seconds();
	return 0;
}

void session_func_release(struct session_func *sf)
{
	slowest_clear(&sf->slowest);
	session_forget_marks(sf);
	session_baseline_drop(sf);
	free(sf->hist_buf[0]);
	free(sf->hist_buf[1]);
	free(sf->errs);
	sf->hist_buf[0] = sf->hist_buf[1] = NULL;
	sf->errs = NULL;
}

void session_close(struct session *s)
{
	if (!s)
		return;
	govern_close(&s->gov);
	hitcost_close(&s->hitcost);
	slowest_close(s->slow);
	tracer_close(s->tracer);
	sdk_facts_close(s->sdk);
	for (size_t k = 0; k < s->nimages; k++)
		if (!s->images[k].shared)
			funcs_free(s->images[k].idx);
	if (!s->nimages)
		funcs_free(s->idx);
	for (size_t i = 0; s->funcs && i < RETOP_MAX_FUNCS; i++)
		session_func_release(&s->funcs[i]);
	free(s->funcs);
	snapshot_funcs_free(s->snap.funcs, RETOP_MAX_FUNCS);
	free(s);
}

/* One slice of the overhead budget (and the -p target's exec() seen);
 * when the next is due. */
static uint64_t session_tick(struct session *s)
{
	session_check_reexec(s);
	session_baseline_due(s, clock_now_ns());
	return govern_tick(s, clock_now_ns());
}

/* What the clock waits on: the face's fd, BPF's wake-ups (the tracer may
 * be gone: asked each time). */
enum session_sleep { SLEPT, SLEEP_FD, SLEEP_WOKEN, SLEEP_INTR };

/* Woken: *why says by what (tracer_wake_drain). */
static enum session_sleep session_sleep(struct session *s, uint64_t deadline_ns, int fd,
					unsigned *why)
{
	uint64_t now = clock_now_ns();
	struct pollfd p[2];
	nfds_t n = 0;
	int wfd = s && s->tracer ? tracer_wake_fd(s->tracer) : -1;

	if (deadline_ns <= now)
		return SLEPT;
	struct timespec ts = {.tv_sec = (time_t)((deadline_ns - now) / 1000000000ull),
			      .tv_nsec = (long)((deadline_ns - now) % 1000000000ull)};
	if (fd >= 0)
		p[n++] = (struct pollfd){.fd = fd, .events = POLLIN};
	if (wfd >= 0)
		p[n++] = (struct pollfd){.fd = wfd, .events = POLLIN};
	int r = ppoll(p, n, &ts, NULL);
	if (r < 0)
		return errno == EINTR ? SLEEP_INTR : SLEPT;
	if (r == 0)
		return SLEPT;
	if (fd >= 0 && (p[0].revents & POLLIN))
		return SLEEP_FD;
	if (wfd >= 0 && (p[n - 1].revents & POLLIN)) {
		*why = tracer_wake_drain(s->tracer);
		return SLEEP_WOKEN;
	}
	return SLEPT;
}

/* BPF woke the clock (why: tracer_wake_drain): the governor ticks now. */
static void session_woken(struct session *s, unsigned why)
{
	govern_wake(&s->gov, why);
	s->next_tick = 0;
}

/* BPF's wake-up read without waiting, then the governor's tick if due. */
void session_tick_between(struct session *s)
{
	int wfd = s->tracer ? tracer_wake_fd(s->tracer) : -1;
	struct pollfd p = {.fd = wfd, .events = POLLIN};

	if (!s->tracer)
		return;
	if (wfd >= 0 && poll(&p, 1, 0) == 1 && (p.revents & POLLIN))
		session_woken(s, tracer_wake_drain(s->tracer));
	/* The governor's only: an exec() or a baseline waits for the list. */
	if (clock_now_ns() >= s->next_tick)
		s->next_tick = govern_tick(s, clock_now_ns());
}

enum session_wake session_run(struct session *s, uint64_t due_ns, int fd)
{
	for (;;) {
		uint64_t now = clock_now_ns();
		if (now >= due_ns)
			return SESSION_DUE;
		if (s && now >= s->next_tick) {
			s->next_tick = session_tick(s);
			continue;
		}
		uint64_t until = s && s->next_tick < due_ns ? s->next_tick : due_ns;
		unsigned why = 0;
		switch (session_sleep(s, until, fd, &why)) {
		case SLEEP_FD:
			return SESSION_FD;
		case SLEEP_INTR:
			return SESSION_INTR;
		case SLEEP_WOKEN: /* the hits rose, an exec(), a sampled slice full */
			session_woken(s, why);
			break;
		case SLEPT:
			break;
		}
	}
}

uint64_t session_next_due(uint64_t due_ns, uint64_t period_ns)
{
	uint64_t now = clock_now_ns();

	return due_ns + period_ns > now ? due_ns + period_ns : now + period_ns;
}

void session_extend(struct session *s)
{
	guard_extend(&s->guard, clock_now_ns());
}

int session_launch(const struct cli_options *o, enum session_launch_mode mode, struct session **out,
		   char *trace_err)
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

const struct func_index *session_index(const struct session *s)
{
	return s->idx;
}

int session_resolve(struct session *s, const struct func_info *f, char *why)
{
	struct func_info *g = session_own(s, f);

	if (!g)
		return err_set(why, EINVAL, "not a function of the target's index");
	return interlock_judge(s->idx, g, &s->judge, why);
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
}

size_t session_probes_at(const struct session *s, size_t i)
{
	const struct session_func *sf = &s->funcs[i];

	return sf->slot >= 0 ? tracer_probe_count(s->tracer, sf->slot) : 0;
}
