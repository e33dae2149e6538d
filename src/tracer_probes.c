/* The probes of each slot, per binary (image) and kind (entry, RETs,
 * inline marks), in and out; the runtime watchers; the calibration probes.
 * Only offsets a sealed verdict approved reach the kernel. */
#include "tracer_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "probes.h"

/* Keep a set taken out for tracer_flush (slot -1: a watcher's); -1 if it
 * cannot be kept (then it is closed at once). */
static int tracer_pend(struct tracer *t, struct probe_set *set, int slot, enum tracer_kind k)
{
	struct tracer_pending *p = &t->pending;

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 64;
		struct probe_set **sets = realloc(p->sets, cap * sizeof(*sets));
		if (!sets)
			return -1;
		p->sets = sets;
		p->cap = cap;
	}
	p->sets[p->n++] = set;
	if (slot >= 0)
		p->slot[k][slot] = true;
	return 0;
}

/* Take out the probes of kind k of a slot, in every binary. */
static void tracer_slot_out(struct tracer *t, int slot, enum tracer_kind k)
{
	struct tracer_slot *s = &t->slots[slot];

	for (size_t im = 0; im < RETOP_MAX_IMAGES; im++) {
		if (s->sets[im][k] && t->deferring && tracer_pend(t, s->sets[im][k], slot, k) == 0)
			s->sets[im][k] = NULL;
		else
			probe_sets_destroy(&s->sets[im][k], 1);
	}
}

static void tracer_slot_unlink(struct tracer *t, int slot)
{
	tracer_slot_out(t, slot, TRACER_ENTRY);
	tracer_slot_out(t, slot, TRACER_MARKS);
	tracer_slot_out(t, slot, TRACER_RETS);
}

void tracer_defer(struct tracer *t)
{
	t->deferring = true;
}

/* The list holds no set (its array stays, for the next). */
static void tracer_pending_clear(struct tracer_pending *p)
{
	p->n = 0;
	memset(p->slot, 0, sizeof(p->slot));
}

/* The list holds a set of kind k (TRACER_KINDS: any) of the slot. */
static bool tracer_pending_holds(const struct tracer_pending *p, int slot, enum tracer_kind k)
{
	for (int i = 0; i < TRACER_KINDS; i++)
		if ((k == TRACER_KINDS || (int)k == i) && p->slot[i][slot])
			return true;
	return false;
}

/* Close what was kept, every kind in one batch: its grace periods are
 * shared, and a RET probe stops trapping as soon as its entry's does (an
 * entry being removed times no call: BPF's slot_closing). */
static void tracer_close_pending(struct tracer *t)
{
	struct tracer_pending *p = &t->pending;

	if (!p->n)
		return;
	probe_sets_destroy(p->sets, p->n);
	tracer_pending_clear(p);
}

static void *tracer_closing_run(void *arg)
{
	struct tracer_closing *c = arg;

	pthread_mutex_lock(&c->mu);
	for (;;) {
		while (!c->work && !c->quit)
			pthread_cond_wait(&c->cv, &c->mu);
		if (!c->work)
			break;
		pthread_mutex_unlock(&c->mu);
		probe_sets_destroy(c->batch.sets, c->batch.n);
		pthread_mutex_lock(&c->mu);
		c->work = false;
		pthread_cond_broadcast(&c->cv);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* Wait for a batch's closing; its slots are free of it. */
static void tracer_closing_join(struct tracer_closing *c)
{
	if (!c->running)
		return;
	pthread_mutex_lock(&c->mu);
	while (c->work)
		pthread_cond_wait(&c->cv, &c->mu);
	pthread_mutex_unlock(&c->mu);
	c->running = false;
	tracer_pending_clear(&c->batch);
}

/* The batches already closed, taken back without waiting for the others. */
static void tracer_closing_reap(struct tracer *t)
{
	for (size_t i = 0; i < TRACER_CLOSING_MAX; i++) {
		struct tracer_closing *c = &t->closing[i];
		if (!c->running)
			continue;
		pthread_mutex_lock(&c->mu);
		bool closed = !c->work;
		pthread_mutex_unlock(&c->mu);
		if (closed)
			tracer_closing_join(c);
	}
}

/* c's thread, made at its first batch. */
static bool tracer_closing_start(struct tracer_closing *c)
{
	if (c->started)
		return true;
	if (pthread_mutex_init(&c->mu, NULL) != 0)
		return false;
	if (pthread_cond_init(&c->cv, NULL) != 0) {
		pthread_mutex_destroy(&c->mu);
		return false;
	}
	c->work = c->quit = false;
	if (pthread_create(&c->thread, NULL, tracer_closing_run, c) != 0) {
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
		return false;
	}
	c->started = true;
	return true;
}

void tracer_closing_stop(struct tracer *t)
{
	for (size_t i = 0; i < TRACER_CLOSING_MAX; i++) {
		struct tracer_closing *c = &t->closing[i];
		if (!c->started)
			continue;
		tracer_closing_join(c);
		pthread_mutex_lock(&c->mu);
		c->quit = true;
		pthread_cond_broadcast(&c->cv);
		pthread_mutex_unlock(&c->mu);
		pthread_join(c->thread, NULL);
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
		c->started = false;
	}
}

/* What was kept goes to a batch closed by a thread of its own (the sets'
 * traps stop as their close begins); with every batch busy, or no thread,
 * it is closed here. */
static void tracer_close_pending_async(struct tracer *t)
{
	struct tracer_pending *p = &t->pending;
	struct tracer_closing *c = NULL;

	tracer_closing_reap(t);
	if (!p->n)
		return;
	for (size_t i = 0; i < TRACER_CLOSING_MAX && !c; i++)
		if (!t->closing[i].running)
			c = &t->closing[i];
	if (!c || !tracer_closing_start(c)) {
		tracer_close_pending(t);
		return;
	}
	/* The batch takes the kept list; the list takes the batch's old one. */
	struct tracer_pending swap = c->batch;
	c->batch = *p;
	*p = swap;
	tracer_pending_clear(p);
	pthread_mutex_lock(&c->mu);
	c->work = true;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	c->running = true;
}

void tracer_flush(struct tracer *t)
{
	t->deferring = false;
	tracer_close_pending_async(t);
}

/* Every batch tracer_flush handed to a thread, closed. */
static void tracer_closing_wait(struct tracer *t)
{
	for (size_t i = 0; i < TRACER_CLOSING_MAX; i++)
		tracer_closing_join(&t->closing[i]);
}

/* Before probes of kind k (TRACER_KINDS: any) go into a slot: those of the
 * slot still closing are closed first (a batch's thread waited for),
 * still deferring after. */
static void tracer_settle(struct tracer *t, int slot, enum tracer_kind k)
{
	if (tracer_pending_holds(&t->pending, slot, k))
		tracer_close_pending(t);
	for (size_t c = 0; c < TRACER_CLOSING_MAX; c++)
		if (tracer_pending_holds(&t->closing[c].batch, slot, k))
			tracer_closing_join(&t->closing[c]);
}

void tracer_unlink_all(struct tracer *t, enum tracer_kind k, size_t w)
{
	tracer_defer(t);
	for (int i = 0; i < RETOP_MAX_FUNCS; i++)
		tracer_slot_out(t, i, k);
	for (size_t im = 0; im < RETOP_MAX_IMAGES; im++) {
		struct probe_set **ws = &t->watches[im][w].set;
		if (*ws && tracer_pend(t, *ws, -1, k) == 0)
			*ws = NULL;
		else
			probe_sets_destroy(ws, 1);
	}
	/* Here and now: the caller frees what BPF writes to next. */
	t->deferring = false;
	tracer_close_pending(t);
	tracer_closing_wait(t);
}

static int tracer_free_slot(const struct tracer *t)
{
	for (size_t i = 0; i < t->opts.max_functions; i++)
		if (!t->slots[i].used)
			return (int)i;
	return -1;
}

static int tracer_check_verdict(const struct interlock_verdict *v, char *err)
{
	if (!interlock_sealed(v))
		return err_set(err, EPERM, "%s: not approved by the interlock: nothing attached",
			       v && v->f ? v->f->name : "?");
	if (v->image >= RETOP_MAX_IMAGES)
		return err_set(err, EINVAL, "%s: binary %u of at most %d", v->f->name, v->image,
			       RETOP_MAX_IMAGES);
	return 0;
}

static int tracer_attach_error(int e, const struct interlock_verdict *v, uint64_t off, char *err)
{
	if (e == EPERM || e == EACCES)
		return err_set(err, e,
			       "%s: attaching a uprobe at file offset 0x%llx was refused: "
			       "run retop as root",
			       v->f->name, (unsigned long long)off);
	if (e == ESRCH)
		return err_set(err, e, "%s: the process is gone", v->f->name);
	return err_set(err, e, "%s: attaching a uprobe at file offset 0x%llx failed: %s",
		       v->f->name, (unsigned long long)off, strerror(e));
}

/* The RET probes, then the entry probe: two sets, both or neither.  In
 * this order no entry is recorded whose RET could still be missed, so the
 * attach makes no orphan; the RETs of calls begun before the entry probe
 * are told apart in BPF (before_attach).  Only the offsets the interlock
 * approved reach the kernel. */
static int tracer_attach_sites(struct tracer *t, int slot, const struct interlock_verdict *v,
			       int pid, char *err)
{
	int ret;

	/* A new owner: its callers and slowest calls are its own. */
	t->skel->bss->slot_gen[slot]++;
	t->skel->bss->slot_record[slot] = 1;
	t->skel->bss->gate_len[slot] = 0;
	/* A function that exists only inlined has its marks only. */
	ret = v->marks_only ? 0 : tracer_rets_in(t, slot, v, pid, err);
	if (!ret && !v->marks_only)
		ret = tracer_entry_in(t, slot, v, pid, err);
	if (!ret)
		ret = tracer_marks_in(t, slot, v, pid, err);
	if (ret)
		tracer_slot_unlink(t, slot);
	return ret;
}

int tracer_attach(struct tracer *t, const struct interlock_verdict *v, int pid, int error_reg,
		  bool *entry_only, char *err)
{
	int slot = tracer_free_slot(t), ret;
	struct tracer_slot *s;

	*entry_only = false;
	/* Only addresses the interlock approved reach the kernel. */
	if ((ret = tracer_check_verdict(v, err)) != 0)
		return ret;
	const struct func_info *f = v->f;
	if (slot < 0)
		return err_set(err, ENOSPC,
			       "%s: already tracing %zu functions (--max-functions): "
			       "stop one first",
			       f->name, t->opts.max_functions);
	*entry_only = v->entry_only;
	s = &t->slots[slot];
	/* The slot's last owner's probes are all closed first. */
	tracer_settle(t, slot, TRACER_KINDS);
	/* Counters start from zero before the first probe can fire, and no
	 * call left by the slot's previous function is taken for this one's;
	 * its errors are read from its first call on (the reset makes their
	 * entry). */
	t->skel->bss->error_reg[slot] =
	    error_reg >= 0 && error_reg + 2 <= RETOP_ARG_REGS ? RETOP_ERROR_REG(error_reg) : 0;
	ret = tracer_reset(t, slot);
	if (!ret)
		tracer_purge_slot(t, slot);
	/* Each binary's RET sites are numbered anew for the new owner. */
	memset(s->has_base, 0, sizeof(s->has_base));
	s->sites_used = 0;
	if (!ret)
		ret = tracer_attach_sites(t, slot, v, pid, err);
	if (ret)
		return ret;
	s->used = true;
	s->orphans = 0;
	log_info("tracer",
		 "%s: %zu probes at file offset 0x%llx of binary %u, the entry's at +0x%x "
		 "(slot %d)",
		 f->name, tracer_probe_count(t, slot), (unsigned long long)f->file_offset, v->image,
		 f->entry_probe_off, slot);
	return slot;
}

void tracer_detach(struct tracer *t, int slot)
{
	if (slot < 0 || slot >= RETOP_MAX_FUNCS || !t->slots[slot].used)
		return;
	/* The entry probe first (see tracer_close). */
	t->skel->bss->slot_closing[slot] = 1;
	tracer_slot_unlink(t, slot);
	t->slots[slot].used = false;
}

/* The probes go into the file the verdict approved, through its open
 * descriptor: a rename or a symlink at the path since cannot redirect them. */
int tracer_rets_in(struct tracer *t, int slot, const struct interlock_verdict *v, int pid,
		   char *err)
{
	struct tracer_slot *s = &t->slots[slot];
	uint64_t off[RETOP_MAX_RET_SITES], cookie[RETOP_MAX_RET_SITES];
	size_t failed, nrets = v && !v->entry_only ? v->nrets : 0;
	int ret = tracer_check_verdict(v, err);

	if (ret)
		return ret;
	if (s->sets[v->image][TRACER_RETS] || !nrets)
		return 0;
	if (!s->has_base[v->image]) {
		if (s->sites_used + nrets > RETOP_MAX_RET_SITES)
			return err_set(err, ENOSPC,
				       "%s: %zu more RET sites in this binary, %u in the "
				       "others: more than %d",
				       v->f->name, nrets, s->sites_used, RETOP_MAX_RET_SITES);
		s->site_base[v->image] = (uint8_t)s->sites_used;
		s->has_base[v->image] = true;
		s->sites_used += (uint32_t)nrets;
	}
	tracer_settle(t, slot, TRACER_RETS);
	/* A new epoch when the RETs come back: RETs without an entry since
	 * are told apart again.  Not while another binary's RETs are in:
	 * their calls in flight are still paired. */
	if (!tracer_rets_are_in(t, slot))
		t->skel->bss->slot_epoch[slot]++;
	for (size_t i = 0; i < nrets; i++) {
		off[i] = v->ret_offsets[i];
		cookie[i] =
		    RETOP_COOKIE(slot, RETOP_RET_SITE(v->image, s->site_base[v->image] + i));
	}
	ret = probe_set_attach(t->skel->progs.retop_return, t->multi, v->path, pid, off, cookie,
			       nrets, &s->sets[v->image][TRACER_RETS], &failed);
	return ret ? tracer_attach_error(-ret, v, off[failed], err) : 0;
}

void tracer_rets_out(struct tracer *t, int slot)
{
	tracer_slot_out(t, slot, TRACER_RETS);
}

int tracer_entry_in(struct tracer *t, int slot, const struct interlock_verdict *v, int pid,
		    char *err)
{
	struct tracer_slot *s = &t->slots[slot];
	size_t failed;
	int ret = tracer_check_verdict(v, err);

	if (ret)
		return ret;
	uint64_t off = v->entry_offset, cookie = RETOP_COOKIE(slot, v->entry_site);
	if (s->sets[v->image][TRACER_ENTRY] || v->marks_only)
		return 0;
	tracer_settle(t, slot, TRACER_ENTRY);
	t->skel->bss->slot_closing[slot] = 0;
	ret = probe_set_attach(t->skel->progs.retop_entry, t->multi, v->path, pid, &off, &cookie, 1,
			       &s->sets[v->image][TRACER_ENTRY], &failed);
	return ret ? tracer_attach_error(-ret, v, off, err) : 0;
}

void tracer_entry_out(struct tracer *t, int slot)
{
	/* RETs of calls begun before are expected from here on. */
	t->skel->bss->slot_closing[slot] = 1;
	tracer_slot_out(t, slot, TRACER_ENTRY);
}

int tracer_marks_in(struct tracer *t, int slot, const struct interlock_verdict *v, int pid,
		    char *err)
{
	struct tracer_slot *s = &t->slots[slot];
	uint64_t cookie[INLINE_MARKS_MAX];
	size_t failed;
	int ret = tracer_check_verdict(v, err);

	if (ret)
		return ret;
	if (s->sets[v->image][TRACER_MARKS] || !v->nmarks)
		return 0;
	tracer_settle(t, slot, TRACER_MARKS);
	for (size_t i = 0; i < v->nmarks; i++)
		cookie[i] = RETOP_COOKIE(slot, v->mark_stepped[i] ? RETOP_ENTRY_STEPPED : 0);
	ret = probe_set_attach(t->skel->progs.retop_inline, t->multi, v->path, pid, v->mark_offsets,
			       cookie, v->nmarks, &s->sets[v->image][TRACER_MARKS], &failed);
	return ret ? tracer_attach_error(-ret, v, v->mark_offsets[failed], err) : 0;
}

void tracer_marks_out(struct tracer *t, int slot)
{
	tracer_slot_out(t, slot, TRACER_MARKS);
}

static bool tracer_slot_has(const struct tracer_slot *s, enum tracer_kind k)
{
	for (size_t im = 0; im < RETOP_MAX_IMAGES; im++)
		if (s->sets[im][k])
			return true;
	return false;
}

bool tracer_entry_is_in(const struct tracer *t, int slot)
{
	return tracer_slot_has(&t->slots[slot], TRACER_ENTRY);
}

bool tracer_marks_are_in(const struct tracer *t, int slot)
{
	return tracer_slot_has(&t->slots[slot], TRACER_MARKS);
}

bool tracer_rets_are_in(const struct tracer *t, int slot)
{
	return tracer_slot_has(&t->slots[slot], TRACER_RETS);
}

int tracer_site_base(const struct tracer *t, int slot, unsigned image)
{
	if (slot < 0 || slot >= RETOP_MAX_FUNCS || image >= RETOP_MAX_IMAGES ||
	    !t->slots[slot].has_base[image])
		return -1;
	return t->slots[slot].site_base[image];
}

void tracer_image_alias(struct tracer *t, unsigned image, unsigned as)
{
	if (image >= RETOP_MAX_IMAGES || as >= RETOP_MAX_IMAGES)
		return;
	for (size_t i = 0; i < RETOP_MAX_FUNCS; i++) {
		t->slots[i].site_base[image] = t->slots[i].site_base[as];
		t->slots[i].has_base[image] = t->slots[i].has_base[as];
	}
}

void tracer_image_out(struct tracer *t, unsigned image)
{
	if (image >= RETOP_MAX_IMAGES)
		return;
	for (size_t i = 0; i < RETOP_MAX_FUNCS; i++) {
		for (size_t k = 0; k < TRACER_KINDS; k++)
			probe_sets_destroy(&t->slots[i].sets[image][k], 1);
	}
	for (size_t w = 0; w < TRACER_WATCHES; w++) {
		probe_sets_destroy(&t->watches[image][w].set, 1);
		memset(&t->watches[image][w].v, 0, sizeof(t->watches[image][w].v));
	}
}

size_t tracer_probe_count(const struct tracer *t, int slot)
{
	if (slot < 0 || slot >= RETOP_MAX_FUNCS)
		return 0;
	size_t n = 0;
	for (size_t im = 0; im < RETOP_MAX_IMAGES; im++)
		for (size_t k = 0; k < TRACER_KINDS; k++)
			n += probe_set_count(t->slots[slot].sets[im][k]);
	return n;
}

/* Remember an approved runtime function to watch; tracer_watchers() puts
 * the probe in and takes it out. */
static int tracer_watch(struct tracer *t, size_t which, struct bpf_program *prog,
			const struct interlock_verdict *v, int pid)
{
	if (!interlock_sealed(v) || !v->entry_offset || v->image >= RETOP_MAX_IMAGES)
		return -EPERM;
	struct tracer_watch *w = &t->watches[v->image][which];
	w->prog = prog;
	w->v = *v;
	w->pid = pid;
	return 0;
}

int tracer_watch_recovery(struct tracer *t, const struct interlock_verdict *recovery, int pid)
{
	return tracer_watch(t, TRACER_WATCH_RECOVERY, t->skel->progs.retop_recovery, recovery, pid);
}

int tracer_watch_goexit(struct tracer *t, const struct interlock_verdict *goexit, int pid)
{
	return tracer_watch(t, TRACER_WATCH_GOEXIT, t->skel->progs.retop_goexit, goexit, pid);
}

int tracer_watch_sched(struct tracer *t, const struct interlock_verdict *run,
		       const struct interlock_verdict *stop, int pid)
{
	int ret;

	if (!t->skel->rodata->split_sched)
		return -ENOTSUP;
	ret = tracer_watch(t, TRACER_WATCH_RUN, t->skel->progs.retop_sched_run, run, pid);
	if (!ret)
		ret =
		    tracer_watch(t, TRACER_WATCH_STOP, t->skel->progs.retop_sched_stop, stop, pid);
	if (ret)
		memset(&t->watches[run->image][TRACER_WATCH_RUN], 0, sizeof(struct tracer_watch));
	return ret;
}

/* Both of a binary's scheduler probes are in. */
static bool tracer_sched_in(const struct tracer *t)
{
	for (size_t im = 0; im < RETOP_MAX_IMAGES; im++)
		if (t->watches[im][TRACER_WATCH_RUN].set && t->watches[im][TRACER_WATCH_STOP].set)
			return true;
	return false;
}

/* BPF's sched_epoch is odd while the scheduler's probes are in: a
 * goroutine's record holds within one epoch, with no start or stop of it
 * missed. */
static void tracer_sched_epoch(struct tracer *t, bool in)
{
	uint64_t e = __atomic_load_n(&t->skel->bss->sched_epoch, __ATOMIC_RELAXED);

	if ((e & 1) != in)
		__atomic_store_n(&t->skel->bss->sched_epoch, e + 1, __ATOMIC_RELEASE);
}

int tracer_watchers(struct tracer *t, bool on)
{
	int ret = 0;

	if (!on)
		tracer_sched_epoch(t, false);
	for (size_t i = 0; i < RETOP_MAX_IMAGES * TRACER_WATCHES; i++) {
		struct tracer_watch *w = &t->watches[i / TRACER_WATCHES][i % TRACER_WATCHES];
		uint64_t off = w->v.entry_offset, cookie = 0;
		size_t failed;
		if (!on) {
			probe_sets_destroy(&w->set, 1);
			continue;
		}
		if (w->set || !interlock_sealed(&w->v))
			continue;
		int r = probe_set_attach(w->prog, t->multi, w->v.path, w->pid, &off, &cookie, 1,
					 &w->set, &failed);
		if (r && !ret)
			ret = r;
	}
	if (on)
		tracer_sched_epoch(t, tracer_sched_in(t));
	return ret;
}

bool tracer_watchers_in(const struct tracer *t)
{
	for (size_t i = 0; i < RETOP_MAX_IMAGES * TRACER_WATCHES; i++)
		if (t->watches[i / TRACER_WATCHES][i % TRACER_WATCHES].set)
			return true;
	return false;
}

uint64_t tracer_sched_hits(const struct tracer *t)
{
	return t ? __atomic_load_n(&t->skel->bss->sched_hits, __ATOMIC_RELAXED) : 0;
}

bool tracer_sched_watched(const struct tracer *t)
{
	return t && tracer_sched_in(t) && (t->skel->bss->sched_epoch & 1);
}

int tracer_cal_attach(struct tracer *t, int kind, bool entry_only, const char *path, uint64_t off,
		      struct probe_set **out)
{
	uint32_t flags = (kind == RETOP_HIT_ENTRY_STEPPED ? RETOP_ENTRY_STEPPED : 0) |
			 (entry_only ? RETOP_ENTRY_ONLY : 0);
	uint32_t site = kind == RETOP_HIT_RET ? RETOP_RET_SITE(0, 0) : RETOP_ENTRY_SITE(flags, 0);
	uint64_t cookie = RETOP_COOKIE(t->opts.max_functions, site);
	struct bpf_program *prog =
	    kind == RETOP_HIT_RET ? t->skel->progs.retop_return : t->skel->progs.retop_entry;
	size_t failed;

	return probe_set_attach(prog, t->multi, path, getpid(), &off, &cookie, 1, out, &failed);
}
