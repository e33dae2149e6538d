#define _GNU_SOURCE /* qsort_r */
#include "func_order.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "funcs.h"
#include "snapshot.h"

/* The name first, then what else --sort takes: the live table's column
 * title where it differs (INFL, ORPH, UNMATCH, DROP, FUNCTION). */
static const struct {
	const char *name, *alias;
} func_order_keys[ORDER_KEYS] = {
    [ORDER_NAME] = {"name", "function"},
    [ORDER_CALLS] = {"calls", NULL},
    [ORDER_RATE] = {"calls/s", "rate"},
    [ORDER_P50] = {"p50", NULL},
    [ORDER_P99] = {"p99", NULL},
    [ORDER_ERRORS] = {"err%", "errors"},
    [ORDER_MAX] = {"max", NULL},
    [ORDER_INFLIGHT] = {"inflight", "infl"},
    [ORDER_OLDEST] = {"oldest", NULL},
    [ORDER_ORPHANS] = {"orphans", "orph"},
    [ORDER_UNMATCHED] = {"unmatched", "unmatch"},
    [ORDER_DROPPED] = {"dropped", "drop"},
};

const char *func_order_name(enum func_order_key key)
{
	return key < ORDER_KEYS ? func_order_keys[key].name : "?";
}

bool func_order_ascending(enum func_order_key key)
{
	return key == ORDER_NAME;
}

struct func_order func_order_default(void)
{
	return (struct func_order){.key = ORDER_DEFAULT,
				   .ascending = func_order_ascending(ORDER_DEFAULT)};
}

int func_order_parse(const char *s, struct func_order *out)
{
	char sign = *s == '+' || *s == '-' ? *s++ : 0;

	for (int k = 0; k < ORDER_KEYS; k++) {
		const char *alias = func_order_keys[k].alias;
		if (strcasecmp(s, func_order_keys[k].name) && (!alias || strcasecmp(s, alias)))
			continue;
		out->key = (enum func_order_key)k;
		out->ascending = sign ? sign == '-' : func_order_ascending(out->key);
		out->interval = false;
		return 0;
	}
	return -1;
}

void func_order_list(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int k = 0; k < ORDER_KEYS && n < len; k++)
		n += (size_t)snprintf(buf + n, len - n, "%s%s", k ? ", " : "",
				      func_order_keys[k].name);
}

static bool func_order_inline_only(const struct snapshot_func *f)
{
	return f->f && f->f->inline_only;
}

double func_order_value(const struct snapshot_func *f, enum func_order_key key, bool interval)
{
	const struct stats_view *v = &f->v;

	/* A function that exists only inlined has its inlined calls alone; an
	 * entry-only one has no durations (the faces show "-"). */
	switch (key) {
	case ORDER_CALLS:
		return func_order_inline_only(f) ? (double)f->inlined_calls : (double)v->calls;
	case ORDER_RATE:
		return func_order_inline_only(f) ? f->inlined_calls_per_s : v->calls_per_s;
	case ORDER_P50:
		return f->entry_only ? 0 : (double)(interval ? v->p50_interval_ns : v->p50_ns);
	case ORDER_P99:
		return f->entry_only ? 0 : (double)(interval ? v->p99_interval_ns : v->p99_ns);
	case ORDER_ERRORS:
		/* Its failing share, as ERR% shows it; below any share where
		 * its errors are not read. */
		if (!f->errors_counted)
			return -1;
		return interval ? f->error_share_interval : f->error_share;
	case ORDER_MAX:
		return f->entry_only ? 0 : (double)v->max_ns;
	case ORDER_INFLIGHT:
		return (double)f->in_flight;
	case ORDER_OLDEST:
		return (double)f->oldest_in_flight_ns;
	case ORDER_ORPHANS:
		return (double)f->orphans;
	case ORDER_UNMATCHED:
		return (double)v->unmatched;
	case ORDER_DROPPED:
		return (double)v->dropped;
	case ORDER_NAME:
	case ORDER_KEYS:
		break;
	}
	return 0;
}

/* The order on two rows' figures under o's key (x, y: unread for
 * ORDER_NAME) and their names: func_order_cmp, whether the figures were
 * read from the rows now or before the sort. */
static int func_order_rule(double x, const char *xname, double y, const char *yname,
			   const struct func_order *o)
{
	int r = o->key != ORDER_NAME ? (x > y) - (x < y) : 0;

	if (r == 0) {
		int byname = strcmp(xname, yname);
		return o->key == ORDER_NAME && !o->ascending ? -byname : byname;
	}
	return o->ascending ? r : -r;
}

int func_order_cmp(const struct snapshot_func *a, const struct snapshot_func *b,
		   const struct func_order *o)
{
	double x = 0, y = 0;

	if (o->key != ORDER_NAME) {
		x = func_order_value(a, o->key, o->interval);
		y = func_order_value(b, o->key, o->interval);
	}
	return func_order_rule(x, a->name, y, b->name, o);
}

struct func_order_ctx {
	const struct snapshot_func *funcs;
	const struct func_order *o;
};

static int func_order_cmp_at(const void *a, const void *b, void *arg)
{
	const struct func_order_ctx *c = arg;
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	int r = func_order_cmp(&c->funcs[i], &c->funcs[j], c->o);

	/* Copies of one name (a deploy's, generic shapes): their positions
	 * decide, so qsort's instability never shows. */
	return r ? r : (i > j) - (i < j);
}

/* A row as the sort sees it: its figure and name read once, not at each
 * of some ten thousand comparisons (a thousand rows 6 KiB apart, each
 * comparison two cold rows). */
struct func_order_item {
	double value;
	const char *name;
	size_t at;
};

/* func_order_cmp_at on the items: the same order. */
static int func_order_cmp_item(const void *a, const void *b, void *arg)
{
	const struct func_order_item *x = a, *y = b;
	int r = func_order_rule(x->value, x->name, y->value, y->name, arg);

	return r ? r : (x->at > y->at) - (x->at < y->at);
}

void func_order_sort(const struct snapshot_func *funcs, size_t n, const struct func_order *o,
		     size_t *order)
{
	struct func_order_item *items = n ? malloc(n * sizeof(*items)) : NULL;

	if (!items) {
		/* No memory: the rows compared where they are. */
		struct func_order_ctx c = {funcs, o};
		for (size_t i = 0; i < n; i++)
			order[i] = i;
		qsort_r(order, n, sizeof(*order), func_order_cmp_at, &c);
		return;
	}
	for (size_t i = 0; i < n; i++)
		items[i] = (struct func_order_item){
		    .value =
			o->key == ORDER_NAME ? 0 : func_order_value(&funcs[i], o->key, o->interval),
		    .name = funcs[i].name,
		    .at = i};
	qsort_r(items, n, sizeof(*items), func_order_cmp_item, (void *)o);
	for (size_t i = 0; i < n; i++)
		order[i] = items[i].at;
	free(items);
}
