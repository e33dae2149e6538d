/* The index's insides, for the files that make it up (funcs.c and
 * funcs_*.c): the rest of retop sees only funcs.h and the headers of
 * funcs_*.c. */
#ifndef RETOP_FUNCS_INTERNAL_H
#define RETOP_FUNCS_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "funcs.h"

struct func_names {
	pthread_mutex_t lock; /* the UI and its worker may both look up */
	struct func_info **sorted;
	pthread_mutex_t inl_lock;
	bool inl_scanned;
};

/* A pass over the table in its order gives back the pages it has read
 * every so many functions (funcs_drop_behind): about 1 MiB of Debian's
 * prometheus's pc tables.  Every madvise() flushes the TLB of each CPU
 * the process's threads ran on, an interrupt to each (dear in a VM): one
 * every 256 functions took a third of the CPU time of prometheus's full
 * listing, for 1 MiB less resident at its peak. */
#define FUNCS_DROP_EVERY 4096

/* Give back the pages of pc tables and _func records below function i of
 * the table (the names stay). */
void funcs_drop_behind(struct func_index *idx, size_t i);

/* A decoder and code buffers reused from function to function: one per
 * decoding thread, and the index's own for its caller's thread. */
struct funcs_decoder {
	struct retsites_engine *eng;
	uint8_t *buf, *batch; /* one function; a batch of them */
	uint8_t *bits;	      /* the judge's boundary map (funcs_code.bits) */
	size_t cap, batch_cap, bits_cap;
};

int funcs_decoder_open(struct funcs_decoder **out, char *err);
void funcs_decoder_close(struct funcs_decoder *d);

/* qsort() order of func_info pointers: by name, then entry. */
int funcs_name_cmp(const void *a, const void *b);

#endif
