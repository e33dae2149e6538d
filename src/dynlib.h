/* Optional libraries, loaded when a mode first needs them.
 *
 * libcurl (the SDK client) and libmicrohttpd (--serve) bring some thirty
 * shared libraries with them, TLS stacks included.  Linked normally, every
 * run of retop paid for loading and relocating them: about two thirds of the
 * start-up time and 5 MB of resident memory, even for `retop -l`.  They are
 * opened with dlopen() instead, by the module that uses them, and the entry
 * points are taken by name into a table typed from the library's own header.
 */
#ifndef RETOP_DYNLIB_H
#define RETOP_DYNLIB_H

#include <stddef.h>

struct dynlib_sym {
	const char *name;
	void **addr; /* where the entry point is stored */
};

/* dlopen soname once and fill every symbol; all or nothing.  package names
 * the Debian package that provides the library, for the error line.  The
 * library stays loaded for the life of the process.  Thread-safe: the first
 * caller loads, the others wait and share its result. */
struct dynlib {
	const char *soname;
	const char *package;
	const struct dynlib_sym *syms;
	size_t nsyms;
	/* private */
	int state; /* 0 not tried, 1 loaded, -errno failed */
	char err[256];
};

int dynlib_load(struct dynlib *lib, char *err);

/* DYNLIB_TABLE(name, soname, package, FUNCS) defines `name`, a struct with one
 * pointer per entry point, typed from the library's header, and `name_lib`,
 * the struct dynlib that fills it.  FUNCS(X, t) lists the entry points as
 * X(t, symbol, field). */
#define DYNLIB_FIELD(t, sym, field) __typeof__(sym) *field;
#define DYNLIB_SYM(t, sym, field) {#sym, (void **)&t.field},
#define DYNLIB_TABLE(name, so, pkg, FUNCS)                                                         \
	static struct {                                                                            \
		FUNCS(DYNLIB_FIELD, name)                                                          \
	} name;                                                                                    \
	static const struct dynlib_sym name##_syms[] = {FUNCS(DYNLIB_SYM, name)};                  \
	static struct dynlib name##_lib = {.soname = (so),                                         \
					   .package = (pkg),                                       \
					   .syms = name##_syms,                                    \
					   .nsyms = sizeof(name##_syms) / sizeof(name##_syms[0])}

#endif
