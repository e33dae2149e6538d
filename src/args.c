#include "args.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dwarf_info.h"
#include "sdk_client.h"
#include "text_escape.h"

/* Go's reflect.Kind, as DWARF's DW_AT_go_kind gives it. */
enum {
	GO_KIND_BOOL = 1,
	GO_KIND_INT = 2,
	GO_KIND_INT64 = 6,
	GO_KIND_UINT = 7,
	GO_KIND_UINTPTR = 12,
	GO_KIND_FLOAT32 = 13,
	GO_KIND_COMPLEX128 = 16,
	GO_KIND_ARRAY = 17,
	GO_KIND_CHAN = 18,
	GO_KIND_FUNC = 19,
	GO_KIND_INTERFACE = 20,
	GO_KIND_MAP = 21,
	GO_KIND_POINTER = 22,
	GO_KIND_SLICE = 23,
	GO_KIND_STRING = 24,
	GO_KIND_STRUCT = 25,
	GO_KIND_UNSAFE_POINTER = 26,
};

/* A named type ("time.Duration", "main.Level") by the kind it is made of:
 * as args_classify().  Structs and arrays are left out: their fields'
 * registers depend on a layout this does not model. */
static int args_classify_kind(uint8_t kind, struct args_slot *s)
{
	if (kind == GO_KIND_BOOL) {
		s->kind = ARGS_BOOL;
		return 1;
	}
	if (kind >= GO_KIND_INT && kind <= GO_KIND_INT64) {
		s->kind = ARGS_INT;
		return 1;
	}
	if (kind >= GO_KIND_UINT && kind <= GO_KIND_UINTPTR) {
		s->kind = ARGS_UINT;
		return 1;
	}
	if (kind >= GO_KIND_FLOAT32 && kind <= GO_KIND_COMPLEX128)
		return 0; /* X registers only */
	switch (kind) {
	case GO_KIND_CHAN:
	case GO_KIND_FUNC:
	case GO_KIND_MAP:
	case GO_KIND_POINTER:
	case GO_KIND_UNSAFE_POINTER:
		s->kind = ARGS_POINTER;
		return 1;
	case GO_KIND_INTERFACE:
		s->kind = ARGS_IFACE;
		return 2;
	case GO_KIND_SLICE:
		s->kind = ARGS_SLICE;
		return 3;
	case GO_KIND_STRING:
		s->kind = ARGS_STRING;
		return 2;
	}
	return -1;
}

/* How a Go type passes in integer registers: 1 for scalars and pointers,
 * 2 for a string or an interface, 3 for a slice; 0 for a float (one XMM register, which a BPF
 * program cannot read, and no integer register); -1 for what retop does not follow (structs and
 * arrays have layouts this does not model; a named type is known by its Go kind, kind, when DWARF
 * gives it: a type name alone does not tell an interface from a struct). */
static int args_classify(const char *t, uint64_t size, uint8_t kind, struct args_slot *s)
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

	s->width = (uint8_t)(size ? size : 8);
	if (!t)
		return args_classify_kind(kind, s);
	if (strcmp(t, "string") == 0) {
		s->kind = ARGS_STRING;
		return 2;
	}
	if (strcmp(t, "float64") == 0 || strcmp(t, "float32") == 0)
		return 0;
	if (strcmp(t, "error") == 0 || strcmp(t, "any") == 0 ||
	    strncmp(t, "interface {", 11) == 0) {
		s->kind = ARGS_IFACE;
		return 2;
	}
	if (strncmp(t, "[]", 2) == 0) {
		s->kind = ARGS_SLICE;
		return 3;
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
	return args_classify_kind(kind, s);
}

/* One parameter, from DWARF or from the SDK. */
struct args_param {
	const char *name, *type;
	uint64_t size;
	int sdk_reg;  /* the SDK's first integer register for it; -1: none given */
	uint8_t kind; /* Go's kind (DWARF); 0: unknown */
};

/* Where one list (the arguments, or the results) goes, and which of its
 * strings BPF reads. */
struct args_dest {
	struct args_slot *slots;
	size_t *n;
	__u8 *str_reg; /* RETOP_ARG_STRS of them */
};

/* Integer registers go to integer-class parameters in order, floats to the
 * XMM registers (not read), each independently (Go's ABIInternal); the
 * first parameter this does not follow ends the decoding: after it the
 * assignment depends on details not modelled here.  Results are assigned
 * the same way, from RAX again.  False when the SDK named a register that
 * is not the one the ABI gives. */
static bool args_plan_params(const struct args_param *ps, size_t n, struct args_dest d)
{
	unsigned reg = 0, nstr = 0;
	bool lost = false;

	for (size_t i = 0; i < n && *d.n < ARGS_MAX; i++) {
		struct args_slot *s = &d.slots[(*d.n)++];
		int need;

		memset(s, 0, sizeof(*s));
		/* Go names an unnamed result "~r0" (or "~r1" after a receiver). */
		s->name = ps[i].name && ps[i].name[0] != '~' ? ps[i].name : NULL;
		s->kind = ARGS_UNAVAILABLE;
		need = lost ? -1 : args_classify(ps[i].type, ps[i].size, ps[i].kind, s);
		if (need < 0 || reg + (unsigned)need > RETOP_ARG_REGS) {
			s->kind = ARGS_UNAVAILABLE;
			lost = true;
			continue;
		}
		if (need == 0) {
			s->kind = ARGS_UNAVAILABLE;
			continue;
		}
		if (ps[i].sdk_reg >= 0 && (unsigned)ps[i].sdk_reg != reg)
			return false;
		s->reg = (uint8_t)reg;
		if (s->kind == ARGS_STRING) {
			if (nstr < RETOP_ARG_STRS) {
				d.str_reg[nstr] = (uint8_t)reg;
				s->str = (uint8_t)nstr++;
			} else {
				s->kind = ARGS_UNAVAILABLE;
			}
		}
		reg += (unsigned)need;
	}
	return true;
}

static void args_plan_raw(struct args_plan *out)
{
	/* No names, no types: every integer argument register, raw; results
	 * unknown (a register at the RET is not a result without a type). */
	out->n = out->nres = 0;
	out->spec.res_on = 0;
	for (size_t k = 0; k < RETOP_ARG_STRS; k++)
		out->spec.str_reg[k] = out->spec.res_str_reg[k] = RETOP_ARG_NONE;
	for (size_t i = 0; i < RETOP_ARG_REGS; i++) {
		out->slots[i] = (struct args_slot){.kind = ARGS_RAW, .reg = (uint8_t)i};
		out->n++;
	}
}

/* The SDK's parameters as args_param, with the register it names. */
static size_t args_from_sdk(const struct sdk_arg *sdk, size_t nsdk, struct args_param *ps)
{
	size_t n = 0;

	for (size_t i = 0; i < nsdk && n < ARGS_MAX; i++)
		ps[n++] = (struct args_param){
		    sdk[i].name && sdk[i].name[0] ? sdk[i].name : NULL, sdk[i].type, sdk[i].size,
		    sdk[i].loc == SDK_LOC_REGISTER ? (int)sdk[i].loc_value : -1, 0};
	return n;
}

int args_plan_make(const struct func_info *f, const struct sdk_arg *sdk, size_t nsdk,
		   const struct sdk_arg *rets, size_t nrets, struct args_plan *out)
{
	struct args_param ps[ARGS_MAX], rs[ARGS_MAX];
	size_t n = 0, nr = 0;

	memset(out, 0, sizeof(*out));
	out->spec.on = 1;
	for (size_t k = 0; k < RETOP_ARG_STRS; k++)
		out->spec.str_reg[k] = out->spec.res_str_reg[k] = RETOP_ARG_NONE;
	if (f->dwarf) {
		for (size_t i = 0; i < f->dwarf->nparams; i++) {
			const struct dwarf_param *p = &f->dwarf->params[i];
			struct args_param a = {p->name, p->type, p->size, -1, p->kind};
			if (!p->is_return && n < ARGS_MAX)
				ps[n++] = a;
			else if (p->is_return && nr < ARGS_MAX)
				rs[nr++] = a;
		}
	} else {
		n = args_from_sdk(sdk, nsdk, ps);
		nr = args_from_sdk(rets, nrets, rs);
	}
	if (!n && !nr && !f->dwarf) {
		args_plan_raw(out);
		return 0;
	}
	if (!args_plan_params(ps, n, (struct args_dest){out->slots, &out->n, out->spec.str_reg}) ||
	    !args_plan_params(rs, nr,
			      (struct args_dest){out->res, &out->nres, out->spec.res_str_reg})) {
		args_plan_raw(out);
		return -EBADMSG;
	}
	out->spec.res_on = out->nres > 0;
	return 0;
}

/* Results can outnumber the registers; past this many, not followed. */
#define ARGS_ERROR_RESULTS 64

__attribute__((format(printf, 3, 4))) static void
args_error_set(struct args_error *out, enum args_error_state st, const char *fmt, ...)
{
	va_list ap;

	out->state = st;
	out->reg = RETOP_ARG_NONE;
	va_start(ap, fmt);
	vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
}

void args_error_find(const struct func_info *f, const struct sdk_arg *rets, size_t nrets,
		     enum args_sdk sdk, bool asm_code, struct args_error *out)
{
	struct args_param rs[ARGS_ERROR_RESULTS];
	size_t nr = 0;
	unsigned reg = 0;

	args_error_set(out, ARGS_ERROR_NONE, "%s", "");
	if (f->dwarf) {
		for (size_t i = 0; i < f->dwarf->nparams; i++) {
			const struct dwarf_param *p = &f->dwarf->params[i];
			if (!p->is_return)
				continue;
			if (nr == ARGS_ERROR_RESULTS)
				return args_error_set(out, ARGS_ERROR_UNREAD,
						      "more results than retop follows");
			rs[nr++] = (struct args_param){p->name, p->type, p->size, -1, p->kind};
		}
	} else if (sdk == ARGS_SDK_DESCRIBED) {
		for (size_t i = 0; i < nrets; i++) {
			if (nr == ARGS_ERROR_RESULTS)
				return args_error_set(out, ARGS_ERROR_UNREAD,
						      "more results than retop follows");
			rs[nr++] = (struct args_param){
			    NULL, rets[i].type, rets[i].size,
			    rets[i].loc == SDK_LOC_REGISTER ? (int)rets[i].loc_value : -1, 0};
		}
	} else {
		return args_error_set(
		    out, ARGS_ERROR_UNKNOWN,
		    sdk == ARGS_SDK_NONE
			? "signature unknown (stripped, no SDK)"
			: "signature unknown (stripped; the SDK does not describe it)");
	}
	if (!nr || !rs[nr - 1].type || strcmp(rs[nr - 1].type, "error") != 0)
		return;
	if (asm_code)
		return args_error_set(out, ARGS_ERROR_UNREAD,
				      "an assembly function: its results are on the stack");
	for (size_t i = 0; i + 1 < nr; i++) {
		struct args_slot s;
		int need = args_classify(rs[i].type, rs[i].size, rs[i].kind, &s);
		if (need < 0) {
			/* The SDK placed the error with every type in hand. */
			int at = rs[nr - 1].sdk_reg;
			if (at >= 0 && at + 2 <= RETOP_ARG_REGS) {
				out->state = ARGS_ERROR_READ;
				out->reg = (uint8_t)at;
				return;
			}
			return args_error_set(out, ARGS_ERROR_UNREAD,
					      "a result before the error (%s) has a layout retop "
					      "does not model",
					      rs[i].type ? rs[i].type : "?");
		}
		/* A value that does not fit whole is on the stack and takes
		 * no register (Go's ABIInternal). */
		if (reg + (unsigned)need <= RETOP_ARG_REGS)
			reg += (unsigned)need;
	}
	if (reg + 2 > RETOP_ARG_REGS)
		return args_error_set(
		    out, ARGS_ERROR_UNREAD,
		    "the error result is on the stack (the results before it take "
		    "the integer registers)");
	if (rs[nr - 1].sdk_reg >= 0 && (unsigned)rs[nr - 1].sdk_reg != reg)
		return args_error_set(out, ARGS_ERROR_UNKNOWN,
				      "signature unknown: the SDK's result registers disagree with "
				      "Go's ABI");
	out->state = ARGS_ERROR_READ;
	out->reg = (uint8_t)reg;
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
	case ARGS_IFACE:
		v->u = r; /* the type word: 0 only for nil */
		break;
	case ARGS_SLICE:
		v->u = s->reg + 1 < RETOP_ARG_REGS ? a->regs[s->reg + 1] : 0;
		break;
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

void args_decode_results(const struct args_plan *plan, const struct retop_args *r,
			 struct args_values *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < plan->nres && i < ARGS_MAX; i++)
		args_decode_one(&plan->res[i], r, &out->v[out->n++]);
}

void args_value_text(const struct args_value *a, char *buf, size_t len)
{
	switch (a->kind) {
	case ARGS_INT:
		snprintf(buf, len, "%lld", (long long)a->i);
		return;
	case ARGS_UINT:
		snprintf(buf, len, "%llu", (unsigned long long)a->u);
		return;
	case ARGS_BOOL:
		snprintf(buf, len, "%s", a->u ? "true" : "false");
		return;
	case ARGS_STRING:
		/* Only the first bytes are read; "..." says there is more. */
		snprintf(buf, len, "%s%s", a->s, a->truncated ? "..." : "");
		return;
	case ARGS_IFACE:
		snprintf(buf, len, "%s", a->u ? "non-nil" : "nil");
		return;
	case ARGS_SLICE:
		snprintf(buf, len, "len %llu", (unsigned long long)a->u);
		return;
	case ARGS_POINTER:
	case ARGS_RAW:
		snprintf(buf, len, "0x%llx", (unsigned long long)a->u);
		return;
	case ARGS_UNAVAILABLE:
		break;
	}
	snprintf(buf, len, "?");
}

void args_format(const struct args_values *v, const char *unnamed, char *buf, size_t len)
{
	size_t off = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < v->n && off < len; i++) {
		const struct args_value *a = &v->v[i];
		char name[32], val[ARGS_TEXT_LEN];
		int n;

		if (a->name)
			snprintf(name, sizeof(name), "%s", a->name);
		else
			snprintf(name, sizeof(name), "%s%zu", unnamed, i);
		args_value_text(a, val, sizeof(val));
		if (a->kind == ARGS_STRING) {
			/* The target's bytes: escaped for a terminal and a line. */
			size_t n_esc = text_escape(a->s, strlen(a->s), true, val, sizeof(val) - 3);
			if (a->truncated)
				memcpy(val + n_esc, "...", 4);
		}
		n = snprintf(buf + off, len - off,
			     a->kind == ARGS_STRING ? "%s%s=\"%s\"" : "%s%s=%s", i ? " " : "", name,
			     val);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}
