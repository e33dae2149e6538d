#include "slowest.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

#include "tracer.h"
#include "clock.h"

struct slowest {
	struct ring_buffer *rb;
	const struct func_images *im;
	const uint32_t *gens;
	double wall_minus_mono; /* wall clock minus bpf_ktime_get_ns(), seconds */
	struct slowest_list pending[RETOP_MAX_FUNCS];
	struct slowest_list over[RETOP_MAX_FUNCS]; /* --slow: the latest, oldest first */
	bool has_plan[RETOP_MAX_FUNCS];
	struct args_plan plans[RETOP_MAX_FUNCS];
};

static struct slowest_values *slowest_values_dup(const struct slowest_values *v)
{
	struct slowest_values *d;

	if (!v || !(d = malloc(sizeof(*d))))
		return NULL;
	*d = *v;
	return d;
}

/* Insert c into l (longest first) if it is among the N longest; l takes
 * c's values, or frees them. */
static void slowest_insert(struct slowest_list *l, const struct slowest_call *c)
{
	size_t i = l->n;

	if (l->n == SLOWEST_N && c->dur_ns <= l->calls[SLOWEST_N - 1].dur_ns) {
		free(c->vals);
		return;
	}
	if (l->n < SLOWEST_N)
		l->n++;
	else {
		i = SLOWEST_N - 1;
		free(l->calls[i].vals);
	}
	while (i > 0 && l->calls[i - 1].dur_ns < c->dur_ns) {
		l->calls[i] = l->calls[i - 1];
		i--;
	}
	l->calls[i] = *c;
}

/* Append c to l, the oldest giving way when l is full; l takes c's values. */
static void slowest_append(struct slowest_list *l, const struct slowest_call *c)
{
	if (l->n == SLOWEST_N) {
		free(l->calls[0].vals);
		memmove(&l->calls[0], &l->calls[1], (SLOWEST_N - 1) * sizeof(l->calls[0]));
		l->n--;
	}
	l->calls[l->n++] = *c;
}

static int slowest_event(void *ctx, void *data, size_t size)
{
	struct slowest *sl = ctx;
	const struct retop_slow_event *e = data;
	const struct func_info *f;
	struct slowest_values v = {.has_args = false};
	struct slowest_call c;

	if (size < sizeof(*e) || e->func_id >= RETOP_MAX_FUNCS || e->gen != sl->gens[e->func_id])
		return 0;
	f = funcs_images_caller(sl->im, e->image, e->ret_addr);
	c = (struct slowest_call){
	    .time = sl->wall_minus_mono + (double)e->start_ns / 1e9,
	    .dur_ns = e->dur_ns,
	    .goid = e->goid,
	    .tid = e->tid,
	    .pid = e->tgid,
	    .caller = f ? f->name : "?",
	};
	if (e->has_args && sl->has_plan[e->func_id]) {
		v.has_args = true;
		args_decode(&sl->plans[e->func_id], &e->args, &v.args);
	}
	if (e->has_results && sl->has_plan[e->func_id]) {
		v.has_results = true;
		args_decode_results(&sl->plans[e->func_id], &e->results, &v.results);
	}
	/* Out of memory: the call is listed without its values. */
	c.vals = v.has_args || v.has_results ? slowest_values_dup(&v) : NULL;
	if (e->over) {
		struct slowest_call o = c;
		o.vals = slowest_values_dup(c.vals);
		slowest_append(&sl->over[e->func_id], &o);
	}
	slowest_insert(&sl->pending[e->func_id], &c);
	return 0;
}

int slowest_open(int ringbuf_fd, const struct func_images *im, struct slowest **out)
{
	struct slowest *sl = calloc(1, sizeof(*sl));

	*out = NULL;
	if (!sl)
		return -ENOMEM;
	sl->im = im;
	sl->rb = ring_buffer__new(ringbuf_fd, slowest_event, sl, NULL);
	if (!sl->rb) {
		int e = -errno;
		free(sl);
		return e ? e : -ENOMEM;
	}
	*out = sl;
	return 0;
}

void slowest_close(struct slowest *sl)
{
	if (!sl)
		return;
	for (size_t i = 0; i < RETOP_MAX_FUNCS; i++) {
		slowest_clear(&sl->pending[i]);
		slowest_clear(&sl->over[i]);
	}
	ring_buffer__free(sl->rb);
	free(sl);
}

int slowest_poll(struct slowest *sl, const uint32_t *gens)
{
	struct timeval tv;
	int n;

	gettimeofday(&tv, NULL);
	sl->wall_minus_mono =
	    (double)tv.tv_sec + (double)tv.tv_usec / 1e6 - (double)clock_now_ns() / 1e9;
	sl->gens = gens;
	n = ring_buffer__consume(sl->rb);
	return n < 0 ? n : 0;
}

void slowest_call_values(const struct slowest_call *c, char *buf, size_t len)
{
	char a[SLOWEST_VALUES_LEN / 2] = "", r[SLOWEST_VALUES_LEN / 2] = "";
	const struct slowest_values *v = c->vals;

	if (v && v->has_args)
		args_format(&v->args, "arg", a, sizeof(a));
	if (v && v->has_results)
		args_format(&v->results, "r", r, sizeof(r));
	snprintf(buf, len, "%s%s%s", a, v && v->has_results ? " -> " : "", r);
}

void slowest_clear(struct slowest_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->calls[i].vals);
	l->n = 0;
}

int slowest_copy(struct slowest_list *dst, const struct slowest_list *src)
{
	int ret = 0;

	if (dst == src)
		return 0;
	slowest_clear(dst);
	for (size_t i = 0; i < src->n; i++) {
		dst->calls[i] = src->calls[i];
		dst->calls[i].vals = slowest_values_dup(src->calls[i].vals);
		if (src->calls[i].vals && !dst->calls[i].vals)
			ret = -ENOMEM;
	}
	dst->n = src->n;
	return ret;
}

/* Move list into out, leaving it empty: the values change hands. */
static void slowest_move(struct slowest_list *list, int slot, struct slowest_list *out)
{
	slowest_clear(out);
	if (slot < 0 || slot >= RETOP_MAX_FUNCS)
		return;
	/* Its calls only: a thousand functions, most with none, each sample. */
	out->n = list[slot].n;
	memcpy(out->calls, list[slot].calls, out->n * sizeof(out->calls[0]));
	list[slot].n = 0;
}

void slowest_take(struct slowest *sl, int slot, struct slowest_list *out)
{
	slowest_move(sl->pending, slot, out);
}

void slowest_take_over(struct slowest *sl, int slot, struct slowest_list *out)
{
	slowest_move(sl->over, slot, out);
}

void slowest_set_plan(struct slowest *sl, int slot, const struct args_plan *plan)
{
	if (slot < 0 || slot >= RETOP_MAX_FUNCS)
		return;
	sl->has_plan[slot] = plan != NULL;
	if (plan)
		sl->plans[slot] = *plan;
}

void slowest_merge(struct slowest_list *into, const struct slowest_list *from)
{
	for (size_t i = 0; i < from->n; i++) {
		struct slowest_call c = from->calls[i];
		c.vals = slowest_values_dup(c.vals);
		slowest_insert(into, &c);
	}
}
