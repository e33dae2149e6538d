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

/* Where a function's error result is at its RET (its last result, when
 * its type is error): the integer register of the interface's first word,
 * its itab, which is 0 only for nil (a typed nil pointer has one). */
enum args_error_state {
	ARGS_ERROR_NONE,    /* the signature is known: no error result */
	ARGS_ERROR_READ,    /* in register reg */
	ARGS_ERROR_UNKNOWN, /* the signature is not known: why */
	ARGS_ERROR_UNREAD,  /* it returns error where retop does not read it: why */
};

/* What an SDK says about the function: none answers, one answers without
 * its signature, or one describes it (its arguments or results). */
enum args_sdk { ARGS_SDK_NONE, ARGS_SDK_SILENT, ARGS_SDK_DESCRIBED };

#define ARGS_ERROR_WHY 112
struct args_error {
	enum args_error_state state;
	uint8_t reg; /* 0 RAX ... 8 R11; RETOP_ARG_NONE unless read */
	char why[ARGS_ERROR_WHY];
};

/* f's error result from DWARF's results, else from the SDK's (rets[0..
 * nrets), as sdk says), under Go's register ABI (the same rules as
 * args_plan_make: results from RAX, a value that does not fit whole goes
 * to the stack and takes no register); asm: f is written in assembly, its
 * results on the stack (ABI0).  Where a result before the error has a
 * layout this does not model (a struct, an array), the SDK's register for
 * it, worked out from the whole type, is used; without it, UNREAD. */
void args_error_find(const struct func_info *f, const struct sdk_arg *rets, size_t nrets,
		     enum args_sdk sdk, bool asm_code, struct args_error *out);

struct args_value {
	const char *name; /* NULL: arg<index> */
	enum args_kind kind;
	int64_t i;
	uint64_t u;
	bool truncated; /* a string longer than the bytes read */
	char s[RETOP_ARG_STR_LEN + 1];
};

struct args_values {
	size_t n;
	struct args_value v[ARGS_MAX];
};

void args_decode(const struct args_plan *plan, const struct retop_args *a, struct args_values *out);
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
