/* dwarf_info's loader, shared by its two files: dwarf_die.c (the string
 * arena, libdwarf's attributes, types) and dwarf_info.c (functions, compile
 * units, the public API).  Not for any other module. */
#ifndef RETOP_DWARF_INTERNAL_H
#define RETOP_DWARF_INTERNAL_H

#include "dwarf_info.h"

#include <dwarf.h>
#include <libdwarf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ARENA_CHUNK (64 * 1024)
/* Typedef/const chains longer than this are treated as corrupt (or cyclic). */
#define TYPE_HOPS_MAX 16
/* Helpers return 0 when the thing is there, ABSENT when it is not, and a
 * negative errno (message set) on error.  libdwarf's own DW_DLV_NO_ENTRY is
 * -1 and would read as -EPERM, so it never escapes a helper. */
#define ABSENT 1

struct str_chunk {
	struct str_chunk *next;
	size_t used, cap;
	char data[];
};

/* What dwarf_info_load() hands out: the public part first so a
 * struct dwarf_info * converts back to this in dwarf_info_free(). */
struct info_priv {
	struct dwarf_info pub;
	struct str_chunk *chunks;
	struct dwarf_param *params;
};

struct type_slot {
	Dwarf_Off off; /* 0 = empty: offset 0 is a CU header, never a type DIE */
	const char *name;
	uint64_t size;
	uint8_t kind;
};

struct type_cache {
	struct type_slot *slots;
	size_t cap, used; /* cap is a power of two */
};

struct loader {
	const char *path;
	char *err;
	Dwarf_Debug dbg;
	Dwarf_Error derr;
	struct info_priv *priv;
	size_t funcs_cap, nparams, params_cap;
	struct type_cache types;
	/* Per CU. */
	Dwarf_Die cu_die;
	Dwarf_Half version, addr_size;
	char **srcfiles;
	Dwarf_Signed nsrcfiles;
	bool srcfiles_tried;
	int de_alloc_was;
};

char *dw_arena_strdup(struct info_priv *p, const char *s);
int dw_grow(void **arr, size_t *cap, size_t need, size_t elem);
struct type_slot *dw_type_find(struct type_cache *tc, Dwarf_Off off);
int dw_type_reserve(struct type_cache *tc);
int dw_fail(struct loader *L, const char *what);
int dw_oom(struct loader *L);
int dw_attr_udata(struct loader *L, Dwarf_Die die, Dwarf_Half at, Dwarf_Unsigned *val);
int dw_attr_flag(struct loader *L, Dwarf_Die die, Dwarf_Half at, bool *val);
int dw_attr_ref(struct loader *L, Dwarf_Die die, Dwarf_Half at, Dwarf_Off *off);
int dw_die_name(struct loader *L, Dwarf_Die die, char **name);
int dw_die_tag(struct loader *L, Dwarf_Die die, Dwarf_Half *tag);
int dw_offdie(struct loader *L, Dwarf_Off off, Dwarf_Die *die);
int dw_type_size(struct loader *L, Dwarf_Die die, uint64_t *size);
int dw_type_kind(struct loader *L, Dwarf_Die die, uint8_t *kind);
int dw_type_lookup(struct loader *L, Dwarf_Off off, const char **name, uint64_t *size,
		   uint8_t *kind);

#endif
