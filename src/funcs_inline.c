#include "funcs_inline.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "funcs_internal.h"
#include "gopclntab.h"
#include "log.h"

/* A name of the inline trees, where it first appears in them, and how
 * many sites it has. */
struct inl_name {
	const char *name;
	size_t first;
	uint32_t sites;
};

static int inl_name_cmp(const void *a, const void *b)
{
	const struct inl_name *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : (x->first < y->first ? -1 : x->first > y->first);
}

/* v's distinct pointers in order of first appearance, with their sites:
 * the linker writes each name once, so equal names are mostly one
 * pointer, counted by a hash on it without reading the name.  The number
 * of them, or 0 out of memory. */
static size_t inl_by_ptr(const char **v, size_t n, struct inl_name *u)
{
	size_t mask = 1023, k = 0;

	while (mask < 2 * n)
		mask = 2 * mask + 1;
	uint32_t *slot = calloc(mask + 1, sizeof(*slot)); /* 1 + index into u, 0: free */
	if (!slot)
		return 0;
	for (size_t i = 0; i < n; i++) {
		size_t h = (size_t)((uint64_t)(uintptr_t)v[i] * 0x9E3779B97F4A7C15ull >> 20) & mask;
		while (slot[h] && u[slot[h] - 1].name != v[i])
			h = (h + 1) & mask;
		if (slot[h]) {
			u[slot[h] - 1].sites++;
			continue;
		}
		u[k] = (struct inl_name){.name = v[i], .first = i, .sites = 1};
		slot[h] = (uint32_t)++k;
	}
	free(slot);
	return k;
}

/* v's names, each once, by name, with its sites and the pointer of its
 * first appearance in v (what a sort of v by name would keep first). */
static struct inl_name *inl_unique(const char **v, size_t n, size_t *count)
{
	struct inl_name *u = n <= UINT32_MAX ? calloc(n ? n : 1, sizeof(*u)) : NULL;
	size_t k = u ? inl_by_ptr(v, n, u) : 0;

	if (!k && n) {
		free(u);
		return NULL;
	}
	/* The same bytes written twice: one name all the same. */
	qsort(u, k, sizeof(*u), inl_name_cmp);
	*count = 0;
	for (size_t i = 0; i < k; i++)
		if (*count > 0 && !strcmp(u[*count - 1].name, u[i].name))
			u[*count - 1].sites += u[i].sites;
		else
			u[(*count)++] = u[i];
	return u;
}

/* Every entry of every inline tree, by name: the sites of each function. */
static int funcs_inline_names(struct func_index *idx, const char ***names, size_t *count)
{
	size_t n = 0, cap = 0, nf = gopclntab_count(idx->pcln);
	const char **v = NULL;

	for (size_t i = 0; i < nf; i++) {
		uint32_t k, nk;
		struct gopclntab_inl e;
		if (gopclntab_inl_count(idx->pcln, i, &nk) != 0)
			continue; /* a corrupt tree: that function's sites are not known */
		for (k = 0; k < nk; k++) {
			if (gopclntab_inl_get(idx->pcln, i, k, &e) != 0)
				break;
			if (n == cap) {
				const char **nv =
				    realloc(v, (cap = cap ? 2 * cap : 1024) * sizeof(*v));
				if (!nv) {
					free(v);
					return -ENOMEM;
				}
				v = nv;
			}
			v[n++] = e.name;
		}
		if (i % FUNCS_DROP_EVERY == FUNCS_DROP_EVERY - 1)
			funcs_drop_behind(idx, i + 1 < nf ? i + 1 : i);
	}
	*names = v;
	*count = n;
	return 0;
}

static int funcs_inline_assign(struct func_index *idx, const char **v, size_t n)
{
	size_t nu = 0, only = 0;
	struct inl_name *u = inl_unique(v, n, &nu);
	struct func_info **found = calloc(nu ? nu : 1, sizeof(*found));

	if (!u || !found) {
		free(u);
		free(found);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nu; i++)
		if (!(found[i] = funcs_find(idx, u[i].name)))
			only++;
	if (only && !(idx->inl_only = calloc(only, sizeof(*idx->inl_only)))) {
		free(u);
		free(found);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nu; i++) {
		struct func_info *f = found[i];
		if (!f) {
			f = &idx->inl_only[idx->inl_only_count++];
			f->name = u[i].name;
			f->inline_only = true;
		}
		f->inlined_sites = u[i].sites;
	}
	free(u);
	free(found);
	return 0;
}

void funcs_inline_scan(struct func_index *idx)
{
	const char **v = NULL;
	size_t n = 0;

	pthread_mutex_lock(&idx->names->inl_lock);
	if (!idx->names->inl_scanned && gopclntab_has_inl(idx->pcln)) {
		if (funcs_inline_names(idx, &v, &n) == 0 && funcs_inline_assign(idx, v, n) == 0)
			idx->inl_known = true;
		else
			log_warn("funcs", "%s: out of memory reading the inline trees", idx->path);
		free(v);
	}
	idx->names->inl_scanned = true;
	pthread_mutex_unlock(&idx->names->inl_lock);
}
