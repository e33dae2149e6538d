#include "funcs_decode.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>

#include "elf_image.h"
#include "funcs_internal.h"
#include "gopclntab.h"
#include "log.h"

/* Functions larger than this are not decoded (nothing in Go comes close). */
#define FUNCS_MAX_DECODE (16u << 20)

/* RET sites and their lines from code[0..span), the bytes from f's entry to
 * the next function, and the judge's verdict on them. */
static int funcs_decode_code(struct func_index *idx, struct funcs_decoder *dec,
			     const struct funcs_judge *j, struct func_info *f, const uint8_t *code,
			     uint64_t span, char *err)
{
	uint64_t code_end;
	int ret;

	if (span / 8 + 1 > dec->bits_cap) {
		uint8_t *bits = realloc(dec->bits, span / 8 + 1);
		if (!bits)
			return err_set(err, ENOMEM, "%s: out of memory", f->name);
		dec->bits = bits;
		dec->bits_cap = span / 8 + 1;
	}
	/* The code ends where the pc-to-SP table says; what follows up to the
	 * next entry is padding, which the judge checks byte by byte. */
	if (gopclntab_code_size(idx->pcln, f->pcln_index, &code_end) != 0 || code_end > span)
		code_end = span;
	ret = retsites_find(dec->eng, code, code_end, f->entry, &f->rets);
	if (ret)
		return err_set(err, -ret, "%s: out of memory decoding", f->name);
	if (f->source == SRC_PCLNTAB && f->rets.traceable != TRACEABLE_NO)
		f->size = f->rets.code_size;
	/* Decoding ran to the next function to stay on instruction boundaries;
	 * only RETs inside [entry, entry+size) belong to the function. */
	uint32_t keep = f->rets.count;
	while (keep > 0 && retsites_get(&f->rets, keep - 1)->offset >= f->size)
		keep--;
	retsites_truncate(&f->rets, keep);
	if (f->rets.count == 0 && f->rets.traceable == TRACEABLE_FULL) {
		f->rets.traceable = TRACEABLE_ENTRY_ONLY;
		if (retsites_set_reason(&f->rets, "no RET inside the symbol's size"))
			return err_set(err, ENOMEM, "%s: out of memory", f->name);
	}
	/* The RET sites ascend: one walk of the line tables for them all. */
	struct gopclntab_lines lines;
	gopclntab_lines_open(idx->pcln, f->pcln_index, &lines);
	for (size_t i = 0; i < f->rets.count; i++) {
		const char *file;
		int line;
		if (gopclntab_lines_next(&lines, f->entry + retsites_get(&f->rets, i)->offset,
					 &file, &line) == 0)
			retsites_set_line(&f->rets, i, line);
	}
	const struct funcs_code c = {
	    .eng = dec->eng, .code = code, .code_end = code_end, .span = span, .bits = dec->bits};
	if (j->judge(j->ctx, idx, f, &c))
		return err_set(err, ENOMEM, "%s: out of memory", f->name);
	f->rets_resolved = true;
	return 0;
}

/* Bytes from f's entry to the next function, checked. */
static int funcs_span(struct func_index *idx, const struct func_info *f, uint64_t *span, char *err)
{
	struct gopclntab_func gf;
	int ret = gopclntab_func(idx->pcln, f->pcln_index, &gf, err);

	if (ret)
		return ret;
	/* Decode up to the next function: the size from symtab or DWARF should
	 * end at the last instruction, and padding must hold no RET. */
	*span = gf.end - gf.entry;
	if (*span == 0 || *span > FUNCS_MAX_DECODE)
		return err_set(err, ERANGE, "%s: size 0x%llx out of range", f->name,
			       (unsigned long long)*span);
	return 0;
}

static int funcs_decode_with(struct func_index *idx, struct funcs_decoder *dec,
			     const struct funcs_judge *j, struct func_info *f, char *err)
{
	uint64_t span;
	int ret;

	if (f->rets_resolved)
		return 0;
	if ((ret = funcs_span(idx, f, &span, err)) != 0)
		return ret;
	if (span > dec->cap) {
		uint8_t *buf = realloc(dec->buf, span);
		if (!buf)
			return err_set(err, ENOMEM, "%s: out of memory", f->name);
		dec->buf = buf;
		dec->cap = span;
	}
	/* Copied, not read through the mapping: a scan of every function
	 * would leave the whole text resident. */
	ret = elf_image_read_code(idx->img, f->entry, dec->buf, span);
	if (ret)
		return err_set(err, -ret, "%s: code at 0x%llx is not in an executable segment",
			       f->name, (unsigned long long)f->entry);
	return funcs_decode_code(idx, dec, j, f, dec->buf, span, err);
}

int funcs_decode(struct func_index *idx, struct func_info *f, const struct funcs_judge *j,
		 char *err)
{
	if (f->inline_only)
		return err_set(err, ENOENT,
			       "%s: exists only inlined (%u sites): no code of its own; traced by "
			       "its exact name, its inlined calls are counted where an inline mark "
			       "proves each",
			       f->name, f->inlined_sites);
	return funcs_decode_with(idx, idx->dec, j, f, err);
}

struct decode_worker {
	struct func_index *idx;
	const struct funcs_judge *judge;
	atomic_size_t *next;
	pthread_t thread;
	bool started;
};

/* Functions a worker takes at a time, and the most code it reads for them
 * at once: one read instead of one per function. */
#define FUNCS_BATCH 64
#define FUNCS_BATCH_BYTES (1u << 20)

/* Decode funcs[first..end) from one read of their code; false when that
 * read cannot be done (the caller then reads function by function). */
static bool funcs_decode_batch(struct func_index *idx, struct funcs_decoder *dec,
			       const struct funcs_judge *j, size_t first, size_t end)
{
	struct func_info *fs = idx->funcs;
	uint64_t base = fs[first].entry, span, last_span;

	if (funcs_span(idx, &fs[end - 1], &last_span, NULL) || fs[end - 1].entry < base ||
	    (span = fs[end - 1].entry - base + last_span) > FUNCS_BATCH_BYTES)
		return false;
	if (span > dec->batch_cap) {
		uint8_t *buf = realloc(dec->batch, span);
		if (!buf)
			return false;
		dec->batch = buf;
		dec->batch_cap = span;
	}
	if (elf_image_read_code(idx->img, base, dec->batch, span))
		return false;
	for (size_t i = first; i < end; i++) {
		struct func_info *f = &fs[i];
		uint64_t fspan;
		if (f->rets_resolved)
			continue;
		/* Entries ascend and each span ends at the next entry, so every
		 * function lies inside the batch; checked all the same. */
		if (funcs_span(idx, f, &fspan, NULL) || f->entry < base ||
		    f->entry - base + fspan > span)
			funcs_decode_with(idx, dec, j, f, NULL);
		else
			funcs_decode_code(idx, dec, j, f, dec->batch + (f->entry - base), fspan,
					  NULL);
	}
	return true;
}

static void *funcs_decode_worker(void *arg)
{
	struct decode_worker *w = arg;
	size_t n = w->idx->count;
	struct funcs_decoder *dec;
	size_t i;

	if (funcs_decoder_open(&dec, NULL) != 0)
		return NULL;
	while ((i = atomic_fetch_add(w->next, FUNCS_BATCH)) < n) {
		size_t end = i + FUNCS_BATCH < n ? i + FUNCS_BATCH : n;
		if (!funcs_decode_batch(w->idx, dec, w->judge, i, end))
			for (size_t k = i; k < end; k++)
				funcs_decode_with(w->idx, dec, w->judge, &w->idx->funcs[k], NULL);
		/* Batches are handed out in table order: the pages of pc
		 * tables well behind every thread can go back, as in
		 * funcs_build(). */
		if (i % FUNCS_DROP_EVERY == 0 && i >= FUNCS_DROP_EVERY)
			funcs_drop_behind(w->idx, i - FUNCS_DROP_EVERY / 4);
	}
	funcs_decoder_close(dec);
	return NULL;
}

void funcs_decode_all(struct func_index *idx, unsigned nthreads, const struct funcs_judge *j)
{
	struct decode_worker w[8];
	atomic_size_t next = 0;

	/* Decoding is CPU-bound and per-function independent: one decoder per
	 * thread, functions handed out a batch at a time. */
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > 8)
		nthreads = 8;
	for (unsigned t = 1; t < nthreads; t++) {
		w[t] = (struct decode_worker){.idx = idx, .judge = j, .next = &next};
		w[t].started = pthread_create(&w[t].thread, NULL, funcs_decode_worker, &w[t]) == 0;
	}
	w[0] = (struct decode_worker){.idx = idx, .judge = j, .next = &next};
	funcs_decode_worker(&w[0]);
	for (unsigned t = 1; t < nthreads; t++)
		if (w[t].started)
			pthread_join(w[t].thread, NULL);
}
