#include "elf_image.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bigmem.h"
#include "gopclntab.h"
#include "log.h"

#define MAX_SEGMENTS 64

struct elf_image {
	char *path;
	int fd;
	uint8_t *map;
	size_t map_size;
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t shstrndx;
	struct elf_segment segs[MAX_SEGMENTS];
	size_t nsegs;
	struct elf_symbol *funcs; /* STT_FUNC, sorted by value */
	size_t nfuncs;
	Elf_Scn *symtab;
	bool has_dwarf;
	char build_id[2 * 64 + 1];
	char go_build_id[128];
	char go_version[32];
};

static int elf_image_map(struct elf_image *img, char *err)
{
	struct stat st;

	img->fd = open(img->path, O_RDONLY | O_CLOEXEC);
	if (img->fd < 0)
		return err_set(err, errno, "%s: %s", img->path, strerror(errno));
	if (fstat(img->fd, &st) < 0)
		return err_set(err, errno, "%s: %s", img->path, strerror(errno));
	if (!S_ISREG(st.st_mode))
		return err_set(err, EINVAL, "%s: not a regular file", img->path);
	if (st.st_size < SELFMAG)
		return err_set(err, ENOEXEC, "%s: not an ELF file (%lld bytes)", img->path,
			       (long long)st.st_size);
	img->map_size = (size_t)st.st_size;
	/* Private and writable only so libelf may not fault; nothing is written. */
	img->map = mmap(NULL, img->map_size, PROT_READ | PROT_WRITE, MAP_PRIVATE, img->fd, 0);
	if (img->map == MAP_FAILED) {
		img->map = NULL;
		return err_set(err, errno, "%s: mmap: %s", img->path, strerror(errno));
	}
	return 0;
}

static int elf_image_read_headers(struct elf_image *img, char *err)
{
	size_t phnum;

	if (memcmp(img->map, ELFMAG, SELFMAG) != 0)
		return err_set(err, ENOEXEC, "%s: not an ELF file", img->path);
	if (img->map_size < sizeof(Elf64_Ehdr))
		return err_set(err, ENOEXEC, "%s: truncated ELF header (%zu bytes)", img->path,
			       img->map_size);
	elf_version(EV_CURRENT);
	img->elf = elf_memory((char *)img->map, img->map_size);
	if (!img->elf || elf_kind(img->elf) != ELF_K_ELF || !gelf_getehdr(img->elf, &img->ehdr))
		return err_set(err, ENOEXEC, "%s: corrupt ELF header: %s", img->path,
			       elf_errmsg(-1));
	if (img->ehdr.e_ident[EI_CLASS] != ELFCLASS64 || img->ehdr.e_machine != EM_X86_64)
		return err_set(err, ENOEXEC, "%s: not an x86-64 ELF binary (retop traces amd64 Go programs)",
			       img->path);
	if (elf_getphdrnum(img->elf, &phnum) != 0 || elf_getshdrstrndx(img->elf, &img->shstrndx) != 0)
		return err_set(err, ENOEXEC, "%s: corrupt ELF headers: %s", img->path, elf_errmsg(-1));
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(img->elf, (int)i, &ph))
			return err_set(err, ENOEXEC, "%s: corrupt program header %zu", img->path, i);
		if (ph.p_type != PT_LOAD || img->nsegs == MAX_SEGMENTS)
			continue;
		if (ph.p_offset > img->map_size || ph.p_filesz > img->map_size - ph.p_offset)
			return err_set(err, ENOEXEC, "%s: truncated: segment at file offset 0x%llx ends past the end of the file",
				       img->path, (unsigned long long)ph.p_offset);
		img->segs[img->nsegs++] = (struct elf_segment){
			.vaddr = ph.p_vaddr, .memsz = ph.p_memsz, .offset = ph.p_offset,
			.filesz = ph.p_filesz, .flags = ph.p_flags};
	}
	if (img->nsegs == 0)
		return err_set(err, ENOEXEC, "%s: no loadable segment", img->path);
	return 0;
}

static const char *elf_image_scn_name(const struct elf_image *img, Elf_Scn *scn, GElf_Shdr *sh)
{
	if (!gelf_getshdr(scn, sh))
		return NULL;
	return elf_strptr(img->elf, img->shstrndx, sh->sh_name);
}

/* Bytes of a section that lie in the file, or NULL. */
static const uint8_t *elf_image_scn_bytes(const struct elf_image *img, const GElf_Shdr *sh)
{
	if (sh->sh_type == SHT_NOBITS || sh->sh_offset > img->map_size ||
	    sh->sh_size > img->map_size - sh->sh_offset)
		return NULL;
	return img->map + sh->sh_offset;
}

static int elf_symbol_cmp(const void *a, const void *b)
{
	const struct elf_symbol *x = a, *y = b;
	return x->value < y->value ? -1 : x->value > y->value;
}

static int elf_image_read_symtab(struct elf_image *img, char *err)
{
	GElf_Shdr sh;
	Elf_Data *data;
	size_t n, k = 0;

	if (!img->symtab || !gelf_getshdr(img->symtab, &sh) || sh.sh_entsize == 0)
		return 0;
	data = elf_getdata(img->symtab, NULL);
	if (!data || !elf_image_scn_bytes(img, &sh))
		return err_set(err, ENOEXEC, "%s: corrupt .symtab", img->path);
	n = sh.sh_size / sh.sh_entsize;
	img->funcs = calloc(n ? n : 1, sizeof(*img->funcs));
	if (!img->funcs)
		return err_set(err, ENOMEM, "%s: out of memory reading .symtab", img->path);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		const char *name;
		if (!gelf_getsym(data, (int)i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    sym.st_value == 0)
			continue;
		name = elf_strptr(img->elf, sh.sh_link, sym.st_name);
		if (!name)
			continue;
		img->funcs[k++] = (struct elf_symbol){name, sym.st_value, sym.st_size};
	}
	img->nfuncs = k;
	qsort(img->funcs, k, sizeof(*img->funcs), elf_symbol_cmp);
	return 0;
}

static void hex_encode(const uint8_t *p, size_t n, char *out, size_t cap)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;
	for (i = 0; i < n && 2 * i + 2 < cap; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * i] = '\0';
}

static void elf_image_read_notes(struct elf_image *img, Elf_Scn *scn)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;

	while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *name = (const char *)data->d_buf + name_off;
		const uint8_t *desc = (const uint8_t *)data->d_buf + desc_off;
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 && !memcmp(name, "GNU", 4))
			hex_encode(desc, nh.n_descsz, img->build_id, sizeof(img->build_id));
		else if (nh.n_type == 4 && nh.n_namesz == 4 && !memcmp(name, "Go\0\0", 4) &&
			 nh.n_descsz < sizeof(img->go_build_id)) {
			memcpy(img->go_build_id, desc, nh.n_descsz);
			img->go_build_id[nh.n_descsz] = '\0';
		}
	}
}

/* File bytes of [vaddr, vaddr+len) inside one loaded segment, or NULL;
 * written so that no sum can wrap. */
static const uint8_t *elf_image_vaddr_data(const struct elf_image *img, uint64_t vaddr,
					   uint64_t len)
{
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];
		if (vaddr < s->vaddr || vaddr - s->vaddr > s->filesz ||
		    s->filesz - (vaddr - s->vaddr) < len)
			continue;
		return img->map + s->offset + (vaddr - s->vaddr);
	}
	return NULL;
}

/* The version string of .go.buildinfo: inline since Go 1.18 (flag bit 2),
 * behind two pointers to Go strings before that. */
static void elf_image_read_go_version(struct elf_image *img, const uint8_t *p, size_t n)
{
	static const char magic[] = "\xff Go buildinf:";
	uint32_t len;
	int used;

	if (n < 32 || memcmp(p, magic, 14) != 0)
		return;
	if (p[15] & 2) {
		used = gopclntab_varint(p + 32, n - 32, &len);
		if (used <= 0 || len >= sizeof(img->go_version) || (size_t)used + len > n - 32)
			return;
		memcpy(img->go_version, p + 32 + used, len);
		img->go_version[len] = '\0';
		return;
	}
	if (p[14] == 8) {
		uint64_t str_hdr, str_ptr, str_len;
		const uint8_t *hdr;
		memcpy(&str_hdr, p + 16, 8);
		if (!(hdr = elf_image_vaddr_data(img, str_hdr, 16)))
			return;
		memcpy(&str_ptr, hdr, 8);
		memcpy(&str_len, hdr + 8, 8);
		const uint8_t *str = str_len < sizeof(img->go_version)
					     ? elf_image_vaddr_data(img, str_ptr, str_len)
					     : NULL;
		if (str) {
			memcpy(img->go_version, str, str_len);
			img->go_version[str_len] = '\0';
		}
	}
}

static int elf_image_read_sections(struct elf_image *img, char *err)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(img->elf, scn))) {
		const char *name = elf_image_scn_name(img, scn, &sh);
		if (!name)
			return err_set(err, ENOEXEC, "%s: corrupt section header table", img->path);
		if (sh.sh_type == SHT_SYMTAB)
			img->symtab = scn;
		else if (sh.sh_type == SHT_NOTE && elf_image_scn_bytes(img, &sh))
			elf_image_read_notes(img, scn);
		else if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			img->has_dwarf = true;
		else if (!strcmp(name, ".go.buildinfo") && elf_image_scn_bytes(img, &sh))
			elf_image_read_go_version(img, elf_image_scn_bytes(img, &sh), sh.sh_size);
	}
	return elf_image_read_symtab(img, err);
}

int elf_image_open(const char *path, struct elf_image **out, char *err)
{
	struct elf_image *img = calloc(1, sizeof(*img));
	int ret;

	*out = NULL;
	if (!img || !(img->path = strdup(path))) {
		free(img);
		return err_set(err, ENOMEM, "%s: out of memory", path);
	}
	img->fd = -1;
	ret = elf_image_map(img, err);
	if (!ret)
		ret = elf_image_read_headers(img, err);
	if (!ret)
		ret = elf_image_read_sections(img, err);
	if (ret) {
		elf_image_close(img);
		return ret;
	}
	*out = img;
	return 0;
}

void elf_image_close(struct elf_image *img)
{
	if (!img)
		return;
	if (img->elf)
		elf_end(img->elf);
	if (img->map)
		munmap(img->map, img->map_size);
	if (img->fd >= 0)
		close(img->fd);
	free(img->funcs);
	free(img->path);
	free(img);
}

const char *elf_image_path(const struct elf_image *img) { return img->path; }
int elf_image_fd(const struct elf_image *img) { return img->fd; }

void elf_image_drop_pages(struct elf_image *img)
{
	/* Never written (elf_image_map): the pages come back from the file
	 * as they were, at the next read. */
	if (img && img->map)
		madvise(img->map, img->map_size, MADV_DONTNEED);
}
bool elf_image_is_pie(const struct elf_image *img) { return img->ehdr.e_type == ET_DYN; }
bool elf_image_has_symtab(const struct elf_image *img) { return img->symtab != NULL; }
bool elf_image_has_dwarf(const struct elf_image *img) { return img->has_dwarf; }
const char *elf_image_build_id(const struct elf_image *img) { return img->build_id; }
const char *elf_image_go_build_id(const struct elf_image *img) { return img->go_build_id; }
const char *elf_image_go_version(const struct elf_image *img) { return img->go_version; }

const uint8_t *elf_image_section(const struct elf_image *img, const char *name, uint64_t *addr,
				 size_t *size)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(img->elf, scn))) {
		const char *n = elf_image_scn_name(img, scn, &sh);
		const uint8_t *bytes;
		if (!n || strcmp(n, name) != 0 || !(bytes = elf_image_scn_bytes(img, &sh)))
			continue;
		if (addr)
			*addr = sh.sh_addr;
		if (size)
			*size = sh.sh_size;
		return bytes;
	}
	return NULL;
}

static bool pclntab_header_plausible(const uint8_t *p, size_t avail)
{
	uint32_t magic;

	if (avail < 64)
		return false;
	memcpy(&magic, p, 4);
	if (magic != GOPCLNTAB_MAGIC_116 && magic != GOPCLNTAB_MAGIC_118 &&
	    magic != GOPCLNTAB_MAGIC_120)
		return false;
	return p[4] == 0 && p[5] == 0 && (p[6] == 1 || p[6] == 2 || p[6] == 4) &&
	       (p[7] == 4 || p[7] == 8);
}

int elf_image_find_pclntab(const struct elf_image *img, const uint8_t **data, size_t *size,
			   char *err)
{
	static const char suffix[] = ".gopclntab";
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	/* By name: ".gopclntab", or ".data.rel.ro.gopclntab" in PIE builds. */
	while ((scn = elf_nextscn(img->elf, scn))) {
		const char *n = elf_image_scn_name(img, scn, &sh);
		size_t len = n ? strlen(n) : 0;
		if (len < sizeof(suffix) - 1 || strcmp(n + len - (sizeof(suffix) - 1), suffix) != 0)
			continue;
		if (!(*data = elf_image_scn_bytes(img, &sh)))
			return err_set(err, ENOEXEC, "%s: truncated: %s lies past the end of the file",
				       img->path, n);
		*size = sh.sh_size;
		return 0;
	}
	/* Section headers gone: the table still sits in a loaded segment. */
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];
		if (s->flags & PF_X)
			continue;
		for (uint64_t off = 0; off + 64 <= s->filesz; off += 8) {
			const uint8_t *p = img->map + s->offset + off;
			if (pclntab_header_plausible(p, s->filesz - off)) {
				*data = p;
				*size = s->filesz - off;
				return 0;
			}
		}
	}
	return err_set(err, ENODATA, "%s: no .gopclntab section: not a Go program", img->path);
}

uint64_t elf_image_symbol_value(const struct elf_image *img, const char *name)
{
	GElf_Shdr sh;
	Elf_Data *data;

	if (!img->symtab || !gelf_getshdr(img->symtab, &sh) || sh.sh_entsize == 0 ||
	    !(data = elf_getdata(img->symtab, NULL)))
		return 0;
	for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
		GElf_Sym sym;
		const char *n;
		if (gelf_getsym(data, (int)i, &sym) && (n = elf_strptr(img->elf, sh.sh_link, sym.st_name)) &&
		    !strcmp(n, name))
			return sym.st_value;
	}
	return 0;
}

/* Word i of the candidate module data at p. */
static uint64_t md_word(const uint8_t *p, size_t i)
{
	uint64_t v;
	memcpy(&v, p + 8 * i, 8);
	return v;
}

/* Functab pc slot i of the table (1.18+: u32 offsets, 1.16: absolute). */
static uint64_t md_ftab_pc(const uint8_t *ftab, bool rel, size_t i)
{
	uint64_t v = 0;
	memcpy(&v, ftab + (rel ? 8 * i : 16 * i), rel ? 4 : 8);
	return v;
}

/* Does the module data candidate at p describe this pclntab?  Every slice
 * must point where the header says its sub-table is, the functab length
 * must be nfunc + 1, and minpc/maxpc must be the functab's first and last
 * pcs taken from md's own text: a word that merely equals the table's
 * address cannot pass all of that by chance. */
static bool md_matches(const uint8_t *p, size_t more, const uint8_t *pcln, size_t pcln_size,
		       uint64_t pcln_vaddr, struct elf_moduledata *md)
{
	uint32_t magic;
	uint64_t nfunc, off[5];
	bool rel;

	memcpy(&magic, pcln, 4);
	rel = magic != GOPCLNTAB_MAGIC_116;
	memcpy(&nfunc, pcln + 8, 8);
	memcpy(off, pcln + 8 + (rel ? 3 : 2) * 8, sizeof(off));
	/* funcnametab, cutab, filetab, pctab, pclntable, ftab: slice pointers. */
	static const size_t slot[6] = {1, 4, 7, 10, 13, 16};
	static const size_t sub[6] = {0, 1, 2, 3, 4, 4};
	for (int i = 0; i < 6; i++)
		if (off[sub[i]] >= pcln_size || md_word(p, slot[i]) != pcln_vaddr + off[sub[i]])
			return false;
	if (nfunc == 0 || md_word(p, 17) != nfunc + 1)
		return false;
	size_t field = rel ? 4 : 8, avail = pcln_size - off[4];
	/* 2 * nfunc + 1 fields, as the table parser requires. */
	if (avail < field || nfunc > (avail - field) / (2 * field))
		return false;
	md->minpc = md_word(p, MD_MINPC);
	md->maxpc = md_word(p, MD_MINPC + 1);
	md->text = md_word(p, MD_TEXT);
	md->etext = md_word(p, MD_TEXT + 1);
	for (size_t i = 0; i < MD_MORE; i++)
		md->more[i] = i < more ? md_word(p, 24 + i) : 0;
	const uint8_t *ftab = pcln + off[4];
	uint64_t base = rel ? md->text : 0;
	return md->text != 0 && md->text <= md->minpc && md->minpc <= md->maxpc &&
	       md->maxpc <= md->etext && md->minpc == base + md_ftab_pc(ftab, rel, 0) &&
	       md->maxpc == base + md_ftab_pc(ftab, rel, nfunc);
}

/* Fold copy b into a: copies that agree on the validated words are one
 * (-EEXIST when they do not); the words after them, where copies differ,
 * prove nothing and are left 0. */
static int md_merge(struct elf_moduledata *a, const struct elf_moduledata *b)
{
	if (a->minpc != b->minpc || a->maxpc != b->maxpc || a->text != b->text ||
	    a->etext != b->etext)
		return -EEXIST;
	if (memcmp(a->more, b->more, sizeof(a->more)) != 0)
		memset(a->more, 0, sizeof(a->more));
	return 0;
}

int elf_moduledata_find(const uint8_t *seg, size_t len, uint64_t seg_vaddr, const uint8_t *pcln,
			size_t pcln_size, uint64_t pcln_vaddr, struct elf_moduledata *md)
{
	struct elf_moduledata found = {0}, cand;
	int n = 0;

	if (pcln_size < 8 + 8 * 8 || len < MD_SIZE)
		return -ENOENT;
	/* The struct is 8-aligned in the segment; the segment itself may not be. */
	size_t start = (size_t)((8 - (seg_vaddr & 7)) & 7);
	for (size_t o = start; o + MD_SIZE <= len; o += 8) {
		size_t more = (len - o - MD_SIZE) / 8;
		if (md_word(seg + o, 0) != pcln_vaddr ||
		    !md_matches(seg + o, more, pcln, pcln_size, pcln_vaddr, &cand))
			continue;
		if (n++ && md_merge(&found, &cand))
			return -EEXIST;
		if (n == 1)
			found = cand;
	}
	if (!n)
		return -ENOENT;
	*md = found;
	return 0;
}

/* Link-time address of a pointer into the mapping, through the segments. */
static uint64_t elf_image_map_vaddr(const struct elf_image *img, const uint8_t *p)
{
	uint64_t off = (uint64_t)(p - img->map);

	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];
		if (off >= s->offset && off - s->offset < s->filesz)
			return s->vaddr + (off - s->offset);
	}
	return 0;
}

static int elf_image_moduledata(const struct elf_image *img, const uint8_t *pcln, size_t pcln_size,
				struct elf_moduledata *md)
{
	uint64_t pcln_vaddr = elf_image_map_vaddr(img, pcln);
	int ret = -ENOENT;

	if (!pcln_vaddr)
		return -ENOENT;
	/* firstmoduledata is Go data: in a writable segment's file bytes. */
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];
		struct elf_moduledata m;
		if (!(s->flags & PF_W) || (s->flags & PF_X))
			continue;
		int r = elf_moduledata_find(img->map + s->offset, s->filesz, s->vaddr, pcln,
					    pcln_size, pcln_vaddr, &m);
		if (r == -EEXIST || (r == 0 && ret == 0 && md_merge(md, &m)))
			return -EEXIST;
		if (r == 0 && ret != 0) {
			*md = m;
			ret = 0;
		}
	}
	return ret;
}

/* The module data word that holds gofunc for this table and release, or 0
 * when the layout is not known. */
static size_t md_gofunc_word(uint32_t magic, const char *version)
{
	unsigned minor = 0;

	if (magic == GOPCLNTAB_MAGIC_118)
		return 38;
	if (magic != GOPCLNTAB_MAGIC_120 || sscanf(version, "go1.%u", &minor) != 1)
		return 0;
	if (minor >= 20 && minor <= 26)
		return 40;
	return minor == 27 ? 43 : 0;
}

int elf_image_gofunc(const struct elf_image *img, const uint8_t *pcln, size_t pcln_size,
		     const uint8_t **data, size_t *size)
{
	struct elf_moduledata md = {0};
	uint32_t magic = 0;

	*data = NULL;
	*size = 0;
	if (pcln_size < 4)
		return -ENOTSUP;
	memcpy(&magic, pcln, 4);
	size_t w = md_gofunc_word(magic, img->go_version);
	if (!w)
		return -ENOTSUP;
	int r = elf_image_moduledata(img, pcln, pcln_size, &md);
	if (r)
		return r == -EEXIST ? -EINVAL : r;
	uint64_t gofunc = md.more[w - 24], rodata = md.more[w - 25];
	uint64_t sym = elf_image_symbol_value(img, "go:func.*");
	if (!sym)
		sym = elf_image_symbol_value(img, "go.func.*");
	if (!gofunc || !rodata || gofunc < rodata || (sym && sym != gofunc))
		return -EINVAL;
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];
		if (gofunc >= s->vaddr && gofunc - s->vaddr < s->filesz && !(s->flags & PF_X)) {
			*data = img->map + s->offset + (gofunc - s->vaddr);
			*size = (size_t)(s->filesz - (gofunc - s->vaddr));
			return 0;
		}
	}
	return -EINVAL;
}

/* The module data words of types and etypes for this table and release,
 * or 0 when the layout is not known (runtime/symtab.go). */
static size_t md_types_word(uint32_t magic, const char *version, size_t *etypes)
{
	unsigned minor = 0;

	*etypes = 0;
	if (magic == GOPCLNTAB_MAGIC_118) {
		*etypes = 36;
		return 35;
	}
	if (magic != GOPCLNTAB_MAGIC_120 || sscanf(version, "go1.%u", &minor) != 1 || minor < 20 ||
	    minor > 27)
		return 0;
	/* 1.27 puts typedesclen between them. */
	*etypes = minor == 27 ? 39 : 38;
	return 37;
}

int elf_image_types(const struct elf_image *img, const uint8_t *pcln, size_t pcln_size,
		    uint64_t *types, uint64_t *etypes)
{
	uint64_t sym = elf_image_symbol_value(img, "runtime.types");
	uint64_t esym = elf_image_symbol_value(img, "runtime.etypes");
	struct elf_moduledata md = {0};
	uint32_t magic = 0;
	size_t ew = 0, w = 0;

	*types = *etypes = 0;
	if (pcln_size >= 4) {
		memcpy(&magic, pcln, 4);
		w = md_types_word(magic, img->go_version, &ew);
	}
	if (w && elf_image_moduledata(img, pcln, pcln_size, &md) == 0) {
		*types = md.more[w - 24];
		*etypes = md.more[ew - 24];
		if ((sym && sym != *types) || (esym && esym != *etypes))
			return -EINVAL;
	} else if (sym && esym) {
		*types = sym;
		*etypes = esym;
	} else {
		return w ? -ENOENT : -ENOTSUP;
	}
	if (!*types || *etypes <= *types || !elf_image_bytes(img, *types, *etypes - *types)) {
		*types = *etypes = 0;
		return -EINVAL;
	}
	return 0;
}

const uint8_t *elf_image_bytes(const struct elf_image *img, uint64_t vaddr, size_t len)
{
	for (size_t i = 0; i < img->nsegs; i++) {
		const struct elf_segment *s = &img->segs[i];
		if (vaddr >= s->vaddr && vaddr - s->vaddr <= s->filesz &&
		    len <= s->filesz - (vaddr - s->vaddr))
			return img->map + s->offset + (vaddr - s->vaddr);
	}
	return NULL;
}

int elf_image_text_start(const struct elf_image *img, const uint8_t *pcln, size_t pcln_size,
			 uint64_t *text, char *err)
{
	uint64_t sym = elf_image_symbol_value(img, "runtime.text"), hdr = 0, v, off;
	struct elf_moduledata md = {0};
	uint32_t magic = 0;

	*text = 0;
	if (pcln_size >= 8 + 3 * 8) {
		memcpy(&magic, pcln, 4);
		/* 1.18-1.25 store runtime.text; 1.26+ leave the field 0, and an
		 * externally linked PIE may leave it to a dynamic relocation. */
		if (magic == GOPCLNTAB_MAGIC_118 || magic == GOPCLNTAB_MAGIC_120)
			memcpy(&hdr, pcln + 8 + 2 * 8, 8);
	}
	int r = elf_image_moduledata(img, pcln, pcln_size, &md);
	if (r == -EEXIST)
		return err_set(err, EINVAL,
			       "%s: two runtime module data records describe the same function "
			       "table differently; refusing the binary (modified or corrupt?)",
			       img->path);
	v = sym ? sym : md.text ? md.text : hdr;
	if ((md.text && md.text != v) || (hdr && hdr != v))
		return err_set(
		    err, EINVAL,
		    "%s: the Go text start is not proven: runtime.text 0x%llx, module data "
		    "0x%llx, function table header 0x%llx disagree; refusing the binary "
		    "(modified or corrupt?)",
		    img->path, (unsigned long long)sym, (unsigned long long)md.text,
		    (unsigned long long)hdr);
	if (magic == GOPCLNTAB_MAGIC_116)
		return 0; /* entries are absolute: the text start is not needed */
	if (!v)
		return err_set(err, ENOEXEC,
			       "%s: cannot prove where Go text starts: no runtime.text symbol, no "
			       "runtime module data found and no text start in the function table "
			       "header; retop will not guess (rebuild without -s, or report the Go "
			       "release and build flags)",
			       img->path);
	if (elf_image_vaddr_to_offset(img, v, &off))
		return err_set(err, EINVAL,
			       "%s: Go text start 0x%llx is outside every executable segment "
			       "(corrupt binary?)",
			       img->path, (unsigned long long)v);
	*text = v;
	return 0;
}

const struct elf_symbol *elf_symbol_at(const struct elf_symbol *syms, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (syms[mid].value < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	while (lo + 1 < n && syms[lo].size == 0 && syms[lo + 1].value == addr)
		lo++;
	return lo < n && syms[lo].value == addr ? &syms[lo] : NULL;
}

size_t elf_image_func_symbols(const struct elf_image *img, const struct elf_symbol **syms)
{
	*syms = img->funcs;
	return img->nfuncs;
}

size_t elf_image_segments(const struct elf_image *img, const struct elf_segment **segs)
{
	*segs = img->segs;
	return img->nsegs;
}

int elf_segments_vaddr_to_offset(const struct elf_segment *segs, size_t n, uint64_t vaddr,
				 uint64_t *offset)
{
	for (size_t i = 0; i < n; i++) {
		const struct elf_segment *s = &segs[i];
		if (!(s->flags & PF_X) || vaddr < s->vaddr || vaddr - s->vaddr >= s->filesz)
			continue;
		*offset = vaddr - s->vaddr + s->offset;
		return 0;
	}
	return -ENOENT;
}

int elf_image_vaddr_to_offset(const struct elf_image *img, uint64_t vaddr, uint64_t *offset)
{
	return elf_segments_vaddr_to_offset(img->segs, img->nsegs, vaddr, offset);
}

/* File offset of [vaddr, vaddr+len) when both ends are in the same
 * executable segment. */
static int code_offset(const struct elf_image *img, uint64_t vaddr, size_t len, uint64_t *off)
{
	uint64_t last;

	if (elf_image_vaddr_to_offset(img, vaddr, off) ||
	    elf_image_vaddr_to_offset(img, vaddr + len - 1, &last) || last != *off + len - 1)
		return -ERANGE;
	return 0;
}

const uint8_t *elf_image_code(const struct elf_image *img, uint64_t vaddr, size_t len)
{
	uint64_t off;

	if (len == 0 || code_offset(img, vaddr, len, &off) || off + len > img->map_size)
		return NULL;
	return (const uint8_t *)img->map + off;
}

void elf_image_drop(const struct elf_image *img, const void *p, size_t len)
{
	uintptr_t map = (uintptr_t)img->map;

	if ((uintptr_t)p < map || (uintptr_t)p - map > img->map_size ||
	    len > img->map_size - ((uintptr_t)p - map))
		return;
	/* Whole pages inside the range only: a neighbour may still be in use.
	 * The mapping is never written, so MADV_DONTNEED loses nothing. */
	bigmem_advise_inside(p, len, MADV_DONTNEED);
}

int elf_image_read_code(const struct elf_image *img, uint64_t vaddr, uint8_t *buf, size_t len)
{
	uint64_t off;

	if (len == 0)
		return 0;
	if (code_offset(img, vaddr, len, &off))
		return -ERANGE;
	for (size_t done = 0; done < len;) {
		ssize_t r = pread(img->fd, buf + done, len - done, (off_t)(off + done));
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		done += (size_t)r;
	}
	return 0;
}
