/* Unit tests for src/dynlib.c: a library opened on demand fills its table
 * all or nothing, once, and a missing library or entry point is one line
 * naming what to install. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "dynlib.h"
#include "log.h"

/* libc is always there: its strlen stands in for a library's entry point. */
static size_t (*libc_strlen)(const char *);
static void *libc_absent;

static void test_loads_and_fills(void **state)
{
	static const struct dynlib_sym syms[] = {{"strlen", (void **)&libc_strlen}};
	static struct dynlib lib = {.soname = "libc.so.6", .package = "libc6", .syms = syms,
				    .nsyms = 1};
	char err[ERR_LEN] = "";

	assert_int_equal(dynlib_load(&lib, err), 0);
	assert_non_null(libc_strlen);
	assert_int_equal(libc_strlen("retop"), 5);
	/* Once: a second call does not open it again and still succeeds. */
	libc_strlen = NULL;
	assert_int_equal(dynlib_load(&lib, err), 0);
	assert_null(libc_strlen);
}

static void test_missing_library(void **state)
{
	static const struct dynlib_sym syms[] = {{"strlen", (void **)&libc_strlen}};
	static struct dynlib lib = {.soname = "libretop-absent.so.9", .package = "retop-absent",
				    .syms = syms, .nsyms = 1};
	char err[ERR_LEN];

	assert_int_equal(dynlib_load(&lib, err), -ENOENT);
	assert_non_null(strstr(err, "cannot load libretop-absent.so.9 (install retop-absent)"));
	assert_null(strchr(err, '\n'));
	/* The failure is remembered, with its message. */
	err[0] = '\0';
	assert_int_equal(dynlib_load(&lib, err), -ENOENT);
	assert_non_null(strstr(err, "retop-absent"));
}

static void test_missing_symbol_fills_nothing(void **state)
{
	static size_t (*first)(const char *);
	static const struct dynlib_sym syms[] = {
		{"strlen", (void **)&first},
		{"retop_no_such_entry_point", &libc_absent},
	};
	static struct dynlib lib = {.soname = "libc.so.6", .package = "libc6", .syms = syms,
				    .nsyms = 2};
	char err[ERR_LEN];

	assert_int_equal(dynlib_load(&lib, err), -ENOSYS);
	assert_string_equal(err,
			    "libc.so.6 has no retop_no_such_entry_point: install a newer libc6");
	assert_null(libc_absent);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loads_and_fills),
		cmocka_unit_test(test_missing_library),
		cmocka_unit_test(test_missing_symbol_fills_nothing),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
