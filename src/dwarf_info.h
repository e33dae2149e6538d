/* DWARF facts about Go functions, via libdwarf, when the binary has DWARF:
 * exact sizes, declaration file:line, parameter and result names and types.
 */
#ifndef RETOP_DWARF_INFO_H
#define RETOP_DWARF_INFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct dwarf_param {
	char *name;
	char *type;	/* Go type name as DWARF spells it: "int", "*main.Card", "[]uint8";
			 * NULL when the type has no name (C's unnamed pointers) or
			 * the parameter has no DW_AT_type */
	uint64_t size;	/* byte size of the type, 0 when unknown */
	uint8_t kind;	/* Go's reflect.Kind of the type (DW_AT_go_kind), 0 when unknown:
			 * what a named type ("time.Duration") is made of */
	bool is_return; /* DW_AT_variable_parameter: Go marks results this way */
};

struct dwarf_func {
	char *name;
	uint64_t low_pc;
	uint64_t high_pc; /* exclusive */
	char *decl_file;  /* may be NULL */
	int decl_line;	  /* 0 when unknown; for Go 1.19 the signature's line from the
			   * parameters, else the line-table line at low_pc */
	struct dwarf_param *params;
	size_t nparams;
};

struct dwarf_info {
	struct dwarf_func *funcs; /* sorted by low_pc */
	size_t count;
};

/* -ENODATA (with a message) when the binary carries no DWARF. */
int dwarf_info_load(const char *path, struct dwarf_info **out, char *err);
void dwarf_info_free(struct dwarf_info *info);
/* The function whose low_pc equals entry, or NULL. */
const struct dwarf_func *dwarf_info_lookup(const struct dwarf_info *info, uint64_t entry);

#endif
