/* The Go function table (.gopclntab), parsed in place.
 *
 * The table is read straight from the mapped section: names and file names
 * are returned as pointers into it, and nothing is allocated per function.
 * The bytes come from a binary retop does not trust, so every offset is
 * checked against the bounds of the sub-table it points into before it is
 * dereferenced.  The header and the functab are validated once in
 * gopclntab_open(); each _func is validated when it is first looked at.
 *
 * Layout (all little-endian, see Go's runtime/symtab.go and
 * cmd/link/internal/ld/pcln.go):
 *
 *   header     magic u32, 0 u8, 0 u8, minLC u8, ptrSize u8, then uintptrs:
 *              nfunc, nfiles, [textStart (1.18+; 0 from 1.26)], funcnameOffset,
 *              cuOffset, filetabOffset, pctabOffset, pclnOffset
 *   functab    at pclnOffset: nfunc (entry, funcoff) pairs then one end pc;
 *              uintptr fields in 1.16, u32 offsets from textStart in 1.18+
 *   _func      at pclnOffset + funcoff
 */
#include "gopclntab.h"

#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MOD ".gopclntab"

#define GOPCLNTAB_MAGIC_12 0xFFFFFFFBu

/* The sub-tables, in header order after nfunc/nfiles/textStart. */
enum { SUB_FUNCNAME, SUB_CU, SUB_FILE, SUB_PC, SUB_PCLN, SUB_COUNT };

struct sub {
	size_t off;
	size_t len;
};

struct gopclntab {
	const uint8_t *data;
	size_t size;
	uint32_t magic;
	unsigned quantum;
	unsigned ptrsize;
	unsigned field;	    /* functab field size: ptrsize (1.16) or 4 */
	unsigned func_size; /* fixed part of _func */
	unsigned func_base; /* offset of nameoff: the entry field's size */
	uint32_t nfunc;
	uint64_t text_start;
	struct sub sub[SUB_COUNT];
	const uint8_t *functab;
	const uint8_t *gofunc; /* go:func.*, NULL when unknown */
	size_t gofunc_size;
};

/* The _func fields retop uses. */
struct func_raw {
	uint32_t nameoff;
	uint32_t pcsp;
	uint32_t pcfile;
	uint32_t pcln;
	uint32_t cu_off;
};

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
	return rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static uint64_t rdptr(const uint8_t *p, unsigned size)
{
	return size == 8 ? rd64(p) : rd32(p);
}

int gopclntab_varint(const uint8_t *p, size_t avail, uint32_t *val)
{
	uint32_t v = 0;

	for (size_t i = 0; i < 5; i++) {
		if (i >= avail)
			return -EINVAL;
		uint8_t b = p[i];
		/* The fifth byte holds bits 28..31: anything above is overflow. */
		if (i == 4 && b > 0x0F)
			return -EINVAL;
		v |= (uint32_t)(b & 0x7F) << (7 * i);
		if (!(b & 0x80)) {
			*val = v;
			return (int)i + 1;
		}
	}
	return -EINVAL;
}

int gopclntab_pcspan(const uint8_t *p, size_t avail, unsigned pc_quantum, uint64_t *span)
{
	uint64_t pc = 0;
	size_t pos = 0;

	for (int first = 1;; first = 0) {
		uint32_t uvdelta, pcdelta;
		int n = gopclntab_varint(p + pos, avail - pos, &uvdelta);
		if (n < 0)
			return n;
		pos += (size_t)n;
		if (uvdelta == 0 && !first) {
			*span = pc;
			return 0;
		}
		n = gopclntab_varint(p + pos, avail - pos, &pcdelta);
		if (n < 0)
			return n;
		pos += (size_t)n;
		pc += (uint64_t)pcdelta * pc_quantum; /* 2^32 * 4 per step: cannot wrap */
	}
}

/* Move c to the row of its table that holds target (no lower than the
 * last target): the rows gopclntab_pcvalue() reads, each read once over
 * ascending targets.  An error or the table's end sticks: a later target
 * would meet it too. */
static int pcv_seek(struct gopclntab_pcv *c, uint64_t target, unsigned pc_quantum, int32_t *val)
{
	while (!c->err && (!c->started || target >= c->pc)) {
		uint32_t uvdelta, pcdelta;
		int n = gopclntab_varint(c->p + c->pos, c->avail - c->pos, &uvdelta);
		if (n < 0)
			return c->err = n;
		c->pos += (size_t)n;
		if (uvdelta == 0 && c->started)
			return c->err = -ENOENT; /* table ended before target */
		c->started = true;
		n = gopclntab_varint(c->p + c->pos, c->avail - c->pos, &pcdelta);
		if (n < 0)
			return c->err = n;
		c->pos += (size_t)n;
		/* Unsigned arithmetic: wraps like Go's int32 addition. */
		c->v = (int32_t)((uint32_t)c->v +
				 (uint32_t)(-(int32_t)(uvdelta & 1) ^ (int32_t)(uvdelta >> 1)));
		uint64_t step = (uint64_t)pcdelta * pc_quantum;
		if (step > UINT64_MAX - c->pc)
			return c->err = -EINVAL;
		c->pc += step;
	}
	if (!c->err)
		*val = c->v;
	return c->err;
}

int gopclntab_pcvalue(const uint8_t *p, size_t avail, uint64_t entry, uint64_t target_pc,
		      unsigned pc_quantum, int32_t *val)
{
	struct gopclntab_pcv c = {.p = p, .avail = avail, .pc = entry, .v = -1};

	if (target_pc < entry)
		return -ENOENT;
	return pcv_seek(&c, target_pc, pc_quantum, val);
}

/* Each sub-table runs to the next one that starts after it, or to the end
 * of the section: no assumption about the order the linker wrote them in. */
static void sub_bounds(struct gopclntab *t)
{
	for (int i = 0; i < SUB_COUNT; i++) {
		size_t end = t->size;
		for (int j = 0; j < SUB_COUNT; j++)
			if (t->sub[j].off > t->sub[i].off && t->sub[j].off < end)
				end = t->sub[j].off;
		t->sub[i].len = end - t->sub[i].off;
	}
}

static int check_magic(struct gopclntab *t, char *err)
{
	switch (t->magic) {
	case GOPCLNTAB_MAGIC_116:
		t->field = t->ptrsize;
		t->func_base = t->ptrsize;
		t->func_size = t->ptrsize + 9 * 4;
		return 0;
	case GOPCLNTAB_MAGIC_118:
		t->field = 4;
		t->func_base = 4;
		t->func_size = 10 * 4;
		return 0;
	case GOPCLNTAB_MAGIC_120:
		t->field = 4;
		t->func_base = 4;
		t->func_size = 11 * 4; /* adds startLine */
		return 0;
	case GOPCLNTAB_MAGIC_12:
		return err_set(err, ENOTSUP,
			       MOD ": magic 0x%08" PRIx32 " is Go 1.2-1.15, unsupported: Go < 1.16",
			       t->magic);
	default:
		return err_set(err, EINVAL,
			       MOD ": unknown magic 0x%08" PRIx32
				   " (retop reads Go 1.16 to 1.2x tables)",
			       t->magic);
	}
}

/* The first 8 bytes: magic, padding, pc quantum, pointer size. */
static int parse_fixed(struct gopclntab *t, char *err)
{
	const uint8_t *d = t->data;

	if (t->size < 8)
		return err_set(err, EINVAL, MOD ": %zu bytes, too short for a header", t->size);
	t->magic = rd32(d);
	t->quantum = d[6];
	t->ptrsize = d[7];
	/* Magic first: a foreign table's other bytes mean nothing. */
	int ret = check_magic(t, err);
	if (ret)
		return ret;
	if (d[4] || d[5])
		return err_set(err, EINVAL, MOD ": header padding is not zero (corrupt binary?)");
	if (t->quantum != 1 && t->quantum != 4)
		return err_set(err, EINVAL, MOD ": pc quantum %u, expected 1 or 4", t->quantum);
	if (t->ptrsize != 4 && t->ptrsize != 8)
		return err_set(err, EINVAL, MOD ": pointer size %u, expected 4 or 8", t->ptrsize);
	return 0;
}

static int check_nfunc(struct gopclntab *t, uint64_t nfunc, char *err)
{
	size_t pcln_len = t->sub[SUB_PCLN].len;

	if (nfunc == 0)
		return err_set(err, EINVAL, MOD ": no functions (corrupt binary?)");
	/* (2 * nfunc + 1) fields must fit: compare without overflowing. */
	if (pcln_len < t->field || nfunc > (pcln_len - t->field) / (2 * t->field) ||
	    nfunc > UINT32_MAX)
		return err_set(err, EINVAL,
			       MOD ": %" PRIu64
				   " functions do not fit in %zu bytes (corrupt binary?)",
			       nfunc, pcln_len);
	t->nfunc = (uint32_t)nfunc;
	t->functab = t->data + t->sub[SUB_PCLN].off;
	return 0;
}

static int parse_header(struct gopclntab *t, uint64_t text_start, char *err)
{
	static const char *const names[SUB_COUNT] = {"funcname", "cu", "filetab", "pctab", "pcln"};
	int ret = parse_fixed(t, err);

	if (ret)
		return ret;
	int has_text = t->magic != GOPCLNTAB_MAGIC_116;
	size_t hdr = 8 + (2 + (size_t)has_text + SUB_COUNT) * t->ptrsize;
	if (t->size < hdr)
		return err_set(err, EINVAL, MOD ": %zu bytes, header needs %zu (truncated?)",
			       t->size, hdr);

	const uint8_t *w = t->data + 8;
	uint64_t nfunc = rdptr(w, t->ptrsize);
	w += 2 * t->ptrsize; /* nfiles: not needed, cutab bounds are checked */
	if (has_text) {
		uint64_t hdr_text = rdptr(w, t->ptrsize);
		w += t->ptrsize;
		/* The caller's text start is proven (see elf_image_text_start);
		 * a header that says otherwise is a table that lies. */
		if (text_start && hdr_text && hdr_text != text_start)
			return err_set(err, EINVAL,
				       MOD ": header text start 0x%" PRIx64 " disagrees with "
					   "runtime.text 0x%" PRIx64 " (corrupt binary?)",
				       hdr_text, text_start);
		t->text_start = text_start ? text_start : hdr_text;
		if (!t->text_start)
			return err_set(err, EINVAL,
				       MOD ": no text start in the header and none given "
					   "(need runtime.text)");
		if (t->text_start > UINT64_MAX - UINT32_MAX)
			return err_set(err, EINVAL, MOD ": text start 0x%" PRIx64 " out of range",
				       t->text_start);
	}
	for (int i = 0; i < SUB_COUNT; i++, w += t->ptrsize) {
		uint64_t off = rdptr(w, t->ptrsize);
		if (off < hdr || off > t->size)
			return err_set(err, EINVAL,
				       MOD ": %s offset 0x%" PRIx64
					   " outside the table (corrupt binary?)",
				       names[i], off);
		t->sub[i].off = (size_t)off;
	}
	sub_bounds(t);
	return check_nfunc(t, nfunc, err);
}

/* Entry pc of functab slot i; slot nfunc is the end of the last function. */
static uint64_t ft_pc(const struct gopclntab *t, size_t i)
{
	const uint8_t *p = t->functab + 2 * i * t->field;

	if (t->magic != GOPCLNTAB_MAGIC_116)
		return t->text_start + rd32(p);
	return rdptr(p, t->field);
}

static uint64_t ft_funcoff(const struct gopclntab *t, size_t i)
{
	return rdptr(t->functab + (2 * i + 1) * t->field, t->field);
}

static int check_functab(const struct gopclntab *t, char *err)
{
	uint64_t prev = ft_pc(t, 0);

	for (size_t i = 1; i <= t->nfunc; i++) {
		uint64_t pc = ft_pc(t, i);
		/* Equal is allowed: a zero-size function is harmless. */
		if (pc < prev)
			return err_set(err, EINVAL,
				       MOD ": functab not ascending at function %zu (0x%" PRIx64
					   " after 0x%" PRIx64 ", corrupt binary?)",
				       i, pc, prev);
		prev = pc;
	}
	return 0;
}

int gopclntab_open(const uint8_t *data, size_t size, uint64_t text_start, struct gopclntab **out,
		   char *err)
{
	struct gopclntab *t;
	int ret;

	*out = NULL;
	if (!data)
		return err_set(err, EINVAL, MOD ": no data");
	t = calloc(1, sizeof(*t));
	if (!t)
		return err_set(err, ENOMEM, MOD ": out of memory");
	t->data = data;
	t->size = size;
	ret = parse_header(t, text_start, err);
	if (!ret)
		ret = check_functab(t, err);
	if (ret) {
		free(t);
		return ret;
	}
	*out = t;
	return 0;
}

void gopclntab_close(struct gopclntab *tab)
{
	free(tab);
}

uint32_t gopclntab_magic(const struct gopclntab *tab)
{
	return tab->magic;
}

size_t gopclntab_count(const struct gopclntab *tab)
{
	return tab->nfunc;
}

/* Read the fixed part of function i's _func after checking it fits. */
static int func_raw(const struct gopclntab *t, size_t i, struct func_raw *r, char *err)
{
	if (i >= t->nfunc)
		return err_set(err, ERANGE,
			       MOD ": function %zu out of range (%" PRIu32 " functions)", i,
			       t->nfunc);
	uint64_t off = ft_funcoff(t, i);
	size_t len = t->sub[SUB_PCLN].len;
	if (len < t->func_size || off > len - t->func_size)
		return err_set(err, EINVAL,
			       MOD ": function %zu data offset 0x%" PRIx64
				   " outside the table (corrupt binary?)",
			       i, off);
	const uint8_t *p = t->functab + off + t->func_base;
	r->nameoff = rd32(p);
	r->pcsp = rd32(p + 12);
	r->pcfile = rd32(p + 16);
	r->pcln = rd32(p + 20);
	r->cu_off = rd32(p + 28);
	return 0;
}

/* A NUL-terminated string at off inside sub-table s, or NULL. */
static const char *sub_string(const struct gopclntab *t, int s, uint64_t off)
{
	const struct sub *sb = &t->sub[s];

	if (off >= sb->len)
		return NULL;
	const uint8_t *p = t->data + sb->off + off;
	if (!memchr(p, 0, sb->len - (size_t)off))
		return NULL;
	return (const char *)p;
}

int gopclntab_func(const struct gopclntab *tab, size_t i, struct gopclntab_func *f, char *err)
{
	struct func_raw r;
	int ret = func_raw(tab, i, &r, err);

	if (ret)
		return ret;
	/* nameoff is an int32 in Go: a negative one is out of bounds too. */
	if (r.nameoff >= tab->sub[SUB_FUNCNAME].len)
		return err_set(err, EINVAL,
			       MOD ": function %zu name offset 0x%" PRIx32
				   " outside the table (corrupt binary?)",
			       i, r.nameoff);
	f->name = sub_string(tab, SUB_FUNCNAME, r.nameoff);
	if (!f->name)
		return err_set(err, EINVAL,
			       MOD ": function %zu name at 0x%" PRIx32
				   " is not terminated (corrupt binary?)",
			       i, r.nameoff);
	f->entry = ft_pc(tab, i);
	f->end = ft_pc(tab, i + 1);
	f->index = (uint32_t)i;
	return 0;
}

/* A cursor on the pcvalue table at off in pctab for a function at entry;
 * offset 0 means "no table", as in the runtime's pcvalue. */
static struct gopclntab_pcv pcv_at(const struct gopclntab *t, uint32_t off, uint64_t entry)
{
	const struct sub *pct = &t->sub[SUB_PC];

	if (off == 0)
		return (struct gopclntab_pcv){.err = -ENOENT};
	if (off >= pct->len)
		return (struct gopclntab_pcv){.err = -EINVAL};
	return (struct gopclntab_pcv){
	    .p = t->data + pct->off + off, .avail = pct->len - off, .pc = entry, .v = -1};
}

/* The name of file fno of the compilation unit at cu_off. */
static int file_name(const struct gopclntab *tab, uint32_t cu_off, int32_t fno, const char **file)
{
	if (fno < 0)
		return -ENOENT;
	/* cutab is an array of u32 offsets into filetab, ~0 for "none". */
	uint64_t slot = (uint64_t)cu_off + (uint32_t)fno;
	if (slot >= tab->sub[SUB_CU].len / 4)
		return -EINVAL;
	uint32_t foff = rd32(tab->data + tab->sub[SUB_CU].off + slot * 4);
	if (foff == UINT32_MAX)
		return -ENOENT;
	const char *name = sub_string(tab, SUB_FILE, foff);
	if (!name)
		return -EINVAL;
	*file = name;
	return 0;
}

void gopclntab_lines_open(const struct gopclntab *tab, size_t i, struct gopclntab_lines *it)
{
	struct func_raw r;

	*it = (struct gopclntab_lines){.tab = tab, .i = i};
	if ((it->err = func_raw(tab, i, &r, NULL)) != 0)
		return;
	it->entry = ft_pc(tab, i);
	it->end = ft_pc(tab, i + 1);
	it->cu_off = r.cu_off;
	it->file = pcv_at(tab, r.pcfile, it->entry);
	it->line = pcv_at(tab, r.pcln, it->entry);
}

int gopclntab_lines_next(struct gopclntab_lines *it, uint64_t pc, const char **file, int *line)
{
	int32_t fno, ln;
	int ret;

	if (it->err)
		return it->err;
	if (pc < it->entry || pc >= it->end)
		return -ERANGE;
	/* A pc below the last one: the tables' walks start over. */
	if (pc < it->last)
		gopclntab_lines_open(it->tab, it->i, it);
	it->last = pc;
	if ((ret = pcv_seek(&it->file, pc, it->tab->quantum, &fno)) != 0 ||
	    (ret = pcv_seek(&it->line, pc, it->tab->quantum, &ln)) != 0 ||
	    (ret = file_name(it->tab, it->cu_off, fno, file)) != 0)
		return ret;
	*line = ln;
	return 0;
}

int gopclntab_line(const struct gopclntab *tab, size_t i, uint64_t pc, const char **file, int *line)
{
	struct gopclntab_lines it;

	gopclntab_lines_open(tab, i, &it);
	return gopclntab_lines_next(&it, pc, file, line);
}

int gopclntab_code_size(const struct gopclntab *tab, size_t i, uint64_t *size)
{
	struct gopclntab_pciter it;
	uint64_t span;
	int ret = gopclntab_pcsp(tab, i, &it);

	if (ret)
		return ret;
	ret = gopclntab_pcspan(it.p, it.avail, it.quantum, &span);
	if (ret)
		return ret;
	/* More than the distance to the next function: not this table's. */
	if (span == 0 || span > ft_pc(tab, i + 1) - ft_pc(tab, i))
		return -EINVAL;
	*size = span;
	return 0;
}

size_t gopclntab_behind(const struct gopclntab *tab, size_t i, struct gopclntab_span out[2])
{
	struct func_raw r;
	size_t n = 0;

	if (func_raw(tab, i, &r, NULL) != 0)
		return 0;
	/* pc tables: below the first one of function i that retop reads. */
	uint32_t mark = r.pcfile && r.pcfile < r.pcln ? r.pcfile : r.pcln;
	if (mark && mark < tab->sub[SUB_PC].len)
		out[n++] = (struct gopclntab_span){tab->data + tab->sub[SUB_PC].off, mark};
	/* _func records: they follow the functab's 2 * nfunc + 1 fields. */
	uint64_t recs = (2 * (uint64_t)tab->nfunc + 1) * tab->field;
	uint64_t off = ft_funcoff(tab, i);
	if (off > recs)
		out[n++] = (struct gopclntab_span){tab->functab + recs, (size_t)(off - recs)};
	return n;
}

long gopclntab_find(const struct gopclntab *tab, uint64_t pc)
{
	size_t lo = 0, hi = tab->nfunc;

	if (pc < ft_pc(tab, 0) || pc >= ft_pc(tab, tab->nfunc))
		return -ENOENT;
	/* Last slot whose entry <= pc: skips zero-size functions. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (ft_pc(tab, mid) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return (long)lo;
}

int gopclntab_pciter_next(struct gopclntab_pciter *it, uint64_t *start, uint64_t *end, int32_t *val)
{
	uint32_t uvdelta, pcdelta;
	int n;

	if (it->done)
		return 0;
	n = gopclntab_varint(it->p + it->pos, it->avail - it->pos, &uvdelta);
	if (n < 0)
		return n;
	it->pos += (size_t)n;
	if (uvdelta == 0 && it->started) {
		it->done = true;
		return 0;
	}
	it->started = true;
	n = gopclntab_varint(it->p + it->pos, it->avail - it->pos, &pcdelta);
	if (n < 0)
		return n;
	it->pos += (size_t)n;
	it->val = (int32_t)((uint32_t)it->val +
			    (uint32_t)(-(int32_t)(uvdelta & 1) ^ (int32_t)(uvdelta >> 1)));
	*start = it->pc;
	it->pc += (uint64_t)pcdelta * it->quantum; /* 2^32 * 4 per step: cannot wrap */
	*end = it->pc;
	*val = it->val;
	return 1;
}

int gopclntab_pcsp(const struct gopclntab *tab, size_t i, struct gopclntab_pciter *it)
{
	const struct sub *pct = &tab->sub[SUB_PC];
	struct func_raw r;
	int ret = func_raw(tab, i, &r, NULL);

	if (ret)
		return ret;
	if (r.pcsp == 0)
		return -ENOENT;
	if (r.pcsp >= pct->len)
		return -EINVAL;
	*it = (struct gopclntab_pciter){.p = tab->data + pct->off + r.pcsp,
					.avail = pct->len - r.pcsp,
					.quantum = tab->quantum,
					.val = -1};
	return 0;
}

int gopclntab_func_flags(const struct gopclntab *tab, size_t i, uint8_t *flags)
{
	struct func_raw r;
	int ret = func_raw(tab, i, &r, NULL);

	if (ret)
		return ret;
	/* funcID and flag follow cuOffset, and startLine from Go 1.20 on;
	 * func_raw() checked that the whole fixed part fits. */
	const uint8_t *p = tab->functab + ft_funcoff(tab, i) + tab->func_base;
	*flags = tab->magic == GOPCLNTAB_MAGIC_120 ? p[37] : p[33];
	return 0;
}

/* Inlining: pcdata 2 and funcdata 3 (Go's abi.PCDATA_InlTreeIndex and
 * abi.FUNCDATA_InlTree).  After the fixed part of _func come npcdata u32
 * offsets into pctab, then nfuncdata u32 offsets from go:func.* (~0: none),
 * on 1.18+ tables (1.16-1.17 hold absolute pointers there). */
#define PCDATA_INLTREE 2
#define FUNCDATA_INLTREE 3

void gopclntab_set_gofunc(struct gopclntab *tab, const uint8_t *data, size_t size)
{
	tab->gofunc = data;
	tab->gofunc_size = data ? size : 0;
}

bool gopclntab_has_inl(const struct gopclntab *tab)
{
	return tab->gofunc && tab->magic != GOPCLNTAB_MAGIC_116;
}

/* pcdata[PCDATA_INLTREE] and funcdata[FUNCDATA_INLTREE] of function i
 * (0 and ~0 when absent), after checking the arrays fit. */
static int inl_offsets(const struct gopclntab *t, size_t i, uint32_t *pcdata, uint32_t *funcdata)
{
	struct func_raw r;
	int ret = func_raw(t, i, &r, NULL);

	if (ret)
		return ret;
	uint64_t off = ft_funcoff(t, i);
	const uint8_t *p = t->functab + off;
	uint32_t npcdata = rd32(p + t->func_base + 24);
	uint8_t nfuncdata = p[t->func_size - 1];
	uint64_t need = off + t->func_size + 4 * ((uint64_t)npcdata + nfuncdata);
	if (npcdata > 1024 || need > t->sub[SUB_PCLN].len)
		return -EINVAL;
	p += t->func_size;
	*pcdata = npcdata > PCDATA_INLTREE ? rd32(p + 4 * PCDATA_INLTREE) : 0;
	*funcdata = nfuncdata > FUNCDATA_INLTREE ? rd32(p + 4 * (npcdata + FUNCDATA_INLTREE))
						 : UINT32_MAX;
	return 0;
}

int gopclntab_inl_pcdata(const struct gopclntab *tab, size_t i, struct gopclntab_pciter *it)
{
	const struct sub *pct = &tab->sub[SUB_PC];
	uint32_t pcd, fd;
	int ret;

	if (!gopclntab_has_inl(tab))
		return -ENOTSUP;
	if ((ret = inl_offsets(tab, i, &pcd, &fd)))
		return ret;
	if (pcd == 0)
		return -ENOENT;
	if (pcd >= pct->len)
		return -EINVAL;
	*it = (struct gopclntab_pciter){.p = tab->data + pct->off + pcd,
					.avail = pct->len - pcd,
					.quantum = tab->quantum,
					.val = -1};
	return 0;
}

static unsigned inl_entry_size(const struct gopclntab *t)
{
	return t->magic == GOPCLNTAB_MAGIC_118 ? 20 : 16;
}

int gopclntab_inl_count(const struct gopclntab *tab, size_t i, uint32_t *n)
{
	struct gopclntab_pciter it;
	uint64_t start, end;
	uint32_t pcd, fd;
	int32_t v, max = -1;
	int ret;

	*n = 0;
	if (!gopclntab_has_inl(tab))
		return -ENOTSUP;
	if ((ret = inl_offsets(tab, i, &pcd, &fd)))
		return ret;
	if (pcd == 0 && fd == UINT32_MAX)
		return 0;
	/* Both or neither: a tree without its pc table (or the reverse) is
	 * not one the linker writes. */
	if (pcd == 0 || fd == UINT32_MAX)
		return -EINVAL;
	if ((ret = gopclntab_inl_pcdata(tab, i, &it)))
		return ret;
	/* The tree has no length: the compiler numbers entries densely and
	 * a parent before its children, so the highest entry any pc names is
	 * the last one. */
	while ((ret = gopclntab_pciter_next(&it, &start, &end, &v)) == 1)
		if (v > max)
			max = v;
	if (ret < 0 || max < -1)
		return -EINVAL;
	uint64_t size = (uint64_t)(max + 1) * inl_entry_size(tab);
	if (fd > tab->gofunc_size || size > tab->gofunc_size - fd)
		return -EINVAL;
	*n = (uint32_t)(max + 1);
	return 0;
}

int gopclntab_inl_get(const struct gopclntab *tab, size_t i, uint32_t k, struct gopclntab_inl *e)
{
	uint32_t pcd, fd, nameoff;
	unsigned esize = inl_entry_size(tab);
	int ret;

	if (!gopclntab_has_inl(tab))
		return -ENOTSUP;
	if ((ret = inl_offsets(tab, i, &pcd, &fd)))
		return ret;
	/* k < the count is the caller's; the bytes are checked here. */
	if (fd == UINT32_MAX || fd > tab->gofunc_size ||
	    ((uint64_t)k + 1) * esize > tab->gofunc_size - fd)
		return -ERANGE;
	const uint8_t *p = tab->gofunc + fd + (size_t)k * esize;
	if (tab->magic == GOPCLNTAB_MAGIC_118) {
		e->parent = (int16_t)(p[0] | p[1] << 8);
		e->func_id = p[2];
		nameoff = rd32(p + 12);
		e->parent_pc = rd32(p + 16);
	} else {
		e->parent = GOPCLNTAB_INL_PARENT_UNSAID;
		e->func_id = p[0];
		nameoff = rd32(p + 4);
		e->parent_pc = rd32(p + 8);
	}
	/* parentPc is an int32 in Go: a negative one is past any function. */
	if (!(e->name = sub_string(tab, SUB_FUNCNAME, nameoff)) || e->parent_pc > INT32_MAX)
		return -EINVAL;
	return 0;
}
