#include "args.h"

#include <string.h>

#include "dwarf_info.h"

/* How a Go type passes in integer registers: 1 for scalars and pointers,
 * 2 for a string; 0 for what retop does not decode (floats use XMM
 * registers, which a BPF program cannot read; structs, slices and
 * interfaces have layouts this does not follow). */
static int args_classify(const struct dwarf_param *p, struct args_slot *s)
{
	static const struct {
		const char *name;
		enum args_kind kind;
	} scalars[] = {
	    {"int", ARGS_INT},
	    {"int8", ARGS_INT},
	    {"int16", ARGS_INT},
	    {"int32", ARGS_INT},
	    {"int64", ARGS_INT},
	    {"uint", ARGS_UINT},
	    {"uint8", ARGS_UINT},
	    {"uint16", ARGS_UINT},
	    {"uint32", ARGS_UINT},
	    {"uint64", ARGS_UINT},
	    {"uintptr", ARGS_UINT},
	    {"bool", ARGS_BOOL},
	    {"unsafe.Pointer", ARGS_POINTER},
	};
	const char *t = p->type;

	s->width = (uint8_t)(p->size ? p->size : 8);
	if (!t)
		return 0;
	if (strcmp(t, "string") == 0) {
		s->kind = ARGS_STRING;
		return 2;
	}
	if (t[0] == '*' || strncmp(t, "chan ", 5) == 0 || strncmp(t, "map[", 4) == 0 ||
	    strncmp(t, "func(", 5) == 0) {
		s->kind = ARGS_POINTER;
		return 1;
	}
	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++)
		if (strcmp(t, scalars[i].name) == 0) {
			s->kind = scalars[i].kind;
			return 1;
		}
	return 0;
}

/* Integer registers are given to parameters in order; the first one that
 * does not fit, or that this does not follow, ends the decoding: after it
 * the ABI's assignment depends on details not modelled here. */
static void args_plan_dwarf(const struct dwarf_func *df, struct args_plan *out)
{
	unsigned reg = 0, nstr = 0;
	bool lost = false;

	for (size_t i = 0; i < df->nparams && out->n < ARGS_MAX; i++) {
		const struct dwarf_param *p = &df->params[i];
		struct args_slot *s = &out->slots[out->n];
		int need;

		if (p->is_return)
			continue;
		memset(s, 0, sizeof(*s));
		s->name = p->name;
		s->kind = ARGS_UNAVAILABLE;
		out->n++;
		need = lost ? 0 : args_classify(p, s);
		if (need == 0 || reg + (unsigned)need > RETOP_ARG_REGS) {
			s->kind = ARGS_UNAVAILABLE;
			lost = true;
			continue;
		}
		s->reg = (uint8_t)reg;
		if (s->kind == ARGS_STRING) {
			if (nstr < RETOP_ARG_STRS) {
				out->spec.str_reg[nstr] = (uint8_t)reg;
				s->str = (uint8_t)nstr++;
			} else {
				s->kind = ARGS_UNAVAILABLE;
			}
		}
		reg += (unsigned)need;
	}
}

void args_plan_make(const struct func_info *f, struct args_plan *out)
{
	memset(out, 0, sizeof(*out));
	out->spec.on = 1;
	for (size_t k = 0; k < RETOP_ARG_STRS; k++)
		out->spec.str_reg[k] = RETOP_ARG_NONE;
	if (f->dwarf) {
		args_plan_dwarf(f->dwarf, out);
		return;
	}
	/* No names, no types: every integer argument register, raw. */
	for (size_t i = 0; i < RETOP_ARG_REGS; i++) {
		out->slots[i] = (struct args_slot){.kind = ARGS_RAW, .reg = (uint8_t)i};
		out->n++;
	}
}

/* Keep s valid UTF-8 (JSON needs it): an invalid byte becomes '?', and a
 * character cut by the 64-byte read is dropped.  True if one was cut. */
static bool args_utf8_fix(char *s, uint32_t n)
{
	uint32_t i = 0;

	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		uint32_t len = c < 0x80		? 1
			       : (c >> 5) == 6	? 2
			       : (c >> 4) == 14 ? 3
			       : (c >> 3) == 30 ? 4
						: 0;
		uint32_t k = 1;

		if (len == 0) {
			s[i++] = '?';
			continue;
		}
		if (i + len > n) {
			s[i] = '\0';
			return true;
		}
		while (k < len && ((unsigned char)s[i + k] >> 6) == 2)
			k++;
		if (k < len) {
			s[i++] = '?';
			continue;
		}
		i += len;
	}
	return false;
}

static void args_decode_one(const struct args_slot *s, const struct retop_args *a,
			    struct args_value *v)
{
	uint64_t r = s->reg < RETOP_ARG_REGS ? a->regs[s->reg] : 0;
	unsigned bits = s->width < 8 ? s->width * 8u : 64u;

	v->name = s->name;
	v->kind = s->kind;
	switch (s->kind) {
	case ARGS_INT:
		/* Sign-extend from the type's width: the upper bits of the
		 * register are not defined for narrower types. */
		v->i = bits < 64 ? (int64_t)(r << (64 - bits)) >> (64 - bits) : (int64_t)r;
		break;
	case ARGS_UINT:
		v->u = bits < 64 ? r & ((UINT64_C(1) << bits) - 1) : r;
		break;
	case ARGS_BOOL:
		v->u = (r & 0xff) != 0;
		break;
	case ARGS_STRING: {
		uint32_t n = s->str < RETOP_ARG_STRS ? a->str_len[s->str] : 0;
		uint64_t len = s->reg + 1 < RETOP_ARG_REGS ? a->regs[s->reg + 1] : 0;
		if (n > RETOP_ARG_STR_LEN)
			n = RETOP_ARG_STR_LEN;
		if (n)
			memcpy(v->s, a->str[s->str], n);
		v->s[n] = '\0';
		v->truncated = args_utf8_fix(v->s, n) || len > n;
		v->u = len;
		break;
	}
	case ARGS_POINTER:
	case ARGS_RAW:
		v->u = r;
		break;
	case ARGS_UNAVAILABLE:
		break;
	}
}

void args_decode(const struct args_plan *plan, const struct retop_args *a, struct args_values *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < plan->n && i < ARGS_MAX; i++)
		args_decode_one(&plan->slots[i], a, &out->v[out->n++]);
}
