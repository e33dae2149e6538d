/* A Go binary's ELF image: segments, sections, symbols and identity.
 *
 * The file is mapped read-only once; every accessor returns a view into that
 * mapping and checks bounds, because the bytes are untrusted.
 */
#ifndef RETOP_ELF_IMAGE_H
#define RETOP_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_image;

struct elf_segment {
	uint64_t vaddr;
	uint64_t memsz;
	uint64_t offset;
	uint64_t filesz;
	uint32_t flags; /* PF_R | PF_W | PF_X */
};

struct elf_symbol {
	const char *name; /* inside the mapping, NUL-terminated */
	uint64_t value;
	uint64_t size;
};

int elf_image_open(const char *path, struct elf_image **out, char *err);
void elf_image_close(struct elf_image *img);

const char *elf_image_path(const struct elf_image *img);
/* The descriptor the image was read through, open while the image is: the
 * file itself, whatever its path names later. */
int elf_image_fd(const struct elf_image *img);
/* The file's pages read so far leave retop's resident memory (a binary of
 * 100 MB read whole to index it); they are read again when needed. */
void elf_image_drop_pages(struct elf_image *img);
bool elf_image_is_pie(const struct elf_image *img);
bool elf_image_has_symtab(const struct elf_image *img);
bool elf_image_has_dwarf(const struct elf_image *img);
/* Lower-case hex of the GNU build-id note, or "" when there is none. */
const char *elf_image_build_id(const struct elf_image *img);
/* Go's own build id (.note.go.buildid), or "". */
const char *elf_image_go_build_id(const struct elf_image *img);
/* "go1.19.8" from .go.buildinfo, or "" when the binary is not Go or too old. */
const char *elf_image_go_version(const struct elf_image *img);

/* Contents of a section by name; NULL when absent or not backed by file bytes. */
const uint8_t *elf_image_section(const struct elf_image *img, const char *name, uint64_t *addr,
				 size_t *size);
/* The Go function table: the .gopclntab section (any ".*gopclntab" name, as in
 * PIE builds), else a validated magic found in a read-only PT_LOAD segment.
 * -ENODATA when there is none: an ELF file, but not a Go program. */
int elf_image_find_pclntab(const struct elf_image *img, const uint8_t **data, size_t *size,
			   char *err);
/* Link-time start of Go text, proven: runtime.text (symbols), the runtime's
 * own module data (found through its pointer to the function table pcln)
 * and the table header's text start (Go 1.18-1.25) must agree where they
 * exist.  Never the .text section: with external linking it starts before
 * the Go text.  -EINVAL when they disagree, -ENOEXEC when nothing proves a
 * text start (*text stays 0 for Go 1.16-1.17 tables, whose entries are
 * absolute and need none). */
int elf_image_text_start(const struct elf_image *img, const uint8_t *pcln, size_t pcln_size,
			 uint64_t *text, char *err);

/* Function symbols of .symtab sorted by value (empty when stripped). */
size_t elf_image_func_symbols(const struct elf_image *img, const struct elf_symbol **syms);
/* The function symbol at addr among syms (sorted by value, as
 * elf_image_func_symbols() gives them), or NULL.  Markers such as
 * runtime.text share an address with a function: the one with a size wins. */
const struct elf_symbol *elf_symbol_at(const struct elf_symbol *syms, size_t n, uint64_t addr);
/* Value of a symbol by exact name (any type); 0 when absent. */
uint64_t elf_image_symbol_value(const struct elf_image *img, const char *name);

size_t elf_image_segments(const struct elf_image *img, const struct elf_segment **segs);
/* File offset of a virtual address inside an executable PT_LOAD segment. */
int elf_image_vaddr_to_offset(const struct elf_image *img, uint64_t vaddr, uint64_t *offset);
/* Copy len file bytes at vaddr (executable segment) into buf; pread, so a
 * whole-binary scan does not grow the resident set. */
int elf_image_read_code(const struct elf_image *img, uint64_t vaddr, uint8_t *buf, size_t len);
/* The same bytes without a copy: a view into the mapping, NULL when they are
 * not all inside one executable segment.  The pages it touches stay resident
 * until elf_image_drop() gives them back, which a scan over the whole text
 * does window by window to keep the resident set flat. */
const uint8_t *elf_image_code(const struct elf_image *img, uint64_t vaddr, size_t len);
/* Give back the resident pages of [p, p+len), a range of the mapping (a
 * code view, a part of .gopclntab): whole pages inside it only.  Nothing is
 * lost: the bytes are read again from the file on next use. */
void elf_image_drop(const struct elf_image *img, const void *p, size_t len);

/* The fields of runtime.moduledata retop reads.  Its first 24 words have
 * kept one layout from Go 1.16 to 1.27 (runtime/symtab.go): pcHeader, six
 * slices (funcnametab, cutab, filetab, pctab, pclntable, ftab),
 * findfunctab, minpc, maxpc, text, etext. */
#define MD_MINPC 20
#define MD_TEXT 22
#define MD_SIZE (24 * 8)
#define MD_MORE 20
struct elf_moduledata {
	uint64_t minpc, maxpc; /* first and last pc of the function table */
	uint64_t text, etext;
	/* Words 24 to 43, where the segment holds them (else 0): the fields
	 * whose layout changes between releases (elf_image_gofunc). */
	uint64_t more[MD_MORE];
};

/* Where go:func.* (the base of every function's funcdata on Go 1.18+, the
 * inline trees among them) starts: the module data's gofunc, word 38 on Go
 * 1.18-1.19, 40 on 1.20-1.26, 43 on 1.27 (runtime/symtab.go), right after
 * rodata; the Go release (.go.buildinfo) picks the layout, and the
 * go:func.* / go.func.* symbol, when there is one, must agree.  *data and
 * *size: the file bytes from there to the end of their segment.  -ENOTSUP
 * for a release or table whose layout retop does not know, -ENOENT when
 * no module data is found, -EINVAL when the witnesses disagree. */
int elf_image_gofunc(const struct elf_image *img, const uint8_t *pcln, size_t pcln_size,
		     const uint8_t **data, size_t *size);

/* The module's type descriptors, [*types, *etypes) as link addresses: the
 * base of every type's name offset.  runtime.types and runtime.etypes
 * where the symbols exist, the module data's words where it is found (word
 * 35 on Go 1.18-1.19, 37 from 1.20; etypes right after it, or two after on
 * 1.27): both, where both exist, must agree.  Errors as elf_image_gofunc. */
int elf_image_types(const struct elf_image *img, const uint8_t *pcln, size_t pcln_size,
		    uint64_t *types, uint64_t *etypes);
/* len file bytes at link address vaddr, inside one loaded segment (any
 * kind): a view into the mapping, NULL when they are not all there. */
const uint8_t *elf_image_bytes(const struct elf_image *img, uint64_t vaddr, size_t len);

/* Search seg (len file bytes loaded at seg_vaddr) for the module data that
 * points at the function table pcln (pcln_size bytes at pcln_vaddr), and
 * validate it against the table.  0 and *md on one match (or several equal
 * ones), -ENOENT when none, -EEXIST when two disagree. */
int elf_moduledata_find(const uint8_t *seg, size_t len, uint64_t seg_vaddr, const uint8_t *pcln,
			size_t pcln_size, uint64_t pcln_vaddr, struct elf_moduledata *md);

/* The offset math, on plain arrays so it can be tested on fixed values:
 * p_vaddr <= v < p_vaddr + p_filesz of an executable segment ->
 * v - p_vaddr + p_offset.  -ENOENT when no executable segment holds v. */
int elf_segments_vaddr_to_offset(const struct elf_segment *segs, size_t n, uint64_t vaddr,
				 uint64_t *offset);

#endif
