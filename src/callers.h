/* Latency by caller: the BPF side keeps a histogram per (function, return
 * address); this folds them into one row per calling function, the busiest
 * CALLERS_MAX plus "other". */
#ifndef RETOP_CALLERS_H
#define RETOP_CALLERS_H

#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"
#include "funcs.h"

#define CALLERS_MAX 16

struct callers_row {
	const char *name; /* the calling function, "other", or "?" (unknown address) */
	uint64_t calls, sum_ns, mean_ns, p50_ns, p99_ns;
	uint64_t errors; /* of calls, those that returned a non-nil error */
};

struct callers_view {
	size_t n; /* busiest first; "other", if any, last; past n, rows are undefined */
	struct callers_row rows[CALLERS_MAX + 1];
};

/* A view's rows up to n only. */
void callers_view_copy(struct callers_view *dst, const struct callers_view *src);

/* The caller map as read at one refresh: every entry of every slot, read
 * in batches (a walk per function would cost a syscall per entry each). */
struct callers_acc;
struct callers_table {
	struct retop_caller_key *keys;
	struct retop_caller_stats *vals;
	size_t n, cap;
	struct callers_acc *acc; /* callers_view_of()'s room to fold in */
	/* The entries by slot, in the order read: slot k's are
	 * by_slot[slot_start[k]] up to slot_start[k + 1] (a thousand
	 * functions each looking through every entry was a million steps a
	 * refresh). */
	size_t *by_slot;
	size_t slot_start[RETOP_MAX_FUNCS + 1];
};

/* Read the whole caller map into t (its buffers kept for the next read).
 * 0, or a negative errno (t then holds nothing). */
int callers_table_read(int map_fd, struct callers_table *t);
/* Index t's n entries by slot (callers_table_read does it).  0, or -ENOMEM
 * (t then holds nothing). */
int callers_table_index(struct callers_table *t);
void callers_table_free(struct callers_table *t);
/* Fold the entries of slot (attach generation gen) per calling function,
 * named by the index of the binary each return address came from.  0, or
 * -ENOMEM. */
int callers_view_of(struct callers_table *t, uint32_t slot, uint32_t gen,
		    const struct func_images *im, struct callers_view *out);
/* Delete every entry of slot, whatever its generation. */
void callers_purge(int map_fd, uint32_t slot);

#endif
