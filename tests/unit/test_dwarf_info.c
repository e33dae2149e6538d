/* dwarf_info against the Go fixture tests/go/dwarfcheck.
 *
 * RETOP_DWARF_FIXTURE names the built fixture (the build system puts it at
 * $builddir/tests/go/bin/dwarfcheck).  The stripped variant comes from
 * RETOP_DWARF_FIXTURE_STRIPPED when set, else from "$RETOP_DWARF_FIXTURE-stripped"
 * when that exists (tests/go/build-fixtures.sh), otherwise the test rebuilds the
 * fixture with -ldflags='-s -w' from the source directory the fixture's own
 * DWARF names (so it needs `go` on PATH in that case).  Addresses and sizes
 * are checked against the fixture's .symtab, read with libelf.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "dwarf_info.h"
#include "log.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct fixture {
	const char *path;
	struct dwarf_info *info;
	char err[ERR_LEN];
	int rc;
};

static struct fixture fx;

static int group_setup(void **state)
{
	(void)state;
	fx.path = getenv("RETOP_DWARF_FIXTURE");
	if (fx.path && *fx.path)
		fx.rc = dwarf_info_load(fx.path, &fx.info, fx.err);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	dwarf_info_free(fx.info);
	fx.info = NULL;
	return 0;
}

/* Every fixture test starts here: an unset variable is a failure, never a
 * silent pass. */
static const struct dwarf_info *need_info(void)
{
	if (!fx.path || !*fx.path)
		fail_msg("RETOP_DWARF_FIXTURE is not set: build tests/go/dwarfcheck "
			 "(go build -o /tmp/dwarfcheck .) and export its path");
	if (fx.rc)
		fail_msg("dwarf_info_load(%s) = %d: %s", fx.path, fx.rc, fx.err);
	return fx.info;
}

static const struct dwarf_func *find(const struct dwarf_info *info, const char *name)
{
	for (size_t i = 0; i < info->count; i++)
		if (!strcmp(info->funcs[i].name, name))
			return &info->funcs[i];
	fail_msg("%s not found in the DWARF of %s", name, fx.path);
	return NULL;
}

static void check_param(const struct dwarf_func *f, size_t i, const char *name, const char *type,
			uint64_t size, bool is_return)
{
	if (i >= f->nparams)
		fail_msg("%s: no parameter %zu (has %zu)", f->name, i, f->nparams);
	const struct dwarf_param *p = &f->params[i];
	assert_non_null(p->name);
	assert_string_equal(p->name, name);
	assert_non_null(p->type);
	assert_string_equal(p->type, type);
	assert_int_equal(p->size, size);
	assert_int_equal(p->is_return, is_return);
}

/* Line numbers below are those of tests/go/dwarfcheck/main.go. */
static void check_decl(const struct dwarf_func *f, int line)
{
	assert_non_null(f->decl_file);
	size_t len = strlen(f->decl_file);
	if (len < 7 || strcmp(f->decl_file + len - 7, "main.go"))
		fail_msg("%s: decl_file %s does not end in main.go", f->name, f->decl_file);
	assert_int_equal(f->decl_line, line);
}

static void test_add(void **state)
{
	(void)state;
	const struct dwarf_func *f = find(need_info(), "main.Add");
	assert_int_equal(f->nparams, 3);
	check_param(f, 0, "a", "int", 8, false);
	check_param(f, 1, "b", "int", 8, false);
	check_param(f, 2, "~r0", "int", 8, true);
	check_decl(f, 19);
}

static void test_greet_scale(void **state)
{
	(void)state;
	const struct dwarf_info *info = need_info();
	const struct dwarf_func *f = find(info, "main.Greet");
	assert_int_equal(f->nparams, 4);
	check_param(f, 0, "name", "string", 16, false);
	check_param(f, 1, "times", "int", 8, false);
	check_param(f, 2, "~r0", "string", 16, true);
	check_param(f, 3, "~r1", "error", 16, true); /* typedef to an interface */
	check_decl(f, 24);

	f = find(info, "main.Scale");
	assert_int_equal(f->nparams, 3);
	check_param(f, 0, "xs", "[]float64", 24, false);
	check_param(f, 1, "f", "float64", 8, false);
	check_param(f, 2, "~r0", "[]float64", 24, true);
	check_decl(f, 32);
}

static void test_method(void **state)
{
	(void)state;
	const struct dwarf_func *f = find(need_info(), "main.(*Card).Valid");
	assert_int_equal(f->nparams, 2);
	check_param(f, 0, "c", "*main.Card", 8, false); /* pointers: no byte_size in Go */
	check_param(f, 1, "~r0", "bool", 1, true);
	check_decl(f, 41);
}

static void test_sorted_and_lookup(void **state)
{
	(void)state;
	const struct dwarf_info *info = need_info();
	assert_true(info->count > 100);
	for (size_t i = 1; i < info->count; i++)
		assert_true(info->funcs[i - 1].low_pc <= info->funcs[i].low_pc);
	const struct dwarf_func *f = find(info, "main.Add");
	assert_ptr_equal(dwarf_info_lookup(info, f->low_pc), f);
	assert_null(dwarf_info_lookup(info, f->low_pc + 1));
	assert_null(dwarf_info_lookup(info, 0));
	assert_null(dwarf_info_lookup(NULL, f->low_pc));
}

/* Compare every DWARF function that has a .symtab FUNC at its low_pc:
 * sizes must agree, and the named ones must sit exactly where .symtab says. */
static void check_symtab(Elf *e, Elf_Scn *scn, const GElf_Shdr *sh, const struct dwarf_info *info,
			 size_t *named)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	static const char *const names[] = {"main.Add", "main.Greet", "main.Scale",
					    "main.(*Card).Valid"};
	assert_non_null(d);
	for (size_t i = 0; sh->sh_entsize && i < sh->sh_size / sh->sh_entsize; i++) {
		GElf_Sym s;
		assert_non_null(gelf_getsym(d, (int)i, &s));
		if (GELF_ST_TYPE(s.st_info) != STT_FUNC || !s.st_size)
			continue;
		const char *n = elf_strptr(e, sh->sh_link, s.st_name);
		const struct dwarf_func *f = dwarf_info_lookup(info, s.st_value);
		if (f && f->high_pc - f->low_pc != s.st_size)
			fail_msg("%s: DWARF size %lu, .symtab size %lu", n,
				 (unsigned long)(f->high_pc - f->low_pc), (unsigned long)s.st_size);
		for (size_t k = 0; n && k < sizeof(names) / sizeof(names[0]); k++) {
			if (strcmp(n, names[k]))
				continue;
			const struct dwarf_func *g = find(info, names[k]);
			assert_int_equal(g->low_pc, s.st_value);
			assert_int_equal(g->high_pc - g->low_pc, s.st_size);
			(*named)++;
		}
	}
}

static void test_matches_symtab(void **state)
{
	(void)state;
	const struct dwarf_info *info = need_info();
	size_t named = 0;
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	int fd = open(fx.path, O_RDONLY);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(e);
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		assert_non_null(gelf_getshdr(scn, &sh));
		if (sh.sh_type == SHT_SYMTAB)
			check_symtab(e, scn, &sh, info, &named);
	}
	elf_end(e);
	close(fd);
	assert_int_equal(named, 4);
}

/* The -s -w build: from the environment, or rebuilt from the source
 * directory recorded in the fixture's DWARF.  Returns a path to unlink or
 * NULL when the environment provided it. */
static char *stripped_fixture(const char **path)
{
	static char out[] = "/tmp/retop-dwarfcheck-sw-XXXXXX";
	char cmd[2048];
	static char sibling[4096];
	*path = getenv("RETOP_DWARF_FIXTURE_STRIPPED");
	if (*path && **path)
		return NULL;
	/* tests/go/build-fixtures.sh writes it next to the fixture. */
	snprintf(sibling, sizeof(sibling), "%s-stripped", need_info() ? fx.path : "");
	if (access(sibling, R_OK) == 0) {
		*path = sibling;
		return NULL;
	}
	const struct dwarf_func *f = find(need_info(), "main.main");
	if (!f->decl_file || f->decl_file[0] != '/')
		fail_msg("set RETOP_DWARF_FIXTURE_STRIPPED: the fixture's DWARF gives no "
			 "absolute source path to rebuild it with -ldflags='-s -w'");
	char *dir = strdup(f->decl_file);
	assert_non_null(dir);
	int fd = mkstemp(out);
	assert_true(fd >= 0);
	close(fd);
	snprintf(cmd, sizeof(cmd), "cd '%s' && go build -ldflags='-s -w' -o '%s' . 2>&1",
		 dirname(dir), out);
	free(dir);
	if (system(cmd) != 0) {
		unlink(out);
		fail_msg("could not run: %s (need go on PATH, or set "
			 "RETOP_DWARF_FIXTURE_STRIPPED)", cmd);
	}
	*path = out;
	return out;
}

static void test_stripped(void **state)
{
	(void)state;
	const char *path;
	char err[ERR_LEN] = "";
	struct dwarf_info *info = (struct dwarf_info *)1;
	char *tmp = stripped_fixture(&path);
	int rc = dwarf_info_load(path, &info, err);
	if (tmp)
		unlink(tmp);
	assert_int_equal(rc, -ENODATA);
	assert_null(info);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "no DWARF"));
}

static void test_missing_file(void **state)
{
	(void)state;
	char err[ERR_LEN] = "";
	struct dwarf_info *info = NULL;
	const char *path = "/nonexistent/retop-dwarf-test";
	assert_int_equal(dwarf_info_load(path, &info, err), -ENOENT);
	assert_null(info);
	assert_non_null(strstr(err, path));
	assert_non_null(strstr(err, "cannot open"));
	/* A NULL error buffer is allowed. */
	assert_int_equal(dwarf_info_load(path, &info, NULL), -ENOENT);
}

static char *write_temp(const void *data, size_t len)
{
	static char path[] = "/tmp/retop-dwarf-test-XXXXXX";
	strcpy(path + sizeof(path) - 7, "XXXXXX");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
	return path;
}

static void test_not_elf(void **state)
{
	(void)state;
	char err[ERR_LEN] = "";
	struct dwarf_info *info = NULL;
	const char text[] = "this is not an executable\n";
	char *path = write_temp(text, sizeof(text) - 1);
	int rc = dwarf_info_load(path, &info, err);
	unlink(path);
	assert_int_equal(rc, -ENOEXEC);
	assert_null(info);
	assert_non_null(strstr(err, "not an ELF file"));
	/* Empty file: shorter than the magic. */
	path = write_temp("", 0);
	rc = dwarf_info_load(path, &info, err);
	unlink(path);
	assert_int_equal(rc, -ENOEXEC);
}

/* The fixture cut short at several places: an error with a message, no
 * crash (valgrind / ASan catch the rest). */
static void test_truncated(void **state)
{
	(void)state;
	need_info();
	static const size_t cuts[] = {16, 64, 4096, 200000, 1200000};
	FILE *in = fopen(fx.path, "rb");
	assert_non_null(in);
	char *buf = malloc(cuts[4]);
	assert_non_null(buf);
	size_t got = fread(buf, 1, cuts[4], in);
	fclose(in);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]) && cuts[i] <= got; i++) {
		char err[ERR_LEN] = "";
		struct dwarf_info *info = NULL;
		char *path = write_temp(buf, cuts[i]);
		int rc = dwarf_info_load(path, &info, err);
		unlink(path);
		if (rc == 0) { /* a cut past all DWARF may still load */
			dwarf_info_free(info);
			continue;
		}
		assert_true(rc < 0);
		assert_null(info);
		assert_true(strlen(err) > 0);
	}
	free(buf);
}

/* File offset and size of the fixture's .debug_info. */
static void find_debug_info(const char *path, size_t *off, size_t *size)
{
	assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	assert_non_null(e);
	assert_int_equal(elf_getshdrstrndx(e, &shstrndx), 0);
	*off = *size = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		assert_non_null(gelf_getshdr(scn, &sh));
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, ".debug_info")) {
			*off = sh.sh_offset;
			*size = sh.sh_size;
		}
	}
	elf_end(e);
	close(fd);
	assert_true(*size > 256);
}

/* Garbage inside the compressed .debug_info: zlib or DWARF decoding must
 * fail with a message, or (if the damage lands somewhere harmless) load. */
static void test_corrupt_debug_info(void **state)
{
	(void)state;
	need_info();
	size_t off, size;
	struct stat st;
	find_debug_info(fx.path, &off, &size);
	assert_int_equal(stat(fx.path, &st), 0);
	char *buf = malloc((size_t)st.st_size);
	assert_non_null(buf);
	FILE *in = fopen(fx.path, "rb");
	assert_non_null(in);
	assert_int_equal(fread(buf, 1, (size_t)st.st_size, in), (size_t)st.st_size);
	fclose(in);
	static const double where[] = {0.0, 0.3, 0.9};
	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		char *copy = malloc((size_t)st.st_size), err[ERR_LEN] = "";
		struct dwarf_info *info = NULL;
		assert_non_null(copy);
		memcpy(copy, buf, (size_t)st.st_size);
		/* Skip the 24-byte Elf64_Chdr at 0.0 so the header stays valid. */
		memset(copy + off + 24 + (size_t)(where[i] * (double)(size - 100)), 0xa5, 64);
		char *path = write_temp(copy, (size_t)st.st_size);
		free(copy);
		int rc = dwarf_info_load(path, &info, err);
		unlink(path);
		if (rc == 0) {
			dwarf_info_free(info);
			continue;
		}
		assert_true(rc < 0);
		assert_null(info);
		assert_non_null(strstr(err, "retop-dwarf-test-"));
	}
	free(buf);
}

/* gcc's DWARF 5 in an externally linked cgo build (payments-cgo from
 * tests/go/build-fixtures.sh) uses DW_FORM_implicit_const: it loads without
 * an error, and a C function's declaration is the one in Go's own source. */
static void test_cgo_dwarf5(void **state)
{
	(void)state;
	const char *dir = getenv("RETOP_FIXTURE_DIR"), *go = getenv("GO");
	char path[4096], cmd[8192], out[4096] = "", err[ERR_LEN] = "";
	struct dwarf_info *info = NULL;
	FILE *p;

	if (!dir || !*dir)
		fail_msg("RETOP_FIXTURE_DIR is not set: run through make check");
	snprintf(path, sizeof(path), "%s/payments-cgo", dir);
	/* The fixture must exercise the form, or this test proves nothing. */
	snprintf(cmd, sizeof(cmd), "readelf --debug-dump=abbrev '%s' | grep -c implicit_const",
		 path);
	assert_non_null(p = popen(cmd, "r"));
	assert_non_null(fgets(out, sizeof(out), p));
	pclose(p);
	if (atoi(out) == 0)
		fail_msg("%s has no DW_FORM_implicit_const: gcc no longer emits it", path);
	if (dwarf_info_load(path, &info, err) != 0)
		fail_msg("dwarf_info_load(%s): %s", path, err);
	const struct dwarf_func *f = NULL;
	for (size_t i = 0; i < info->count && !f; i++)
		if (!strcmp(info->funcs[i].name, "x_cgo_notify_runtime_init_done"))
			f = &info->funcs[i];
	assert_non_null(f);
	assert_non_null(f->decl_file);
	assert_non_null(strstr(f->decl_file, "runtime/cgo/gcc_libinit.c"));
	snprintf(cmd, sizeof(cmd),
		 "grep -n '^x_cgo_notify_runtime_init_done(' "
		 "\"$(GOENV=off %s env GOROOT)/src/runtime/cgo/gcc_libinit.c\" | cut -d: -f1",
		 go && *go ? go : "go");
	assert_non_null(p = popen(cmd, "r"));
	out[0] = '\0';
	if (!fgets(out, sizeof(out), p))
		out[0] = '\0';
	pclose(p);
	assert_true(atoi(out) > 0);
	assert_int_equal(f->decl_line, atoi(out));
	dwarf_info_free(info);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add),
		cmocka_unit_test(test_greet_scale),
		cmocka_unit_test(test_method),
		cmocka_unit_test(test_sorted_and_lookup),
		cmocka_unit_test(test_matches_symtab),
		cmocka_unit_test(test_stripped),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_corrupt_debug_info),
		cmocka_unit_test(test_cgo_dwarf5),
	};
	return cmocka_run_group_tests_name("dwarf_info", tests, group_setup, group_teardown);
}
