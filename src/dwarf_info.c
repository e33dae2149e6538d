/* DWARF facts about Go functions, read once with libdwarf and copied out.
 *
 * libdwarf is closed again before dwarf_info_load() returns: everything the
 * caller keeps (names, file names, type names) lives in a private string
 * arena owned by the returned dwarf_info, and parameters live in one array.
 * The 2021 libdwarf reads SHF_COMPRESSED (zlib) sections itself, which is
 * what Go >= 1.12 emits, so no section hooks are needed.
 *
 * Go specifics this file relies on (checked against Go 1.19 output):
 *  - all type DIEs sit in one CU, referenced with DW_FORM_ref_addr, so types
 *    are resolved by global offset (dwarf_offdie_b) and cached by offset;
 *  - results are DW_TAG_formal_parameter with DW_AT_variable_parameter = 1;
 *  - subprograms carry DW_AT_decl_file but (before Go 1.20 or so) no
 *    DW_AT_decl_line, so the line comes from the line table row at low_pc,
 *    which Go sets to the line of the "func" keyword;
 *  - an out-of-line copy of an inlinable function is a subprogram with only
 *    DW_AT_abstract_origin, low_pc and high_pc: the name comes from the
 *    abstract DIE (which has no file), inputs are children pointing at the
 *    abstract parameters, and results are children in full.
 */
#include "dwarf_internal.h"

#include "log.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <libdwarf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- functions --------------------------------------------------------- */

/* One parameter from die; o, when not NULL, is the abstract parameter die
 * stands for and supplies what die leaves out. */
static int param_attrs(struct loader *L, Dwarf_Die die, Dwarf_Die o, struct dwarf_func *f)
{
	struct dwarf_param p = {0};
	char *name;
	Dwarf_Off toff;
	Dwarf_Unsigned line;
	/* Go puts the signature's line on each parameter it emits in full: a
	 * better function line than the line table, whose first row of a leaf
	 * function (no stack-check prologue) is already in the body. */
	int rc = f->decl_line ? ABSENT : dw_attr_udata(L, die, DW_AT_decl_line, &line);
	if (rc < 0)
		return rc;
	if (rc == 0 && line <= INT32_MAX)
		f->decl_line = (int)line;
	if ((rc = dw_die_name(L, die, &name)) == ABSENT && o)
		rc = dw_die_name(L, o, &name);
	if (rc < 0)
		return rc;
	if (name && !(p.name = dw_arena_strdup(L->priv, name)))
		return dw_oom(L);
	if ((rc = dw_attr_flag(L, die, DW_AT_variable_parameter, &p.is_return)) == ABSENT && o)
		rc = dw_attr_flag(L, o, DW_AT_variable_parameter, &p.is_return);
	if (rc < 0)
		return rc;
	if ((rc = dw_attr_ref(L, die, DW_AT_type, &toff)) == ABSENT && o)
		rc = dw_attr_ref(L, o, DW_AT_type, &toff);
	if (rc < 0)
		return rc;
	if (rc == 0) {
		const char *tname;
		if ((rc = dw_type_lookup(L, toff, &tname, &p.size, &p.kind)))
			return rc;
		p.type = (char *)tname; /* shared between params: the arena owns it */
	}
	if (dw_grow((void **)&L->priv->params, &L->params_cap, L->nparams + 1, sizeof(p)))
		return dw_oom(L);
	L->priv->params[L->nparams++] = p;
	return 0;
}

static int add_param(struct loader *L, Dwarf_Die die, struct dwarf_func *f)
{
	Dwarf_Die o = NULL;
	Dwarf_Off off;
	int rc = dw_attr_ref(L, die, DW_AT_abstract_origin, &off);
	if (rc == 0)
		rc = dw_offdie(L, off, &o);
	if (rc < 0)
		return rc;
	rc = param_attrs(L, die, o, f);
	if (o)
		dwarf_dealloc_die(o);
	return rc;
}

/* Append the formal parameters among die's children; f->params holds the
 * index of the first one until fixup_params() turns it into a pointer,
 * because the params array still moves while it grows. */
static int add_params(struct loader *L, Dwarf_Die die, struct dwarf_func *f)
{
	Dwarf_Die child = NULL, next;
	int rc = 0;
	size_t first = L->nparams;
	int res = dwarf_child(die, &child, &L->derr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_child");
	while (res == DW_DLV_OK) {
		Dwarf_Half tag;
		if ((rc = dw_die_tag(L, child, &tag)))
			break;
		if (tag == DW_TAG_formal_parameter && (rc = add_param(L, child, f)))
			break;
		res = dwarf_siblingof_b(L->dbg, child, true, &next, &L->derr);
		dwarf_dealloc_die(child);
		child = res == DW_DLV_OK ? next : NULL;
		if (res == DW_DLV_ERROR)
			rc = dw_fail(L, "dwarf_siblingof_b");
	}
	if (child)
		dwarf_dealloc_die(child);
	f->params = (struct dwarf_param *)(uintptr_t)first;
	f->nparams = L->nparams - first;
	return rc;
}

/* DW_AT_decl_file indexes the CU's line-table file list: 1-based before
 * DWARF 5, 0-based from 5 on.  The list is read once per CU, on demand. */
static int resolve_file(struct loader *L, Dwarf_Unsigned idx, char **out)
{
	*out = NULL;
	if (!L->srcfiles_tried) {
		L->srcfiles_tried = true;
		int res = dwarf_srcfiles(L->cu_die, &L->srcfiles, &L->nsrcfiles, &L->derr);
		if (res == DW_DLV_ERROR)
			return dw_fail(L, "dwarf_srcfiles");
		if (res == DW_DLV_NO_ENTRY) {
			L->srcfiles = NULL;
			L->nsrcfiles = 0;
		}
	}
	if (L->version < 5) {
		if (idx == 0)
			return 0;
		idx--;
	}
	if (idx >= (Dwarf_Unsigned)L->nsrcfiles)
		return 0;
	/* One copy per function: file names are short, and interning them
	 * would cost a second hash for little gain. */
	if (!(*out = dw_arena_strdup(L->priv, L->srcfiles[idx])))
		return dw_oom(L);
	return 0;
}

/* Name, file and line of a function from die, or from its abstract origin
 * (src) when die is an out-of-line copy. */
static int func_decl(struct loader *L, Dwarf_Die die, Dwarf_Die src, struct dwarf_func *f)
{
	char *name = NULL;
	Dwarf_Unsigned v;
	int rc = dw_die_name(L, die, &name);
	if (rc == ABSENT && src)
		rc = dw_die_name(L, src, &name);
	if (rc < 0)
		return rc;
	if (!name)
		return ABSENT; /* nothing to show or match */
	if (!(f->name = dw_arena_strdup(L->priv, name)))
		return dw_oom(L);
	rc = dw_attr_udata(L, die, DW_AT_decl_file, &v);
	if (rc == ABSENT && src)
		rc = dw_attr_udata(L, src, DW_AT_decl_file, &v);
	if (rc == 0)
		rc = resolve_file(L, v, &f->decl_file);
	if (rc < 0)
		return rc;
	rc = dw_attr_udata(L, die, DW_AT_decl_line, &v);
	if (rc == ABSENT && src)
		rc = dw_attr_udata(L, src, DW_AT_decl_line, &v);
	if (rc < 0)
		return rc;
	if (rc == 0)
		f->decl_line = v > INT32_MAX ? 0 : (int)v;
	return 0;
}

static int func_range(struct loader *L, Dwarf_Die die, struct dwarf_func *f)
{
	Dwarf_Addr lo, hi;
	Dwarf_Half form;
	enum Dwarf_Form_Class cls;
	int res = dwarf_lowpc(die, &lo, &L->derr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_lowpc");
	if (res == DW_DLV_NO_ENTRY)
		return ABSENT; /* declaration or abstract inline-only entry */
	f->low_pc = f->high_pc = lo;
	res = dwarf_highpc_b(die, &hi, &form, &cls, &L->derr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_highpc_b");
	if (res == DW_DLV_OK)
		f->high_pc = cls == DW_FORM_CLASS_CONSTANT ? lo + hi : hi;
	if (f->high_pc < f->low_pc)
		f->high_pc = f->low_pc;
	return 0;
}

static int add_func(struct loader *L, Dwarf_Die die)
{
	struct dwarf_func f = {0};
	Dwarf_Die src = NULL;
	Dwarf_Off off;
	int rc = func_range(L, die, &f);
	if (rc)
		return rc < 0 ? rc : 0;
	rc = dw_attr_ref(L, die, DW_AT_abstract_origin, &off);
	if (rc == ABSENT)
		rc = dw_attr_ref(L, die, DW_AT_specification, &off);
	if (rc == 0)
		rc = dw_offdie(L, off, &src);
	if (rc < 0)
		return rc;
	rc = func_decl(L, die, src, &f);
	/* The concrete DIE, not the abstract one: Go lists only the inputs in
	 * the abstract DIE and adds the results to each concrete copy. */
	if (rc == 0)
		rc = add_params(L, die, &f);
	if (src)
		dwarf_dealloc_die(src);
	if (rc)
		return rc < 0 ? rc : 0;
	struct info_priv *p = L->priv;
	if (dw_grow((void **)&p->pub.funcs, &L->funcs_cap, p->pub.count + 1, sizeof(f)))
		return dw_oom(L);
	p->pub.funcs[p->pub.count++] = f;
	return 0;
}

/* ---- compile units ----------------------------------------------------- */

static int cmp_func(const void *a, const void *b)
{
	const struct dwarf_func *x = a, *y = b;
	return x->low_pc < y->low_pc ? -1 : x->low_pc > y->low_pc;
}

static struct dwarf_func *find_func(struct dwarf_func *funcs, size_t n, uint64_t pc)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (funcs[mid].low_pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && funcs[lo].low_pc == pc ? &funcs[lo] : NULL;
}

/* Fill what a function at row's address still lacks from that row. */
static int apply_row(struct loader *L, struct dwarf_func *funcs, size_t n, Dwarf_Line row,
		     Dwarf_Addr *prev)
{
	Dwarf_Addr addr;
	Dwarf_Unsigned line, fileno;
	if (dwarf_lineaddr(row, &addr, &L->derr) != DW_DLV_OK)
		return dw_fail(L, "dwarf_lineaddr");
	/* Only the first of several rows at one address describes the entry. */
	bool first_at_addr = addr != *prev;
	*prev = addr;
	struct dwarf_func *f = first_at_addr ? find_func(funcs, n, addr) : NULL;
	if (!f)
		return 0;
	if (!f->decl_line) {
		if (dwarf_lineno(row, &line, &L->derr) != DW_DLV_OK)
			return dw_fail(L, "dwarf_lineno");
		f->decl_line = line <= INT32_MAX ? (int)line : 0;
	}
	if (!f->decl_file) {
		if (dwarf_line_srcfileno(row, &fileno, &L->derr) != DW_DLV_OK)
			return dw_fail(L, "dwarf_line_srcfileno");
		return resolve_file(L, fileno, &f->decl_file);
	}
	return 0;
}

/* Some of functions [first, count) lack a line or a file (Go 1.19 gives
 * out-of-line copies of inlinable functions neither): take them from the
 * line-table row at low_pc.  A CU without a line table leaves them unset. */
static int lines_from_table(struct loader *L, size_t first)
{
	struct dwarf_func *funcs = L->priv->pub.funcs + first;
	size_t n = L->priv->pub.count - first;
	Dwarf_Unsigned version;
	Dwarf_Small ntables;
	Dwarf_Line_Context ctx;
	Dwarf_Line *rows;
	Dwarf_Signed nrows = 0;
	Dwarf_Addr prev = (Dwarf_Addr)-1;
	int rc = 0;
	qsort(funcs, n, sizeof(*funcs), cmp_func);
	int res = dwarf_srclines_b(L->cu_die, &version, &ntables, &ctx, &L->derr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_srclines_b");
	if (res == DW_DLV_NO_ENTRY)
		return 0;
	res = dwarf_srclines_from_linecontext(ctx, &rows, &nrows, &L->derr);
	if (res == DW_DLV_ERROR)
		rc = dw_fail(L, "dwarf_srclines_from_linecontext");
	for (Dwarf_Signed i = 0; res == DW_DLV_OK && !rc && i < nrows; i++)
		rc = apply_row(L, funcs, n, rows[i], &prev);
	dwarf_srclines_dealloc_b(ctx);
	return rc;
}

static bool need_lines(const struct loader *L, size_t first)
{
	for (size_t i = first; i < L->priv->pub.count; i++)
		if (!L->priv->pub.funcs[i].decl_line || !L->priv->pub.funcs[i].decl_file)
			return true;
	return false;
}

/* Go nests no functions, so only the CU's direct children are visited. */
static int walk_cu(struct loader *L)
{
	Dwarf_Die child = NULL, next;
	size_t first = L->priv->pub.count;
	int rc = 0;
	int res = dwarf_child(L->cu_die, &child, &L->derr);
	if (res == DW_DLV_ERROR)
		return dw_fail(L, "dwarf_child");
	while (res == DW_DLV_OK) {
		Dwarf_Half tag;
		if ((rc = dw_die_tag(L, child, &tag)))
			break;
		if (tag == DW_TAG_subprogram && (rc = add_func(L, child)))
			break;
		res = dwarf_siblingof_b(L->dbg, child, true, &next, &L->derr);
		dwarf_dealloc_die(child);
		child = res == DW_DLV_OK ? next : NULL;
		if (res == DW_DLV_ERROR)
			rc = dw_fail(L, "dwarf_siblingof_b");
	}
	if (child)
		dwarf_dealloc_die(child);
	if (!rc && need_lines(L, first))
		rc = lines_from_table(L, first);
	return rc;
}

static void end_cu(struct loader *L)
{
	if (L->srcfiles) {
		for (Dwarf_Signed i = 0; i < L->nsrcfiles; i++)
			dwarf_dealloc(L->dbg, L->srcfiles[i], DW_DLA_STRING);
		dwarf_dealloc(L->dbg, L->srcfiles, DW_DLA_LIST);
	}
	L->srcfiles = NULL;
	L->nsrcfiles = 0;
	L->srcfiles_tried = false;
	if (L->cu_die)
		dwarf_dealloc_die(L->cu_die);
	L->cu_die = NULL;
}

/* Walk every CU; *ncu counts them so "no .debug_info" can be told apart. */
static int walk_cus(struct loader *L, size_t *ncu)
{
	for (;;) {
		Dwarf_Unsigned hdr_len, typeoff, next_off;
		Dwarf_Off abbrev_off;
		Dwarf_Half len_size, ext_size, cu_type;
		Dwarf_Sig8 sig;
		int res = dwarf_next_cu_header_d(L->dbg, true, &hdr_len, &L->version, &abbrev_off,
						 &L->addr_size, &len_size, &ext_size, &sig,
						 &typeoff, &next_off, &cu_type, &L->derr);
		if (res == DW_DLV_NO_ENTRY)
			return 0;
		if (res == DW_DLV_ERROR)
			return dw_fail(L, "dwarf_next_cu_header_d");
		(*ncu)++;
		res = dwarf_siblingof_b(L->dbg, NULL, true, &L->cu_die, &L->derr);
		if (res == DW_DLV_ERROR)
			return dw_fail(L, "dwarf_siblingof_b");
		if (res == DW_DLV_NO_ENTRY) {
			L->cu_die = NULL;
			continue;
		}
		int rc = walk_cu(L);
		end_cu(L);
		if (rc)
			return rc;
	}
}

/* ---- public API -------------------------------------------------------- */

static void fixup_params(struct info_priv *p)
{
	for (size_t i = 0; i < p->pub.count; i++) {
		struct dwarf_func *f = &p->pub.funcs[i];
		size_t first = (size_t)(uintptr_t)f->params;
		f->params = f->nparams ? p->params + first : NULL;
	}
}

/* Open path and reject what is not ELF before libdwarf sees it, so the
 * common mistakes get specific messages. */
static int open_elf(const char *path, char *err)
{
	unsigned char magic[4];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_set(err, errno, "%s: cannot open: %s", path, strerror(errno));
	ssize_t n = pread(fd, magic, sizeof(magic), 0);
	if (n != (ssize_t)sizeof(magic) || memcmp(magic, "\177ELF", 4)) {
		close(fd);
		return err_set(err, ENOEXEC, "%s: not an ELF file; pass a Go executable", path);
	}
	return fd;
}

static int open_dwarf(struct loader *L, int fd)
{
	/* Every DIE, attribute, file list, line context and error is released
	 * here as soon as it is used, so libdwarf's own record of allocations
	 * (kept so dwarf_finish can free leftovers) is pure overhead: about 40%
	 * of the load time.  The flag is process-wide; it is restored after
	 * dwarf_finish(). */
	L->de_alloc_was = dwarf_set_de_alloc_flag(0);
	int res = dwarf_init_b(fd, DW_DLC_READ, DW_GROUPNUMBER_ANY, NULL, NULL, &L->dbg, &L->derr);
	if (res == DW_DLV_OK)
		return 0;
	L->dbg = NULL;
	if (res == DW_DLV_NO_ENTRY)
		return err_set(L->err, ENODATA, "%s: no DWARF (built with -ldflags=-w or stripped)",
			       L->path);
	const char *msg = L->derr ? dwarf_errmsg(L->derr) : "unknown error";
	int rc = err_set(L->err, EINVAL,
			 "%s: cannot read ELF/DWARF (%s); is it a complete, "
			 "uncorrupted executable?",
			 L->path, msg);
	if (L->derr)
		dwarf_dealloc_error(NULL, L->derr);
	L->derr = NULL;
	return rc;
}

int dwarf_info_load(const char *path, struct dwarf_info **out, char *err)
{
	struct loader L = {.path = path, .err = err};
	size_t ncu = 0;
	*out = NULL;
	int fd = open_elf(path, err);
	if (fd < 0)
		return fd;
	int rc = open_dwarf(&L, fd);
	if (!rc && !(L.priv = calloc(1, sizeof(*L.priv))))
		rc = dw_oom(&L);
	if (!rc)
		rc = walk_cus(&L, &ncu);
	end_cu(&L);
	if (L.dbg)
		dwarf_finish(L.dbg, NULL);
	dwarf_set_de_alloc_flag(L.de_alloc_was);
	close(fd);
	free(L.types.slots);
	if (!rc && !ncu)
		rc = err_set(err, ENODATA, "%s: no DWARF (built with -ldflags=-w or stripped)",
			     path);
	if (rc) {
		dwarf_info_free(L.priv ? &L.priv->pub : NULL);
		return rc;
	}
	fixup_params(L.priv);
	qsort(L.priv->pub.funcs, L.priv->pub.count, sizeof(struct dwarf_func), cmp_func);
	*out = &L.priv->pub;
	return 0;
}

void dwarf_info_free(struct dwarf_info *info)
{
	if (!info)
		return;
	struct info_priv *p = (struct info_priv *)info;
	while (p->chunks) {
		struct str_chunk *next = p->chunks->next;
		free(p->chunks);
		p->chunks = next;
	}
	free(p->params);
	free(p->pub.funcs);
	free(p);
}

const struct dwarf_func *dwarf_info_lookup(const struct dwarf_info *info, uint64_t entry)
{
	if (!info)
		return NULL;
	return find_func(info->funcs, info->count, entry);
}
