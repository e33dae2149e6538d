/* The tracer's insides, for its own files only (tracer.h is its API):
 * tracer.c loads the BPF side and closes it; tracer_probes.c puts probes
 * in and takes them out; tracer_read.c reads the counters and writes the
 * settings BPF reads (.bss); tracer_sweep.c keeps the in-flight maps. */
#ifndef RETOP_TRACER_INTERNAL_H
#define RETOP_TRACER_INTERNAL_H

#include <bpf/libbpf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "callers.h"
#include "interlock.h"
#include "retop.skel.h"
#include "tracer.h"

struct tracer_slot {
	bool used;
	/* Per binary (the verdict's image) and kind (enum tracer_kind): the
	 * entry, every RET site, the inline marks.  A deploy adds the new
	 * file's probes beside the old file's. */
	struct probe_set *sets[RETOP_MAX_IMAGES][TRACER_KINDS];
	/* Each binary's RET sites take their own range of ret_hits. */
	uint8_t site_base[RETOP_MAX_IMAGES];
	bool has_base[RETOP_MAX_IMAGES];
	uint32_t sites_used;
	uint64_t orphans;
};

/* The runtime functions watched in each binary: evidence that calls died
 * (a panic recovered, a goroutine's exit), and with --time-split sched the
 * scheduler's start of a goroutine on a thread and its leaving it. */
enum tracer_watch_kind {
	TRACER_WATCH_RECOVERY,
	TRACER_WATCH_GOEXIT,
	TRACER_WATCH_RUN,
	TRACER_WATCH_STOP,
	TRACER_WATCHES
};

/* A runtime function watched. */
struct tracer_watch {
	struct bpf_program *prog;
	struct interlock_verdict v; /* approved once; NULL f: not watched */
	int pid;
	struct probe_set *set;
};

/* Probe sets taken out while the tracer defers their closing
 * (tracer_defer), every kind in one list closed as one batch, and the
 * slots they belonged to, per kind. */
struct tracer_pending {
	struct probe_set **sets;
	size_t n, cap;
	bool slot[TRACER_KINDS][RETOP_MAX_FUNCS];
};

/* A batch tracer_flush hands to a thread of its own: removing a uprobe
 * waits for RCU grace periods, 75-200 ms a tick on a VM, which the
 * governor's clock must not (a brake 200 ms late lets a query's burst
 * spend twenty budgets).  The brake may take one function out every few
 * milliseconds (a query calls many): with four batches, the fifth flush
 * closed its own and the clock stopped 144 ms while a kept burst spent
 * 85,000 hits. */
struct tracer_closing {
	struct tracer_pending batch;
	bool running; /* a batch handed over, not yet taken back */
	/* The thread stays, asleep between batches: the governor hands
	 * out ten batches a second (a sampled slice's entry, a run's RETs),
	 * and a thread made and joined for each cost retop a clone. */
	pthread_t thread;
	bool started; /* thread, mu and cv are live */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* Under mu: a batch to close (cleared once it is closed); the
	 * tracer closes. */
	bool work, quit;
};
#define TRACER_CLOSING_MAX 16

struct tracer {
	struct retop *skel;
	bool multi; /* uprobe_multi links */
	/* runtime.recovery and runtime.goexit1 of each binary */
	struct tracer_watch watches[RETOP_MAX_IMAGES][TRACER_WATCHES];
	struct tracer_opts opts;
	struct tracer_slot slots[RETOP_MAX_FUNCS];
	struct bpf_link *exec_link;   /* sched_process_exec: NULL if not watched */
	struct retop_func_stats zero; /* for resets; large, so not on the stack */
	/* func_stats, mmapped: BPF's counters read without a syscall. */
	struct retop_func_stats *stats;
	size_t stats_len;
	struct retop_split_stats *split; /* split_stats, mmapped; NULL: read by syscall */
	size_t split_len;
	bool args_used;		      /* a slot captured arguments since the load */
	struct callers_table callers; /* the caller map as last read */
	/* The memlock of the maps whose size is fixed at load (all but those
	 * allocated per element), read once; UINT64_MAX: not yet. */
	uint64_t fixed_map_bytes;
	struct ring_buffer *wake_rb; /* BPF's wakeups (tracer_wake_fd) */
	unsigned wake_why;	     /* what the wake-ups drained said */
	/* tracer_exec_ns's last answer, and exec_seq when it was read. */
	int exec_pid;
	uint64_t exec_seq, exec_when;
	size_t sweep_first;		       /* read entries from here on were spilled */
	struct retop_inflight_key *sweep_keys; /* the sweep's buffers, kept */
	struct retop_inflight_val *sweep_vals;
	size_t sweep_cap;
	bool sweep_warned;
	bool claim_warned;
	bool init_pidns; /* BPF's process ids are /proc's: exits can be seen */
	bool deferring;
	struct tracer_pending pending;
	struct tracer_closing closing[TRACER_CLOSING_MAX];
};

/* Remove the probes of kind k of every slot in every binary, and the
 * watcher w of every binary, closed together (tracer_defer) so that their
 * grace periods overlap: at close, a thousand functions' in a few.  Every
 * batch a flush handed to a thread is closed too before it returns. */
void tracer_unlink_all(struct tracer *t, enum tracer_kind k, size_t w);

/* The closing threads end, each after its batch (tracer_close). */
void tracer_closing_stop(struct tracer *t);

/* tracer_sweep.c: delete the in-flight calls of a slot (its function was
 * detached: slot_closing set first, so an entry times no call, and its
 * probes closed, so none is added after this), for its next owner
 * (tracer_attach). */
void tracer_purge_slot(struct tracer *t, int slot);

#endif
