/* The Go function table (.gopclntab), parsed in place.
 *
 * Layouts: Go 1.16-1.17 (magic 0xFFFFFFFA), 1.18-1.19 (0xFFFFFFF0) and
 * 1.20+ (0xFFFFFFF1).  Any other magic is an error, never a guess.  Every
 * offset read from the table is bounds-checked against the table's size:
 * the bytes come from a binary retop does not trust.
 */
#ifndef RETOP_GOPCLNTAB_H
#define RETOP_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GOPCLNTAB_MAGIC_116 0xFFFFFFFAu
#define GOPCLNTAB_MAGIC_118 0xFFFFFFF0u
#define GOPCLNTAB_MAGIC_120 0xFFFFFFF1u

struct gopclntab;

struct gopclntab_func {
	const char *name; /* inside the table, NUL-terminated */
	uint64_t entry;	  /* link-time virtual address */
	uint64_t end;	  /* next function's entry: includes alignment padding */
	uint32_t index;
};

/* data/size: the table; text_start: the link-time address of runtime.text
 * (0: take the header's).  The header carries none on Go >= 1.26 and may
 * leave it to a relocation in PIE builds; when both are known they must
 * agree, else -EINVAL. */
int gopclntab_open(const uint8_t *data, size_t size, uint64_t text_start, struct gopclntab **out,
		   char *err);
void gopclntab_close(struct gopclntab *tab);

uint32_t gopclntab_magic(const struct gopclntab *tab);
size_t gopclntab_count(const struct gopclntab *tab);
int gopclntab_func(const struct gopclntab *tab, size_t i, struct gopclntab_func *f, char *err);
/* Source position of pc inside function i (pc in [entry, end)); file points
 * into the table.  -ERANGE: i or pc out of range; -ENOENT: the function has
 * no position for pc; -EINVAL: corrupt table. */
int gopclntab_line(const struct gopclntab *tab, size_t i, uint64_t pc, const char **file,
		   int *line);
/* A cursor on a pcvalue table (gopclntab_lines). */
struct gopclntab_pcv {
	const uint8_t *p;
	size_t avail, pos;
	uint64_t pc;
	int32_t v;
	bool started;
	int err;
};
/* gopclntab_line() for many pcs of function i, each table walked once when
 * the pcs ascend (a lower pc starts the walks over): the lines of a
 * function's RET sites. */
struct gopclntab_lines {
	const struct gopclntab *tab;
	size_t i;
	int err;
	uint64_t entry, end, last;
	uint32_t cu_off;
	struct gopclntab_pcv file, line;
};
void gopclntab_lines_open(const struct gopclntab *tab, size_t i, struct gopclntab_lines *it);
/* gopclntab_line(tab, i, pc, file, line), the same answer. */
int gopclntab_lines_next(struct gopclntab_lines *it, uint64_t pc, const char **file, int *line);
/* Size of function i's code without the alignment padding after it: the
 * span of its pc-to-SP table, which the compiler writes up to the end of
 * the function's last instruction.  -ENOENT: no such table; -EINVAL: a
 * corrupt one, or a span past the next function's entry. */
int gopclntab_code_size(const struct gopclntab *tab, size_t i, uint64_t *size);

/* Index of the function containing pc, or -ENOENT. */
long gopclntab_find(const struct gopclntab *tab, uint64_t pc);

struct gopclntab_span {
	const uint8_t *p;
	size_t len;
};

/* What a scan in function order is done with on reaching function i: the
 * pc tables and _func records laid out before function i's own (Go's linker
 * writes them in function order).  A reader may give those pages back to
 * keep its resident set small; they are read again from the file when
 * asked for.  Returns the number of spans in out (at most 2). */
size_t gopclntab_behind(const struct gopclntab *tab, size_t i, struct gopclntab_span out[2]);

/* Building blocks, exposed for unit tests on fixed bytes. */

/* Unsigned LEB128 as Go writes it (at most 5 bytes for 32 bits).  Returns the
 * number of bytes read, or -EINVAL when truncated or too long. */
int gopclntab_varint(const uint8_t *p, size_t avail, uint32_t *val);
/* The pc span a pcvalue table covers: the sum of its pc deltas (times
 * pc_quantum) up to its end.  -EINVAL when truncated or malformed. */
int gopclntab_pcspan(const uint8_t *p, size_t avail, unsigned pc_quantum, uint64_t *span);
/* Walk a pcvalue table starting at p: the value that holds at target_pc for
 * a function beginning at entry.  pc_quantum is the header's minLC.
 * -ENOENT when target_pc is before entry or past the table's end, -EINVAL
 * when the table is truncated or malformed. */
int gopclntab_pcvalue(const uint8_t *p, size_t avail, uint64_t entry, uint64_t target_pc,
		      unsigned pc_quantum, int32_t *val);

/* A walk over a pcvalue table, one run of equal values at a time: pc
 * offsets from the function's entry.  Set up by gopclntab_pcsp(), or by
 * hand on fixed bytes (val = -1, the rest 0). */
struct gopclntab_pciter {
	const uint8_t *p;
	size_t avail, pos;
	unsigned quantum;
	uint64_t pc;
	int32_t val;
	bool started, done;
};

/* The next run [*start, *end) holding *val: 1, or 0 at the table's end,
 * -EINVAL when the table is truncated or malformed. */
int gopclntab_pciter_next(struct gopclntab_pciter *it, uint64_t *start, uint64_t *end, int32_t *val);
/* Function i's pc-to-SP-delta table.  -ENOENT: none; -EINVAL: corrupt. */
int gopclntab_pcsp(const struct gopclntab *tab, size_t i, struct gopclntab_pciter *it);

/* The runtime's flags of function i (Go's abi.FuncFlag). */
#define GOPCLNTAB_FLAG_TOPFRAME 0x1 /* the bottom frame of a stack: no caller */
#define GOPCLNTAB_FLAG_SPWRITE 0x2  /* writes an arbitrary value to SP */
#define GOPCLNTAB_FLAG_ASM 0x4	    /* written in assembly */
int gopclntab_func_flags(const struct gopclntab *tab, size_t i, uint8_t *flags);

/* Inlining (Go 1.18+ tables).  Each function's inline tree (its funcdata 3)
 * has one entry per call the compiler inlined into it that left code, in
 * the layout of the runtime's inlinedCall: 20 bytes on 1.18-1.19 (parent,
 * funcID, file, line, name, parentPc), 16 from 1.20 (funcID, name,
 * parentPc, startLine).  Its pc-to-entry table (pcdata 2) says which entry
 * each instruction's code belongs to, -1 for the function's own.  The tree
 * lives in go:func.*, outside the table: gopclntab_set_gofunc() gives its
 * bytes (from go:func.* to the end of the file bytes that hold it). */
struct gopclntab_inl {
	const char *name;   /* the inlined function, inside the table */
	uint32_t parent_pc; /* from the entry: an instruction whose position is the call site */
	/* The entry it was inlined into, -1 the function itself; 1.20+
	 * tables do not say (GOPCLNTAB_INL_PARENT_UNSAID): the pc-to-entry
	 * table's value at parent_pc is the parent there. */
	int32_t parent;
	uint8_t func_id;
};
#define GOPCLNTAB_INL_PARENT_UNSAID (-2)
void gopclntab_set_gofunc(struct gopclntab *tab, const uint8_t *data, size_t size);
/* Whether inline trees can be read: a 1.18+ table with go:func.* bytes. */
bool gopclntab_has_inl(const struct gopclntab *tab);
/* Entries in function i's inline tree (0: none).  -ENOTSUP: no inline
 * facts (see gopclntab_has_inl); -EINVAL: a corrupt tree or table. */
int gopclntab_inl_count(const struct gopclntab *tab, size_t i, uint32_t *n);
/* Entry k of function i's inline tree (k < gopclntab_inl_count(), which
 * this does not recount; -ERANGE past the bytes of go:func.*). */
int gopclntab_inl_get(const struct gopclntab *tab, size_t i, uint32_t k, struct gopclntab_inl *e);
/* Function i's pc-to-entry table (pcdata 2), values are entry numbers or
 * -1.  -ENOENT: none (nothing inlined); -EINVAL: corrupt. */
int gopclntab_inl_pcdata(const struct gopclntab *tab, size_t i, struct gopclntab_pciter *it);

#endif
