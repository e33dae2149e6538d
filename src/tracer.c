#include "tracer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guard.h"
#include "log.h"
#include "probes.h"
#include "procs.h"
#include "retop.skel.h"

struct tracer_slot {
	bool used;
	struct probe_set *sets[2]; /* the entry, and every RET site */
	uint64_t orphans;
};

/* A runtime function watched for evidence that calls died. */
struct tracer_watch {
	struct bpf_program *prog;
	struct interlock_verdict v; /* approved once; NULL f: not watched */
	char binary[600];
	int pid;
	struct probe_set *set;
};

struct tracer {
	struct retop *skel;
	bool multi;		   /* uprobe_multi links */
	struct tracer_watch watches[2]; /* runtime.recovery, runtime.goexit1 */
	struct tracer_opts opts;
	struct tracer_slot slots[RETOP_MAX_FUNCS];
	struct retop_func_stats zero; /* for resets; large, so not on the stack */
	/* func_stats, mmapped: BPF's counters read without a syscall. */
	struct retop_func_stats *stats;
	size_t stats_len;
	bool args_used; /* a slot captured arguments since the load */
	struct callers_table callers; /* the caller map as last read */
	struct retop_inflight_key *sweep_keys; /* the sweep's buffers, kept */
	struct retop_inflight_val *sweep_vals;
	size_t sweep_cap;
	bool sweep_warned;
	bool init_pidns; /* BPF's process ids are /proc's: exits can be seen */
};

uint64_t tracer_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Each map sized for what this run can use (bpf/retop.bpf.c): the
 * per-function maps for --max-functions, the in-flight map (allocated per
 * call) for --max-in-flight, the preallocated evidence maps for the
 * goroutines they remember. */
static void tracer_size_maps(struct tracer *t)
{
	struct retop *sk = t->skel;
	uint32_t nf = (uint32_t)t->opts.max_functions;
	int ncpu = libbpf_num_possible_cpus();

	bpf_map__set_max_entries(sk->maps.inflight, t->opts.inflight_max);
	bpf_map__set_max_entries(sk->maps.func_stats, nf);
	/* A race may give a function one more call site per CPU. */
	bpf_map__set_max_entries(sk->maps.caller_stats,
				 nf * (RETOP_CALLER_SITES + 1 + (ncpu > 0 ? (uint32_t)ncpu : 1)));
	bpf_map__set_max_entries(sk->maps.goroutines, TRACER_GOROUTINES);
	bpf_map__set_max_entries(sk->maps.first_entry, TRACER_GOROUTINES);
	bpf_map__set_max_entries(sk->maps.recovered, TRACER_GOROUTINES_MARKED);
	bpf_map__set_max_entries(sk->maps.drop_marks, TRACER_GOROUTINES_MARKED);
}

static int tracer_load_error(int ret, char *err)
{
	if ((ret == -EPERM || ret == -EACCES) && geteuid() == 0)
		return err_set(err, -ret,
			       "the kernel refused retop's BPF programs (%s): see the verifier's log with -vv",
			       strerror(-ret));
	if (ret == -EPERM || ret == -EACCES)
		return err_set(err, -ret,
			       "loading the BPF programs was refused: run retop as root (or with "
			       "CAP_BPF, CAP_PERFMON and CAP_SYS_PTRACE)");
	if (ret == -ENOSYS || ret == -EINVAL || ret == -EOPNOTSUPP)
		return err_set(err, -ret,
			       "this kernel cannot load retop's BPF programs (%s): retop needs "
			       "Linux >= 5.15 with BPF, uprobes and attach cookies",
			       strerror(-ret));
	return err_set(err, -ret, "loading the BPF programs failed: %s (run with -vv for libbpf's log)",
		       strerror(-ret));
}

/* BPF reports process ids of the initial PID namespace; /proc shows those
 * of retop's own.  Only when they are the same does a missing /proc/TGID
 * prove that a process exited (PROC_PID_INIT_INO names the initial one). */
static bool tracer_in_init_pidns(void)
{
	struct stat st;

	return stat("/proc/self/ns/pid", &st) == 0 && st.st_ino == 0xEFFFFFFCu;
}

/* The counters, mapped into retop: the budget reads them every slice and
 * the snapshot every refresh, with no syscall. */
static int tracer_map_stats(struct tracer *t)
{
	long page = sysconf(_SC_PAGESIZE);
	size_t len = bpf_map__max_entries(t->skel->maps.func_stats) *
		     ((sizeof(struct retop_func_stats) + 7) & ~7ul);
	void *p;

	len = (len + (size_t)page - 1) & ~((size_t)page - 1);
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		 bpf_map__fd(t->skel->maps.func_stats), 0);
	if (p == MAP_FAILED)
		return -errno;
	t->stats = p;
	t->stats_len = len;
	return 0;
}

int tracer_open(const struct tracer_opts *opts, struct tracer **out, char *err)
{
	struct tracer *t = calloc(1, sizeof(*t));
	int ret;

	*out = NULL;
	if (!t)
		return err_set(err, ENOMEM, "out of memory");
	t->opts = *opts;
	if (t->opts.max_functions == 0 || t->opts.max_functions > RETOP_MAX_FUNCS)
		t->opts.max_functions = RETOP_MAX_FUNCS;
	if (t->opts.inflight_max == 0)
		t->opts.inflight_max = TRACER_DEFAULT_IN_FLIGHT;
	t->skel = retop__open();
	if (!t->skel) {
		ret = tracer_load_error(-errno, err);
		free(t);
		return ret;
	}
	tracer_size_maps(t);
	t->skel->rodata->g_goid_offset = t->opts.goid_offset;
	t->skel->rodata->callers_enabled = !t->opts.latency_only;
	t->skel->rodata->slow_enabled = !t->opts.latency_only;
	t->skel->rodata->slow_threshold_ns = t->opts.latency_only ? 0 : t->opts.slow_ns;
	t->init_pidns = tracer_in_init_pidns();
	t->multi = probes_multi_supported();
	probes_prepare(t->skel->progs.retop_entry, t->multi);
	probes_prepare(t->skel->progs.retop_return, t->multi);
	probes_prepare(t->skel->progs.retop_recovery, t->multi);
	probes_prepare(t->skel->progs.retop_goexit, t->multi);
	log_debug("tracer", "%s", t->multi ? "uprobe_multi links" : "perf-event uprobe links");
	ret = retop__load(t->skel);
	if (ret) {
		ret = tracer_load_error(ret, err);
		retop__destroy(t->skel);
		free(t);
		return ret;
	}
	ret = tracer_map_stats(t);
	if (ret) {
		err_set(err, -ret, "mapping the BPF counters failed: %s", strerror(-ret));
		retop__destroy(t->skel);
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

static void tracer_slot_unlink(struct tracer_slot *s)
{
	probe_sets_destroy(s->sets, 2);
}

/* Remove the probes of sets[k] of every slot at once, so that their detach
 * costs overlap. */
static void tracer_unlink_all(struct tracer *t, size_t k, struct probe_set **extra)
{
	struct probe_set **all = calloc(RETOP_MAX_FUNCS + 1, sizeof(*all));
	size_t n = 0;

	for (size_t i = 0; i < RETOP_MAX_FUNCS; i++) {
		if (!t->slots[i].sets[k])
			continue;
		if (all)
			all[n++] = t->slots[i].sets[k];
		else
			probe_sets_destroy(&t->slots[i].sets[k], 1);
		t->slots[i].sets[k] = NULL;
	}
	if (extra && *extra) {
		if (all)
			all[n++] = *extra;
		else
			probe_sets_destroy(extra, 1);
		*extra = NULL;
	}
	if (all)
		probe_sets_destroy(all, n);
	free(all);
}

void tracer_close(struct tracer *t)
{
	if (!t)
		return;
	/* Entries first: a call entered is still paired by its RET, and no RET
	 * fires without its entry probe for a reason that is not the detach. */
	for (size_t i = 0; i < RETOP_MAX_FUNCS; i++)
		t->skel->bss->slot_closing[i] = 1;
	tracer_unlink_all(t, 0, &t->watches[0].set);
	tracer_unlink_all(t, 1, &t->watches[1].set);
	if (t->stats)
		munmap(t->stats, t->stats_len);
	callers_table_free(&t->callers);
	retop__destroy(t->skel);
	free(t->sweep_keys);
	free(t->sweep_vals);
	free(t);
}

static int tracer_free_slot(const struct tracer *t)
{
	for (size_t i = 0; i < t->opts.max_functions; i++)
		if (!t->slots[i].used)
			return (int)i;
	return -1;
}

static int tracer_attach_error(int e, const struct func_info *f, const char *binary, uint64_t off,
			       char *err)
{
	if (e == EPERM || e == EACCES)
		return err_set(err, e, "%s: attaching a uprobe at %s:0x%llx was refused: run retop as root",
			       f->name, binary, (unsigned long long)off);
	if (e == ESRCH || e == ENOENT)
		return err_set(err, e, "%s: %s is gone (process exited?)", f->name, binary);
	return err_set(err, e, "%s: attaching a uprobe at %s:0x%llx failed: %s", f->name, binary,
		       (unsigned long long)off, strerror(e));
}

int tracer_rets_in(struct tracer *t, int slot, const struct interlock_verdict *v,
		   const char *binary, int pid, char *err)
{
	struct tracer_slot *s = &t->slots[slot];
	uint64_t off[RETOP_MAX_RET_SITES], cookie[RETOP_MAX_RET_SITES];
	size_t failed, nrets = v->entry_only ? 0 : v->nrets;
	int ret;

	if (!interlock_sealed(v))
		return err_set(err, EPERM, "%s: not approved by the interlock: nothing attached",
			       v && v->f ? v->f->name : "?");
	if (s->sets[1] || !nrets)
		return 0;
	/* A new epoch: RETs without an entry since are told apart again. */
	t->skel->bss->slot_epoch[slot]++;
	for (size_t i = 0; i < nrets; i++) {
		off[i] = v->ret_offsets[i];
		cookie[i] = RETOP_COOKIE(slot, (uint32_t)i);
	}
	ret = probe_set_attach(t->skel->progs.retop_return, t->multi, binary, pid, off, cookie,
			       nrets, &s->sets[1], &failed);
	return ret ? tracer_attach_error(-ret, v->f, binary, off[failed], err) : 0;
}

void tracer_rets_out(struct tracer *t, int slot)
{
	probe_sets_destroy(&t->slots[slot].sets[1], 1);
}

int tracer_entry_in(struct tracer *t, int slot, const struct interlock_verdict *v,
		    const char *binary, int pid, char *err)
{
	struct tracer_slot *s = &t->slots[slot];
	uint64_t off = v->entry_offset, cookie = RETOP_COOKIE(slot, v->entry_site);
	size_t failed;
	int ret;

	if (!interlock_sealed(v))
		return err_set(err, EPERM, "%s: not approved by the interlock: nothing attached",
			       v && v->f ? v->f->name : "?");
	if (s->sets[0])
		return 0;
	t->skel->bss->slot_closing[slot] = 0;
	ret = probe_set_attach(t->skel->progs.retop_entry, t->multi, binary, pid, &off, &cookie, 1,
			       &s->sets[0], &failed);
	return ret ? tracer_attach_error(-ret, v->f, binary, off, err) : 0;
}

void tracer_entry_out(struct tracer *t, int slot)
{
	/* RETs of calls begun before are expected from here on. */
	t->skel->bss->slot_closing[slot] = 1;
	probe_sets_destroy(&t->slots[slot].sets[0], 1);
}

bool tracer_entry_is_in(const struct tracer *t, int slot)
{
	return t->slots[slot].sets[0] != NULL;
}

bool tracer_rets_are_in(const struct tracer *t, int slot)
{
	return t->slots[slot].sets[1] != NULL;
}

void tracer_record(struct tracer *t, int slot, bool on)
{
	/* Calls begun while not timing return with no entry: a new epoch
	 * tells them from the timed ones. */
	if (on && !t->skel->bss->slot_record[slot])
		t->skel->bss->slot_epoch[slot]++;
	t->skel->bss->slot_record[slot] = on;
}

/* The RET probes, then the entry probe: two sets, both or neither.  In
 * this order no entry is recorded whose RET could still be missed, so the
 * attach makes no orphan; the RETs of calls begun before the entry probe
 * are told apart in BPF (before_attach).  Only the offsets the interlock
 * approved reach the kernel. */
static int tracer_attach_sites(struct tracer *t, int slot, const struct interlock_verdict *v,
			       const char *binary, int pid, char *err)
{
	int ret;

	/* A new owner: its callers and slowest calls are its own. */
	t->skel->bss->slot_gen[slot]++;
	t->skel->bss->slot_record[slot] = 1;
	t->skel->bss->gate_len[slot] = 0;
	ret = tracer_rets_in(t, slot, v, binary, pid, err);
	if (!ret)
		ret = tracer_entry_in(t, slot, v, binary, pid, err);
	if (ret)
		tracer_slot_unlink(&t->slots[slot]);
	return ret;
}

static int tracer_read_inflight(struct tracer *t, size_t *out);

/* A call leaves the in-flight map other than by its RET: its arguments, if
 * any were captured, go with it (no RET will take them). */
static void tracer_forget_args(struct tracer *t, const struct retop_inflight_key *key)
{
	if (t->args_used)
		bpf_map_delete_elem(bpf_map__fd(t->skel->maps.inflight_args), key);
}

/* Delete the in-flight calls of a slot (its function was detached: entry
 * probe first, so none is added after this). */
static void tracer_purge_slot(struct tracer *t, int slot)
{
	int fd = bpf_map__fd(t->skel->maps.inflight);
	size_t n = 0;

	if (tracer_read_inflight(t, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++)
		if (t->sweep_keys[i].func_id == (uint32_t)slot &&
		    bpf_map_delete_elem(fd, &t->sweep_keys[i]) == 0)
			tracer_forget_args(t, &t->sweep_keys[i]);
	t->skel->bss->slot_inflight[slot] = 0;
}

uint64_t tracer_untime_inflight(struct tracer *t, int slot)
{
	int fd = bpf_map__fd(t->skel->maps.inflight);
	struct retop_inflight_val val;
	uint64_t n_untimed = 0;
	size_t n = 0;

	if (tracer_read_inflight(t, &n) != 0)
		return 0;
	/* Each call is deleted here or by its RET, never both: the one that
	 * deleted it counts it. */
	for (size_t i = 0; i < n; i++)
		if (t->sweep_keys[i].func_id == (uint32_t)slot &&
		    bpf_map_lookup_and_delete_elem(fd, &t->sweep_keys[i], &val) == 0) {
			__sync_fetch_and_sub(&t->skel->bss->slot_inflight[slot], 1);
			tracer_forget_args(t, &t->sweep_keys[i]);
			n_untimed++;
		}
	return n_untimed;
}

int64_t tracer_slot_inflight(const struct tracer *t, int slot)
{
	return __atomic_load_n(&t->skel->bss->slot_inflight[slot], __ATOMIC_RELAXED);
}

void tracer_gate(struct tracer *t, int slot, uint64_t base, uint64_t len, bool first_on)
{
	memset(t->skel->bss->gate_on[slot], 0, sizeof(t->skel->bss->gate_on[slot]));
	memset(t->skel->bss->gate_n[slot], 0, sizeof(t->skel->bss->gate_n[slot]));
	t->skel->bss->gate_on[slot][0] = first_on ? 1 : 0;
	t->skel->bss->gate_base[slot] = base;
	__atomic_store_n(&t->skel->bss->gate_len[slot], len, __ATOMIC_RELEASE);
}

void tracer_gate_plan(struct tracer *t, int slot, uint64_t k, bool on)
{
	__atomic_store_n(&t->skel->bss->gate_on[slot][k % RETOP_GATE_RING], on ? k + 1 : 0,
			 __ATOMIC_RELEASE);
}

uint64_t tracer_gate_take(struct tracer *t, int slot, uint64_t k)
{
	return __atomic_exchange_n(&t->skel->bss->gate_n[slot][k % RETOP_GATE_RING], 0,
				   __ATOMIC_ACQ_REL);
}

uint64_t tracer_watch_hits(const struct tracer *t)
{
	return __atomic_load_n(&t->skel->bss->watch_hits, __ATOMIC_RELAXED);
}

int tracer_attach(struct tracer *t, const struct interlock_verdict *v, const char *binary, int pid,
		  bool *entry_only, char *err)
{
	int slot = tracer_free_slot(t), ret;
	struct tracer_slot *s;

	*entry_only = false;
	/* Only addresses the interlock approved reach the kernel. */
	if (!interlock_sealed(v))
		return err_set(err, EPERM, "%s: not approved by the interlock: nothing attached",
			       v && v->f ? v->f->name : "?");
	const struct func_info *f = v->f;
	if (slot < 0)
		return err_set(err, ENOSPC, "%s: already tracing %zu functions (--max-functions): "
			       "stop one first", f->name, t->opts.max_functions);
	*entry_only = v->entry_only;
	s = &t->slots[slot];
	/* Counters start from zero before the first probe can fire, and no
	 * call left by the slot's previous function is taken for this one's. */
	ret = tracer_reset(t, slot);
	if (!ret)
		tracer_purge_slot(t, slot);
	if (!ret)
		ret = tracer_attach_sites(t, slot, v, binary, pid, err);
	if (ret)
		return ret;
	s->used = true;
	s->orphans = 0;
	log_info("tracer", "%s: %zu probes at %s:0x%llx, the entry's at +0x%x (slot %d)",
		 f->name, tracer_probe_count(t, slot), binary,
		 (unsigned long long)f->file_offset, f->entry_probe_off, slot);
	return slot;
}

void tracer_detach(struct tracer *t, int slot)
{
	if (slot < 0 || slot >= RETOP_MAX_FUNCS || !t->slots[slot].used)
		return;
	/* The entry probe first (see tracer_close). */
	t->skel->bss->slot_closing[slot] = 1;
	probe_sets_destroy(&t->slots[slot].sets[0], 1);
	probe_sets_destroy(&t->slots[slot].sets[1], 1);
	t->slots[slot].used = false;
}

/* Remember an approved runtime function to watch; tracer_watchers() puts
 * the probe in and takes it out. */
static int tracer_watch(struct tracer *t, struct tracer_watch *w, struct bpf_program *prog,
			const struct interlock_verdict *v, const char *binary, int pid)
{
	if (!interlock_sealed(v) || !v->entry_offset)
		return -EPERM;
	w->prog = prog;
	w->v = *v;
	snprintf(w->binary, sizeof(w->binary), "%s", binary);
	w->pid = pid;
	return 0;
}

int tracer_watch_recovery(struct tracer *t, const struct interlock_verdict *recovery,
			  const char *binary, int pid)
{
	return tracer_watch(t, &t->watches[0], t->skel->progs.retop_recovery, recovery, binary,
			    pid);
}

int tracer_watch_goexit(struct tracer *t, const struct interlock_verdict *goexit,
			const char *binary, int pid)
{
	return tracer_watch(t, &t->watches[1], t->skel->progs.retop_goexit, goexit, binary, pid);
}

int tracer_watchers(struct tracer *t, bool on)
{
	int ret = 0;

	for (size_t i = 0; i < 2; i++) {
		struct tracer_watch *w = &t->watches[i];
		uint64_t off = w->v.entry_offset, cookie = 0;
		size_t failed;
		if (!on) {
			probe_sets_destroy(&w->set, 1);
			continue;
		}
		if (w->set || !interlock_sealed(&w->v))
			continue;
		int r = probe_set_attach(w->prog, t->multi, w->binary, w->pid, &off, &cookie, 1,
					 &w->set, &failed);
		if (r && !ret)
			ret = r;
	}
	return ret;
}

bool tracer_watchers_in(const struct tracer *t)
{
	return t->watches[0].set || t->watches[1].set;
}

size_t tracer_probe_count(const struct tracer *t, int slot)
{
	if (slot < 0 || slot >= RETOP_MAX_FUNCS)
		return 0;
	return probe_set_count(t->slots[slot].sets[0]) + probe_set_count(t->slots[slot].sets[1]);
}

int tracer_read(struct tracer *t, int slot, struct retop_func_stats *out)
{
	if (slot < 0 || (size_t)slot >= t->opts.max_functions)
		return -EINVAL;
	/* Like a lookup of the array: each counter read whole, the row not
	 * at one instant (BPF adds to it meanwhile). */
	memcpy(out, &t->stats[slot], sizeof(*out));
	return 0;
}

int tracer_read_counters(struct tracer *t, int slot, struct retop_func_stats *out)
{
	if (slot < 0 || (size_t)slot >= t->opts.max_functions)
		return -EINVAL;
	memcpy(out, &t->stats[slot], offsetof(struct retop_func_stats, hist));
	return 0;
}

uint64_t tracer_evidence_lost(const struct tracer *t)
{
	return __atomic_load_n(&t->skel->bss->evidence_lost, __ATOMIC_RELAXED);
}

int tracer_reset(struct tracer *t, int slot)
{
	__u32 key = (__u32)slot;

	t->slots[slot].orphans = 0;
	if (bpf_map__update_elem(t->skel->maps.func_stats, &key, sizeof(key), &t->zero,
				 sizeof(t->zero), BPF_ANY))
		return -errno;
	callers_purge(bpf_map__fd(t->skel->maps.caller_stats), (uint32_t)slot);
	tracer_slow_rearm(t, slot);
	tracer_args_set(t, slot, NULL);
	t->skel->bss->caller_sites[slot] = 0;
	return 0;
}

int tracer_slow_fd(struct tracer *t)
{
	return bpf_map__fd(t->skel->maps.slow_events);
}

const uint32_t *tracer_slot_gens(struct tracer *t)
{
	return t->skel->bss->slot_gen;
}

void tracer_slow_rearm(struct tracer *t, int slot)
{
	if (slot >= 0 && slot < RETOP_MAX_FUNCS)
		memset(t->skel->bss->slow_top[slot], 0, sizeof(t->skel->bss->slow_top[slot]));
}

/* Delete the argument records of slot's calls: with capture off, no RET
 * of the slot takes them. */
static void tracer_args_purge(struct tracer *t, int slot)
{
	int fd = bpf_map__fd(t->skel->maps.inflight_args);
	struct retop_inflight_key key, next, *prev = NULL;

	while (bpf_map_get_next_key(fd, prev, &next) == 0) {
		key = next;
		if (key.func_id == (uint32_t)slot && bpf_map_delete_elem(fd, &key) == 0) {
			prev = NULL; /* deleted: start again */
			continue;
		}
		prev = &key;
	}
}

void tracer_args_set(struct tracer *t, int slot, const struct retop_args_spec *spec)
{
	static const struct retop_args_spec off;
	bool was_on;

	if (slot < 0 || slot >= RETOP_MAX_FUNCS)
		return;
	was_on = t->skel->bss->args_spec[slot].on;
	t->skel->bss->args_spec[slot] = spec ? *spec : off;
	if (spec && spec->on)
		t->args_used = true;
	if (was_on && !(spec && spec->on))
		tracer_args_purge(t, slot);
}

int tracer_callers_refresh(struct tracer *t)
{
	return callers_table_read(bpf_map__fd(t->skel->maps.caller_stats), &t->callers);
}

int tracer_read_callers(struct tracer *t, int slot, const struct func_index *idx, uint64_t bias,
			struct callers_view *out)
{
	if (slot < 0 || slot >= RETOP_MAX_FUNCS)
		return -EINVAL;
	return callers_view_of(&t->callers, (uint32_t)slot, t->skel->bss->slot_gen[slot], idx,
			       bias, out);
}

/* One in-flight call, as the sweep reads it. */
struct sweep_entry {
	struct retop_inflight_key key;
	struct retop_inflight_val val;
};

/* Read the whole in-flight map, in batches: a syscall per entry would cost
 * a second at 262,144 calls in flight. */
static int tracer_read_inflight(struct tracer *t, size_t *out)
{
	int fd = bpf_map__fd(t->skel->maps.inflight);
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 token = 0;
	size_t n = 0;
	bool first = true, grow = false;

	for (;;) {
		if (grow || t->sweep_cap - n < 1024) {
			size_t cap = t->sweep_cap ? 2 * t->sweep_cap : 8192;
			struct retop_inflight_key *k = realloc(t->sweep_keys, cap * sizeof(*k));
			if (k)
				t->sweep_keys = k;
			struct retop_inflight_val *v = realloc(t->sweep_vals, cap * sizeof(*v));
			if (v)
				t->sweep_vals = v;
			if (!k || !v)
				return -ENOMEM;
			t->sweep_cap = cap;
			grow = false;
		}
		__u32 count = (__u32)(t->sweep_cap - n);
		int ret = bpf_map_lookup_batch(fd, first ? NULL : &token, &token, t->sweep_keys + n,
					       t->sweep_vals + n, &count, &opts);
		int e = ret ? errno : 0;
		first = false;
		n += count;
		if (e == ENOENT)
			break;
		if (e == ENOSPC && count == 0 && t->sweep_cap < (1u << 26)) {
			grow = true; /* one bucket holds more than fits: grow, retry */
			continue;
		}
		if (e)
			return -e;
	}
	*out = n;
	return 0;
}

/* By goroutine, the latest call first. */
static int sweep_entry_cmp(const void *a, const void *b)
{
	const struct sweep_entry *x = a, *y = b;

	if (x->key.tgid != y->key.tgid)
		return x->key.tgid < y->key.tgid ? -1 : 1;
	if (x->key.g != y->key.g)
		return x->key.g < y->key.g ? -1 : 1;
	if (x->val.start_ns != y->val.start_ns)
		return x->val.start_ns > y->val.start_ns ? -1 : 1;
	return 0;
}

/* Is the process still there?  Asked once per process and sweep. */
struct sweep_procs {
	uint32_t tgid[64];
	bool alive[64];
	size_t n;
};

static bool sweep_proc_alive(struct sweep_procs *p, uint32_t tgid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->tgid[i] == tgid)
			return p->alive[i];
	bool alive = procs_alive((int)tgid);
	if (p->n < 64) {
		p->tgid[p->n] = tgid;
		p->alive[p->n++] = alive;
	}
	return alive;
}

/* Evidence seen between a call's start and the moment the sweep began
 * reading the map: the call was still in the map after that moment, so the
 * evidence cannot be its own RET.  Evidence from later (the map is read
 * bucket by bucket, the goroutine record after it) may be that call's own
 * return, followed by a new call in the same frame: it waits for the next
 * sweep. */
static bool sweep_evidence(uint64_t at, uint64_t start, uint64_t read_ns)
{
	return at > start && at < read_ns;
}

/* What proves a call dead, short of the timeout (retop.h): its process
 * exited, its goroutine exited, or its goroutine ran at its depth or
 * shallower after the call began (a RET, or an entry still in flight). */
static bool sweep_proven_dead(const struct sweep_entry *e, const struct retop_goroutine_val *g,
			      bool have_g, uint64_t later_min_depth, uint64_t read_ns)
{
	uint64_t start = e->val.start_ns, depth = e->key.depth;

	if (later_min_depth <= depth)
		return true;
	if (!have_g)
		return false;
	return sweep_evidence(g->exit_ns, start, read_ns) ||
	       (sweep_evidence(g->ret_ns, start, read_ns) && g->ret_depth <= depth) ||
	       (sweep_evidence(g->min_ns, start, read_ns) && g->min_depth <= depth);
}

/* Delete a call found dead; it counts as an orphan only if this delete won
 * the race against its RET, and only if the entry is still the call that
 * was judged: a newer call in the same frame (same key) is put back. */
static void sweep_delete(struct tracer *t, int fd, const struct sweep_entry *e, bool orphan)
{
	struct retop_inflight_val now;

	if (bpf_map_lookup_and_delete_elem(fd, &e->key, &now) != 0) {
		/* Kernels before 5.14 cannot on hash maps: check, then delete. */
		if (errno == ENOENT || bpf_map_lookup_elem(fd, &e->key, &now) != 0 ||
		    now.start_ns != e->val.start_ns || bpf_map_delete_elem(fd, &e->key) != 0)
			return;
	}
	__sync_fetch_and_sub(&t->skel->bss->slot_inflight[e->key.func_id], 1);
	if (now.start_ns != e->val.start_ns) {
		/* The newer call keeps its arguments. */
		if (bpf_map_update_elem(fd, &e->key, &now, BPF_NOEXIST) == 0)
			__sync_fetch_and_add(&t->skel->bss->slot_inflight[e->key.func_id], 1);
		return;
	}
	tracer_forget_args(t, &e->key);
	if (orphan)
		t->slots[e->key.func_id].orphans++;
}

/* Judge one goroutine's calls, [first, end) of the sorted entries. */
static void sweep_goroutine(struct tracer *t, struct sweep_entry *all, size_t first, size_t end,
			    struct sweep_procs *procs, uint64_t now, uint64_t read_ns,
			    struct tracer_inflight *inflight)
{
	int fd = bpf_map__fd(t->skel->maps.inflight);
	struct retop_goroutine_key gk = {.tgid = all[first].key.tgid, .g = all[first].key.g};
	struct retop_goroutine_val gv;
	bool have_g = bpf_map__lookup_elem(t->skel->maps.goroutines, &gk, sizeof(gk), &gv,
					   sizeof(gv), 0) == 0;
	bool gone = t->init_pidns && !sweep_proc_alive(procs, gk.tgid);
	uint64_t later_min = UINT64_MAX;

	for (size_t i = first; i < end; i++) {
		struct sweep_entry *e = &all[i];
		uint32_t slot = e->key.func_id;
		uint64_t age = now > e->val.start_ns ? now - e->val.start_ns : 0;
		bool stale = slot >= t->opts.max_functions || !t->slots[slot].used;
		bool dead = gone || age >= t->opts.orphan_timeout_ns ||
			    sweep_proven_dead(e, &gv, have_g, later_min, read_ns);

		/* A later call at this depth or shallower proves the earlier
		 * ones dead only if it began before the read did (see
		 * sweep_evidence). */
		if (e->key.depth < later_min && e->val.start_ns < read_ns)
			later_min = e->key.depth;
		if (stale || dead) {
			sweep_delete(t, fd, e, !stale);
			continue;
		}
		inflight[slot].count++;
		if (age > inflight[slot].oldest_ns)
			inflight[slot].oldest_ns = age;
	}
}

int tracer_sweep(struct tracer *t, struct tracer_inflight *inflight)
{
	struct sweep_procs procs = {.n = 0};
	struct sweep_entry *all;
	uint64_t now, read_ns;
	size_t n = 0;
	int ret;

	memset(inflight, 0, t->opts.max_functions * sizeof(*inflight));
	read_ns = tracer_now_ns();
	ret = tracer_read_inflight(t, &n);
	now = tracer_now_ns();
	all = ret ? NULL : calloc(n ? n : 1, sizeof(*all));
	if (!all) {
		if (!t->sweep_warned)
			log_warn("tracer", "in-flight calls not swept (their counts are stale): %s",
				 strerror(ret ? -ret : ENOMEM));
		t->sweep_warned = true;
		return ret ? ret : -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		all[i] = (struct sweep_entry){t->sweep_keys[i], t->sweep_vals[i]};
	qsort(all, n, sizeof(*all), sweep_entry_cmp);
	for (size_t i = 0, end; i < n; i = end) {
		for (end = i + 1; end < n && all[end].key.tgid == all[i].key.tgid &&
				  all[end].key.g == all[i].key.g;
		     end++)
			;
		sweep_goroutine(t, all, i, end, &procs, now, read_ns, inflight);
	}
	free(all);
	for (size_t i = 0; i < t->opts.max_functions; i++)
		inflight[i].orphans = t->slots[i].orphans;
	return 0;
}

uint64_t tracer_inflight_base_bytes(uint32_t n)
{
	/* One 16-byte bucket per entry, rounded up to a power of two: what the
	 * kernel allocates at load, whatever is in flight. */
	uint64_t buckets = 1;

	while (buckets < n)
		buckets <<= 1;
	return 16 * buckets;
}

uint64_t tracer_inflight_call_bytes(void)
{
	/* The kernel's htab_elem header (48 bytes on 64-bit), key and value
	 * rounded to 8, and the allocator's list node (8) that a map without
	 * preallocation charges per element.  Checked against the memlock of
	 * fdinfo with 100,100 calls held (tests/integration/trace-stress.sh). */
	return 48 + ((sizeof(struct retop_inflight_key) + 7) & ~7ul) +
	       ((sizeof(struct retop_inflight_val) + 7) & ~7ul) + 8;
}

uint64_t tracer_inflight_room_bytes(const struct tracer *t)
{
	int64_t live = 0;

	for (size_t i = 0; i < t->opts.max_functions; i++)
		live += tracer_slot_inflight(t, (int)i);
	if (live < 0)
		live = 0;
	if ((uint64_t)live >= t->opts.inflight_max)
		return 0;
	return (t->opts.inflight_max - (uint64_t)live) * tracer_inflight_call_bytes();
}

uint64_t tracer_map_bytes(const struct tracer *t)
{
	struct bpf_map *map;
	uint64_t sum = 0;

	if (!t || !t->skel)
		return 0;
	bpf_object__for_each_map(map, t->skel->obj)
		sum += guard_fd_memlock(bpf_map__fd(map));
	return sum;
}
