/* The merged function index of one Go binary.
 *
 * Names and entries come from .gopclntab (present even in stripped binaries),
 * refined by .symtab and DWARF when they exist.  Trust for the entry address:
 * SDK (checked against this index) > DWARF > .symtab > .gopclntab.
 */
#ifndef RETOP_FUNCS_H
#define RETOP_FUNCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../bpf/retop.h"
#include "dwarf_info.h"
#include "retsites.h"

enum func_source { SRC_PCLNTAB = 0, SRC_SYMTAB, SRC_DWARF, SRC_SDK };

/* One per function (tens of thousands): fields ordered to pack. */
struct func_info {
	const char *name;
	uint64_t entry;	      /* link-time virtual address */
	uint64_t file_offset; /* where the entry uprobe attaches */
	uint64_t size;
	const char *file;		/* source file of the entry */
	const struct dwarf_func *dwarf; /* NULL without DWARF */
	struct retsites rets;		/* filled by funcs_decode() */
	int line;
	uint32_t pcln_index;
	enum func_source source; /* where the entry address came from */
	bool rets_resolved;	 /* decoded and judged (funcs_decode.h) */
	uint8_t interlock;	 /* INTERLOCK_* bits (interlock.h) */
	/* Where the entry probe sits, from the entry: 0, or the conditional
	 * jump of the stack-check prologue (entry_probe.h). */
	uint8_t entry_probe_off;
	/* Whether each call hits the entry probe once (entry_count.h), and
	 * the prologue jump's condition when the probe sits on it (0xFF: no). */
	bool entry_counts_calls;
	uint8_t entry_jcc_cc;
	/* The kernel emulates the entry probe's instruction (one trap a hit)
	 * rather than single-stepping it (uprobe_insn_emulated). */
	bool entry_emulated;
	/* SDK cross-check. */
	bool sdk_mismatch;
	bool sdk_inlined;
	/* Inlining, from the inline trees (funcs_inline_scan): the sites
	 * where the compiler inlined this function, and whether it exists
	 * only there (a row of its own, no code, entry 0). */
	bool inline_only;
	uint32_t inlined_sites;
};

struct func_index {
	char *path;
	struct elf_image *img;
	struct gopclntab *pcln;
	struct dwarf_info *dwarf;  /* NULL when the binary has no DWARF */
	struct funcs_decoder *dec; /* for decodes on the caller's thread */
	struct func_info *funcs;   /* sorted by entry address */
	size_t count;
	struct func_names *names; /* by name, sorted on first use: funcs_by_name() */
	/* Functions that exist only inlined, by name (funcs_inline_scan). */
	struct func_info *inl_only;
	size_t inl_only_count;
	bool inl_known; /* the inline trees were read: inlined_sites is true */
	/* The file that was indexed, to refuse one replaced since. */
	uint64_t file_dev, file_ino, file_size;
	int64_t file_mtime_ns;
	/* Its number among the binaries a session traces (0: the first; a
	 * deploy adds more), carried in its RET probes' cookies. */
	unsigned image;
	bool keep_pages; /* FUNCS_KEEP_PAGES */
};

/* The indexes that name return addresses, by image number, each with its
 * PIE load bias in the traced process (0 when unknown or fixed). */
struct func_images {
	const struct func_index *idx[RETOP_MAX_IMAGES];
	uint64_t bias[RETOP_MAX_IMAGES];
};

/* The function a return address of image lies in (the CALL before it), or
 * NULL when unknown. */
const struct func_info *funcs_images_caller(const struct func_images *im, unsigned image,
					    uint64_t ret_addr);

/* FUNCS_KEEP_PAGES: for a caller that reads every function once and
 * exits (the listing).  What it reads of the file stays resident: giving
 * pages back stops every thread for a TLB flush, and the decoders read
 * each page again right after (a tenth of the listing's time). */
enum funcs_load_flags { FUNCS_NO_DWARF = 1, FUNCS_KEEP_PAGES = 2 };

int funcs_load(const char *path, unsigned flags, struct func_index **out, char *err);
/* What the index and the attaches read of the binary leaves retop's
 * resident memory (elf_image_drop_pages): after a package's attach. */
void funcs_drop_file_pages(struct func_index *idx);
/* The indexed file itself, as a path that stays that file whatever its
 * name names later: /proc/self/fd/N of the index's open descriptor. */
void funcs_file_path(const struct func_index *idx, char *buf, size_t len);
void funcs_free(struct func_index *idx);

/* The functions sorted by name (then entry), idx->count of them; NULL when
 * out of memory.  Sorted on the first call, so a run that never looks a
 * name up (a pattern, an address) does not pay for the sort. */
struct func_info *const *funcs_by_name(const struct func_index *idx);

/* True when the function at exactly addr is one of the runtime's that
 * never return (a panic or a throw): Go puts a nop after a call to it, so
 * that the return address is inside the caller, and that nop never runs. */
bool funcs_never_returns(const struct func_index *idx, uint64_t addr);

struct func_info *funcs_find(const struct func_index *idx, const char *name);
/* The function of that name at entry, else the first of that name. */
struct func_info *funcs_find_at(const struct func_index *idx, const char *name, uint64_t entry);
struct func_info *funcs_by_addr(const struct func_index *idx, uint64_t addr);
/* The function before f (one of idx->funcs) in address order that has
 * code, or NULL. */
struct func_info *funcs_prev(const struct func_index *idx, const struct func_info *f);
const char *func_source_name(enum func_source s);

#endif
