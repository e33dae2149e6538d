#include "funcs.h"

#include <elf.h>
#include <errno.h>
#include <fnmatch.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_image.h"
#include "gopclntab.h"
#include "log.h"

/* Functions larger than this are not decoded (nothing in Go comes close). */
#define FUNCS_MAX_DECODE (16u << 20)

const char *func_source_name(enum func_source s)
{
	static const char *const names[] = {"pclntab", "symtab", "dwarf", "sdk"};
	return s <= SRC_SDK ? names[s] : "?";
}

static const struct elf_symbol *symtab_lookup(const struct elf_symbol *syms, size_t n,
					      uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (syms[mid].value < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Markers such as runtime.text share an address with a function:
	 * prefer the symbol that has a size. */
	while (lo + 1 < n && syms[lo].size == 0 && syms[lo + 1].value == addr)
		lo++;
	return lo < n && syms[lo].value == addr ? &syms[lo] : NULL;
}

/* Code read sequentially in large chunks: trimming the padding of every
 * function of a stripped binary then costs a few reads, not one per
 * function, and the buffer's reuse keeps the resident set flat. */
#define CODE_WINDOW_SIZE (256u << 10)

struct code_window {
	uint8_t *buf;
	uint64_t start;
	size_t len;
};

static const uint8_t *code_window_get(const struct elf_image *img, struct code_window *w,
				      uint64_t vaddr, size_t len)
{
	const struct elf_segment *segs;
	size_t nsegs = elf_image_segments(img, &segs), avail = 0;

	if (w->buf && vaddr >= w->start && vaddr - w->start + len <= w->len)
		return w->buf + (vaddr - w->start);
	if (!w->buf && !(w->buf = malloc(CODE_WINDOW_SIZE)))
		return NULL;
	for (size_t i = 0; i < nsegs; i++)
		if ((segs[i].flags & PF_X) && vaddr >= segs[i].vaddr &&
		    vaddr - segs[i].vaddr < segs[i].filesz)
			avail = (size_t)(segs[i].vaddr + segs[i].filesz - vaddr);
	if (avail > CODE_WINDOW_SIZE)
		avail = CODE_WINDOW_SIZE;
	if (avail < len || elf_image_read_code(img, vaddr, w->buf, avail) != 0) {
		w->len = 0;
		return NULL;
	}
	w->start = vaddr;
	w->len = avail;
	return w->buf;
}

/* Trailing int3 padding, from the last bytes only; funcs_resolve_rets()
 * later replaces this with the decoder's answer. */
static uint64_t trim_padding(const struct elf_image *img, struct code_window *w, uint64_t entry,
			     uint64_t end)
{
	uint64_t size = end - entry;
	size_t n = size < 64 ? (size_t)size : 64;
	const uint8_t *tail = n ? code_window_get(img, w, end - n, n) : NULL;

	if (!tail)
		return size;
	while (n > 0 && tail[n - 1] == 0xCC) {
		n--;
		size--;
	}
	/* Go ends most functions with a short jump back to the entry; its
	 * displacement can be 0xCC (EB CC: jmp -52) and is no padding. */
	if (n > 0 && n < 64 && tail[n - 1] == 0xEB && size < end - entry)
		size++;
	return size;
}

static void funcs_fill_one(struct func_index *idx, struct code_window *w, struct func_info *f,
			   const struct gopclntab_func *gf)
{
	const struct elf_symbol *syms, *sym;
	size_t nsyms = elf_image_func_symbols(idx->img, &syms);

	f->name = gf->name;
	f->entry = gf->entry;
	f->pcln_index = gf->index;
	f->source = SRC_PCLNTAB;
	f->size = 0;
	if ((sym = symtab_lookup(syms, nsyms, gf->entry)) && sym->size) {
		f->source = SRC_SYMTAB;
		f->size = sym->size;
	}
	if (idx->dwarf && (f->dwarf = dwarf_info_lookup(idx->dwarf, gf->entry))) {
		f->source = SRC_DWARF;
		if (f->dwarf->high_pc > f->dwarf->low_pc)
			f->size = f->dwarf->high_pc - f->dwarf->low_pc;
	}
	if (f->size == 0 || f->size > gf->end - gf->entry)
		f->size = trim_padding(idx->img, w, gf->entry, gf->end);
	if (elf_image_vaddr_to_offset(idx->img, f->entry, &f->file_offset) != 0)
		f->file_offset = 0;
	if (gopclntab_line(idx->pcln, gf->index, gf->entry, &f->file, &f->line) != 0) {
		f->file = NULL;
		f->line = 0;
	}
}

static int by_name_cmp(const void *a, const void *b)
{
	const struct func_info *x = *(struct func_info *const *)a;
	const struct func_info *y = *(struct func_info *const *)b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->entry < y->entry ? -1 : x->entry > y->entry);
}

static int funcs_build(struct func_index *idx, char *err)
{
	size_t n = gopclntab_count(idx->pcln);

	idx->funcs = calloc(n ? n : 1, sizeof(*idx->funcs));
	idx->by_name = calloc(n ? n : 1, sizeof(*idx->by_name));
	if (!idx->funcs || !idx->by_name)
		return err_set(err, ENOMEM, "%s: out of memory for %zu functions", idx->path, n);
	struct code_window w = {0};
	for (size_t i = 0; i < n; i++) {
		struct gopclntab_func gf;
		int ret = gopclntab_func(idx->pcln, i, &gf, err);
		if (ret) {
			free(w.buf);
			return ret;
		}
		funcs_fill_one(idx, &w, &idx->funcs[idx->count], &gf);
		idx->by_name[idx->count] = &idx->funcs[idx->count];
		idx->count++;
	}
	free(w.buf);
	qsort(idx->by_name, idx->count, sizeof(*idx->by_name), by_name_cmp);
	return 0;
}

int funcs_load(const char *path, unsigned flags, struct func_index **out, char *err)
{
	struct func_index *idx = calloc(1, sizeof(*idx));
	const uint8_t *tab;
	size_t tab_size;
	int ret;

	*out = NULL;
	if (!idx || !(idx->path = strdup(path))) {
		free(idx);
		return err_set(err, ENOMEM, "%s: out of memory", path);
	}
	ret = elf_image_open(path, &idx->img, err);
	if (!ret)
		ret = elf_image_find_pclntab(idx->img, &tab, &tab_size, err);
	if (!ret)
		ret = gopclntab_open(tab, tab_size, elf_image_text_start(idx->img), &idx->pcln, err);
	if (ret && err && strncmp(err, path, strlen(path)) != 0) {
		/* The table parser does not know the file's name: prefix it. */
		char inner[ERR_LEN];
		snprintf(inner, sizeof(inner), "%s", err);
		if (snprintf(err, ERR_LEN, "%s: %s", path, inner) >= ERR_LEN)
			err[ERR_LEN - 1] = '\0';
	}
	if (!ret && !(flags & FUNCS_NO_DWARF) && elf_image_has_dwarf(idx->img)) {
		char derr[ERR_LEN];
		/* DWARF only refines: without it the index is still complete. */
		if (dwarf_info_load(path, &idx->dwarf, derr) != 0) {
			log_warn("funcs", "%s", derr);
			idx->dwarf = NULL;
		}
	}
	if (!ret)
		ret = retsites_engine_open(&idx->eng, err);
	if (!ret)
		ret = funcs_build(idx, err);
	if (ret) {
		funcs_free(idx);
		return ret;
	}
	*out = idx;
	return 0;
}

void funcs_free(struct func_index *idx)
{
	if (!idx)
		return;
	for (size_t i = 0; i < idx->count; i++) {
		retsites_free(&idx->funcs[i].rets);
		free(idx->funcs[i].ret_lines);
	}
	free(idx->funcs);
	free(idx->by_name);
	retsites_engine_close(idx->eng);
	if (idx->dwarf)
		dwarf_info_free(idx->dwarf);
	if (idx->pcln)
		gopclntab_close(idx->pcln);
	elf_image_close(idx->img);
	free(idx->path);
	free(idx);
}

static int funcs_resolve_with(struct func_index *idx, struct retsites_engine *eng,
			      struct func_info *f, char *err)
{
	struct gopclntab_func gf;
	uint8_t *code;
	uint64_t span;
	int ret;

	if (f->rets_resolved)
		return 0;
	ret = gopclntab_func(idx->pcln, f->pcln_index, &gf, err);
	if (ret)
		return ret;
	/* Decode up to the next function: the size from symtab or DWARF should
	 * end at the last instruction, and padding must hold no RET. */
	span = gf.end - gf.entry;
	if (span == 0 || span > FUNCS_MAX_DECODE)
		return err_set(err, ERANGE, "%s: size 0x%llx out of range", f->name,
			       (unsigned long long)span);
	code = malloc(span);
	if (!code)
		return err_set(err, ENOMEM, "%s: out of memory", f->name);
	ret = elf_image_read_code(idx->img, f->entry, code, span);
	if (ret) {
		free(code);
		return err_set(err, -ret, "%s: code at 0x%llx is not in an executable segment",
			       f->name, (unsigned long long)f->entry);
	}
	ret = retsites_find(eng, code, span, f->entry, &f->rets);
	free(code);
	if (ret)
		return err_set(err, -ret, "%s: out of memory decoding", f->name);
	if (f->source == SRC_PCLNTAB && f->rets.traceable != TRACEABLE_NO)
		f->size = f->rets.code_size;
	/* Decoding ran to the next function to stay on instruction boundaries;
	 * only RETs inside [entry, entry+size) belong to the function. */
	while (f->rets.count > 0 && f->rets.offsets[f->rets.count - 1] >= f->size)
		f->rets.count--;
	if (f->rets.count == 0 && f->rets.traceable == TRACEABLE_FULL) {
		f->rets.traceable = TRACEABLE_ENTRY_ONLY;
		snprintf(f->rets.reason, sizeof(f->rets.reason), "no RET inside the symbol's size");
	}
	f->ret_lines = calloc(f->rets.count ? f->rets.count : 1, sizeof(int));
	if (!f->ret_lines)
		return err_set(err, ENOMEM, "%s: out of memory", f->name);
	for (size_t i = 0; i < f->rets.count; i++) {
		const char *file;
		if (gopclntab_line(idx->pcln, f->pcln_index, f->entry + f->rets.offsets[i], &file,
				   &f->ret_lines[i]) != 0)
			f->ret_lines[i] = 0;
	}
	f->rets_resolved = true;
	return 0;
}

int funcs_resolve_rets(struct func_index *idx, struct func_info *f, char *err)
{
	return funcs_resolve_with(idx, idx->eng, f, err);
}

struct resolve_worker {
	struct func_index *idx;
	atomic_size_t *next;
	pthread_t thread;
	bool started;
};

static void *funcs_resolve_worker(void *arg)
{
	struct resolve_worker *w = arg;
	struct retsites_engine *eng;
	size_t i;

	if (retsites_engine_open(&eng, NULL) != 0)
		return NULL;
	while ((i = atomic_fetch_add(w->next, 1)) < w->idx->count)
		funcs_resolve_with(w->idx, eng, &w->idx->funcs[i], NULL);
	retsites_engine_close(eng);
	return NULL;
}

void funcs_resolve_all(struct func_index *idx, unsigned nthreads)
{
	struct resolve_worker w[8];
	atomic_size_t next = 0;

	/* Decoding is CPU-bound and per-function independent: one capstone
	 * handle per thread, functions handed out one at a time. */
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > 8)
		nthreads = 8;
	for (unsigned t = 1; t < nthreads; t++) {
		w[t] = (struct resolve_worker){.idx = idx, .next = &next};
		w[t].started = pthread_create(&w[t].thread, NULL, funcs_resolve_worker, &w[t]) == 0;
	}
	w[0] = (struct resolve_worker){.idx = idx, .next = &next};
	funcs_resolve_worker(&w[0]);
	for (unsigned t = 1; t < nthreads; t++)
		if (w[t].started)
			pthread_join(w[t].thread, NULL);
}

/* Index in by_name of the first function named name, or idx->count. */
static size_t funcs_name_lower_bound(const struct func_index *idx, const char *name)
{
	size_t lo = 0, hi = idx->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(idx->by_name[mid]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < idx->count && !strcmp(idx->by_name[lo]->name, name) ? lo : idx->count;
}

struct func_info *funcs_find(const struct func_index *idx, const char *name)
{
	size_t i = funcs_name_lower_bound(idx, name);
	return i < idx->count ? idx->by_name[i] : NULL;
}

struct func_info *funcs_find_at(const struct func_index *idx, const char *name, uint64_t entry)
{
	size_t first = funcs_name_lower_bound(idx, name);

	/* Duplicate names (ABI wrappers, generic shapes) sit next to each
	 * other in by_name, ordered by entry. */
	for (size_t i = first; i < idx->count && !strcmp(idx->by_name[i]->name, name); i++)
		if (idx->by_name[i]->entry == entry)
			return idx->by_name[i];
	return first < idx->count ? idx->by_name[first] : NULL;
}

struct func_info *funcs_by_addr(const struct func_index *idx, uint64_t addr)
{
	size_t lo = 0, hi = idx->count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (idx->funcs[mid].entry <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	struct func_info *f = &idx->funcs[lo - 1];
	return addr < f->entry + f->size ? f : NULL;
}

static bool funcs_pattern_matches(const char *pattern, bool glob, const char *name)
{
	return glob ? fnmatch(pattern, name, 0) == 0 : strstr(name, pattern) != NULL;
}

size_t funcs_match(const struct func_index *idx, const char *pattern, struct func_info ***out)
{
	bool glob = strpbrk(pattern, "*?[") != NULL;
	size_t n = 0;

	*out = calloc(idx->count ? idx->count : 1, sizeof(**out));
	if (!*out)
		return 0;
	for (size_t i = 0; i < idx->count; i++)
		if (funcs_pattern_matches(pattern, glob, idx->by_name[i]->name))
			(*out)[n++] = idx->by_name[i];
	return n;
}

/* Levenshtein distance, capped: names longer than 64 compare their tails. */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned row[65];
	size_t la = strlen(a), lb = strlen(b);

	if (la > 64) {
		a += la - 64;
		la = 64;
	}
	if (lb > 64) {
		b += lb - 64;
		lb = 64;
	}
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static unsigned name_distance(const char *name, const char *query)
{
	const char *dot = strrchr(name, '.');
	unsigned d = edit_distance(name, query);

	if (dot && dot[1]) {
		unsigned short_d = edit_distance(dot + 1, query);
		if (short_d < d)
			d = short_d;
	}
	return d;
}

size_t funcs_nearest(const struct func_index *idx, const char *name, const char **out,
		     size_t max)
{
	unsigned best[16];
	size_t n = 0;

	if (max > 16)
		max = 16;
	for (size_t i = 0; i < idx->count && max > 0; i++) {
		const char *cand = idx->by_name[i]->name;
		unsigned d = name_distance(cand, name);
		size_t pos = n;
		if (n > 0 && !strcmp(out[n - 1], cand))
			continue; /* duplicate names sit next to each other */
		while (pos > 0 && best[pos - 1] > d)
			pos--;
		if (pos >= max)
			continue;
		if (n < max)
			n++;
		memmove(&best[pos + 1], &best[pos], (n - 1 - pos) * sizeof(best[0]));
		memmove(&out[pos + 1], &out[pos], (n - 1 - pos) * sizeof(out[0]));
		best[pos] = d;
		out[pos] = cand;
	}
	return n;
}

int funcs_no_match(const struct func_index *idx, const char *pattern, char *err)
{
	const char *near[5];
	size_t n = funcs_nearest(idx, pattern, near, 5), len;

	err_set(err, ENOENT, "no function matches '%s'", pattern);
	for (size_t i = 0; err && i < n; i++) {
		len = strlen(err);
		snprintf(err + len, ERR_LEN - len, "%s%s", i ? ", " : "; nearest: ", near[i]);
	}
	if (err) {
		len = strlen(err);
		snprintf(err + len, ERR_LEN - len, " (list them with retop -l)");
	}
	return -ENOENT;
}
