/* Unit tests for the .gopclntab parser, on synthetic tables (gopclntab_fixture.h).
 *
 * `test_gopclntab --corpus DIR` writes the synthetic tables as fuzz seeds
 * instead of running the tests.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the four above first. */
#include <cmocka.h>

#include "gopclntab.h"
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gopclntab_fixture.h"

/* ---- varint ---- */

static void test_varint_lengths(void **state)
{
	(void)state;
	static const struct {
		uint8_t b[6];
		int len;
		uint32_t val;
	} cases[] = {
	    {{0x00}, 1, 0},
	    {{0x7f}, 1, 127},
	    {{0x80, 0x01}, 2, 128},
	    {{0xac, 0x02}, 2, 300},
	    {{0x80, 0x80, 0x01}, 3, 1u << 14},
	    {{0xff, 0xff, 0xff, 0x7f}, 4, (1u << 28) - 1},
	    {{0x80, 0x80, 0x80, 0x80, 0x01}, 5, 1u << 28},
	    {{0xff, 0xff, 0xff, 0xff, 0x0f}, 5, UINT32_MAX},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		uint32_t v = 0xdead;
		assert_int_equal(gopclntab_varint(cases[i].b, sizeof(cases[i].b), &v),
				 cases[i].len);
		assert_int_equal(v, cases[i].val);
		/* Exactly enough bytes is enough. */
		assert_int_equal(gopclntab_varint(cases[i].b, (size_t)cases[i].len, &v),
				 cases[i].len);
	}
}

static void test_varint_bad(void **state)
{
	(void)state;
	static const uint8_t cont[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
	static const uint8_t over[] = {0xff, 0xff, 0xff, 0xff, 0x10};
	uint32_t v = 7;

	assert_int_equal(gopclntab_varint(cont, 0, &v), -EINVAL);
	assert_int_equal(gopclntab_varint(cont, 1, &v), -EINVAL);
	assert_int_equal(gopclntab_varint(cont, 4, &v), -EINVAL);
	assert_int_equal(gopclntab_varint(cont, sizeof(cont), &v), -EINVAL); /* 6 bytes */
	assert_int_equal(gopclntab_varint(over, sizeof(over), &v), -EINVAL); /* > 32 bits */
	assert_int_equal(v, 7);
}

/* ---- pcvalue ---- */

/* 10 on [0,4), 12 on [4,10), 7 on [10,11), in quantum units. */
static const uint8_t pcv[] = {22, 4, 4, 6, 9, 1, 0};

static int32_t pv(const uint8_t *p, size_t n, uint64_t pc, unsigned q, int *ret)
{
	int32_t v = -99;
	*ret = gopclntab_pcvalue(p, n, 0x1000, pc, q, &v);
	return v;
}

static void test_pcvalue(void **state)
{
	(void)state;
	int ret;

	assert_int_equal(pv(pcv, sizeof(pcv), 0x1000, 1, &ret), 10);
	assert_int_equal(ret, 0);
	assert_int_equal(pv(pcv, sizeof(pcv), 0x1003, 1, &ret), 10);
	assert_int_equal(pv(pcv, sizeof(pcv), 0x1004, 1, &ret), 12);
	assert_int_equal(pv(pcv, sizeof(pcv), 0x1009, 1, &ret), 12);
	assert_int_equal(pv(pcv, sizeof(pcv), 0x100a, 1, &ret), 7); /* last pc */
	assert_int_equal(ret, 0);
	pv(pcv, sizeof(pcv), 0x100b, 1, &ret); /* past the end */
	assert_int_equal(ret, -ENOENT);
	pv(pcv, sizeof(pcv), 0xfff, 1, &ret); /* before entry */
	assert_int_equal(ret, -ENOENT);
}

static void test_pcvalue_quantum(void **state)
{
	(void)state;
	int ret;

	assert_int_equal(pv(pcv, sizeof(pcv), 0x100f, 4, &ret), 10);
	assert_int_equal(pv(pcv, sizeof(pcv), 0x1010, 4, &ret), 12);
	assert_int_equal(pv(pcv, sizeof(pcv), 0x102b, 4, &ret), 7);
	assert_int_equal(ret, 0);
	pv(pcv, sizeof(pcv), 0x102c, 4, &ret);
	assert_int_equal(ret, -ENOENT);
}

static void test_pcvalue_edges(void **state)
{
	(void)state;
	/* A zero delta on the first step is a value, not the end. */
	static const uint8_t zero_first[] = {0, 2, 2, 3, 0};
	static const uint8_t big[] = {0x80, 0x80, 0x04, 0x01, 0}; /* +32768 */
	int ret;

	assert_int_equal(pv(zero_first, sizeof(zero_first), 0x1001, 1, &ret), -1);
	assert_int_equal(ret, 0);
	assert_int_equal(pv(zero_first, sizeof(zero_first), 0x1002, 1, &ret), 0);
	assert_int_equal(pv(big, sizeof(big), 0x1000, 1, &ret), 32767);
	/* Truncated: no terminator, target past what is there. */
	pv(pcv, 6, 0x100b, 1, &ret);
	assert_int_equal(ret, -EINVAL);
	pv(pcv, 3, 0x1005, 1, &ret); /* cut inside a step */
	assert_int_equal(ret, -EINVAL);
	pv(pcv, 0, 0x1000, 1, &ret);
	assert_int_equal(ret, -EINVAL);
}

/* ---- whole tables ---- */

static struct gopclntab *open_ok(const struct buf *b, size_t size, uint64_t text)
{
	char err[ERR_LEN] = "";
	struct gopclntab *tab = NULL;
	int ret = gopclntab_open(b->b, size, text, &tab, err);

	if (ret)
		fail_msg("open: %d %s", ret, err);
	return tab;
}

static int open_err(const struct buf *b, size_t size, uint64_t text, char *err)
{
	struct gopclntab *tab = (struct gopclntab *)&tab;
	int ret = gopclntab_open(b->b, size, text, &tab, err);

	assert_null(tab);
	assert_true(ret < 0);
	return ret;
}

/* gopclntab_lines_next() answers as gopclntab_line() does at every pc of
 * every function, ascending, then again after a step back. */
static void same_lines(const struct gopclntab *tab, size_t nfunc)
{
	for (size_t i = 0; i <= nfunc; i++) {
		struct gopclntab_func f;
		struct gopclntab_lines it;
		if (gopclntab_func(tab, i, &f, NULL) != 0)
			f.entry = TEXT, f.end = TEXT + 1;
		gopclntab_lines_open(tab, i, &it);
		for (int round = 0; round < 2; round++)
			for (uint64_t pc = f.entry - 1; pc <= f.end; pc++) {
				const char *file1 = NULL, *file2 = NULL;
				int line1 = 0, line2 = 0;
				int r1 = gopclntab_line(tab, i, pc, &file1, &line1);
				assert_int_equal(gopclntab_lines_next(&it, pc, &file2, &line2), r1);
				assert_ptr_equal(file1, file2);
				assert_int_equal(line1, line2);
			}
	}
}

static void check_table(const struct spec *s, uint64_t text)
{
	struct buf b;
	struct layout l;
	char err[ERR_LEN];

	build(s, &b, &l);
	struct gopclntab *tab = open_ok(&b, l.size, text);
	assert_int_equal(gopclntab_magic(tab), s->magic);
	assert_int_equal(gopclntab_count(tab), 3);
	for (size_t i = 0; i < 3; i++) {
		const struct tfunc *tf = &funcs3[i];
		struct gopclntab_func f;
		uint64_t end = TEXT + (i < 2 ? funcs3[i + 1].off : END_OFF);
		const char *file = NULL;
		int line = 0;

		assert_int_equal(gopclntab_func(tab, i, &f, err), 0);
		assert_string_equal(f.name, tf->name);
		assert_true(f.name >= (const char *)b.b && f.name < (const char *)b.b + l.size);
		assert_int_equal(f.entry, TEXT + tf->off);
		assert_int_equal(f.end, end);
		assert_int_equal(f.index, i);

		assert_int_equal(gopclntab_line(tab, i, f.entry, &file, &line), 0);
		assert_string_equal(file, files[tf->cu_off + (uint32_t)tf->file]);
		assert_int_equal(line, tf->line);
		assert_int_equal(gopclntab_line(tab, i, f.entry + 4, &file, &line), 0);
		assert_int_equal(line, tf->line + 2);
		assert_int_equal(gopclntab_line(tab, i, end - 1, &file, &line), 0);
		assert_int_equal(line, tf->line + 2);
		assert_int_equal(gopclntab_line(tab, i, end, &file, &line), -ERANGE);
		assert_int_equal(gopclntab_line(tab, i, f.entry - 1, &file, &line), -ERANGE);

		assert_int_equal(gopclntab_find(tab, f.entry), (long)i);
		assert_int_equal(gopclntab_find(tab, end - 1), (long)i);
	}
	assert_int_equal(gopclntab_find(tab, TEXT - 1), -ENOENT);
	assert_int_equal(gopclntab_find(tab, TEXT + END_OFF), -ENOENT);
	assert_int_equal(gopclntab_find(tab, 0), -ENOENT);
	assert_int_equal(gopclntab_find(tab, UINT64_MAX), -ENOENT);
	struct gopclntab_func f;
	assert_int_equal(gopclntab_func(tab, 3, &f, err), -ERANGE);
	const char *file;
	int line;
	assert_int_equal(gopclntab_line(tab, 3, TEXT, &file, &line), -ERANGE);
	same_lines(tab, 3);
	gopclntab_close(tab);
}

static void test_open_116(void **state)
{
	(void)state;
	check_table(&spec116, 0); /* absolute entries: no text start needed */
	check_table(&spec116_32, 0);
}

static void test_open_118(void **state)
{
	(void)state;
	check_table(&spec118, 0);
}

static void test_open_120(void **state)
{
	(void)state;
	check_table(&spec120, 0);
	check_table(&spec120_arm, 0);
}

static void test_text_start(void **state)
{
	(void)state;
	struct spec s = spec120;
	struct buf b;
	struct layout l;
	struct gopclntab_func f;
	char err[ERR_LEN] = "";

	/* A header that disagrees with the proven text start is a lie. */
	build(&s, &b, &l);
	assert_int_equal(open_err(&b, l.size, 0x999000, err), -EINVAL);
	assert_non_null(strstr(err, "disagrees"));
	/* Agreeing, or no argument: the header's. */
	struct gopclntab *tab = open_ok(&b, l.size, TEXT);
	assert_int_equal(gopclntab_func(tab, 1, &f, err), 0);
	assert_int_equal(f.entry, TEXT + 0x40);
	gopclntab_close(tab);
	tab = open_ok(&b, l.size, 0);
	assert_int_equal(gopclntab_func(tab, 1, &f, err), 0);
	assert_int_equal(f.entry, TEXT + 0x40);
	gopclntab_close(tab);

	/* No text start in the header: the argument is used. */
	s.hdr_text = 0;
	check_table(&s, TEXT);
	build(&s, &b, &l);
	tab = open_ok(&b, l.size, 0x800000);
	assert_int_equal(gopclntab_func(tab, 2, &f, err), 0);
	assert_int_equal(f.entry, 0x800060);
	assert_int_equal(f.end, 0x800080);
	assert_int_equal(gopclntab_find(tab, 0x80005f), 1);
	gopclntab_close(tab);

	/* Neither. */
	assert_int_equal(open_err(&b, l.size, 0, err), -EINVAL);
	assert_non_null(strstr(err, "text start"));

	/* Entries (u32 offsets) past the end of the address space. */
	setn(b.b + l.text_at, UINT64_MAX - 5, 8);
	open_err(&b, l.size, 0, err);
	assert_non_null(strstr(err, "out of range"));

	/* 1.16 entries are absolute: the argument is ignored. */
	build(&spec116, &b, &l);
	tab = open_ok(&b, l.size, UINT64_MAX);
	assert_int_equal(gopclntab_func(tab, 0, &f, err), 0);
	assert_int_equal(f.entry, TEXT);
	gopclntab_close(tab);
}

static void test_bad_magic(void **state)
{
	(void)state;
	struct buf b;
	struct layout l;
	char err[ERR_LEN] = "";

	build(&spec120, &b, &l);
	set32(b.b, 0x12345678);
	assert_int_equal(open_err(&b, l.size, TEXT, err), -EINVAL);
	assert_non_null(strstr(err, "unknown magic 0x12345678"));

	set32(b.b, 0xFFFFFFFB);
	assert_int_equal(open_err(&b, l.size, TEXT, err), -ENOTSUP);
	assert_non_null(strstr(err, "0xfffffffb"));
	assert_non_null(strstr(err, "Go < 1.16"));

	/* No error buffer is fine too. */
	assert_int_equal(open_err(&b, l.size, TEXT, NULL), -ENOTSUP);
}

static void test_bad_header_bytes(void **state)
{
	(void)state;
	struct buf b;
	struct layout l;
	char err[ERR_LEN] = "";

	build(&spec118, &b, &l);
	b.b[4] = 1;
	open_err(&b, l.size, 0, err);
	assert_non_null(strstr(err, "padding"));
	build(&spec118, &b, &l);
	b.b[6] = 3;
	open_err(&b, l.size, 0, err);
	assert_non_null(strstr(err, "quantum 3"));
	build(&spec118, &b, &l);
	b.b[7] = 16;
	open_err(&b, l.size, 0, err);
	assert_non_null(strstr(err, "pointer size 16"));
}

static void test_truncated_header(void **state)
{
	(void)state;
	struct buf b;
	struct layout l;
	char err[ERR_LEN] = "";

	build(&spec120, &b, &l);
	assert_int_equal(open_err(&b, 0, TEXT, err), -EINVAL);
	assert_int_equal(open_err(&b, 7, TEXT, err), -EINVAL);
	assert_non_null(strstr(err, "too short"));
	assert_int_equal(open_err(&b, 8 + 8 * 8 - 1, TEXT, err), -EINVAL);
	assert_non_null(strstr(err, "header needs 72"));
	/* Header complete, sub-tables cut off. */
	assert_int_equal(open_err(&b, l.pcln, TEXT, err), -EINVAL);
	/* Functab complete but the last _func cut off: open is fine, func is not. */
	struct gopclntab *tab = open_ok(&b, l.func_at[2] + 8, TEXT);
	struct gopclntab_func f;
	assert_int_equal(gopclntab_func(tab, 1, &f, err), 0);
	assert_int_equal(gopclntab_func(tab, 2, &f, err), -EINVAL);
	assert_non_null(strstr(err, "function 2 data offset"));
	gopclntab_close(tab);
}

static void test_nfunc(void **state)
{
	(void)state;
	struct buf b;
	struct layout l;
	char err[ERR_LEN] = "";

	build(&spec118, &b, &l);
	setn(b.b + l.nfunc_at, (uint64_t)1 << 62, 8);
	open_err(&b, l.size, 0, err);
	assert_non_null(strstr(err, "do not fit"));
	/* Just too many for the pcln table. */
	setn(b.b + l.nfunc_at, (l.size - l.pcln) / 8 + 1, 8);
	open_err(&b, l.size, 0, err);
	assert_non_null(strstr(err, "do not fit"));
	setn(b.b + l.nfunc_at, 0, 8);
	open_err(&b, l.size, 0, err);
	assert_non_null(strstr(err, "no functions"));
	/* Fewer than built is a valid (smaller) table. */
	setn(b.b + l.nfunc_at, 2, 8);
	struct gopclntab *tab = open_ok(&b, l.size, 0);
	assert_int_equal(gopclntab_count(tab), 2);
	gopclntab_close(tab);
}

static void test_sub_offset(void **state)
{
	(void)state;
	struct buf b;
	struct layout l;
	char err[ERR_LEN] = "";

	build(&spec116, &b, &l);
	setn(b.b + l.sub_at[3], l.size + 1, 8);
	open_err(&b, l.size, 0, err);
	assert_non_null(strstr(err, "outside the table"));
	setn(b.b + l.sub_at[0], 4, 8); /* inside the header */
	open_err(&b, l.size, 0, err);
	assert_non_null(strstr(err, "outside the table"));
}

static void test_functab_order(void **state)
{
	(void)state;
	struct buf b;
	struct layout l;
	char err[ERR_LEN] = "";

	build(&spec120, &b, &l);
	set32(b.b + l.pcln + 2 * 4, 0x70); /* function 1 after function 2 */
	open_err(&b, l.size, 0, err);
	assert_non_null(strstr(err, "not ascending at function 2"));
	build(&spec116, &b, &l);
	setn(b.b + l.pcln + 6 * 8, TEXT, 8); /* end before the last entry */
	open_err(&b, l.size, 0, err);
	assert_non_null(strstr(err, "not ascending at function 3"));
}

static void test_name_bounds(void **state)
{
	(void)state;
	struct buf b;
	struct layout l;
	struct gopclntab_func f;
	char err[ERR_LEN] = "";

	build(&spec118, &b, &l);
	set32(b.b + l.func_at[1] + 4, (uint32_t)(l.cutab - l.names)); /* one past */
	struct gopclntab *tab = open_ok(&b, l.size, 0);
	assert_int_equal(gopclntab_func(tab, 1, &f, err), -EINVAL);
	assert_non_null(strstr(err, "function 1 name offset"));
	assert_int_equal(gopclntab_func(tab, 0, &f, err), 0);
	gopclntab_close(tab);

	build(&spec118, &b, &l);
	set32(b.b + l.func_at[0] + 4, 0xFFFFFFFF); /* negative int32 */
	tab = open_ok(&b, l.size, 0);
	assert_int_equal(gopclntab_func(tab, 0, &f, err), -EINVAL);
	assert_non_null(strstr(err, "outside the table"));
	gopclntab_close(tab);
}

static void test_name_unterminated(void **state)
{
	(void)state;
	struct buf b;
	struct layout l;
	struct gopclntab_func f;
	char err[ERR_LEN] = "";

	build(&spec120, &b, &l);
	/* Fill the name table's tail up to cutab: the last name runs into it. */
	memset(b.b + l.name_end - 1, 'x', l.cutab - l.name_end + 1);
	struct gopclntab *tab = open_ok(&b, l.size, 0);
	assert_int_equal(gopclntab_func(tab, 1, &f, err), 0);
	assert_int_equal(gopclntab_func(tab, 2, &f, err), -EINVAL);
	assert_non_null(strstr(err, "not terminated"));
	gopclntab_close(tab);
}

static void test_file_bounds(void **state)
{
	(void)state;
	struct buf b;
	struct layout l;
	const char *file = NULL;
	int line = 0;

	build(&spec120, &b, &l);
	set32(b.b + l.func_at[2] + 32, 2);		       /* cu_off 2 + file 1 = slot 3 of 3 */
	set32(b.b + l.cutab + 4, 0xFFFFFFFF);		       /* slot 1: "no file" */
	set32(b.b + l.cutab, (uint32_t)(l.pctab - l.filetab)); /* slot 0: past filetab */
	struct gopclntab *tab = open_ok(&b, l.size, 0);
	assert_int_equal(gopclntab_line(tab, 2, TEXT + 0x60, &file, &line), -EINVAL);
	assert_int_equal(gopclntab_line(tab, 1, TEXT + 0x40, &file, &line), -ENOENT);
	assert_int_equal(gopclntab_line(tab, 0, TEXT, &file, &line), -EINVAL);
	assert_null(file);
	same_lines(tab, 3);
	gopclntab_close(tab);

	/* Offsets into pctab out of bounds, or 0 ("no table"). */
	build(&spec120, &b, &l);
	set32(b.b + l.func_at[0] + 20, (uint32_t)(l.pcln - l.pctab));
	set32(b.b + l.func_at[1] + 24, 0);
	tab = open_ok(&b, l.size, 0);
	assert_int_equal(gopclntab_line(tab, 0, TEXT, &file, &line), -EINVAL);
	assert_int_equal(gopclntab_line(tab, 1, TEXT + 0x40, &file, &line), -ENOENT);
	assert_int_equal(gopclntab_line(tab, 2, TEXT + 0x60, &file, &line), 0);
	assert_string_equal(file, files[2]);
	same_lines(tab, 3);
	gopclntab_close(tab);
}

static void test_funcoff_bounds(void **state)
{
	(void)state;
	struct buf b;
	struct layout l;
	struct gopclntab_func f;
	char err[ERR_LEN] = "";

	build(&spec116, &b, &l);
	setn(b.b + l.pcln + 3 * 8, UINT64_MAX - 3, 8);
	struct gopclntab *tab = open_ok(&b, l.size, 0);
	assert_int_equal(gopclntab_func(tab, 1, &f, err), -EINVAL);
	assert_non_null(strstr(err, "function 1 data offset"));
	gopclntab_close(tab);
}

/* ---- corpus generator ---- */

static int write_corpus(const char *dir)
{
	static const struct {
		const char *name;
		const struct spec *s;
	} seeds[] = {
	    {"synthetic-116", &spec116},	 {"synthetic-116-32", &spec116_32},
	    {"synthetic-118", &spec118},	 {"synthetic-120", &spec120},
	    {"synthetic-120-arm", &spec120_arm},
	};
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		struct buf b;
		struct layout l;
		char path[512];

		build(seeds[i].s, &b, &l);
		snprintf(path, sizeof(path), "%s/%s", dir, seeds[i].name);
		FILE *fp = fopen(path, "wb");
		if (!fp || fwrite(b.b, 1, l.size, fp) != l.size || fclose(fp)) {
			perror(path);
			return 1;
		}
	}
	return 0;
}

/* ---- inline trees ---- */

/* go:func.* holding main.main's inline tree: two entries in the layout of
 * s's release, naming main.(*T).Add (parentPc 7) and runtime.goexit (15). */
static size_t build_gofunc(const struct spec *s, const struct layout *l, uint8_t *g)
{
	uint32_t names[2] = {(uint32_t)(strlen(funcs3[0].name) + 1),
			     (uint32_t)(strlen(funcs3[0].name) + strlen(funcs3[1].name) + 2)};
	uint32_t pcs[2] = {7, 15};
	size_t esize = s->magic == GOPCLNTAB_MAGIC_118 ? 20 : 16;

	(void)l;
	memset(g, 0, 2 * esize);
	for (int k = 0; k < 2; k++) {
		uint8_t *e = g + k * esize;
		if (s->magic == GOPCLNTAB_MAGIC_118) {
			e[0] = k ? 0 : 0xFF; /* parent: -1, then 0 */
			e[1] = k ? 0 : 0xFF;
			set32(e + 12, names[k]);
			set32(e + 16, pcs[k]);
		} else {
			set32(e + 4, names[k]);
			set32(e + 8, pcs[k]);
		}
	}
	return 2 * esize;
}

static void test_inline_tree(void **state)
{
	(void)state;
	static const struct spec *const specs[] = {&spec118, &spec120};
	for (size_t si = 0; si < 2; si++) {
		const struct spec *s = specs[si];
		struct buf b;
		struct layout l;
		uint8_t g[64];
		uint32_t n;
		struct gopclntab_inl e;

		with_inl = true;
		build(s, &b, &l);
		with_inl = false;
		size_t gsize = build_gofunc(s, &l, g);
		struct gopclntab *tab = open_ok(&b, l.size, TEXT);

		/* No go:func.* bytes: no inline facts, not "nothing inlined". */
		assert_false(gopclntab_has_inl(tab));
		assert_int_equal(gopclntab_inl_count(tab, 0, &n), -ENOTSUP);
		gopclntab_set_gofunc(tab, g, gsize);
		assert_true(gopclntab_has_inl(tab));
		assert_int_equal(gopclntab_inl_count(tab, 0, &n), 0);
		assert_int_equal(n, 2);
		assert_int_equal(gopclntab_inl_get(tab, 0, 0, &e), 0);
		assert_string_equal(e.name, "main.(*T).Add");
		assert_int_equal(e.parent_pc, 7);
		assert_int_equal(gopclntab_inl_get(tab, 0, 1, &e), 0);
		assert_string_equal(e.name, "runtime.goexit");
		assert_int_equal(e.parent_pc, 15);
		/* Functions without a tree have none. */
		assert_int_equal(gopclntab_inl_count(tab, 1, &n), 0);
		assert_int_equal(n, 0);
		/* The pc table: which entry owns each pc. */
		struct gopclntab_pciter it;
		uint64_t a, z;
		int32_t v;
		assert_int_equal(gopclntab_inl_pcdata(tab, 0, &it), 0);
		assert_int_equal(gopclntab_pciter_next(&it, &a, &z, &v), 1);
		assert_int_equal(v, -1);
		assert_int_equal(gopclntab_pciter_next(&it, &a, &z, &v), 1);
		assert_true(a == 8 && z == 16 && v == 0);
		assert_int_equal(gopclntab_inl_pcdata(tab, 1, &it), -ENOENT);
		/* A tree past the end of go:func.*: corrupt, never read. */
		gopclntab_set_gofunc(tab, g, gsize - 1);
		assert_int_equal(gopclntab_inl_count(tab, 0, &n), -EINVAL);
		assert_int_equal(gopclntab_inl_get(tab, 0, 1, &e), -ERANGE);
		/* A name outside funcnametab. */
		gopclntab_set_gofunc(tab, g, gsize);
		set32(g + (s->magic == GOPCLNTAB_MAGIC_118 ? 12 : 4), 0x7FFFFFF0);
		assert_int_equal(gopclntab_inl_get(tab, 0, 0, &e), -EINVAL);
		gopclntab_close(tab);
	}
	/* Go 1.16-1.17 hold absolute funcdata pointers: not read. */
	struct buf b;
	struct layout l;
	uint8_t g[16] = {0};
	uint32_t n;
	build(&spec116, &b, &l);
	struct gopclntab *tab = open_ok(&b, l.size, 0);
	gopclntab_set_gofunc(tab, g, sizeof(g));
	assert_int_equal(gopclntab_inl_count(tab, 0, &n), -ENOTSUP);
	gopclntab_close(tab);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--corpus"))
		return write_corpus(argv[2]);

	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_varint_lengths),
	    cmocka_unit_test(test_varint_bad),
	    cmocka_unit_test(test_pcvalue),
	    cmocka_unit_test(test_pcvalue_quantum),
	    cmocka_unit_test(test_pcvalue_edges),
	    cmocka_unit_test(test_open_116),
	    cmocka_unit_test(test_open_118),
	    cmocka_unit_test(test_open_120),
	    cmocka_unit_test(test_text_start),
	    cmocka_unit_test(test_bad_magic),
	    cmocka_unit_test(test_bad_header_bytes),
	    cmocka_unit_test(test_truncated_header),
	    cmocka_unit_test(test_nfunc),
	    cmocka_unit_test(test_sub_offset),
	    cmocka_unit_test(test_functab_order),
	    cmocka_unit_test(test_name_bounds),
	    cmocka_unit_test(test_name_unterminated),
	    cmocka_unit_test(test_file_bounds),
	    cmocka_unit_test(test_funcoff_bounds),
	    cmocka_unit_test(test_inline_tree),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
