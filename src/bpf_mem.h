/* The kernel memory of retop's BPF maps, in one place: how many entries
 * each map gets, what the kernel charges for them (its formulas for a hash
 * map's elements and buckets, an array's pages), the figure --help states
 * before anything is loaded, and the memlock the kernel reports once they
 * are (docs/ARCHITECTURE.md, "Kernel memory"). */
#ifndef RETOP_BPF_MEM_H
#define RETOP_BPF_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Goroutines the evidence maps remember (preallocated LRU maps, so sized
 * for a busy server, not for the worst case): the latest probe hits on
 * each goroutine, and its first entry into each function.  A goroutine
 * forgotten leaves its calls to the orphan timeout and its nested hits
 * unknown.  Panics recovered and calls dropped are rarer: fewer. */
#define BPF_MEM_GOROUTINES 8192u
#define BPF_MEM_GOROUTINES_MARKED 2048u

/* The entries of each map sized before load (bpf/retop.bpf.c). */
struct bpf_mem_sizes {
	/* --max-in-flight as the maps hold it: the first RETOP_INFLIGHT_FIRST
	 * calls in `inflight`, the rest spilled (one entry at least: a map
	 * needs one). */
	uint32_t inflight, inflight_spill;
	bool spill; /* calls may spill */
	uint32_t func_stats, func_hist, caller_stats;
	uint32_t error_stats; /* one a slot that failed, made at its first failing call */
	uint32_t goroutines, first_entry, recovered, drop_marks;
};

/* Each map sized for what a run can use: the per-function maps for
 * max_functions, the in-flight maps for inflight_max calls, the evidence
 * maps for the goroutines they remember.  ncpu: possible CPUs. */
void bpf_mem_size_maps(uint32_t inflight_max, size_t max_functions, int ncpu,
		       struct bpf_mem_sizes *out);

/* A hash map's buckets, allocated at load whatever it holds. */
uint64_t bpf_mem_bucket_bytes(uint32_t n);
/* One element of a hash map (key and value of these sizes); prealloc
 * false: allocated per element (BPF_F_NO_PREALLOC). */
uint64_t bpf_mem_hash_elem_bytes(size_t key, size_t val, bool prealloc);
/* An array of n values, in whole pages of page bytes (mmapped). */
uint64_t bpf_mem_array_bytes(uint32_t n, size_t val, long page);

/* The in-flight maps for inflight_max calls: their buckets, there from the
 * load; each call in flight; and what calls not yet in flight may still
 * take, live of them being in flight. */
uint64_t bpf_mem_inflight_base_bytes(uint32_t inflight_max);
uint64_t bpf_mem_inflight_call_bytes(void);
uint64_t bpf_mem_inflight_room_bytes(uint32_t inflight_max, int64_t live);

/* retop's BPF maps with in-flight maps of inflight_max entries and
 * max_functions slots, as the kernel accounts them with no call in flight
 * (the largest, within a few hundred KiB): the figure --help states before
 * anything is loaded. */
uint64_t bpf_mem_estimate(uint32_t inflight_max, size_t max_functions);

/* Kernel memory charged to a BPF map (memlock in /proc/self/fdinfo), 0 if
 * unknown. */
uint64_t bpf_mem_fd_memlock(int fd);

#endif
