#define _GNU_SOURCE /* vasprintf */
#include "retsites.h"

#include <Zydis/Zydis.h>
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

/* Zydis decodes for the RET search and every boundary check: it knows the
 * AVX-512/EVEX code Go >= 1.26 links (capstone 4.0.2 does not) and, in its
 * minimal mode, decodes four times faster.  capstone only prints the
 * detail view's disassembly, so it is opened on first use. */
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
	struct boundary_cache seen;
	ZydisDecoder zydis;
	csh handle;		/* 0 until retsites_disasm_one() needs it */
	cs_insn *insn;		/* reused by cs_disasm_iter: no allocation per instruction */
	struct site_list found; /* reused from function to function */
};

int retsites_engine_open(struct retsites_engine **out, char *err)
{
	struct retsites_engine *eng = calloc(1, sizeof(*eng));

	*out = NULL;
	if (!eng)
		return err_set(err, ENOMEM, "decoder: out of memory");
	/* Minimal mode: length, mnemonic and the raw immediates are all the
	 * RET search needs; operands are never decoded. */
	if (!ZYAN_SUCCESS(ZydisDecoderInit(&eng->zydis, ZYDIS_MACHINE_MODE_LONG_64,
					   ZYDIS_STACK_WIDTH_64)) ||
	    !ZYAN_SUCCESS(ZydisDecoderEnableMode(&eng->zydis, ZYDIS_DECODER_MODE_MINIMAL,
						 ZYAN_TRUE))) {
		free(eng);
		return err_set(err, EINVAL, "Zydis: cannot open an x86-64 decoder");
	}
	*out = eng;
	return 0;
}

/* capstone, for the text of one instruction. */
static int retsites_capstone_open(struct retsites_engine *eng)
{
	if (eng->insn)
		return 0;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &eng->handle) != CS_ERR_OK)
		return -EINVAL;
	cs_option(eng->handle, CS_OPT_SYNTAX, CS_OPT_SYNTAX_INTEL);
	eng->insn = cs_malloc(eng->handle);
	if (!eng->insn) {
		cs_close(&eng->handle);
		eng->handle = 0;
		return -ENOMEM;
	}
	return 0;
}

void retsites_engine_close(struct retsites_engine *eng)
{
	if (!eng)
		return;
	if (eng->insn) {
		cs_free(eng->insn, 1);
		cs_close(&eng->handle);
	}
	free(eng->found.v);
	free(eng->seen.bits);
	free(eng);
}

/* Length of the instruction at code[off], 0 when it does not decode. */
static inline size_t decode_at(const struct retsites_engine *eng, const uint8_t *code,
			       size_t size, size_t off, ZydisDecodedInstruction *insn)
{
	if (!ZYAN_SUCCESS(ZydisDecoderDecodeInstruction(&eng->zydis, NULL, code + off, size - off,
							 insn)))
		return 0;
	return insn->length;
}

/* Bytes of int3 (0xCC) from code[off].  Called at an instruction start,
 * where each 0xCC is a one-byte int3 and the next byte starts the next
 * instruction: the run is that many int3, as Zydis would decode them one by
 * one.  Go pads every function with them: 1.06 of the 5.56 million
 * instructions in the text of Debian's prometheus. */
static inline size_t int3_run(const uint8_t *code, size_t size, size_t off)
{
	size_t end = off;

	while (end < size && code[end] == 0xCC)
		end++;
	return end - off;
}

/* A direct jmp (rel8/rel32) whose target lies outside [addr, addr+size). */
static bool is_tail_jump(const ZydisDecodedInstruction *insn, uint64_t pc, uint64_t addr,
			 size_t size)
{
	uint64_t target;

	if (insn->mnemonic != ZYDIS_MNEMONIC_JMP || !(insn->attributes & ZYDIS_ATTRIB_IS_RELATIVE))
		return false;
	target = pc + insn->length + (uint64_t)insn->raw.imm[0].value.s;
	return target < addr || target >= addr + size;
}

/* Far returns (CB, CA iw) share the RET mnemonic in Zydis. */
static bool is_far_ret(const ZydisDecodedInstruction *insn)
{
	return insn->mnemonic == ZYDIS_MNEMONIC_RET && insn->opcode_map == ZYDIS_OPCODE_MAP_DEFAULT &&
	       (insn->opcode == 0xCB || insn->opcode == 0xCA);
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

static inline void bits_set(uint8_t *bits, size_t i)
{
	bits[i / 8] |= (uint8_t)(1u << (i % 8));
}

int retsites_find(struct retsites_engine *eng, const uint8_t *code, size_t size, uint64_t addr,
		  struct retsites *out)
{
	ZydisDecodedInstruction insn;
	bool tail_jump = false, far_ret = false;
	size_t off = 0, len;
	uint8_t *seen = boundary_cache_start(&eng->seen, code, size, addr);

	memset(out, 0, sizeof(*out));
	eng->found.n = 0;
	for (; off < size; off += len) {
		if ((len = int3_run(code, size, off)) != 0) {
			for (size_t i = off; seen && i < off + len; i++)
				bits_set(seen, i);
			continue; /* padding: no code, no RET, no jump */
		}
		if (!(len = decode_at(eng, code, size, off, &insn))) {
			eng->seen.stop = off;
			out->traceable = TRACEABLE_NO;
			out->code_size = off;
			if (site_list_store(&eng->found, out))
				return -ENOMEM;
			return retsites_set_reason(out, "instruction at +0x%llx does not decode",
						   (unsigned long long)off);
		}
		if (seen)
			bits_set(seen, off);
		if (insn.mnemonic != ZYDIS_MNEMONIC_INT3)
			out->code_size = off + len;
		if (insn.mnemonic == ZYDIS_MNEMONIC_RET) {
			if (is_far_ret(&insn))
				far_ret = true;
			else if (site_list_push(&eng->found, (uint32_t)off))
				return -ENOMEM;
		} else if (is_tail_jump(&insn, addr + off, addr, size)) {
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
	ZydisDecodedInstruction insn;
	size_t at = 0, len;

	if (off >= size)
		return false;
	for (; at < off; at += len) {
		if ((len = int3_run(code, size, at)) != 0) {
			if (off < at + len)
				return true; /* every byte of the run starts an int3 */
			continue;
		}
		if (!(len = decode_at(eng, code, size, at, &insn)))
			return false;
	}
	return at == off;
}

size_t retsites_boundaries(struct retsites_engine *eng, const uint8_t *code, size_t size,
			   uint64_t addr, uint8_t *bits)
{
	ZydisDecodedInstruction insn;
	struct boundary_cache *c = &eng->seen;
	size_t off = 0, len;

	/* The same bytes retsites_find() has just decoded: one use only. */
	if (c->valid && c->code == code && c->size == size && c->addr == addr) {
		c->valid = false;
		for (size_t i = 0; i < size / 8 + 1; i++)
			bits[i] |= c->bits[i];
		return c->stop;
	}
	for (; off < size; off += len) {
		if ((len = int3_run(code, size, off)) != 0) {
			for (size_t i = off; i < off + len; i++)
				bits_set(bits, i);
			continue;
		}
		if (!(len = decode_at(eng, code, size, off, &insn)))
			return off;
		bits_set(bits, off);
	}
	return size;
}

/* What capstone 4 cannot print (AVX-512), Zydis's own formatter prints from
 * a full decode; set up here, on the rare call that needs it. */
static void zydis_print(const uint8_t *code, size_t len, uint64_t addr,
			const ZydisDecodedInstruction *min, char *text, size_t text_len)
{
	ZydisDecodedOperand ops[ZYDIS_MAX_OPERAND_COUNT];
	ZydisDecodedInstruction insn;
	ZydisFormatter fmt;
	ZydisDecoder full;

	if (ZYAN_SUCCESS(ZydisDecoderInit(&full, ZYDIS_MACHINE_MODE_LONG_64, ZYDIS_STACK_WIDTH_64)) &&
	    ZYAN_SUCCESS(ZydisFormatterInit(&fmt, ZYDIS_FORMATTER_STYLE_INTEL)) &&
	    ZYAN_SUCCESS(ZydisDecoderDecodeFull(&full, code, len, &insn, ops)) &&
	    ZYAN_SUCCESS(ZydisFormatterFormatInstruction(&fmt, &insn, ops, insn.operand_count_visible,
							 text, text_len, addr, NULL)))
		return;
	snprintf(text, text_len, "%s (%zu bytes)", ZydisMnemonicGetString(min->mnemonic), len);
}

int retsites_disasm_one(struct retsites_engine *eng, const uint8_t *code, size_t size,
			uint64_t addr, char *text, size_t text_len)
{
	ZydisDecodedInstruction insn;
	const uint8_t *p = code;
	size_t left, len;
	uint64_t pc = addr;
	int ret;

	if (size == 0)
		return 0;
	/* The length is Zydis's, as for every boundary; capstone prints the
	 * text as it always has, Zydis what capstone 4 does not know. */
	if (!(len = decode_at(eng, code, size, 0, &insn)))
		return -EINVAL;
	if ((ret = retsites_capstone_open(eng)) != 0)
		return ret;
	left = len;
	if (!cs_disasm_iter(eng->handle, &p, &left, &pc, eng->insn) || eng->insn->size != len)
		zydis_print(code, len, addr, &insn, text, text_len);
	else
		snprintf(text, text_len, "%s%s%s", eng->insn->mnemonic,
			 eng->insn->op_str[0] ? " " : "", eng->insn->op_str);
	return (int)len;
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
