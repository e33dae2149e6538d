/* Arguments of a call under Go's register ABI (Go >= 1.17, amd64): which
 * integer register holds which parameter, from DWARF's parameter names and
 * types, and their decoding from the registers captured at the entry. */
#ifndef RETOP_ARGS_H
#define RETOP_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"
#include "funcs.h"

#define ARGS_MAX RETOP_ARG_REGS

enum args_kind {
	ARGS_INT,
	ARGS_UINT,
	ARGS_BOOL,
	ARGS_STRING,
	ARGS_POINTER,
	ARGS_IFACE,	  /* an interface (error, any): nil or not, from its type word */
	ARGS_SLICE,	  /* its length */
	ARGS_RAW,	  /* no type known: the register as is */
	ARGS_UNAVAILABLE, /* floats (XMM registers), spilled or unknown layout */
};

struct args_slot {
	const char *name; /* the parameter's, or NULL: arg0... */
	enum args_kind kind;
	uint8_t reg;   /* first register */
	uint8_t width; /* bytes of an int/uint */
	uint8_t str;   /* string: which captured string */
};

struct args_plan {
	size_t n; /* arguments */
	struct args_slot slots[ARGS_MAX];
	size_t nres; /* results, read at the RET of a shipped call */
	struct args_slot res[ARGS_MAX];
	struct retop_args_spec spec; /* what BPF captures */
};

struct sdk_arg;

/* The plan for f: from DWARF when f has it, else from the SDK's arguments
 * and results (sdk[0..nsdk), rets[0..nrets), from reflection in a stripped
 * binary: RFD 075), else every argument register raw and no results.
 * -EBADMSG, and raw, when a register the SDK names is not the one Go's ABI
 * gives: its facts are not trusted. */
int args_plan_make(const struct func_info *f, const struct sdk_arg *sdk, size_t nsdk,
		   const struct sdk_arg *rets, size_t nrets, struct args_plan *out);

struct args_value {
	const char *name; /* NULL: arg<index> */
	enum args_kind kind;
	int64_t i;
	uint64_t u;
	bool truncated;	/* a string longer than the bytes read */
	char s[RETOP_ARG_STR_LEN + 1];
};

struct args_values {
	size_t n;
	struct args_value v[ARGS_MAX];
};

void args_decode(const struct args_plan *plan, const struct retop_args *a,
		 struct args_values *out);
/* The results, from the registers read at the RET; unnamed ones (NULL
 * name) are r<index>. */
void args_decode_results(const struct args_plan *plan, const struct retop_args *r,
			 struct args_values *out);

/* One value as text: a number, true/false, a string as read (then "..."
 * when longer), nil/non-nil, "len N", hex, or '?' when unavailable. */
#define ARGS_TEXT_LEN (4 * RETOP_ARG_STR_LEN + 8) /* escaped: 4 bytes a byte at most */
void args_value_text(const struct args_value *v, char *buf, size_t len);
/* One line for a screen: `id=4242 key="planted-key" r=?`; unnamed values
 * are <unnamed><index> (arg0, r0), strings quoted. */
void args_format(const struct args_values *v, const char *unnamed, char *buf, size_t len);

#endif
