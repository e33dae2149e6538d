#include "retsites.h"

#include <capstone/capstone.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

struct retsites_engine {
	csh handle;
	cs_insn *insn; /* reused by cs_disasm_iter: no allocation per instruction */
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

static int retsites_push(struct retsites *out, size_t *cap, uint32_t off)
{
	if (out->count == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;
		uint32_t *p = realloc(out->offsets, ncap * sizeof(*p));
		if (!p)
			return -ENOMEM;
		out->offsets = p;
		*cap = ncap;
	}
	out->offsets[out->count++] = off;
	return 0;
}

int retsites_find(struct retsites_engine *eng, const uint8_t *code, size_t size, uint64_t addr,
		  struct retsites *out)
{
	const uint8_t *p = code;
	size_t left = size, cap = 0;
	uint64_t pc = addr;
	bool tail_jump = false, far_ret = false;

	memset(out, 0, sizeof(*out));
	while (left > 0) {
		uint64_t at = pc;
		if (!cs_disasm_iter(eng->handle, &p, &left, &pc, eng->insn)) {
			snprintf(out->reason, sizeof(out->reason),
				 "instruction at +0x%llx does not decode",
				 (unsigned long long)(at - addr));
			out->traceable = TRACEABLE_NO;
			out->code_size = at - addr;
			return 0;
		}
		if (!is_int3(eng->insn))
			out->code_size = pc - addr;
		if (eng->insn->id == X86_INS_RET) {
			if (retsites_push(out, &cap, (uint32_t)(at - addr)))
				return -ENOMEM;
		} else if (eng->insn->id == X86_INS_RETF) {
			far_ret = true;
		} else if (is_tail_jump(eng->insn, addr, size)) {
			tail_jump = true;
		}
	}
	/* RETs in trailing padding cannot exist: padding is int3 only. */
	if (far_ret) {
		out->traceable = TRACEABLE_NO;
		snprintf(out->reason, sizeof(out->reason), "far return (retf): not Go code");
	} else if (out->count == 0) {
		out->traceable = TRACEABLE_ENTRY_ONLY;
		snprintf(out->reason, sizeof(out->reason), "%s",
			 tail_jump ? "no RET: ends in tail jump" : "no RET: never returns");
	}
	return 0;
}

void retsites_free(struct retsites *r)
{
	free(r->offsets);
	r->offsets = NULL;
	r->count = 0;
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
