/* Latency by caller: the BPF side keeps a histogram per (function, return
 * address); this folds them into one row per calling function, the busiest
 * CALLERS_MAX plus "other". */
#ifndef RETOP_CALLERS_H
#define RETOP_CALLERS_H

#include <stddef.h>
#include <stdint.h>

#include "funcs.h"

#define CALLERS_MAX 16

struct callers_row {
	const char *name; /* the calling function, "other", or "?" (unknown address) */
	uint64_t calls, sum_ns, mean_ns, p50_ns, p99_ns;
};

struct callers_view {
	size_t n; /* busiest first; "other", if any, last */
	struct callers_row rows[CALLERS_MAX + 1];
};

/* Read the entries of slot (attach generation gen) from the caller map and
 * fold them per calling function, named by the index of the binary each
 * return address came from.  0, or a negative errno. */
int callers_read(int map_fd, uint32_t slot, uint32_t gen, const struct func_images *im,
		 struct callers_view *out);
/* Delete every entry of slot, whatever its generation. */
void callers_purge(int map_fd, uint32_t slot);

#endif
