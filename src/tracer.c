#include "tracer.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "probes.h"
#include "retop.skel.h"

struct tracer_slot {
	bool used;
	struct probe_set *sets[2]; /* the entry, and every RET site */
	uint64_t orphans;
};

struct tracer {
	struct retop *skel;
	bool multi;		   /* uprobe_multi links */
	struct probe_set *recovery; /* runtime.recovery of the target */
	struct tracer_opts opts;
	struct tracer_slot slots[RETOP_MAX_FUNCS];
	struct retop_func_stats zero; /* for resets; large, so not on the stack */
};

uint64_t tracer_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
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
		t->opts.inflight_max = 65536;
	t->skel = retop__open();
	if (!t->skel) {
		ret = tracer_load_error(-errno, err);
		free(t);
		return ret;
	}
	bpf_map__set_max_entries(t->skel->maps.inflight, t->opts.inflight_max);
	t->multi = probes_multi_supported();
	probes_prepare(t->skel->progs.retop_entry, t->multi);
	probes_prepare(t->skel->progs.retop_return, t->multi);
	probes_prepare(t->skel->progs.retop_recovery, t->multi);
	log_debug("tracer", "%s", t->multi ? "uprobe_multi links" : "perf-event uprobe links");
	ret = retop__load(t->skel);
	if (ret) {
		ret = tracer_load_error(ret, err);
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

void tracer_close(struct tracer *t)
{
	struct probe_set **all;
	size_t n = 0;

	if (!t)
		return;
	/* Every set at once, so that their detach costs overlap. */
	all = calloc(2 * RETOP_MAX_FUNCS + 1, sizeof(*all));
	for (size_t i = 0; i < RETOP_MAX_FUNCS; i++) {
		for (size_t k = 0; k < 2; k++) {
			if (!t->slots[i].sets[k])
				continue;
			if (all) {
				all[n++] = t->slots[i].sets[k];
				t->slots[i].sets[k] = NULL;
			}
		}
		if (!all)
			tracer_slot_unlink(&t->slots[i]);
	}
	if (all && t->recovery)
		all[n++] = t->recovery;
	else if (t->recovery)
		probe_sets_destroy(&t->recovery, 1);
	probe_sets_destroy(all, n);
	free(all);
	retop__destroy(t->skel);
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

/* The entry probe, then the RET probes: two sets, both or neither. */
static int tracer_attach_sites(struct tracer *t, int slot, const struct interlock_verdict *v,
			       const char *binary, int pid, char *err)
{
	struct tracer_slot *s = &t->slots[slot];
	uint64_t off[RETOP_MAX_RET_SITES], cookie[RETOP_MAX_RET_SITES];
	const struct func_info *f = v->f;
	size_t failed, nrets = v->entry_only ? 0 : v->nrets;
	int ret;

	off[0] = v->entry_offset;
	cookie[0] = RETOP_COOKIE(slot, RETOP_SITE_ENTRY);
	ret = probe_set_attach(t->skel->progs.retop_entry, t->multi, binary, pid, off, cookie, 1,
			       &s->sets[0], &failed);
	if (ret)
		return tracer_attach_error(-ret, f, binary, off[0], err);
	if (nrets == 0)
		return 0;
	for (size_t i = 0; i < nrets; i++) {
		off[i] = v->ret_offsets[i];
		cookie[i] = RETOP_COOKIE(slot, (uint32_t)i);
	}
	ret = probe_set_attach(t->skel->progs.retop_return, t->multi, binary, pid, off, cookie,
			       nrets, &s->sets[1], &failed);
	if (ret) {
		tracer_slot_unlink(s);
		return tracer_attach_error(-ret, f, binary, off[failed], err);
	}
	return 0;
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
	/* Counters start from zero before the first probe can fire. */
	ret = tracer_reset(t, slot);
	if (!ret)
		ret = tracer_attach_sites(t, slot, v, binary, pid, err);
	if (ret)
		return ret;
	s->used = true;
	s->orphans = 0;
	log_info("tracer", "%s: %zu probes at %s:0x%llx (slot %d)", f->name,
		 tracer_probe_count(t, slot), binary,
		 (unsigned long long)f->file_offset, slot);
	return slot;
}

void tracer_detach(struct tracer *t, int slot)
{
	if (slot < 0 || slot >= RETOP_MAX_FUNCS || !t->slots[slot].used)
		return;
	tracer_slot_unlink(&t->slots[slot]);
	t->slots[slot].used = false;
}

int tracer_watch_recovery(struct tracer *t, const struct interlock_verdict *recovery,
			  const char *binary, int pid)
{
	uint64_t off = recovery->entry_offset, cookie = 0;
	size_t failed;

	if (!interlock_sealed(recovery))
		return -EPERM;
	if (t->recovery || !off)
		return 0;
	return probe_set_attach(t->skel->progs.retop_recovery, t->multi, binary, pid, &off, &cookie,
				1, &t->recovery, &failed);
}

size_t tracer_probe_count(const struct tracer *t, int slot)
{
	if (slot < 0 || slot >= RETOP_MAX_FUNCS)
		return 0;
	return probe_set_count(t->slots[slot].sets[0]) + probe_set_count(t->slots[slot].sets[1]);
}

int tracer_read(struct tracer *t, int slot, struct retop_func_stats *out)
{
	__u32 key = (__u32)slot;

	if (bpf_map__lookup_elem(t->skel->maps.func_stats, &key, sizeof(key), out, sizeof(*out), 0))
		return -errno;
	return 0;
}

int tracer_reset(struct tracer *t, int slot)
{
	__u32 key = (__u32)slot;

	t->slots[slot].orphans = 0;
	if (bpf_map__update_elem(t->skel->maps.func_stats, &key, sizeof(key), &t->zero,
				 sizeof(t->zero), BPF_ANY))
		return -errno;
	return 0;
}

/* Delete a swept entry; an orphan counts only if this delete won the race
 * against its RET (which deletes it too). */
static void tracer_sweep_delete(struct tracer *t, int fd, const struct retop_inflight_key *key,
				bool orphan)
{
	if (bpf_map_delete_elem(fd, key) == 0 && orphan)
		t->slots[key->func_id].orphans++;
}

int tracer_sweep(struct tracer *t, struct tracer_inflight *inflight)
{
	int fd = bpf_map__fd(t->skel->maps.inflight);
	struct retop_inflight_key key, next, doomed;
	struct retop_inflight_val val;
	uint64_t now = tracer_now_ns();
	bool first = true, have_doomed = false, doomed_orphan = false;

	memset(inflight, 0, t->opts.max_functions * sizeof(*inflight));
	/* Deleting the current key would restart the walk: delete the previous
	 * one after stepping past it. */
	while (bpf_map_get_next_key(fd, first ? NULL : &key, &next) == 0) {
		first = false;
		if (have_doomed)
			tracer_sweep_delete(t, fd, &doomed, doomed_orphan);
		have_doomed = false;
		key = next;
		if (bpf_map_lookup_elem(fd, &key, &val) != 0)
			continue;
		uint32_t slot = key.func_id;
		bool stale = slot >= t->opts.max_functions || !t->slots[slot].used;
		uint64_t age = now > val.start_ns ? now - val.start_ns : 0;
		if (stale || age >= t->opts.orphan_timeout_ns) {
			doomed = key;
			have_doomed = true;
			doomed_orphan = !stale;
			continue;
		}
		inflight[slot].count++;
		if (age > inflight[slot].oldest_ns)
			inflight[slot].oldest_ns = age;
	}
	if (have_doomed)
		tracer_sweep_delete(t, fd, &doomed, doomed_orphan);
	for (size_t i = 0; i < t->opts.max_functions; i++)
		inflight[i].orphans = t->slots[i].orphans;
	return 0;
}
