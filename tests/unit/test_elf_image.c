/* Unit tests for the ELF image: the vaddr->offset math on fixed segment
 * tables, the errors for files that are not x86-64 ELF binaries (written
 * here to a temp dir), /bin/true as a real non-Go PIE, and the Go facts of
 * the fixtures in $RETOP_FIXTURE_DIR, checked against the Go toolchain's
 * own answers (`go version`, `go tool buildid`, `go tool nm`).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "elf_image.h"
#include "error_types.h"
#include "funcs.h"
#include "gopclntab.h"
#include "log.h"

#include <ctype.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define BIN_TRUE "/bin/true"

static char tmpdir[] = "/tmp/test_elf_image.XXXXXX";

/* ---- vaddr -> file offset on fixed segment tables ---- */

/* Non-PIE Go binary: text mapped at 0x400000 from file offset 0. */
static const struct elf_segment exec_segs[] = {
	{.vaddr = 0x400000, .memsz = 0xb1de0, .offset = 0, .filesz = 0xb1de0, .flags = PF_R | PF_X},
	{.vaddr = 0x4b2000, .memsz = 0x4b3d7, .offset = 0xb2000, .filesz = 0x4b3d7, .flags = PF_R},
	{.vaddr = 0x4fe000, .memsz = 0x9ae00, .offset = 0xfe000, .filesz = 0x93250,
	 .flags = PF_R | PF_W},
};

/* A C PIE like /bin/true: headers at 0, text one page up, then a gap. */
static const struct elf_segment pie_segs[] = {
	{.vaddr = 0, .memsz = 0x1290, .offset = 0, .filesz = 0x1290, .flags = PF_R},
	{.vaddr = 0x2000, .memsz = 0x3d59, .offset = 0x2000, .filesz = 0x3d59, .flags = PF_R | PF_X},
	{.vaddr = 0x6000, .memsz = 0x1b60, .offset = 0x6000, .filesz = 0x1b60, .flags = PF_R},
	/* Second text segment whose vaddr and offset differ. */
	{.vaddr = 0x20000, .memsz = 0x100, .offset = 0x9000, .filesz = 0x100, .flags = PF_R | PF_X},
};

static void expect_offset(const struct elf_segment *segs, size_t n, uint64_t vaddr, uint64_t want)
{
	uint64_t off = 0xdeadbeef;

	assert_int_equal(elf_segments_vaddr_to_offset(segs, n, vaddr, &off), 0);
	assert_int_equal(off, want);
}

static void expect_enoent(const struct elf_segment *segs, size_t n, uint64_t vaddr)
{
	uint64_t off = 0xdeadbeef;

	assert_int_equal(elf_segments_vaddr_to_offset(segs, n, vaddr, &off), -ENOENT);
	assert_int_equal(off, 0xdeadbeef); /* untouched on failure */
}

static void test_vaddr_exec(void **state)
{
	(void)state;
	expect_offset(exec_segs, N(exec_segs), 0x400000, 0);
	expect_offset(exec_segs, N(exec_segs), 0x401000, 0x1000);
	expect_offset(exec_segs, N(exec_segs), 0x400000 + 0xb1de0 - 1, 0xb1de0 - 1);
	expect_enoent(exec_segs, N(exec_segs), 0x400000 + 0xb1de0); /* one past the end */
	expect_enoent(exec_segs, N(exec_segs), 0x400000 - 1);	    /* just below */
	expect_enoent(exec_segs, N(exec_segs), 0);
	expect_enoent(exec_segs, N(exec_segs), UINT64_MAX);
	/* Read-only data and read-write data are not code. */
	expect_enoent(exec_segs, N(exec_segs), 0x4b2000);
	expect_enoent(exec_segs, N(exec_segs), 0x500000);
	expect_enoent(exec_segs, 0, 0x401000);
}

static void test_vaddr_pie(void **state)
{
	(void)state;
	/* The R-only first segment holds vaddr 0..0x1290 but is not code. */
	expect_enoent(pie_segs, N(pie_segs), 0);
	expect_enoent(pie_segs, N(pie_segs), 0x1000);
	expect_enoent(pie_segs, N(pie_segs), 0x1fff); /* gap below text */
	expect_offset(pie_segs, N(pie_segs), 0x2000, 0x2000);
	expect_offset(pie_segs, N(pie_segs), 0x2000 + 0x3d58, 0x2000 + 0x3d58);
	expect_enoent(pie_segs, N(pie_segs), 0x2000 + 0x3d59);
	expect_enoent(pie_segs, N(pie_segs), 0x5fff); /* gap between segments */
	expect_enoent(pie_segs, N(pie_segs), 0x6000); /* .rodata */
	/* vaddr - p_vaddr + p_offset, not the vaddr itself. */
	expect_offset(pie_segs, N(pie_segs), 0x20000, 0x9000);
	expect_offset(pie_segs, N(pie_segs), 0x200ff, 0x90ff);
	expect_enoent(pie_segs, N(pie_segs), 0x20100);
}

/* Bytes past p_filesz are zero-fill, not file bytes: no offset for them. */
static void test_vaddr_bss_tail(void **state)
{
	static const struct elf_segment segs[] = {
		{.vaddr = 0x1000, .memsz = 0x2000, .offset = 0x1000, .filesz = 0x800,
		 .flags = PF_R | PF_X},
	};
	(void)state;
	expect_offset(segs, N(segs), 0x17ff, 0x17ff);
	expect_enoent(segs, N(segs), 0x1800);
}

/* ---- the runtime's module data, on fixed bytes ---- */

#define PCLN_VADDR 0x520000u
#define MD_TEXT_VAL 0x402400u

/* A Go 1.20+ table header (nfunc 2, functab at 0x68: pcs 0, 0x40, end 0x81)
 * and nothing else: enough for the module data checks. */
static void md_pcln(uint8_t *p, size_t size, uint32_t magic)
{
	uint64_t w[8] = {2, 1, 0, 0x48, 0x50, 0x58, 0x60, 0x68};
	uint32_t ft[5] = {0, 0x100, 0x40, 0x200, 0x81};

	memset(p, 0, size);
	memcpy(p, &magic, 4);
	p[6] = 1;
	p[7] = 8;
	if (magic == GOPCLNTAB_MAGIC_116) {
		/* No text start field; functab of absolute uintptrs. */
		uint64_t w16[7] = {2, 1, 0x48, 0x50, 0x58, 0x60, 0x68};
		uint64_t ft16[5] = {MD_TEXT_VAL, 0x100, MD_TEXT_VAL + 0x40, 0x200,
				    MD_TEXT_VAL + 0x81};
		memcpy(p + 8, w16, sizeof(w16));
		memcpy(p + 0x68, ft16, sizeof(ft16));
		return;
	}
	memcpy(p + 8, w, sizeof(w));
	memcpy(p + 0x68, ft, sizeof(ft));
}

/* runtime.firstmoduledata for that table, with text at text, at seg + at. */
static void md_write(uint8_t *seg, size_t at, uint64_t text)
{
	uint64_t w[24] = {0};
	static const uint64_t offs[6] = {0x48, 0x50, 0x58, 0x60, 0x68, 0x68};
	static const size_t slot[6] = {1, 4, 7, 10, 13, 16};

	w[0] = PCLN_VADDR;
	for (int i = 0; i < 6; i++) {
		w[slot[i]] = PCLN_VADDR + offs[i];
		w[slot[i] + 1] = w[slot[i] + 2] = 8; /* len, cap: not checked */
	}
	w[17] = w[18] = 3; /* ftab: nfunc + 1 entries */
	w[MD_MINPC] = text;
	w[MD_MINPC + 1] = text + 0x81;
	w[MD_TEXT] = text;
	w[MD_TEXT + 1] = text + 0x90;
	memcpy(seg + at, w, sizeof(w));
}

static int md_find(const uint8_t *seg, size_t len, uint64_t vaddr, const uint8_t *pcln,
		   struct elf_moduledata *md)
{
	return elf_moduledata_find(seg, len, vaddr, pcln, 0x100, PCLN_VADDR, md);
}

static void test_moduledata_found(void **state)
{
	uint8_t pcln[0x100], seg[0x400];
	struct elf_moduledata md;
	(void)state;

	md_pcln(pcln, sizeof(pcln), GOPCLNTAB_MAGIC_120);
	memset(seg, 0, sizeof(seg));
	/* Decoys first: bare words equal to the table's address. */
	memcpy(seg + 0x10, &(uint64_t){PCLN_VADDR}, 8);
	memcpy(seg + 0x18, &(uint64_t){PCLN_VADDR}, 8);
	md_write(seg, 0x100, MD_TEXT_VAL);
	assert_int_equal(md_find(seg, sizeof(seg), 0x5f0000, pcln, &md), 0);
	assert_int_equal(md.text, MD_TEXT_VAL);
	assert_int_equal(md.minpc, MD_TEXT_VAL);
	assert_int_equal(md.maxpc, MD_TEXT_VAL + 0x81);
	assert_int_equal(md.etext, MD_TEXT_VAL + 0x90);

	/* The same record twice (say .data and a copy) is still one answer. */
	md_write(seg, 0x200, MD_TEXT_VAL);
	assert_int_equal(md_find(seg, sizeof(seg), 0x5f0000, pcln, &md), 0);

	/* Alignment is by address, not by position in the segment: the same
	 * bytes at an address where the record would be misaligned are not it. */
	assert_int_equal(md_find(seg + 4, sizeof(seg) - 4, 0x5f0004, pcln, &md), 0);
	assert_int_equal(md_find(seg + 4, sizeof(seg) - 4, 0x5f0000, pcln, &md), -ENOENT);

	/* Go 1.16-1.17: absolute functab pcs. */
	md_pcln(pcln, sizeof(pcln), GOPCLNTAB_MAGIC_116);
	assert_int_equal(md_find(seg, sizeof(seg), 0x5f0000, pcln, &md), 0);
	assert_int_equal(md.text, MD_TEXT_VAL);
}

static void test_moduledata_refused(void **state)
{
	uint8_t pcln[0x100], seg[0x400];
	struct elf_moduledata md;
	uint64_t v;
	(void)state;

	md_pcln(pcln, sizeof(pcln), GOPCLNTAB_MAGIC_120);
	memset(seg, 0, sizeof(seg));
	assert_int_equal(md_find(seg, sizeof(seg), 0x5f0000, pcln, &md), -ENOENT);
	assert_int_equal(md_find(seg, 100, 0x5f0000, pcln, &md), -ENOENT); /* too short */

	/* Two records that pass every check but name different text starts. */
	md_write(seg, 0x100, MD_TEXT_VAL);
	md_write(seg, 0x200, MD_TEXT_VAL + 0x100);
	assert_int_equal(md_find(seg, sizeof(seg), 0x5f0000, pcln, &md), -EEXIST);

	/* One field off, one record at a time: each is no match. */
	static const size_t fields[] = {1, 4, 7, 10, 13, 16, 17, MD_MINPC, MD_MINPC + 1};
	for (size_t i = 0; i < N(fields); i++) {
		memset(seg, 0, sizeof(seg));
		md_write(seg, 0x100, MD_TEXT_VAL);
		memcpy(&v, seg + 0x100 + 8 * fields[i], 8);
		v += 8;
		memcpy(seg + 0x100 + 8 * fields[i], &v, 8);
		assert_int_equal(md_find(seg, sizeof(seg), 0x5f0000, pcln, &md), -ENOENT);
	}
	/* A text start past the first function, or text 0. */
	memset(seg, 0, sizeof(seg));
	md_write(seg, 0x100, MD_TEXT_VAL);
	v = MD_TEXT_VAL + 0x10;
	memcpy(seg + 0x100 + 8 * MD_TEXT, &v, 8);
	assert_int_equal(md_find(seg, sizeof(seg), 0x5f0000, pcln, &md), -ENOENT);
	md_write(seg, 0x100, 0);
	assert_int_equal(md_find(seg, sizeof(seg), 0x5f0000, pcln, &md), -ENOENT);

	/* A table whose functab would not fit: nfunc too large. */
	md_write(seg, 0x100, MD_TEXT_VAL);
	v = 1000;
	memcpy(pcln + 8, &v, 8);
	v = 1001;
	memcpy(seg + 0x100 + 8 * 17, &v, 8);
	assert_int_equal(md_find(seg, sizeof(seg), 0x5f0000, pcln, &md), -ENOENT);
}

/* ---- errors for files that are not x86-64 ELF ---- */

static char *tmp_path(const char *name)
{
	static char path[4][256];
	static int k;
	char *p = path[k++ % 4];

	snprintf(p, sizeof(path[0]), "%s/%s", tmpdir, name);
	return p;
}

static const char *write_file(const char *name, const void *data, size_t n)
{
	const char *path = tmp_path(name);
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* /bin/true whole, or its first len bytes. */
static uint8_t *read_bin_true(size_t *len)
{
	FILE *f = fopen(BIN_TRUE, "rb");
	uint8_t *buf = malloc(1 << 20);
	size_t n;

	assert_non_null(f);
	assert_non_null(buf);
	n = fread(buf, 1, 1 << 20, f);
	fclose(f);
	assert_true(n > sizeof(Elf64_Ehdr) && n < (1 << 20));
	if (*len == 0 || *len > n)
		*len = n;
	return buf;
}

/* Open must fail with errnum and a message naming path and each of what[]. */
static void expect_open_error(const char *path, int errnum, const char *const *what, size_t n)
{
	struct elf_image *img = (void *)1;
	char err[ERR_LEN] = "";

	assert_int_equal(elf_image_open(path, &img, err), -errnum);
	assert_null(img);
	if (!strstr(err, path))
		fail_msg("message does not name %s: \"%s\"", path, err);
	for (size_t i = 0; i < n; i++)
		if (!strstr(err, what[i]))
			fail_msg("message lacks \"%s\": \"%s\"", what[i], err);
}

static void test_open_not_elf(void **state)
{
	static const char text[] = "#!/bin/sh\n# a shell script, long enough to hold an ELF header\n"
				   "exec /bin/true \"$@\"\n";
	static const char *const not_elf[] = {"not an ELF"};
	static const char *const empty[] = {"not an ELF", "0 bytes"};
	static const char *const enoent[] = {"No such file"};
	static const char *const dir[] = {"not a regular file"};
	(void)state;

	expect_open_error(write_file("empty", "", 0), ENOEXEC, empty, N(empty));
	expect_open_error(write_file("script", text, sizeof(text) - 1), ENOEXEC, not_elf,
			  N(not_elf));
	expect_open_error(tmp_path("does-not-exist"), ENOENT, enoent, N(enoent));
	expect_open_error(tmpdir, EINVAL, dir, N(dir));
}

static void test_open_truncated(void **state)
{
	static const char *const short_hdr[] = {"20 bytes"};
	static const char *const cut[] = {"truncated"};
	static const char *const bad_phdrs[] = {"corrupt"};
	size_t len = 0;
	uint8_t *buf = read_bin_true(&len);
	(void)state;

	/* Magic right, header cut short. */
	expect_open_error(write_file("head20", buf, 20), ENOEXEC, short_hdr, N(short_hdr));
	/* The ELF header alone: program headers past the end of the file. */
	expect_open_error(write_file("head64", buf, sizeof(Elf64_Ehdr)), ENOEXEC, bad_phdrs,
			  N(bad_phdrs));
	/* Whole header, program headers, but segments past the end of the file. */
	expect_open_error(write_file("head4k", buf, 4096), ENOEXEC, cut, N(cut));
	free(buf);
}

static void test_open_wrong_arch(void **state)
{
	static const char *const arch[] = {"not an x86-64"};
	size_t len = 0;
	uint8_t *buf = read_bin_true(&len);
	Elf64_Half machine = EM_AARCH64;
	(void)state;

	/* Same bytes, but e_machine says arm64. */
	memcpy(buf + offsetof(Elf64_Ehdr, e_machine), &machine, sizeof(machine));
	expect_open_error(write_file("aarch64", buf, len), ENOEXEC, arch, N(arch));
	memcpy(buf + offsetof(Elf64_Ehdr, e_machine), &(Elf64_Half){EM_X86_64}, sizeof(machine));
	/* 32-bit class: what follows e_ident is read as an Elf32_Ehdr. */
	buf[EI_CLASS] = ELFCLASS32;
	expect_open_error(write_file("class32", buf, len), ENOEXEC, arch, N(arch));
	free(buf);
}

/* ---- /bin/true: a real ELF that is not Go ---- */

/* First line of a shell command's output, without the newline; "" if none. */
static void run(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");

	out[0] = '\0';
	assert_non_null(p);
	if (!fgets(out, (int)len, p))
		out[0] = '\0';
	out[strcspn(out, "\n")] = '\0';
	pclose(p);
}

static void test_bin_true(void **state)
{
	struct elf_image *img;
	char err[ERR_LEN], want[256];
	const char *id, *at;
	const uint8_t *tab = NULL;
	size_t size = 0;
	const struct elf_segment *segs;
	(void)state;

	assert_int_equal(elf_image_open(BIN_TRUE, &img, err), 0);
	assert_string_equal(elf_image_path(img), BIN_TRUE);
	assert_true(elf_image_is_pie(img)); /* Debian builds PIE */
	id = elf_image_build_id(img);
	assert_int_equal(strlen(id), 40); /* SHA-1 */
	for (const char *c = id; *c; c++)
		assert_true(isxdigit((unsigned char)*c) && !isupper((unsigned char)*c));
	run("readelf -n " BIN_TRUE " 2>/dev/null | grep 'Build ID:'", want, sizeof(want));
	if ((at = strstr(want, "Build ID: ")))
		assert_string_equal(id, at + strlen("Build ID: "));
	assert_string_equal(elf_image_go_version(img), "");
	assert_string_equal(elf_image_go_build_id(img), "");
	assert_true(elf_image_segments(img, &segs) >= 2);
	assert_int_equal(elf_image_find_pclntab(img, &tab, &size, err), -ENODATA);
	assert_non_null(strstr(err, BIN_TRUE));
	assert_non_null(strstr(err, "no .gopclntab"));
	elf_image_close(img);
}

/* ---- Go fixtures ---- */

static const char *fixture(const char *name)
{
	static char path[4][1024];
	static int k;
	const char *dir = getenv("RETOP_FIXTURE_DIR");
	char *p = path[k++ % 4];

	if (!dir || !*dir)
		fail_msg("RETOP_FIXTURE_DIR is not set: run `make check`, or build the Go fixtures "
			 "with tests/go/build-fixtures.sh DIR and set RETOP_FIXTURE_DIR=DIR");
	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	if (access(p, R_OK) != 0)
		fail_msg("%s: %s: build the Go fixtures (tests/go/build-fixtures.sh)", p,
			 strerror(errno));
	return p;
}

/* `go ARGS 'path'` without touching $HOME or the source tree. */
static void go_cmd(const char *args, const char *path, const char *filter, char *out, size_t len)
{
	const char *go = getenv("GO");
	char cmd[2048];

	snprintf(cmd, sizeof(cmd), "GOENV=off GOCACHE='%s/.gocache' %s %s '%s' 2>&1 %s", tmpdir,
		 go && *go ? go : "go", args, path, filter);
	run(cmd, out, len);
}

static struct elf_image *open_fixture(const char *name)
{
	struct elf_image *img;
	char err[ERR_LEN];
	int ret = elf_image_open(fixture(name), &img, err);

	if (ret)
		fail_msg("%s", err);
	return img;
}

/* Facts every Go fixture shares, checked against the toolchain. */
static void check_go_facts(struct elf_image *img, const char *pcln_name)
{
	const char *path = elf_image_path(img);
	char out[1024], err[ERR_LEN];
	const uint8_t *tab, *scn;
	size_t size, scn_size;
	uint32_t magic;

	/* `go version FILE` prints "FILE: go1.19.8". */
	go_cmd("version", path, "", out, sizeof(out));
	assert_true(strlen(out) > strlen(path) + 2);
	assert_string_equal(elf_image_go_version(img), out + strlen(path) + 2);
	assert_true(strncmp(elf_image_go_version(img), "go1.", 4) == 0);

	/* .note.go.buildid: owner "Go\0\0" (n_namesz 4), type 4. */
	go_cmd("tool buildid", path, "", out, sizeof(out));
	assert_true(strlen(out) > 20 && strchr(out, '/'));
	assert_string_equal(elf_image_go_build_id(img), out);

	if (elf_image_find_pclntab(img, &tab, &size, err) != 0)
		fail_msg("%s", err);
	scn = elf_image_section(img, pcln_name, NULL, &scn_size);
	assert_non_null(scn);
	assert_ptr_equal(tab, scn);
	assert_int_equal(size, scn_size);
	memcpy(&magic, tab, 4);
	assert_true(magic == GOPCLNTAB_MAGIC_116 || magic == GOPCLNTAB_MAGIC_118 ||
		    magic == GOPCLNTAB_MAGIC_120);
}

/* Text start, and the offset math end to end: the bytes read at the text
 * start through the segments are the first bytes of .text. */
static uint64_t text_start(struct elf_image *img)
{
	const uint8_t *tab;
	size_t size;
	uint64_t text = 0;
	char err[ERR_LEN];

	if (elf_image_find_pclntab(img, &tab, &size, err) != 0 ||
	    elf_image_text_start(img, tab, size, &text, err) != 0)
		fail_msg("%s", err);
	return text;
}

static void check_text(struct elf_image *img)
{
	uint64_t text = text_start(img), scn_addr = 0, off;
	const uint8_t *scn = elf_image_section(img, ".text", &scn_addr, NULL);
	uint8_t code[32];

	assert_non_null(scn);
	assert_true(text != 0);
	assert_int_equal(text, scn_addr); /* Go puts runtime.text first */
	assert_int_equal(elf_image_vaddr_to_offset(img, text, &off), 0);
	assert_int_equal(elf_image_read_code(img, text, code, sizeof(code)), 0);
	assert_memory_equal(code, scn, sizeof(code));
}

/* runtime.text from `go tool nm`, 0 when the binary has no symbols. */
static uint64_t nm_runtime_text(const char *path)
{
	char out[256];

	go_cmd("tool nm", path, "| awk '$3 == \"runtime.text\" { print $1 }'", out, sizeof(out));
	return strtoull(out, NULL, 16);
}

static void test_go_default(void **state)
{
	struct elf_image *img = open_fixture("payments-default");
	const struct elf_symbol *syms;
	size_t n;
	(void)state;

	assert_false(elf_image_is_pie(img));
	assert_true(elf_image_has_symtab(img));
	assert_true(elf_image_has_dwarf(img));
	check_go_facts(img, ".gopclntab");
	check_text(img);
	assert_true(nm_runtime_text(elf_image_path(img)) != 0);
	assert_int_equal(text_start(img), nm_runtime_text(elf_image_path(img)));
	assert_int_equal(elf_image_symbol_value(img, "runtime.text"), text_start(img));
	n = elf_image_func_symbols(img, &syms);
	assert_true(n > 100);
	for (size_t i = 1; i < n; i++)
		assert_true(syms[i - 1].value <= syms[i].value);
	elf_image_close(img);
}

static void test_go_stripped(void **state)
{
	struct elf_image *img = open_fixture("payments-stripped");
	const struct elf_symbol *syms;
	(void)state;

	assert_false(elf_image_has_symtab(img));
	assert_false(elf_image_has_dwarf(img));
	assert_int_equal(elf_image_func_symbols(img, &syms), 0);
	assert_int_equal(elf_image_symbol_value(img, "runtime.text"), 0);
	check_go_facts(img, ".gopclntab");
	/* No symbols: the text start comes from the runtime's module data, and
	 * is the unstripped twin's runtime.text. */
	check_text(img);
	assert_int_equal(text_start(img), nm_runtime_text(fixture("payments-default")));
	elf_image_close(img);
}

/* External linking (cgo): .text may start before runtime.text; the text
 * start is still the symbol's. */
static void test_go_cgo(void **state)
{
	struct elf_image *img = open_fixture("payments-cgo");
	(void)state;

	check_go_facts(img, ".gopclntab");
	assert_true(nm_runtime_text(elf_image_path(img)) != 0);
	assert_int_equal(text_start(img), nm_runtime_text(elf_image_path(img)));
	elf_image_close(img);
}

static void test_go_pie(void **state)
{
	struct elf_image *img = open_fixture("payments-pie");
	(void)state;

	assert_true(elf_image_is_pie(img));
	assert_true(elf_image_has_symtab(img));
	check_go_facts(img, ".data.rel.ro.gopclntab");
	check_text(img);
	assert_int_equal(text_start(img), nm_runtime_text(elf_image_path(img)));
	elf_image_close(img);
}

/* A type's name (failing calls' concrete types): Go's encoding since 1.17,
 * a flags byte, a varint length, the bytes; a pointer's shared name
 * without its extra star (tflag 2). */
static void test_type_names(void **state)
{
	/* Names at 4 (12 bytes), at 18 (a length of 128 past the end), at 21. */
	static const uint8_t types[] = "\0\0\0\0\x01\x0c*main.NotFnd\0\x80\x01x\x01\x1b";
	char buf[64];

	(void)state;
	assert_int_equal(error_types_decode(types, sizeof(types), 4, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "*main.NotFnd");
	assert_int_equal(error_types_decode(types, sizeof(types), 4, 2, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "main.NotFnd");
	/* A length past the end (a two-byte varint, 128), no name. */
	assert_int_equal(error_types_decode(types, sizeof(types), 18, 0, buf, sizeof(buf)),
			 -EINVAL);
	assert_int_equal(error_types_decode(types, sizeof(types), 99, 0, buf, sizeof(buf)),
			 -EINVAL);
	/* The target's bytes are escaped. */
	assert_int_equal(error_types_decode(types, sizeof(types), 21, 0, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "\\x1b");
}

/* The module's types, with symbols and without (the module data), and a
 * type named from them: the one an itab the symbol table names points at
 * (its second word, as BPF reads it). */
static void test_go_types(void **state)
{
	static const char *const fixtures[] = {"payments-default", "payments-stripped",
					       "payments-pie", "payments-cgo"};
	(void)state;
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		struct func_index *idx;
		char err[ERR_LEN], name[64];
		const uint8_t *tab;
		size_t size;
		uint64_t types, etypes, t = 0, itab;
		static struct error_types et;
		const uint8_t *w;

		if (funcs_load(fixture(fixtures[i]), FUNCS_NO_DWARF, &idx, err) != 0)
			fail_msg("%s", err);
		if (elf_image_find_pclntab(idx->img, &tab, &size, err) != 0)
			fail_msg("%s", err);
		assert_int_equal(elf_image_types(idx->img, tab, size, &types, &etypes), 0);
		assert_true(types && etypes > types);
		itab = elf_image_symbol_value(idx->img, "go.itab.*errors.errorString,error");
		if (!itab)
			itab =
			    elf_image_symbol_value(idx->img, "go:itab.*errors.errorString,error");
		if (itab && (w = elf_image_bytes(idx->img, itab + RETOP_ITAB_TYPE_OFFSET, 8)))
			memcpy(&t, w, 8);
		if (elf_image_has_symtab(idx->img)) {
			assert_int_equal(types, elf_image_symbol_value(idx->img, "runtime.types"));
			assert_true(t >= types && t < etypes);
			memset(&et, 0, sizeof(et));
			error_types_name(&et, idx, t + 0x1000, 0x1000, name, sizeof(name));
			assert_string_equal(name, "*errors.errorString");
			/* Outside the types: not a type of the binary's. */
			error_types_name(&et, idx, etypes + 64, 0, name, sizeof(name));
			assert_string_equal(name, "?");
		}
		funcs_free(idx);
	}
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[512];
	(void)state;

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_vaddr_exec),
	    cmocka_unit_test(test_vaddr_pie),
	    cmocka_unit_test(test_vaddr_bss_tail),
	    cmocka_unit_test(test_moduledata_found),
	    cmocka_unit_test(test_moduledata_refused),
	    cmocka_unit_test(test_open_not_elf),
	    cmocka_unit_test(test_open_truncated),
	    cmocka_unit_test(test_open_wrong_arch),
	    cmocka_unit_test(test_bin_true),
	    cmocka_unit_test(test_go_default),
	    cmocka_unit_test(test_go_stripped),
	    cmocka_unit_test(test_go_pie),
	    cmocka_unit_test(test_go_cgo),
	    cmocka_unit_test(test_type_names),
	    cmocka_unit_test(test_go_types),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
