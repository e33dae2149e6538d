#include "funcs.h"

#include <elf.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "elf_image.h"
#include "funcs_internal.h"
#include "gopclntab.h"
#include "log.h"

const char *func_source_name(enum func_source s)
{
	static const char *const names[] = {"pclntab", "symtab", "dwarf", "sdk"};
	return s <= SRC_SDK ? names[s] : "?";
}

/* Function tails read in address order through page-aligned windows of
 * the mapping: no copy of the text, and each window's pages are given back
 * when the scan moves on, so the resident set stays flat. */
#define CODE_WINDOW_SIZE (256u << 10)
#define CODE_WINDOW_ALIGN 4096u

struct code_window {
	const struct elf_image *img;
	const uint8_t *view; /* NULL: no window yet */
	uint64_t start;
	size_t len;
};

static void code_window_drop(struct code_window *w)
{
	if (w->view)
		elf_image_drop(w->img, w->view, w->len);
	w->view = NULL;
}

static const uint8_t *code_window_get(struct code_window *w, uint64_t vaddr, size_t len)
{
	const struct elf_segment *segs;
	size_t nsegs = elf_image_segments(w->img, &segs);
	uint64_t start = 0, end = 0;

	if (w->view && vaddr >= w->start && vaddr - w->start + len <= w->len)
		return w->view + (vaddr - w->start);
	code_window_drop(w);
	for (size_t i = 0; i < nsegs; i++)
		if ((segs[i].flags & PF_X) && vaddr >= segs[i].vaddr &&
		    vaddr - segs[i].vaddr < segs[i].filesz) {
			start = vaddr & ~(uint64_t)(CODE_WINDOW_ALIGN - 1);
			if (start < segs[i].vaddr)
				start = segs[i].vaddr;
			end = segs[i].vaddr + segs[i].filesz;
		}
	if (end - start > CODE_WINDOW_SIZE)
		end = start + CODE_WINDOW_SIZE;
	if (end < vaddr + len || !(w->view = elf_image_code(w->img, start, end - start)))
		return NULL;
	w->start = start;
	w->len = end - start;
	return w->view + (vaddr - start);
}

/* Trailing int3 padding, from the last bytes only; funcs_decode()
 * later replaces this with the decoder's answer. */
static uint64_t trim_padding(struct code_window *w, uint64_t entry, uint64_t end)
{
	uint64_t size = end - entry;
	size_t n = size < 64 ? (size_t)size : 64;
	const uint8_t *tail = n ? code_window_get(w, end - n, n) : NULL;

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
	if ((sym = elf_symbol_at(syms, nsyms, gf->entry)) && sym->size) {
		f->source = SRC_SYMTAB;
		f->size = sym->size;
	}
	if (idx->dwarf && (f->dwarf = dwarf_info_lookup(idx->dwarf, gf->entry))) {
		f->source = SRC_DWARF;
		if (f->dwarf->high_pc > f->dwarf->low_pc)
			f->size = f->dwarf->high_pc - f->dwarf->low_pc;
	}
	/* Without symbols: the pc tables know where the code ends, and only
	 * a binary whose tables do not say costs a read of its code. */
	if ((f->size == 0 || f->size > gf->end - gf->entry) &&
	    gopclntab_code_size(idx->pcln, gf->index, &f->size) != 0)
		f->size = trim_padding(w, gf->entry, gf->end);
	if (elf_image_vaddr_to_offset(idx->img, f->entry, &f->file_offset) != 0)
		f->file_offset = 0;
	if (gopclntab_line(idx->pcln, gf->index, gf->entry, &f->file, &f->line) != 0) {
		f->file = NULL;
		f->line = 0;
	}
}

int funcs_name_cmp(const void *a, const void *b)
{
	const struct func_info *x = *(struct func_info *const *)a;
	const struct func_info *y = *(struct func_info *const *)b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->entry < y->entry ? -1 : x->entry > y->entry);
}

/* The by-name sort, a multikey quicksort (Bentley and Sedgewick) on the
 * names' bytes: Go's names share long prefixes (github.com/aws/..., a
 * third of prometheus's), which every strcmp of a plain sort reads again.
 * Equal names by entry, then table order: funcs_name_cmp's order, made
 * total as a stable sort of the table does. */
struct name_key {
	const unsigned char *s;
	struct func_info *f;
};

static int name_key_cmp(const void *a, const void *b)
{
	const struct name_key *x = a, *y = b;
	int c = funcs_name_cmp(&x->f, &y->f);

	return c ? c : (x->f < y->f ? -1 : x->f > y->f);
}

/* k[0..n), whose names agree up to depth, in name_key_cmp's order. */
static void name_flat(struct name_key *k, size_t n)
{
	if (n >= 16) {
		qsort(k, n, sizeof(*k), name_key_cmp);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		struct name_key t = k[i];
		size_t j = i;
		for (; j > 0 && name_key_cmp(&k[j - 1], &t) > 0; j--)
			k[j] = k[j - 1];
		k[j] = t;
	}
}

static unsigned char name_pivot(const struct name_key *k, size_t n, size_t depth)
{
	unsigned char a = k[0].s[depth], b = k[n / 2].s[depth], c = k[n - 1].s[depth];

	return a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
}

/* k[0..n) by name from byte depth on, the names agreeing before it.  The
 * two smaller parts of each split recurse, the largest loops: the stack
 * stays within log2(n) frames whatever the names. */
static void name_mkqs(struct name_key *k, size_t n, size_t depth)
{
	while (n >= 16 && depth < 4096) {
		unsigned char p = name_pivot(k, n, depth);
		size_t lt = 0, i = 0, gt = n;
		while (i < gt) {
			unsigned char c = k[i].s[depth];
			struct name_key t = k[i];
			if (c < p) {
				k[i++] = k[lt];
				k[lt++] = t;
			} else if (c > p) {
				k[i] = k[--gt];
				k[gt] = t;
			} else {
				i++;
			}
		}
		/* Below, equal (one byte deeper; names that end here are
		 * equal names), above. */
		struct {
			struct name_key *k;
			size_t n, depth;
		} part[3] = {{k, lt, depth}, {k + lt, gt - lt, depth + 1}, {k + gt, n - gt, depth}};
		int big = part[1].n >= part[0].n ? 1 : 0;
		big = part[2].n > part[big].n ? 2 : big;
		for (int q = 0; q < 3; q++)
			if (q != big && (q != 1 || p))
				name_mkqs(part[q].k, part[q].n, part[q].depth);
		if (!p)
			name_flat(part[1].k, part[1].n);
		if (big == 1 && !p)
			return;
		k = part[big].k;
		n = part[big].n;
		depth = part[big].depth;
	}
	name_flat(k, n);
}

/* funcs[0..n) by name into sorted; the plain sort when out of memory. */
static void funcs_sort_names(struct func_info *funcs, size_t n, struct func_info **sorted)
{
	struct name_key *k = malloc((n ? n : 1) * sizeof(*k));

	for (size_t i = 0; i < n; i++)
		sorted[i] = &funcs[i];
	if (!k) {
		qsort(sorted, n, sizeof(*sorted), funcs_name_cmp);
		return;
	}
	for (size_t i = 0; i < n; i++)
		k[i] = (struct name_key){(const unsigned char *)funcs[i].name, &funcs[i]};
	name_mkqs(k, n, 0);
	for (size_t i = 0; i < n; i++)
		sorted[i] = k[i].f;
	free(k);
}

struct func_info *const *funcs_by_name(const struct func_index *idx)
{
	struct func_names *names = idx->names;

	pthread_mutex_lock(&names->lock);
	if (!names->sorted &&
	    (names->sorted = calloc(idx->count ? idx->count : 1, sizeof(*names->sorted)))) {
		funcs_sort_names(idx->funcs, idx->count, names->sorted);
	}
	pthread_mutex_unlock(&names->lock);
	return names->sorted;
}

void funcs_drop_behind(struct func_index *idx, size_t i)
{
	struct gopclntab_span spans[2];
	size_t n = idx->keep_pages ? 0 : gopclntab_behind(idx->pcln, i, spans);

	for (size_t k = 0; k < n; k++)
		elf_image_drop(idx->img, spans[k].p, spans[k].len);
}

/* Functions [first, end) of the table, filled in by one thread. */
struct build_part {
	struct func_index *idx;
	size_t first, end;
	size_t failed; /* the first function that could not be read, or end */
	int ret;       /* why, with err */
	char err[ERR_LEN];
	pthread_t thread;
	bool started;
};

static void *funcs_build_part(void *arg)
{
	struct build_part *p = arg;
	struct code_window w = {.img = p->idx->img};

	p->failed = p->end;
	for (size_t i = p->first; i < p->end; i++) {
		struct gopclntab_func gf;
		if ((p->ret = gopclntab_func(p->idx->pcln, i, &gf, p->err)) != 0) {
			p->failed = i;
			break;
		}
		funcs_fill_one(p->idx, &w, &p->idx->funcs[i], &gf);
		/* One pass in table order: what it has read of the pc tables
		 * and records is not needed again soon, so its pages go back
		 * (the names stay).  The first part's only: the second's are
		 * given back at the end (funcs_build). */
		if (p->first == 0 && i % FUNCS_DROP_EVERY == FUNCS_DROP_EVERY - 1)
			funcs_drop_behind(p->idx, i + 1);
	}
	code_window_drop(&w);
	return NULL;
}

/* A table this big is built in two halves on two threads: building is
 * mostly first touches of pages (the table's, the index's), each a fault.
 * Two, not one a core: a part gives back no pages before the end but the
 * first (each drop would stop the other threads to flush their TLBs). */
#define FUNCS_BUILD_SPLIT (4 * FUNCS_DROP_EVERY)

static int funcs_build(struct func_index *idx, char *err)
{
	size_t n = gopclntab_count(idx->pcln);
	struct build_part part[2] = {{.idx = idx, .end = n}, {.idx = idx, .end = n}};
	size_t nparts = 1;

	idx->funcs = calloc(n ? n : 1, sizeof(*idx->funcs));
	if (!idx->funcs)
		return err_set(err, ENOMEM, "%s: out of memory for %zu functions", idx->path, n);
	if (n >= FUNCS_BUILD_SPLIT && sysconf(_SC_NPROCESSORS_ONLN) > 1) {
		part[0].end = part[1].first = n / 2;
		part[1].started =
		    pthread_create(&part[1].thread, NULL, funcs_build_part, &part[1]) == 0;
		nparts = 2;
	}
	funcs_build_part(&part[0]);
	if (nparts == 2 && part[1].started)
		pthread_join(part[1].thread, NULL);
	else if (nparts == 2)
		funcs_build_part(&part[1]);
	/* The first function that could not be read ends the index there, as
	 * a build in one pass would have stopped. */
	for (size_t k = 0; k < nparts; k++)
		if (part[k].failed < part[k].end) {
			idx->count = part[k].failed;
			if (err)
				snprintf(err, ERR_LEN, "%s", part[k].err);
			return part[k].ret;
		}
	idx->count = n;
	if (n)
		funcs_drop_behind(idx, n - 1);
	return 0;
}

int funcs_decoder_open(struct funcs_decoder **out, char *err)
{
	struct funcs_decoder *d = calloc(1, sizeof(*d));
	int ret;

	*out = NULL;
	if (!d)
		return err_set(err, ENOMEM, "out of memory");
	ret = retsites_engine_open(&d->eng, err);
	if (ret) {
		free(d);
		return ret;
	}
	*out = d;
	return 0;
}

void funcs_decoder_close(struct funcs_decoder *d)
{
	if (!d)
		return;
	retsites_engine_close(d->eng);
	free(d->buf);
	free(d->batch);
	free(d->bits);
	free(d);
}

static int funcs_stat(struct func_index *idx, const char *path, char *err)
{
	struct stat st;

	if (stat(path, &st) != 0)
		return err_set(err, errno, "%s: %s", path, strerror(errno));
	idx->file_dev = (uint64_t)st.st_dev;
	idx->file_ino = (uint64_t)st.st_ino;
	idx->file_size = (uint64_t)st.st_size;
	idx->file_mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return 0;
}

static int funcs_check_stat(struct func_index *idx, const char *path, char *err)
{
	struct func_index now;
	int ret = funcs_stat(&now, path, err);

	if (!ret && (now.file_dev != idx->file_dev || now.file_ino != idx->file_ino ||
		     now.file_size != idx->file_size || now.file_mtime_ns != idx->file_mtime_ns))
		return err_set(err, ESTALE, "%s changed while it was being indexed: try again",
			       path);
	return ret;
}

/* The inline trees' bytes: without them the index has no inline facts,
 * which is said once and is no reason to refuse the binary. */
static void funcs_set_gofunc(struct func_index *idx, const uint8_t *tab, size_t tab_size)
{
	const uint8_t *data;
	size_t size;
	int r = elf_image_gofunc(idx->img, tab, tab_size, &data, &size);

	if (r == 0)
		gopclntab_set_gofunc(idx->pcln, data, size);
	else if (r == -EINVAL)
		log_warn("funcs",
			 "%s: the module data's go:func.* is not proven (its witnesses disagree): "
			 "inlined calls are not read",
			 idx->path);
	else
		log_info("funcs", "%s: no inline trees read (%s)", idx->path,
			 r == -ENOTSUP ? "Go release or table layout without them"
				       : "no module data");
}

int funcs_load(const char *path, unsigned flags, struct func_index **out, char *err)
{
	struct func_index *idx = calloc(1, sizeof(*idx));
	struct timespec t0, t1;
	const uint8_t *tab;
	size_t tab_size;
	uint64_t text = 0;
	int ret;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	*out = NULL;
	if (!idx || !(idx->path = strdup(path)) || !(idx->names = calloc(1, sizeof(*idx->names)))) {
		if (idx)
			free(idx->path);
		free(idx);
		return err_set(err, ENOMEM, "%s: out of memory", path);
	}
	pthread_mutex_init(&idx->names->lock, NULL);
	pthread_mutex_init(&idx->names->inl_lock, NULL);
	idx->keep_pages = (flags & FUNCS_KEEP_PAGES) != 0;
	ret = funcs_stat(idx, path, err);
	if (!ret)
		ret = elf_image_open(path, &idx->img, err);
	/* The file opened is the one stat() saw, or the load is refused. */
	if (!ret)
		ret = funcs_check_stat(idx, path, err);
	if (!ret)
		ret = elf_image_find_pclntab(idx->img, &tab, &tab_size, err);
	if (!ret)
		ret = elf_image_text_start(idx->img, tab, tab_size, &text, err);
	if (!ret)
		ret = gopclntab_open(tab, tab_size, text, &idx->pcln, err);
	if (!ret)
		funcs_set_gofunc(idx, tab, tab_size);
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
		ret = funcs_decoder_open(&idx->dec, err);
	if (!ret)
		ret = funcs_build(idx, err);
	if (ret) {
		funcs_free(idx);
		return ret;
	}
	/* Indexed: what it read of the file (Prometheus: 16 MiB) need not
	 * stay resident; a RET site decoded or a name read later brings its
	 * page back. */
	funcs_drop_file_pages(idx);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	log_info("funcs", "%s: %zu functions indexed in %.2f ms", path, idx->count,
		 (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	*out = idx;
	return 0;
}

void funcs_drop_file_pages(struct func_index *idx)
{
	if (idx && !idx->keep_pages)
		elf_image_drop_pages(idx->img);
}

void funcs_file_path(const struct func_index *idx, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", elf_image_fd(idx->img));
}

void funcs_free(struct func_index *idx)
{
	if (!idx)
		return;
	for (size_t i = 0; i < idx->count; i++) {
		retsites_free(&idx->funcs[i].rets);
	}
	free(idx->funcs);
	free(idx->inl_only);
	pthread_mutex_destroy(&idx->names->lock);
	pthread_mutex_destroy(&idx->names->inl_lock);
	free(idx->names->sorted);
	free(idx->names);
	funcs_decoder_close(idx->dec);
	if (idx->dwarf)
		dwarf_info_free(idx->dwarf);
	if (idx->pcln)
		gopclntab_close(idx->pcln);
	elf_image_close(idx->img);
	free(idx->path);
	free(idx);
}

/* Index in by_name of the first function named name, or count. */
static size_t funcs_name_lower_bound(struct func_info *const *by_name, size_t count,
				     const char *name)
{
	size_t lo = 0, hi = count;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(by_name[mid]->name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < count && !strcmp(by_name[lo]->name, name) ? lo : count;
}

struct func_info *funcs_find(const struct func_index *idx, const char *name)
{
	return funcs_find_at(idx, name, 0);
}

bool funcs_never_returns(const struct func_index *idx, uint64_t addr)
{
	static const char *const prefixes[] = {"runtime.panic", "runtime.goPanic",
					       "runtime.gopanic", "runtime.throw", "runtime.fatal"};
	const struct func_info *f = idx ? funcs_by_addr(idx, addr) : NULL;

	if (!f || f->entry != addr)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(f->name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

struct func_info *funcs_find_at(const struct func_index *idx, const char *name, uint64_t entry)
{
	struct func_info *const *by_name = funcs_by_name(idx);
	size_t first = by_name ? funcs_name_lower_bound(by_name, idx->count, name) : idx->count;

	/* Duplicate names (ABI wrappers, generic shapes) sit next to each
	 * other in by_name, ordered by entry. */
	for (size_t i = first; i < idx->count && !strcmp(by_name[i]->name, name); i++)
		if (by_name[i]->entry == entry)
			return by_name[i];
	if (first < idx->count)
		return by_name[first];
	/* One that exists only inlined (sorted by name, no duplicates). */
	size_t lo = 0, hi = idx->inl_only_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(idx->inl_only[mid].name, name);
		if (!c)
			return &idx->inl_only[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

const struct func_info *funcs_images_caller(const struct func_images *im, unsigned image,
					    uint64_t ret_addr)
{
	if (!im || image >= RETOP_MAX_IMAGES || !im->idx[image] || !ret_addr)
		return NULL;
	/* The return address follows the CALL: when the CALL is the
	 * function's last instruction it is already past the end. */
	return funcs_by_addr(im->idx[image], ret_addr - im->bias[image] - 1);
}

struct func_info *funcs_prev(const struct func_index *idx, const struct func_info *f)
{
	size_t k = (size_t)(f - idx->funcs);

	/* Zero-size entries share the address of the function that follows. */
	while (k > 0 && idx->funcs[k - 1].entry == f->entry)
		k--;
	return k > 0 ? &idx->funcs[k - 1] : NULL;
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
