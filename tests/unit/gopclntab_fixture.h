/* The synthetic .gopclntab tables test_gopclntab reads: a builder that
 * lays out a table of the given functions in the layout of a Go release
 * (struct spec), with what each test then corrupts.  Include it after
 * cmocka and gopclntab.h. */
#ifndef RETOP_TEST_GOPCLNTAB_FIXTURE_H
#define RETOP_TEST_GOPCLNTAB_FIXTURE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TEXT 0x401000u

/* ---- table builder ---- */

struct tfunc {
	const char *name;
	uint32_t off;	 /* entry - TEXT */
	uint32_t cu_off; /* index of the CU's first slot in cutab */
	int32_t file;	 /* file index inside the CU */
	int32_t line;	 /* line at entry; +2 from entry+4 on */
};

static const struct tfunc funcs3[] = {
    {"main.main", 0x00, 0, 0, 10},
    {"main.(*T).Add", 0x40, 0, 1, 20},
    {"runtime.goexit", 0x60, 1, 1, 30},
};
#define END_OFF 0x80u /* end of text, relative to TEXT */

static const char *const files[] = {"/src/main.go", "/src/t.go", "/go/runtime/asm.s"};

struct spec {
	uint32_t magic;
	unsigned ptrsize;
	unsigned quantum;
	uint64_t hdr_text; /* header textStart, 1.18+ */
	size_t nfunc;
};

/* Where the builder put things, so tests can corrupt them. */
struct layout {
	size_t size;
	size_t nfunc_at;
	size_t text_at;
	size_t sub_at[5]; /* header words holding the sub-table offsets */
	size_t names, cutab, filetab, pctab, pcln;
	size_t func_at[3];
	size_t name_end; /* one past the last name's NUL */
	unsigned field;
};

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put8(struct buf *b, uint8_t v)
{
	b->b[b->n++] = v;
}

static void put32(struct buf *b, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		put8(b, (uint8_t)(v >> (8 * i)));
}

static void putn(struct buf *b, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		put8(b, (uint8_t)(v >> (8 * i)));
}

static void set32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void setn(uint8_t *p, uint64_t v, unsigned size)
{
	for (unsigned i = 0; i < size; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_uvarint(struct buf *b, uint32_t v)
{
	while (v >= 0x80) {
		put8(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	put8(b, (uint8_t)v);
}

/* One pcvalue step: from value prev to next, holding for pcs bytes. */
static void put_step(struct buf *b, int32_t prev, int32_t next, uint32_t pcs, unsigned quantum)
{
	int32_t d = next - prev;
	put_uvarint(b, d < 0 ? ((uint32_t)~d << 1) | 1 : (uint32_t)d << 1);
	put_uvarint(b, pcs / quantum);
}

static void align(struct buf *b, unsigned a)
{
	while (b->n % a)
		put8(b, 0);
}

/* When set, main.main gets an inline tree: pcdata 2 (this table, offset
 * inl_pcdata) says entry 0 owns [8, 16) and entry 1 [16, 24); funcdata 3
 * is offset 0 of the go:func.* bytes test_inline_tree builds. */
static bool with_inl;
static uint32_t inl_pcdata;

static void build_pctabs(struct buf *b, const struct spec *s, uint32_t *pcfile, uint32_t *pcln)
{
	put8(b, 0); /* offset 0 means "no table" */
	if (with_inl) {
		inl_pcdata = (uint32_t)b->n;
		put_step(b, -1, -1, 8, s->quantum);
		put_step(b, -1, 0, 8, s->quantum);
		put_step(b, 0, 1, 8, s->quantum);
		put_step(b, 1, -1, 0x40 - 24, s->quantum);
		put8(b, 0);
	}
	for (size_t i = 0; i < s->nfunc; i++) {
		const struct tfunc *f = &funcs3[i];
		uint32_t end = i + 1 < s->nfunc ? funcs3[i + 1].off : END_OFF;
		uint32_t size = end - f->off;
		pcfile[i] = (uint32_t)b->n;
		put_step(b, -1, f->file, size, s->quantum);
		put8(b, 0);
		pcln[i] = (uint32_t)b->n;
		put_step(b, -1, f->line, 4, s->quantum);
		put_step(b, f->line, f->line + 2, size - 4, s->quantum);
		put8(b, 0);
	}
}

static void build_funcs(struct buf *b, const struct spec *s, struct layout *l,
			const uint32_t *nameoff, const uint32_t *pcfile, const uint32_t *pcln)
{
	unsigned field = l->field;
	size_t ft = b->n;
	int is116 = s->magic == GOPCLNTAB_MAGIC_116;

	b->n += (2 * s->nfunc + 1) * field;
	for (size_t i = 0; i < s->nfunc; i++) {
		const struct tfunc *f = &funcs3[i];
		align(b, s->ptrsize);
		l->func_at[i] = b->n;
		uint64_t entry = is116 ? TEXT + f->off : f->off;
		setn(b->b + ft + 2 * i * field, entry, field);
		setn(b->b + ft + (2 * i + 1) * field, b->n - ft, field);
		putn(b, entry, is116 ? s->ptrsize : 4);
		put32(b, nameoff[i]);
		put32(b, 16); /* args */
		put32(b, 0);  /* deferreturn */
		put32(b, 0);  /* pcsp */
		put32(b, pcfile[i]);
		put32(b, pcln[i]);
		bool inl = with_inl && i == 0;
		put32(b, inl ? 3 : 0); /* npcdata */
		put32(b, f->cu_off);
		if (s->magic == GOPCLNTAB_MAGIC_120)
			put32(b, f->line); /* startLine */
		put32(b, inl ? 4u << 24 : 0); /* funcID, flag, pad, nfuncdata */
		if (inl) {
			put32(b, 0);
			put32(b, 0);
			put32(b, inl_pcdata);
			for (int k = 0; k < 3; k++)
				put32(b, UINT32_MAX); /* funcdata 0-2: none */
			put32(b, 0);		      /* funcdata 3: the inline tree */
		}
	}
	setn(b->b + ft + 2 * s->nfunc * field, is116 ? TEXT + END_OFF : END_OFF, field);
}

/* Emit a table for s into b; fill l with where things went. */
static void build(const struct spec *s, struct buf *b, struct layout *l)
{
	unsigned ps = s->ptrsize;
	int has_text = s->magic != GOPCLNTAB_MAGIC_116;
	uint32_t nameoff[3], pcfile[3], pcln[3], fileoff[3];

	memset(b, 0, sizeof(*b));
	memset(l, 0, sizeof(*l));
	l->field = has_text ? 4 : ps;
	put32(b, s->magic);
	put8(b, 0);
	put8(b, 0);
	put8(b, (uint8_t)s->quantum);
	put8(b, (uint8_t)ps);
	l->nfunc_at = b->n;
	putn(b, s->nfunc, ps);
	putn(b, 3, ps); /* nfiles */
	if (has_text) {
		l->text_at = b->n;
		putn(b, s->hdr_text, ps);
	}
	for (int i = 0; i < 5; i++) {
		l->sub_at[i] = b->n;
		putn(b, 0, ps);
	}

	l->names = b->n;
	for (size_t i = 0; i < s->nfunc; i++) {
		nameoff[i] = (uint32_t)(b->n - l->names);
		memcpy(b->b + b->n, funcs3[i].name, strlen(funcs3[i].name) + 1);
		b->n += strlen(funcs3[i].name) + 1;
	}
	l->name_end = b->n;
	align(b, 4);

	struct buf fb = {.n = 0};
	for (int i = 0; i < 3; i++) {
		fileoff[i] = (uint32_t)fb.n;
		memcpy(fb.b + fb.n, files[i], strlen(files[i]) + 1);
		fb.n += strlen(files[i]) + 1;
	}
	l->cutab = b->n;
	for (int i = 0; i < 3; i++)
		put32(b, fileoff[i]);
	l->filetab = b->n;
	memcpy(b->b + b->n, fb.b, fb.n);
	b->n += fb.n;

	l->pctab = b->n;
	struct buf pb = {.n = 0};
	build_pctabs(&pb, s, pcfile, pcln);
	memcpy(b->b + b->n, pb.b, pb.n);
	b->n += pb.n;
	align(b, ps);

	l->pcln = b->n;
	build_funcs(b, s, l, nameoff, pcfile, pcln);
	l->size = b->n;

	size_t subs[5] = {l->names, l->cutab, l->filetab, l->pctab, l->pcln};
	for (int i = 0; i < 5; i++)
		setn(b->b + l->sub_at[i], subs[i], ps);
}

static const struct spec spec116 = {GOPCLNTAB_MAGIC_116, 8, 1, 0, 3};
static const struct spec spec116_32 = {GOPCLNTAB_MAGIC_116, 4, 4, 0, 3};
static const struct spec spec118 = {GOPCLNTAB_MAGIC_118, 8, 1, TEXT, 3};
static const struct spec spec120 = {GOPCLNTAB_MAGIC_120, 8, 1, TEXT, 3};
static const struct spec spec120_arm = {GOPCLNTAB_MAGIC_120, 8, 4, TEXT, 3};

#endif
