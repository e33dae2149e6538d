/* The names of failing calls' concrete types.  BPF counts each failing
 * call under its error's runtime._type (the second word of its itab); the
 * name is read from the binary itself, from the type's descriptor (Go's
 * abi.Type, the same in every release since 1.17: tflag at +20, the name's
 * offset from the module's types at +40), stripped or not. */
#ifndef RETOP_ERROR_TYPES_H
#define RETOP_ERROR_TYPES_H

#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"
#include "funcs.h"

#define ERROR_TYPES_NAME_LEN 96
#define ERROR_TYPES_CACHE 256

/* Names already read, and each binary's types range; zeroed is empty. */
struct error_types {
	struct {
		const struct func_index *idx;
		uint64_t addr;
		char name[ERROR_TYPES_NAME_LEN];
	} seen[ERROR_TYPES_CACHE];
	size_t nseen;
	struct {
		const struct func_index *idx;
		uint64_t types, etypes; /* 0: not known */
	} mods[RETOP_MAX_IMAGES];
	size_t nmods;
};

/* The name of the type whose descriptor is at addr in a process that loads
 * idx's binary bias bytes above its link addresses ("*main.NotFound",
 * "*errors.errorString"), into buf; "?" when it is not a type descriptor
 * of the binary's (one made at run time, a PIE whose bias is unknown). */
void error_types_name(struct error_types *et, const struct func_index *idx, uint64_t addr,
		      uint64_t bias, char *buf, size_t len);

/* The name at off from types in bytes[0..n) (the module's types section),
 * tflag the type's flags: Go's encoding since 1.17 (a flags byte, the
 * length as a varint, the bytes); the extra star of a pointer's shared
 * name dropped.  0, or -EINVAL (exposed for a unit test). */
int error_types_decode(const uint8_t *bytes, size_t n, uint64_t off, uint8_t tflag, char *buf,
		       size_t len);

#endif
