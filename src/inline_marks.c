#include "inline_marks.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code_walk.h"
#include "elf_image.h"
#include "gopclntab.h"
#include "log.h"

/* One caller's code, walked: instruction starts, the inline entry of each
 * byte, each entry's parent, and where basic blocks begin. */
struct walk {
	const struct inline_marks_code *c;
	uint8_t *bits;	 /* instruction starts */
	uint8_t *lead;	 /* basic block leaders */
	int32_t *val;	 /* per byte: the inline entry its code belongs to, -1 the caller's */
	int32_t *parent; /* per entry */
	size_t stop;	 /* where the linear decode stopped */
	char why[INLINE_MARKS_WHY_LEN]; /* a flaw of the whole caller */
};

/* Whether anything runs after the instruction code[off..end) in line: not
 * after a jmp, an indirect jmp, a RET or int3, or a call that never
 * returns. */
static bool falls(const struct inline_marks_code *c, size_t off, size_t end, enum code_branch b,
		  bool uncond)
{
	int64_t t;

	if ((b == CODE_BRANCH_DIRECT && uncond) || b == CODE_BRANCH_INDIRECT ||
	    code_walk_no_fall(c->code, off, end))
		return false;
	return !(c->never_returns && code_walk_call(c->code, off, end, &t) &&
		 c->never_returns(c->ctx, c->addr + (uint64_t)t));
}

/* Whether entry v's code is code of entry k's body (k or inlined into it). */
static bool in_body(const struct walk *w, int32_t v, uint32_t k)
{
	for (uint32_t steps = 0; steps <= w->c->nentries; steps++) {
		if (v == (int32_t)k)
			return true;
		if (v < 0 || (uint32_t)v >= w->c->nentries)
			return false;
		v = w->parent[v];
	}
	return false; /* a cycle: no tree the compiler writes */
}

/* True when code from t on runs straight into the mark at m: no branch
 * and no way out on the way. */
static bool runs_into(const struct walk *w, size_t t, size_t m)
{
	if (t > m || !code_walk_starts(w->bits, t))
		return false;
	for (size_t off = t; off < m;) {
		size_t end = code_walk_insn_end(w->bits, off, w->stop);
		int64_t target;
		bool uncond;
		enum code_branch b = code_walk_branch(w->c->code, off, end, &target, &uncond);
		if (b != CODE_BRANCH_NONE || !falls(w->c, off, end, b, uncond))
			return false;
		off = end;
	}
	return true;
}

static void why_set(char *why, const char *caller, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void why_set(char *why, const char *caller, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(why, INLINE_MARKS_WHY_LEN, "in %s: ", caller);

	va_start(ap, fmt);
	if (n > 0 && n < INLINE_MARKS_WHY_LEN)
		vsnprintf(why + n, INLINE_MARKS_WHY_LEN - (size_t)n, fmt, ap);
	va_end(ap);
}

/* Decode the caller, read its pc table, find its blocks; a flaw that
 * condemns every site in it goes to w->why. */
static int walk_open(struct retsites_engine *eng, const struct inline_marks_code *c, struct walk *w)
{
	size_t size = c->size;

	memset(w, 0, sizeof(*w));
	w->c = c;
	w->bits = calloc(size / 8 + 1, 1);
	w->lead = calloc(size / 8 + 1, 1);
	w->val = malloc((size ? size : 1) * sizeof(*w->val));
	w->parent = malloc((c->nentries ? c->nentries : 1) * sizeof(*w->parent));
	if (!w->bits || !w->lead || !w->val || !w->parent)
		return -ENOMEM;
	w->stop = retsites_boundaries(eng, c->code, size, c->addr, w->bits);
	for (size_t i = 0; i < size; i++)
		w->val[i] = -1;
	for (size_t r = 0; r < c->nruns; r++)
		for (size_t i = c->runs[r].start; i < c->runs[r].end && i < size; i++)
			w->val[i] = c->runs[r].val;
	for (uint32_t j = 0; j < c->nentries; j++) {
		const struct inline_marks_entry *e = &c->entries[j];
		w->parent[j] = e->parent != GOPCLNTAB_INL_PARENT_UNSAID ? e->parent
			       : e->parent_pc < size			? w->val[e->parent_pc]
									: -1;
	}
	if (w->stop != size) {
		why_set(w->why, c->caller, "its code does not decode to its end (stops at +0x%zx)",
			w->stop);
		return 0;
	}
	w->lead[0] |= 1;
	for (size_t off = 0; off < size;) {
		size_t end = code_walk_insn_end(w->bits, off, size);
		int64_t t = -1;
		bool uncond;
		enum code_branch k = code_walk_branch(c->code, off, end, &t, &uncond);
		if (k == CODE_BRANCH_INDIRECT) {
			why_set(w->why, c->caller,
				"an indirect jump (+0x%zx, a jump table) could land on any code",
				off);
			return 0;
		}
		if (k == CODE_BRANCH_DIRECT && t >= 0 && (size_t)t < size) {
			if (!code_walk_starts(w->bits, (size_t)t)) {
				why_set(w->why, c->caller,
					"a jump (+0x%zx) lands inside an instruction (+0x%llx)",
					off, (unsigned long long)t);
				return 0;
			}
			w->lead[t / 8] |= (uint8_t)(1u << (t % 8));
		}
		if ((k != CODE_BRANCH_NONE || !falls(c, off, end, k, uncond)) && end < size)
			w->lead[end / 8] |= (uint8_t)(1u << (end % 8));
		off = end;
	}
	return 0;
}

static void walk_close(struct walk *w)
{
	free(w->bits);
	free(w->lead);
	free(w->val);
	free(w->parent);
}

/* The mark's basic block [*start, *end) holds code of the body. */
static bool block_has_body(const struct walk *w, size_t m, uint32_t k, size_t *start, size_t *end)
{
	size_t size = w->c->size;

	*start = m;
	*end = m + 1;
	while (*start > 0 && !code_walk_starts(w->lead, *start))
		(*start)--;
	while (*end < size && !code_walk_starts(w->lead, *end))
		(*end)++;
	for (size_t off = *start; off < *end; off++)
		if (code_walk_starts(w->bits, off) && in_body(w, w->val[off], k))
			return true;
	return false;
}

/* The edge src -> dst (a jump, or a fall-through) keeps the mark at m once
 * per call of k's body; else why.  Code of the mark's block from the mark
 * on (block_end) runs only after the mark: such as alignment NOPs between
 * the mark and the body. */
static bool edge_ok(const struct walk *w, size_t src, size_t dst, bool jump, size_t m,
		    size_t block_end, uint32_t k, char *why)
{
	bool src_in = in_body(w, w->val[src], k), dst_in = in_body(w, w->val[dst], k);
	bool after_mark = src >= m && src < block_end;

	if (!src_in && dst_in && !after_mark && dst != m && !runs_into(w, dst, m)) {
		why_set(why, w->c->caller,
			"a %s at +0x%zx enters the inlined body at +0x%zx without passing its mark "
			"(+0x%zx)",
			jump ? "jump" : "fall-through", src, dst, m);
		return false;
	}
	if (jump && src_in && dst <= src && (dst == m || runs_into(w, dst, m))) {
		why_set(why, w->c->caller,
			"a jump at +0x%zx inside the inlined body runs its mark (+0x%zx) again",
			src, m);
		return false;
	}
	return true;
}

/* Entry k's mark, judged: true when counted, else why. */
static bool judge(const struct walk *w, uint32_t k, char *why)
{
	const struct inline_marks_code *c = w->c;
	const uint8_t *code = c->code;
	size_t m = c->entries[k].parent_pc, size = c->size;

	if (w->why[0]) {
		snprintf(why, INLINE_MARKS_WHY_LEN, "%s", w->why);
		return false;
	}
	if (m >= size) {
		why_set(why, c->caller, "its mark (+0x%zx) is past the caller's code", m);
		return false;
	}
	if (!code_walk_starts(w->bits, m)) {
		why_set(why, c->caller, "its mark (+0x%zx) is not an instruction start", m);
		return false;
	}

	for (uint32_t j = 0; j < c->nentries; j++)
		if (j != k && c->entries[j].parent_pc == m) {
			why_set(why, c->caller, "its mark (+0x%zx) is also another inlined call's",
				m);
			return false;
		}
	if (in_body(w, w->val[m], k) || (c->entries[k].parent != GOPCLNTAB_INL_PARENT_UNSAID &&
					 w->val[m] != c->entries[k].parent)) {
		why_set(why, c->caller,
			"its mark (+0x%zx) is code of an inlined body, not of the call's caller",
			m);
		return false;
	}
	size_t block_start, block_end;
	if (!block_has_body(w, m, k, &block_start, &block_end)) {
		why_set(why, c->caller, "its mark (+0x%zx) is not in a block with the inlined code",
			m);
		return false;
	}
	for (size_t off = 0; off < size;) {
		size_t end = code_walk_insn_end(w->bits, off, size);
		int64_t t = -1;
		bool uncond;
		enum code_branch b = code_walk_branch(code, off, end, &t, &uncond);
		if (b == CODE_BRANCH_DIRECT && t >= 0 && (size_t)t < size &&
		    !edge_ok(w, off, (size_t)t, true, m, block_end, k, why))
			return false;
		if (falls(c, off, end, b, uncond) && end < size &&
		    !edge_ok(w, off, end, false, m, block_end, k, why))
			return false;
		off = end;
	}
	return true;
}

int inline_marks_find(struct retsites_engine *eng, const struct inline_marks_code *c,
		      struct inline_mark_site *out, size_t max, size_t *n)
{
	struct walk w;
	int ret = walk_open(eng, c, &w);

	for (uint32_t k = 0; !ret && k < c->nentries && *n < max; k++) {
		if (!c->entries[k].wanted)
			continue;
		struct inline_mark_site *s = &out[(*n)++];
		memset(s, 0, sizeof(*s));
		s->offset = c->entries[k].parent_pc;
		s->addr = c->addr + s->offset;
		s->counted = judge(&w, k, s->why);
		/* Not the NOP the compiler emits for a mark of its own: the
		 * interlock asks the kernel about the instruction. */
		if (s->offset < c->size && code_walk_starts(w.bits, s->offset)) {
			size_t end = code_walk_insn_end(w.bits, s->offset, c->size);
			s->insn_len =
			    (uint8_t)(end - s->offset < sizeof(s->insn) ? end - s->offset
									: sizeof(s->insn));
			memcpy(s->insn, c->code + s->offset, s->insn_len);
		}
		s->reused = s->insn_len != 1 || s->insn[0] != 0x90;
	}
	walk_close(&w);
	return ret;
}

const char *inline_marks_why(const struct inline_marks *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (!m->site[i].counted)
			return m->site[i].why;
	return NULL;
}

/* One caller's inline tree and pc table, read for prove_caller. */
struct caller_tables {
	struct inline_marks_entry *entries;
	uint32_t n, wanted;
	struct inline_marks_run *runs;
	size_t nruns, cap;
};

/* Caller i's inline tree; its pc table only when it inlined name
 * (t->wanted > 0).  A corrupt tree or table: none of its sites is known. */
static int caller_load(const struct gopclntab *tab, size_t i, const char *name,
		       struct caller_tables *t)
{
	struct gopclntab_pciter it;
	struct gopclntab_inl e;
	uint64_t s, end;
	int32_t v;
	int ret;

	if (gopclntab_inl_count(tab, i, &t->n) != 0 || t->n == 0)
		return 0;
	if (!(t->entries = calloc(t->n, sizeof(*t->entries))))
		return -ENOMEM;
	for (uint32_t k = 0; k < t->n; k++) {
		if (gopclntab_inl_get(tab, i, k, &e) != 0) {
			t->wanted = 0;
			return 0;
		}
		t->entries[k] = (struct inline_marks_entry){
		    .parent_pc = e.parent_pc, .parent = e.parent, .wanted = !strcmp(e.name, name)};
		t->wanted += t->entries[k].wanted;
	}
	if (!t->wanted || gopclntab_inl_pcdata(tab, i, &it) != 0)
		return 0;
	while ((ret = gopclntab_pciter_next(&it, &s, &end, &v)) == 1) {
		if (v < 0)
			continue;
		if (t->nruns == t->cap) {
			size_t cap = t->cap ? 2 * t->cap : 64;
			struct inline_marks_run *r = realloc(t->runs, cap * sizeof(*r));
			if (!r)
				return -ENOMEM;
			t->runs = r;
			t->cap = cap;
		}
		t->runs[t->nruns++] =
		    (struct inline_marks_run){.start = (uint32_t)s,
					      .end = end > UINT32_MAX ? UINT32_MAX : (uint32_t)end,
					      .val = v};
	}
	if (ret < 0)
		t->wanted = 0;
	return 0;
}

static bool never_returns(const void *ctx, uint64_t addr)
{
	return funcs_never_returns(ctx, addr);
}

/* Judge the sites of caller i (its tables in t) into out. */
static int prove_caller(const struct func_index *idx, struct retsites_engine *eng, size_t i,
			const struct caller_tables *t, struct inline_marks *out)
{
	struct gopclntab_func gf;
	uint64_t size;
	uint8_t *code;
	int ret;

	out->nsites += t->wanted;
	if (gopclntab_func(idx->pcln, i, &gf, NULL) != 0)
		return 0;
	if (gopclntab_code_size(idx->pcln, i, &size) != 0)
		size = gf.end - gf.entry;
	if (size == 0 || size > (64u << 20) || !(code = malloc(size)))
		return size > (64u << 20) ? 0 : -ENOMEM;
	if (elf_image_read_code(idx->img, gf.entry, code, size) != 0) {
		free(code);
		return 0;
	}
	struct inline_marks_code c = {.caller = gf.name,
				      .code = code,
				      .size = size,
				      .addr = gf.entry,
				      .entries = t->entries,
				      .nentries = t->n,
				      .runs = t->runs,
				      .nruns = t->nruns,
				      .never_returns = never_returns,
				      .ctx = idx};
	size_t first = out->n, keep = first;
	ret = inline_marks_find(eng, &c, out->site, INLINE_MARKS_MAX, &out->n);
	/* Kept: the counted sites, and the first refused one for its reason;
	 * so a function inlined at thousands of sites, most of them refused,
	 * still has its marks found wherever they are. */
	for (size_t k = first; k < out->n; k++) {
		bool why = !out->site[k].counted && !out->refused++;
		if (!out->site[k].counted && !why)
			continue;
		out->counted += out->site[k].counted;
		if (keep != k)
			out->site[keep] = out->site[k];
		keep++;
	}
	out->n = keep;
	free(code);
	return ret;
}

int inline_marks_prove(const struct func_index *idx, const struct func_info *f,
		       struct inline_marks *out, char *err)
{
	struct retsites_engine *eng;
	size_t nf;
	int ret;

	memset(out, 0, sizeof(*out));
	if (!idx->pcln || !gopclntab_has_inl(idx->pcln))
		return err_set(err, ENOTSUP, "%s: the binary's inline trees cannot be read",
			       f->name);
	if (f->inlined_sites == 0)
		return 0;
	if ((ret = retsites_engine_open(&eng, err)) != 0)
		return ret;
	nf = gopclntab_count(idx->pcln);
	for (size_t i = 0; !ret && i < nf && out->n < INLINE_MARKS_MAX; i++) {
		struct caller_tables t = {0};
		ret = caller_load(idx->pcln, i, f->name, &t);
		if (!ret && t.wanted)
			ret = prove_caller(idx, eng, i, &t, out);
		free(t.entries);
		free(t.runs);
	}
	retsites_engine_close(eng);
	if (ret)
		return err_set(err, -ret, "%s: out of memory proving its inline marks", f->name);
	return 0;
}
