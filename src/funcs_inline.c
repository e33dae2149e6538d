#include "funcs_inline.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "funcs_internal.h"
#include "gopclntab.h"
#include "log.h"

static int name_ptr_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
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
	struct func_info **found = calloc(n ? n : 1, sizeof(*found));
	size_t only = 0;

	if (!found)
		return -ENOMEM;
	qsort(v, n, sizeof(*v), name_ptr_cmp);
	/* Each name looked up once, its function kept at the first of its
	 * run of sites in v. */
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(v[j], v[i]); j++)
			;
		if (!(found[i] = funcs_find(idx, v[i])))
			only++;
	}
	if (only && !(idx->inl_only = calloc(only, sizeof(*idx->inl_only)))) {
		free(found);
		return -ENOMEM;
	}
	for (size_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && !strcmp(v[j], v[i]); j++)
			;
		struct func_info *f = found[i];
		if (!f) {
			f = &idx->inl_only[idx->inl_only_count++];
			f->name = v[i];
			f->inline_only = true;
		}
		f->inlined_sites = (uint32_t)(j - i);
	}
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
