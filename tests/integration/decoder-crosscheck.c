/* decoder-crosscheck BINARY: every function of a Go binary decoded twice,
 * by retop's decoder (Zydis: retsites_boundaries, retsites_find,
 * retsites_is_boundary) and by capstone, linearly from each entry to the
 * next function.  Wherever both decode, the instruction starts and the RET
 * offsets must be the same.  Prints, one a line:
 *
 *   refused NAME +OFF      retop's decoder stops at OFF (the function would
 *                          be refused for decoding); "capstone +OFF" after it
 *                          when capstone stops too
 *   capstone-only NAME +OFF capstone stops at OFF, retop's decoder does not
 *   disagree NAME ...      a boundary or RET that differs: a bug
 *
 * then "functions N capstone_fails N zydis_fails N disagree N".  Exit 0
 * unless the binary cannot be read or a decoder disagrees.
 */
#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_image.h"
#include "funcs.h"
#include "gopclntab.h"
#include "log.h"

struct cs_walk {
	uint8_t *bits; /* instruction starts */
	uint8_t *rets; /* near RETs */
	size_t stop;   /* where capstone stopped: size when it decoded all */
};

static bool bit(const uint8_t *b, size_t i)
{
	return b[i / 8] >> (i % 8) & 1;
}

static void cs_walk_run(csh h, cs_insn *insn, const uint8_t *code, size_t size, uint64_t addr,
			struct cs_walk *w)
{
	const uint8_t *p = code;
	size_t left = size;
	uint64_t pc = addr;

	w->stop = size;
	while (left > 0) {
		size_t at = (size_t)(pc - addr);
		if (!cs_disasm_iter(h, &p, &left, &pc, insn)) {
			w->stop = at;
			return;
		}
		w->bits[at / 8] |= (uint8_t)(1u << (at % 8));
		if (insn->id == X86_INS_RET)
			w->rets[at / 8] |= (uint8_t)(1u << (at % 8));
	}
}

struct tally {
	size_t funcs, cs_fails, zy_fails, disagree;
};

/* Compare both decodes of one function over [0, min(stops)). */
static void crosscheck_one(struct retsites_engine *eng, csh h, cs_insn *insn, const char *name,
			   const uint8_t *code, size_t size, uint64_t addr, struct tally *t)
{
	size_t nb = (size + 7) / 8, zstop, upto;
	uint8_t *zbits = calloc(nb, 1), *zrets = calloc(nb, 1);
	struct cs_walk w = {.bits = calloc(nb, 1), .rets = calloc(nb, 1)};
	struct retsites r;

	if (!zbits || !zrets || !w.bits || !w.rets) {
		fprintf(stderr, "decoder-crosscheck: out of memory\n");
		exit(2);
	}
	zstop = retsites_boundaries(eng, code, size, addr, zbits);
	if (retsites_find(eng, code, size, addr, &r) != 0) {
		fprintf(stderr, "decoder-crosscheck: out of memory\n");
		exit(2);
	}
	for (size_t i = 0; i < r.count; i++) {
		uint32_t off = retsites_get(&r, i)->offset;
		zrets[off / 8] |= (uint8_t)(1u << (off % 8));
		if (!retsites_is_boundary(eng, code, size, addr, off)) {
			printf("disagree %s RET +0x%x is no boundary for retsites_is_boundary\n",
			       name, off);
			t->disagree++;
		}
	}
	cs_walk_run(h, insn, code, size, addr, &w);
	upto = zstop < w.stop ? zstop : w.stop;
	for (size_t i = 0; i < upto; i++) {
		if (bit(zbits, i) == bit(w.bits, i) && bit(zrets, i) == bit(w.rets, i))
			continue;
		printf("disagree %s +0x%zx: zydis %s%s, capstone %s%s\n", name, i,
		       bit(zbits, i) ? "start" : "inside", bit(zrets, i) ? " ret" : "",
		       bit(w.bits, i) ? "start" : "inside", bit(w.rets, i) ? " ret" : "");
		t->disagree++;
		break;
	}
	/* retsites_find must stop where retsites_boundaries stops. */
	if ((r.traceable == TRACEABLE_NO && strstr(retsites_reason(&r), "does not decode")) !=
	    (zstop < size)) {
		printf(
		    "disagree %s: retsites_find says '%s', retsites_boundaries stops at +0x%zx\n",
		    name, retsites_reason(&r), zstop);
		t->disagree++;
	}
	if (zstop < size) {
		t->zy_fails++;
		printf("refused %s +0x%zx", name, zstop);
		if (w.stop < size)
			printf(" capstone +0x%zx", w.stop);
		printf("\n");
	} else if (w.stop < size) {
		printf("capstone-only %s +0x%zx\n", name, w.stop);
	}
	t->cs_fails += w.stop < size;
	t->funcs++;
	retsites_free(&r);
	free(zbits);
	free(zrets);
	free(w.bits);
	free(w.rets);
}

int main(int argc, char **argv)
{
	struct retsites_engine *eng;
	struct func_index *idx;
	struct tally t = {0};
	char err[ERR_LEN];
	cs_insn *insn;
	uint8_t *buf;
	csh h;

	if (argc != 2) {
		fprintf(stderr, "usage: decoder-crosscheck BINARY\n");
		return 2;
	}
	if (funcs_load(argv[1], FUNCS_NO_DWARF, &idx, err) != 0 ||
	    retsites_engine_open(&eng, err) != 0) {
		fprintf(stderr, "decoder-crosscheck: %s\n", err);
		return 1;
	}
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &h) != CS_ERR_OK || !(insn = cs_malloc(h))) {
		fprintf(stderr, "decoder-crosscheck: cannot open capstone\n");
		return 1;
	}
	for (size_t i = 0; i < idx->count; i++) {
		const struct func_info *f = &idx->funcs[i];
		struct gopclntab_func gf;
		size_t span;
		if (gopclntab_func(idx->pcln, f->pcln_index, &gf, err) != 0 || gf.end <= gf.entry ||
		    gf.end - gf.entry > (64u << 20)) {
			fprintf(stderr, "decoder-crosscheck: %s: no code span\n", f->name);
			return 1;
		}
		span = (size_t)(gf.end - gf.entry);
		if (!(buf = malloc(span)) || elf_image_read_code(idx->img, f->entry, buf, span)) {
			fprintf(stderr, "decoder-crosscheck: %s: cannot read its code\n", f->name);
			return 1;
		}
		crosscheck_one(eng, h, insn, f->name, buf, span, f->entry, &t);
		free(buf);
	}
	printf("functions %zu capstone_fails %zu zydis_fails %zu disagree %zu\n", t.funcs,
	       t.cs_fails, t.zy_fails, t.disagree);
	cs_free(insn, 1);
	cs_close(&h);
	retsites_engine_close(eng);
	funcs_free(idx);
	return t.disagree ? 1 : 0;
}
