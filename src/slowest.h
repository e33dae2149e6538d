/* The slowest calls: events the BPF side ships through a ring buffer only
 * for calls longer than the current N-th slowest of their function (no
 * user-space work for the others), kept here as the N slowest per function
 * of the last interval and since tracing began. */
#ifndef RETOP_SLOWEST_H
#define RETOP_SLOWEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"
#include "args.h"
#include "funcs.h"

#define SLOWEST_N RETOP_SLOW_N

/* What a call was called with and returned: ~1.2 KiB, so allocated only
 * for the calls that have them (--args). */
struct slowest_values {
	bool has_args; /* captured at the entry */
	struct args_values args;
	bool has_results; /* read at the RET, when their types are known */
	struct args_values results;
};

struct slowest_call {
	double time; /* wall clock at the call's start, seconds since the epoch */
	uint64_t dur_ns;
	uint64_t goid; /* 0: unknown */
	uint32_t tid, pid;
	const char *caller; /* the calling function, or "?" */
	struct slowest_values *vals; /* owned by the list holding the call; NULL: none */
};

/* A list owns its calls' values: empty it with slowest_clear() (not by
 * setting n), fill it with slowest_copy(); a zeroed list is empty. */
struct slowest_list {
	size_t n; /* longest first */
	struct slowest_call calls[SLOWEST_N];
};

struct slowest;

/* ringbuf_fd: the BPF ring buffer; im names the callers (the session's
 * table, read at every event: deploys and load biases update it). */
int slowest_open(int ringbuf_fd, const struct func_images *im, struct slowest **out);
void slowest_close(struct slowest *sl);
/* Take every event shipped so far (never waits).  gens: the current attach
 * generation of each slot, RETOP_MAX_FUNCS of them: events of an earlier
 * function in the slot are dropped. */
int slowest_poll(struct slowest *sl, const uint32_t *gens);
/* The slowest of slot since the last take, and forget them. */
void slowest_take(struct slowest *sl, int slot, struct slowest_list *out);
/* The latest calls of slot at least --slow long since the last take (the
 * newest SLOWEST_N, oldest first), and forget them. */
void slowest_take_over(struct slowest *sl, int slot, struct slowest_list *out);
/* Decode the arguments of slot's calls with plan (NULL: no arguments). */
void slowest_set_plan(struct slowest *sl, int slot, const struct args_plan *plan);
/* A call's arguments and results for a screen: `id=1 key="k" -> r0=2`,
 * "" when it has neither. */
#define SLOWEST_VALUES_LEN 1024
void slowest_call_values(const struct slowest_call *c, char *buf, size_t len);
/* dst = src, the values of its calls copied (dst's own freed first);
 * -ENOMEM leaves the calls whose values could not be copied without them. */
int slowest_copy(struct slowest_list *dst, const struct slowest_list *src);
/* Empty l, freeing the values it holds. */
void slowest_clear(struct slowest_list *l);
/* Keep into the N longest of into and from. */
void slowest_merge(struct slowest_list *into, const struct slowest_list *from);

#endif
