/* The BPF side loaded and closed: each map sized (bpf_mem), the programs
 * loaded for the kernel's link type, the counters mapped, exec() watched,
 * the wake-ups the engine polls; at the close every probe out at once. */
#include "tracer_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bpf_mem.h"
#include "log.h"
#include "probes.h"

/* Each map sized as bpf_mem says, before the load. */
static void tracer_size_maps(struct tracer *t)
{
	struct retop *sk = t->skel;
	struct bpf_mem_sizes z;

	bpf_mem_size_maps(t->opts.inflight_max, t->opts.max_functions, libbpf_num_possible_cpus(),
			  &z);
	if (!t->opts.split || !t->opts.split_g_m)
		bpf_mem_size_split_off(&z);
	else if (t->opts.split_sched && t->opts.split_g_status && t->opts.split_g_waitreason)
		bpf_mem_size_sched_on(&z);
	bpf_map__set_max_entries(sk->maps.inflight, z.inflight);
	bpf_map__set_max_entries(sk->maps.inflight_spill, z.inflight_spill);
	sk->rodata->spill_enabled = z.spill;
	bpf_map__set_max_entries(sk->maps.func_stats, z.func_stats);
	bpf_map__set_max_entries(sk->maps.split_stats, z.split_stats);
	bpf_map__set_max_entries(sk->maps.split_calls, z.split_calls);
	bpf_map__set_max_entries(sk->maps.sched_gs, z.sched_gs);
	bpf_map__set_max_entries(sk->maps.sched_threads, z.sched_gs);
	bpf_map__set_max_entries(sk->maps.func_hist, z.func_hist);
	bpf_map__set_max_entries(sk->maps.caller_stats, z.caller_stats);
	bpf_map__set_max_entries(sk->maps.error_stats, z.error_stats);
	bpf_map__set_max_entries(sk->maps.goroutines, z.goroutines);
	bpf_map__set_max_entries(sk->maps.first_entry, z.first_entry);
	bpf_map__set_max_entries(sk->maps.recovered, z.recovered);
	bpf_map__set_max_entries(sk->maps.drop_marks, z.drop_marks);
}

static int tracer_load_error(int ret, char *err)
{
	if ((ret == -EPERM || ret == -EACCES) && geteuid() == 0)
		return err_set(
		    err, -ret,
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
	return err_set(err, -ret,
		       "loading the BPF programs failed: %s (run with -vv for libbpf's log)",
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

/* An mmapable array map, mapped into retop: NULL if it cannot be. */
static void *tracer_map_array(struct bpf_map *map, size_t value_size, size_t *len)
{
	*len = bpf_mem_array_bytes(bpf_map__max_entries(map), value_size, sysconf(_SC_PAGESIZE));
	void *p = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

/* The counters, mapped into retop: the budget reads them every slice and
 * the snapshot every refresh, with no syscall; and the time split's, read
 * every refresh. */
static int tracer_map_stats(struct tracer *t)
{
	t->stats = tracer_map_array(t->skel->maps.func_stats, sizeof(struct retop_func_stats),
				    &t->stats_len);
	if (!t->stats)
		return -errno;
	t->split = tracer_map_array(t->skel->maps.split_stats, sizeof(struct retop_split_stats),
				    &t->split_len);
	return 0;
}

/* A wake-up: why it came (tracer_wake_drain). */
static int tracer_wake_event(void *ctx, void *data, size_t len)
{
	struct tracer *t = ctx;
	uint64_t why = RETOP_WAKE_BUDGET;

	if (len >= sizeof(why))
		memcpy(&why, data, sizeof(why));
	t->wake_why |= (unsigned)why;
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
	t->fixed_map_bytes = UINT64_MAX;
	/* The slot after the traced functions' is the calibration's (retop.h). */
	if (t->opts.max_functions == 0 || t->opts.max_functions > RETOP_MAX_TRACED)
		t->opts.max_functions = RETOP_MAX_TRACED;
	if (t->opts.inflight_max == 0)
		t->opts.inflight_max = TRACER_DEFAULT_IN_FLIGHT;
	t->skel = retop__open();
	if (!t->skel) {
		ret = tracer_load_error(-errno, err);
		goto cleanup;
	}
	tracer_size_maps(t);
	t->skel->rodata->g_goid_offset = t->opts.goid_offset;
	t->skel->rodata->split_enabled = t->opts.split && t->opts.split_g_m;
	t->skel->rodata->split_g_m = t->opts.split_g_m;
	t->skel->rodata->split_m_p = t->opts.split_m_p;
	t->skel->rodata->split_p_tick = t->opts.split_p_tick;
	t->skel->rodata->split_m_preempt = t->opts.split_m_preempt;
	t->skel->rodata->split_g_track = t->opts.split_g_track;
	t->skel->rodata->split_sched = t->skel->rodata->split_enabled && t->opts.split_sched &&
				       t->opts.split_g_status && t->opts.split_g_waitreason;
	t->skel->rodata->split_g_status = t->opts.split_g_status;
	t->skel->rodata->split_g_waitreason = t->opts.split_g_waitreason;
	t->skel->rodata->cal_slot = (__u32)t->opts.max_functions;
	t->skel->rodata->callers_enabled = !t->opts.latency_only;
	t->skel->rodata->slow_enabled = !t->opts.latency_only;
	t->skel->rodata->slow_threshold_ns = t->opts.latency_only ? 0 : t->opts.slow_ns;
	t->init_pidns = tracer_in_init_pidns();
	t->multi = probes_multi_supported();
	probes_prepare(t->skel->progs.retop_entry, t->multi);
	probes_prepare(t->skel->progs.retop_return, t->multi);
	probes_prepare(t->skel->progs.retop_recovery, t->multi);
	probes_prepare(t->skel->progs.retop_goexit, t->multi);
	probes_prepare(t->skel->progs.retop_inline, t->multi);
	probes_prepare(t->skel->progs.retop_sched_run, t->multi);
	probes_prepare(t->skel->progs.retop_sched_stop, t->multi);
	log_debug("tracer", "%s", t->multi ? "uprobe_multi links" : "perf-event uprobe links");
	ret = retop__load(t->skel);
	if (ret) {
		ret = tracer_load_error(ret, err);
		goto cleanup;
	}
	/* The calibration's calls are timed like any traced function's. */
	t->skel->bss->slot_record[t->opts.max_functions] = 1;
	/* Without it, the calls of a process that exec()s wait for the
	 * timeout; everything else works. */
	t->exec_link = bpf_program__attach(t->skel->progs.retop_exec);
	if (!t->exec_link)
		log_info("tracer", "exec() not watched: %s", strerror(errno));
	ret = tracer_map_stats(t);
	if (ret) {
		err_set(err, -ret, "mapping the BPF counters failed: %s", strerror(-ret));
		goto cleanup;
	}
	/* Without it the engine ticks ten times a second, as always. */
	t->wake_rb =
	    ring_buffer__new(bpf_map__fd(t->skel->maps.wakeups), tracer_wake_event, t, NULL);
	*out = t;
	return 0;
cleanup:
	bpf_link__destroy(t->exec_link);
	retop__destroy(t->skel);
	free(t);
	return ret;
}

int tracer_wake_fd(const struct tracer *t)
{
	return t && t->wake_rb ? ring_buffer__epoll_fd(t->wake_rb) : -1;
}

unsigned tracer_wake_drain(struct tracer *t)
{
	if (!t || !t->wake_rb)
		return 0;
	t->wake_why = 0;
	ring_buffer__consume(t->wake_rb);
	return t->wake_why;
}

void tracer_wake_arm(struct tracer *t, uint64_t hits)
{
	uint64_t at = 0;

	if (!t || !t->wake_rb)
		return;
	if (hits)
		at = __atomic_load_n(&t->skel->bss->budget_hits, __ATOMIC_RELAXED) + hits;
	__atomic_store_n(&t->skel->bss->wake_at, at, __ATOMIC_RELEASE);
}

int tracer_watch_exec(struct tracer *t, int pid)
{
	__u32 tgid = (__u32)pid;
	__u64 never = 0;

	if (!t->exec_link)
		return -ENOTSUP;
	if (bpf_map__update_elem(t->skel->maps.execs, &tgid, sizeof(tgid), &never, sizeof(never),
				 BPF_NOEXIST) != 0 &&
	    errno != EEXIST)
		return -errno;
	return 0;
}

uint64_t tracer_exec_ns(struct tracer *t, int pid)
{
	__u32 tgid = (__u32)pid;
	__u64 when = 0, seq = __atomic_load_n(&t->skel->bss->exec_seq, __ATOMIC_ACQUIRE);

	if (pid == t->exec_pid && seq == t->exec_seq)
		return t->exec_when;
	if (bpf_map__lookup_elem(t->skel->maps.execs, &tgid, sizeof(tgid), &when, sizeof(when), 0))
		return 0;
	t->exec_pid = pid;
	t->exec_seq = seq;
	t->exec_when = when;
	return when;
}

void tracer_close(struct tracer *t)
{
	if (!t)
		return;
	tracer_flush(t);
	/* Entries first: a call entered is still paired by its RET, and no RET
	 * fires without its entry probe for a reason that is not the detach. */
	for (size_t i = 0; i < RETOP_MAX_FUNCS; i++)
		t->skel->bss->slot_closing[i] = 1;
	tracer_unlink_all(t, TRACER_ENTRY, TRACER_WATCH_RECOVERY);
	tracer_unlink_all(t, TRACER_MARKS, TRACER_WATCH_RUN);
	tracer_unlink_all(t, TRACER_MARKS, TRACER_WATCH_STOP);
	tracer_unlink_all(t, TRACER_RETS, TRACER_WATCH_GOEXIT);
	tracer_closing_stop(t);
	bpf_link__destroy(t->exec_link);
	ring_buffer__free(t->wake_rb);
	if (t->stats)
		munmap(t->stats, t->stats_len);
	if (t->split)
		munmap(t->split, t->split_len);
	callers_table_free(&t->callers);
	retop__destroy(t->skel);
	free(t->pending.sets);
	for (size_t i = 0; i < TRACER_CLOSING_MAX; i++)
		free(t->closing[i].batch.sets);
	free(t->sweep_keys);
	free(t->sweep_vals);
	free(t);
}

uint64_t tracer_map_bytes(struct tracer *t)
{
	struct bpf_map *map;
	uint64_t sum = 0, fixed = 0;

	if (!t || !t->skel)
		return 0;
	/* Read at every refresh: /proc/self/fdinfo is three syscalls a map,
	 * so only the maps that grow with their elements are read again. */
	bpf_object__for_each_map (map, t->skel->obj) {
		bool grows = bpf_map__map_flags(map) & BPF_F_NO_PREALLOC;
		if (grows)
			sum += bpf_mem_fd_memlock(bpf_map__fd(map));
		else if (t->fixed_map_bytes == UINT64_MAX)
			fixed += bpf_mem_fd_memlock(bpf_map__fd(map));
	}
	if (t->fixed_map_bytes != UINT64_MAX)
		return sum + t->fixed_map_bytes;
	if (fixed) /* loaded: it stays */
		t->fixed_map_bytes = fixed;
	return sum + fixed;
}
