#include "callers.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../bpf/retop.h"
#include "stats.h"

/* One calling function, summed over its call sites. */
struct callers_acc {
	const char *name;
	struct retop_caller_stats s;
};

/* Call sites per function are bounded in BPF (a race may add one per CPU);
 * this many distinct callers is more than a slot can hold. */
#define CALLERS_ACC_MAX (RETOP_CALLER_SITES + 64)

/* ret_addr as the process saw it; bias: its load address minus the link
 * address (a PIE's), so that the index, which has link addresses, knows it. */
static const char *callers_name(const struct func_images *im, unsigned image, uint64_t ret_addr)
{
	const struct func_info *f;

	if (ret_addr == RETOP_CALLER_OTHER)
		return "other";
	f = funcs_images_caller(im, image, ret_addr);
	return f ? f->name : "?";
}

static void callers_add(struct retop_caller_stats *to, const struct retop_caller_stats *from)
{
	to->calls += from->calls;
	to->sum_ns += from->sum_ns;
	to->errors += from->errors;
	for (size_t b = 0; b < RETOP_HIST_BUCKETS; b++)
		to->hist[b] += from->hist[b];
}

static struct callers_acc *callers_find(struct callers_acc *acc, size_t *n, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (strcmp(acc[i].name, name) == 0)
			return &acc[i];
	/* The last place is kept for "other". */
	if (*n >= CALLERS_ACC_MAX - 1 && strcmp(name, "other") != 0)
		return callers_find(acc, n, "other");
	acc[*n].name = name;
	memset(&acc[*n].s, 0, sizeof(acc[*n].s));
	return &acc[(*n)++];
}

static int callers_cmp(const void *a, const void *b)
{
	const struct callers_acc *x = a, *y = b;
	bool ox = strcmp(x->name, "other") == 0, oy = strcmp(y->name, "other") == 0;

	if (ox != oy)
		return ox ? 1 : -1;
	if (x->s.calls != y->s.calls)
		return x->s.calls > y->s.calls ? -1 : 1;
	return strcmp(x->name, y->name);
}

static void callers_row_fill(struct callers_row *r, const struct callers_acc *a)
{
	r->name = a->name;
	r->calls = a->s.calls;
	r->sum_ns = a->s.sum_ns;
	r->errors = a->s.errors;
	r->mean_ns = a->s.calls ? a->s.sum_ns / a->s.calls : 0;
	uint64_t p[2];

	stats_p50_p99(a->s.hist, RETOP_HIST_BUCKETS, 0, 0, p);
	r->p50_ns = p[0];
	r->p99_ns = p[1];
}

/* The busiest CALLERS_MAX rows, then everything else folded into "other". */
static void callers_fold(struct callers_acc *acc, size_t n, struct callers_view *out)
{
	struct callers_acc *other = NULL;

	qsort(acc, n, sizeof(*acc), callers_cmp);
	for (size_t i = 0; i < n; i++) {
		if (out->n < CALLERS_MAX && strcmp(acc[i].name, "other") != 0) {
			callers_row_fill(&out->rows[out->n++], &acc[i]);
			continue;
		}
		if (!other) {
			other = &acc[i];
			other->name = "other";
			continue;
		}
		callers_add(&other->s, &acc[i].s);
	}
	if (other && other->s.calls)
		callers_row_fill(&out->rows[out->n++], other);
}

/* A counting sort: each slot's entries in the order read.  BPF masks
 * func_id into a slot; one out of range is no slot's. */
int callers_table_index(struct callers_table *t)
{
	size_t *by = realloc(t->by_slot, (t->cap ? t->cap : 1) * sizeof(*by));

	if (!by) {
		t->n = 0;
		return -ENOMEM;
	}
	t->by_slot = by;
	memset(t->slot_start, 0, sizeof(t->slot_start));
	for (size_t i = 0; i < t->n; i++)
		if (t->keys[i].func_id < RETOP_MAX_FUNCS)
			t->slot_start[t->keys[i].func_id + 1]++;
	for (size_t k = 0; k < RETOP_MAX_FUNCS; k++)
		t->slot_start[k + 1] += t->slot_start[k];
	size_t next[RETOP_MAX_FUNCS];
	memcpy(next, t->slot_start, sizeof(next));
	for (size_t i = 0; i < t->n; i++)
		if (t->keys[i].func_id < RETOP_MAX_FUNCS)
			by[next[t->keys[i].func_id]++] = i;
	return 0;
}

int callers_table_read(int map_fd, struct callers_table *t)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 token = 0;
	bool first = true, grow = false;

	/* Nothing, until the read is whole and indexed. */
	t->n = 0;
	memset(t->slot_start, 0, sizeof(t->slot_start));
	for (;;) {
		if (grow || t->cap - t->n < 16) {
			size_t cap = t->cap ? 2 * t->cap : 64;
			struct retop_caller_key *k = realloc(t->keys, cap * sizeof(*k));
			if (k)
				t->keys = k;
			struct retop_caller_stats *v = realloc(t->vals, cap * sizeof(*v));
			if (v)
				t->vals = v;
			if (!k || !v) {
				t->n = 0;
				return -ENOMEM;
			}
			t->cap = cap;
			grow = false;
		}
		__u32 count = (__u32)(t->cap - t->n);
		int ret = bpf_map_lookup_batch(map_fd, first ? NULL : &token, &token,
					       t->keys + t->n, t->vals + t->n, &count, &opts);
		int e = ret ? errno : 0;
		first = false;
		t->n += count;
		if (e == ENOENT)
			return callers_table_index(t);
		if (e == ENOSPC && count == 0) {
			grow = true; /* one bucket holds more than fits: grow, retry */
			continue;
		}
		if (e) {
			t->n = 0;
			return -e;
		}
	}
}

void callers_table_free(struct callers_table *t)
{
	free(t->keys);
	free(t->vals);
	free(t->acc);
	free(t->by_slot);
	memset(t, 0, sizeof(*t));
}

void callers_view_copy(struct callers_view *dst, const struct callers_view *src)
{
	dst->n = src->n < CALLERS_MAX + 1 ? src->n : CALLERS_MAX + 1;
	memcpy(dst->rows, src->rows, dst->n * sizeof(dst->rows[0]));
}

int callers_view_of(struct callers_table *t, uint32_t slot, uint32_t gen,
		    const struct func_images *im, struct callers_view *out)
{
	size_t n = 0;

	out->n = 0; /* rows past n are undefined */
	if (!t->acc && !(t->acc = malloc(CALLERS_ACC_MAX * sizeof(*t->acc))))
		return -ENOMEM;
	if (slot >= RETOP_MAX_FUNCS || !t->by_slot)
		return 0;
	for (size_t k = t->slot_start[slot]; k < t->slot_start[slot + 1]; k++) {
		size_t i = t->by_slot[k];
		const struct retop_caller_key *key = &t->keys[i];
		if (key->func_id != slot || key->gen != gen || !t->vals[i].calls)
			continue;
		callers_add(
		    &callers_find(t->acc, &n, callers_name(im, key->image, key->ret_addr))->s,
		    &t->vals[i]);
	}
	callers_fold(t->acc, n, out);
	return 0;
}

void callers_purge(int map_fd, uint32_t slot)
{
	struct retop_caller_key key, next, *prev = NULL;

	/* Deleting while walking can restart the walk: collect the keys of
	 * the slot a batch at a time, then delete them. */
	for (;;) {
		struct retop_caller_key del[64];
		size_t nd = 0;

		prev = NULL;
		while (nd < 64 && bpf_map_get_next_key(map_fd, prev, &next) == 0) {
			key = next;
			prev = &key;
			if (key.func_id == slot)
				del[nd++] = key;
		}
		for (size_t i = 0; i < nd; i++)
			bpf_map_delete_elem(map_fd, &del[i]);
		if (nd < 64)
			return;
	}
}
