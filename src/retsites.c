#define _GNU_SOURCE /* vasprintf */
#include "retsites.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

/* Offsets as they are found, before they are stored in the result. */
struct site_list {
	uint32_t *v;
	size_t n, cap;
};

static int site_list_push(struct site_list *l, uint32_t off)
{
	if (l->n == UINT32_MAX)
		return -E2BIG;
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		uint32_t *p = realloc(l->v, ncap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		l->v = p;
		l->cap = ncap;
	}
	l->v[l->n++] = off;
	return 0;
}

/* The instruction starts retsites_find() saw, so that retsites_boundaries()
 * on the same bytes right after it need not decode them again. */
struct boundary_cache {
	const uint8_t *code;
	size_t size, stop, cap;
	uint64_t addr;
	uint8_t *bits; /* NULL: nothing cached */
	bool valid;
};

struct retsites_engine {
	csh handle;
	cs_insn *insn;		/* reused by cs_disasm_iter: no allocation per instruction */
	struct site_list found; /* reused from function to function */
	struct boundary_cache seen;
};

int retsites_engine_open(struct retsites_engine **out, char *err)
{
	struct retsites_engine *eng = calloc(1, sizeof(*eng));

	*out = NULL;
	if (!eng)
		return err_set(err, ENOMEM, "capstone: out of memory");
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &eng->handle) != CS_ERR_OK) {
		free(eng);
		return err_set(err, EINVAL, "capstone: cannot open an x86-64 decoder");
	}
	/* Intel syntax, no operand details: the instruction id and the text are
	 * all the RET search needs, and details cost a third of the time. */
	cs_option(eng->handle, CS_OPT_SYNTAX, CS_OPT_SYNTAX_INTEL);
	eng->insn = cs_malloc(eng->handle);
	if (!eng->insn) {
		cs_close(&eng->handle);
		free(eng);
		return err_set(err, ENOMEM, "capstone: out of memory");
	}
	*out = eng;
	return 0;
}

void retsites_engine_close(struct retsites_engine *eng)
{
	if (!eng)
		return;
	cs_free(eng->insn, 1);
	cs_close(&eng->handle);
	free(eng->found.v);
	free(eng->seen.bits);
	free(eng);
}

static bool is_int3(const cs_insn *insn) { return insn->id == X86_INS_INT3; }

/* A direct jmp whose target lies outside [addr, addr+size). */
static bool is_tail_jump(const cs_insn *insn, uint64_t addr, size_t size)
{
	char *end;
	unsigned long long target;

	if (insn->id != X86_INS_JMP || strncmp(insn->op_str, "0x", 2) != 0)
		return false;
	target = strtoull(insn->op_str, &end, 16);
	if (*end != '\0')
		return false;
	return target < addr || target >= addr + size;
}

/* Copy the list into out: in place when it fits, else an exact allocation. */
static int site_list_store(const struct site_list *l, struct retsites *out)
{
	struct ret_site *dst = out->sites.in_place;

	if (l->n > RETSITES_INLINE && !(dst = out->sites.heap = calloc(l->n, sizeof(*dst))))
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++)
		dst[i] = (struct ret_site){.offset = l->v[i]};
	out->count = (uint32_t)l->n;
	return 0;
}

const struct ret_site *retsites_get(const struct retsites *r, size_t i)
{
	return r->count > RETSITES_INLINE ? &r->sites.heap[i] : &r->sites.in_place[i];
}

void retsites_set_line(struct retsites *r, size_t i, int32_t line)
{
	(r->count > RETSITES_INLINE ? r->sites.heap : r->sites.in_place)[i].line = line;
}

void retsites_truncate(struct retsites *r, uint32_t count)
{
	if (count >= r->count)
		return;
	if (r->count > RETSITES_INLINE && count <= RETSITES_INLINE) {
		struct ret_site *heap = r->sites.heap;
		memcpy(r->sites.in_place, heap, count * sizeof(*heap));
		free(heap);
	}
	r->count = count;
}

/* A zeroed map for size bytes, or NULL without memory (then nothing is
 * cached and retsites_boundaries() decodes). */
static uint8_t *boundary_cache_start(struct boundary_cache *c, const uint8_t *code, size_t size,
				     uint64_t addr)
{
	size_t need = size / 8 + 1;

	c->valid = false;
	if (need > c->cap) {
		uint8_t *bits = realloc(c->bits, need);
		if (!bits)
			return NULL;
		c->bits = bits;
		c->cap = need;
	}
	memset(c->bits, 0, need);
	c->code = code;
	c->size = c->stop = size;
	c->addr = addr;
	c->valid = true;
	return c->bits;
}

int retsites_find(struct retsites_engine *eng, const uint8_t *code, size_t size, uint64_t addr,
		  struct retsites *out)
{
	const uint8_t *p = code;
	size_t left = size;
	uint64_t pc = addr;
	bool tail_jump = false, far_ret = false;

	memset(out, 0, sizeof(*out));
	eng->found.n = 0;
	uint8_t *seen = boundary_cache_start(&eng->seen, code, size, addr);
	while (left > 0) {
		uint64_t at = pc;
		if (seen)
			seen[(at - addr) / 8] |= (uint8_t)(1u << ((at - addr) % 8));
		if (!cs_disasm_iter(eng->handle, &p, &left, &pc, eng->insn)) {
			if (seen)
				seen[(at - addr) / 8] &= (uint8_t) ~(1u << ((at - addr) % 8));
			eng->seen.stop = (size_t)(at - addr);
			out->traceable = TRACEABLE_NO;
			out->code_size = at - addr;
			if (site_list_store(&eng->found, out))
				return -ENOMEM;
			return retsites_set_reason(out, "instruction at +0x%llx does not decode",
						   (unsigned long long)(at - addr));
		}
		if (!is_int3(eng->insn))
			out->code_size = pc - addr;
		if (eng->insn->id == X86_INS_RET) {
			if (site_list_push(&eng->found, (uint32_t)(at - addr)))
				return -ENOMEM;
		} else if (eng->insn->id == X86_INS_RETF) {
			far_ret = true;
		} else if (is_tail_jump(eng->insn, addr, size)) {
			tail_jump = true;
		}
	}
	if (site_list_store(&eng->found, out))
		return -ENOMEM;
	/* RETs in trailing padding cannot exist: padding is int3 only. */
	if (far_ret) {
		out->traceable = TRACEABLE_NO;
		return retsites_set_reason(out, "far return (retf): not Go code");
	}
	if (out->count == 0) {
		out->traceable = TRACEABLE_ENTRY_ONLY;
		return retsites_set_reason(out, "%s", tail_jump ? "no RET: ends in tail jump"
								: "no RET: never returns");
	}
	return 0;
}

void retsites_free(struct retsites *r)
{
	retsites_truncate(r, 0);
	free(r->reason);
	r->reason = NULL;
}

const char *retsites_reason(const struct retsites *r)
{
	return r->reason ? r->reason : "";
}

int retsites_set_reason(struct retsites *r, const char *fmt, ...)
{
	va_list ap;
	char *text;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&text, fmt, ap);
	va_end(ap);
	free(r->reason);
	r->reason = n < 0 ? NULL : text;
	return n < 0 ? -ENOMEM : 0;
}

bool retsites_is_boundary(struct retsites_engine *eng, const uint8_t *code, size_t size,
			  uint64_t addr, uint64_t off)
{
	const uint8_t *p = code;
	size_t left = size;
	uint64_t pc = addr;

	if (off >= size)
		return false;
	while (pc - addr < off) {
		if (!cs_disasm_iter(eng->handle, &p, &left, &pc, eng->insn))
			return false;
	}
	return pc - addr == off;
}

int retsites_disasm_one(struct retsites_engine *eng, const uint8_t *code, size_t size,
			uint64_t addr, char *text, size_t text_len)
{
	const uint8_t *p = code;
	size_t left = size;
	uint64_t pc = addr;

	if (size == 0)
		return 0;
	if (!cs_disasm_iter(eng->handle, &p, &left, &pc, eng->insn))
		return -EINVAL;
	snprintf(text, text_len, "%s%s%s", eng->insn->mnemonic, eng->insn->op_str[0] ? " " : "",
		 eng->insn->op_str);
	return (int)eng->insn->size;
}

const char *traceable_name(enum traceable t)
{
	switch (t) {
	case TRACEABLE_FULL:
		return "full";
	case TRACEABLE_ENTRY_ONLY:
		return "entry-only";
	default:
		return "no";
	}
}

size_t retsites_boundaries(struct retsites_engine *eng, const uint8_t *code, size_t size,
			   uint64_t addr, uint8_t *bits)
{
	const uint8_t *p = code;
	size_t left = size;
	uint64_t pc = addr;
	struct boundary_cache *c = &eng->seen;

	/* The same bytes retsites_find() has just decoded: one use only. */
	if (c->valid && c->code == code && c->size == size && c->addr == addr) {
		c->valid = false;
		for (size_t i = 0; i < size / 8 + 1; i++)
			bits[i] |= c->bits[i];
		return c->stop;
	}

	while (left > 0) {
		size_t at = (size_t)(pc - addr);
		if (!cs_disasm_iter(eng->handle, &p, &left, &pc, eng->insn))
			return at;
		bits[at / 8] |= (uint8_t)(1u << (at % 8));
	}
	return size;
}
