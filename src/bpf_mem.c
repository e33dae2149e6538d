#include "bpf_mem.h"

#include <stdio.h>

#include "../bpf/retop.h"
#include "procs.h"

/* The kernel stores keys and values 8-byte aligned. */
static uint64_t bpf_mem_round8(size_t n)
{
	return (n + 7) & ~(uint64_t)7;
}

/* The one sizing of the maps: the load applies it, and every figure below
 * is told from it, so the two cannot disagree. */
void bpf_mem_size_maps(uint32_t inflight_max, size_t max_functions, int ncpu,
		       struct bpf_mem_sizes *out)
{
	uint32_t nf = (uint32_t)max_functions;
	uint32_t first = inflight_max < RETOP_INFLIGHT_FIRST ? inflight_max : RETOP_INFLIGHT_FIRST;
	uint32_t spill = inflight_max - first;

	out->inflight = first;
	out->inflight_spill = spill ? spill : 1;
	out->spill = spill > 0;
	out->func_stats = nf + 1; /* and the calibration's slot */
	out->func_hist = nf + 1;  /* made per timed function: nothing at rest */
	/* A race may give a function one more call site per CPU. */
	out->caller_stats = nf * (RETOP_CALLER_SITES + 1 + (ncpu > 0 ? (uint32_t)ncpu : 1));
	out->error_stats = nf;
	out->goroutines = BPF_MEM_GOROUTINES;
	out->first_entry = BPF_MEM_GOROUTINES;
	out->recovered = BPF_MEM_GOROUTINES_MARKED;
	out->drop_marks = BPF_MEM_GOROUTINES_MARKED;
}

/* One 16-byte bucket per entry, rounded up to a power of two. */
uint64_t bpf_mem_bucket_bytes(uint32_t n)
{
	uint64_t buckets = 1;

	while (buckets < n)
		buckets <<= 1;
	return 16 * buckets;
}

uint64_t bpf_mem_hash_elem_bytes(size_t key, size_t val, bool prealloc)
{
	/* The kernel's htab_elem header (48 bytes on 64-bit), key and value
	 * rounded to 8, and the allocator's list node (8) that a map without
	 * preallocation charges per element.  Checked against the memlock of
	 * fdinfo with 100,100 calls held (tests/integration/trace-stress.sh). */
	return 48 + bpf_mem_round8(key) + bpf_mem_round8(val) + (prealloc ? 0 : 8);
}

uint64_t bpf_mem_array_bytes(uint32_t n, size_t val, long page)
{
	uint64_t p = page > 0 ? (uint64_t)page : 4096;

	return ((uint64_t)n * bpf_mem_round8(val) + p - 1) & ~(p - 1);
}

/* A preallocated hash map of n entries: its elements and its buckets. */
static uint64_t bpf_mem_hash_bytes(uint32_t n, size_t key, size_t val)
{
	return bpf_mem_hash_elem_bytes(key, val, true) * n + bpf_mem_bucket_bytes(n);
}

uint64_t bpf_mem_inflight_base_bytes(uint32_t inflight_max)
{
	struct bpf_mem_sizes z;

	bpf_mem_size_maps(inflight_max, 1, 1, &z);
	return bpf_mem_bucket_bytes(z.inflight) + bpf_mem_bucket_bytes(z.inflight_spill);
}

uint64_t bpf_mem_inflight_call_bytes(void)
{
	return bpf_mem_hash_elem_bytes(sizeof(struct retop_inflight_key),
				       sizeof(struct retop_inflight_val), false);
}

uint64_t bpf_mem_inflight_room_bytes(uint32_t inflight_max, int64_t live)
{
	if (live < 0)
		live = 0;
	if ((uint64_t)live >= inflight_max)
		return 0;
	return (inflight_max - (uint64_t)live) * bpf_mem_inflight_call_bytes();
}

uint64_t bpf_mem_estimate(uint32_t inflight_max, size_t max_functions)
{
	struct bpf_mem_sizes z;
	/* The in-flight maps, allocated per call: their buckets only. */
	uint64_t b = bpf_mem_inflight_base_bytes(inflight_max);

	bpf_mem_size_maps(inflight_max, max_functions, 1, &z);
	b += bpf_mem_array_bytes(z.func_stats, sizeof(struct retop_func_stats), 4096);
	/* goroutines, first_entry, recovered, drop_marks (bpf/retop.bpf.c). */
	b += bpf_mem_hash_bytes(z.goroutines, sizeof(struct retop_goroutine_key),
				sizeof(struct retop_goroutine_val));
	b += bpf_mem_hash_bytes(z.first_entry, sizeof(struct retop_first_key),
				sizeof(struct retop_first_val));
	b += bpf_mem_hash_bytes(z.recovered, sizeof(struct retop_goroutine_key), sizeof(uint64_t));
	b += bpf_mem_hash_bytes(z.drop_marks, sizeof(struct retop_goroutine_key),
				sizeof(struct retop_inflight_key) + 8);
	/* The slowest calls' ring buffer. */
	b += 256 * 1024;
	return b;
}

uint64_t bpf_mem_fd_memlock(int fd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	return procs_field(path, "memlock");
}
