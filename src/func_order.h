/* The order of the traced functions, one definition for every face: the
 * dashboard's live table and batch mode (text and JSON) sort by the same
 * keys, named like the live table's columns, so `--sort p99` and the
 * dashboard's P99 column put the same function first. */
#ifndef RETOP_FUNC_ORDER_H
#define RETOP_FUNC_ORDER_H

#include <stdbool.h>
#include <stddef.h>

struct snapshot_func;

/* A key is one figure of a snapshot_func; a new figure (errors) is one
 * more key here and one more row in func_order.c's table. */
enum func_order_key {
	ORDER_NAME,
	ORDER_CALLS,
	ORDER_RATE,
	ORDER_P50,
	ORDER_P99,
	ORDER_ERRORS,
	ORDER_MAX,
	ORDER_INFLIGHT,
	ORDER_OLDEST,
	ORDER_ORPHANS,
	ORDER_UNMATCHED,
	ORDER_DROPPED,
	ORDER_KEYS
};

/* What the dashboard opens with and batch mode prints by: an operator
 * looks for the slow function first. */
#define ORDER_DEFAULT ORDER_P99

struct func_order {
	enum func_order_key key;
	bool ascending;
	bool interval; /* p50/p99 of the last interval, not since start */
};

/* The key's name for --sort and messages: "p99", "calls/s". */
const char *func_order_name(enum func_order_key key);
/* Its usual direction: names A to Z, figures highest first. */
bool func_order_ascending(enum func_order_key key);
/* The default order: ORDER_DEFAULT, highest first, since start. */
struct func_order func_order_default(void);
/* "p99" (its usual direction), "+p99" (highest first), "-p99" (lowest
 * first), as top's -o; a column title ("CALLS/S", "INFL") or a key name,
 * any case.  0, or -1 when s names no key. */
int func_order_parse(const char *s, struct func_order *out);
/* Every key's name, for a usage message: "name, calls, calls/s, ...". */
void func_order_list(char *buf, size_t len);
/* The figure f sorts by under key (0 for ORDER_NAME): the one each face
 * shows, estimated calls and sampled durations included. */
double func_order_value(const struct snapshot_func *f, enum func_order_key key, bool interval);
/* <0, 0, >0 as a comes before, with, after b.  Ties go in name order
 * whatever the direction, so rows do not swap between refreshes. */
int func_order_cmp(const struct snapshot_func *a, const struct snapshot_func *b,
		   const struct func_order *o);
/* order[0..n) = the positions of funcs[0..n) in the order o (ties of the
 * same name in their positions' order). */
void func_order_sort(const struct snapshot_func *funcs, size_t n, const struct func_order *o,
		     size_t *order);

#endif
