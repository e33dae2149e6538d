/* Unit tests for src/prom_text.c: label values come out as the exposition
 * format wants them (escapes) and always valid UTF-8, whatever bytes a path
 * or a symbol name holds; seconds are exact decimals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "prom_text.h"

static char *label(const char *in)
{
	static char buf[512];
	FILE *f;

	memset(buf, 0, sizeof(buf)); /* fmemopen writes no NUL for an empty value */
	f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	prom_text_put_label(f, in);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static char *seconds(uint64_t ns)
{
	static char buf[64];
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	assert_non_null(f);
	prom_text_put_seconds(f, ns);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_escapes(void **state)
{
	(void)state;
	assert_string_equal(label("main.(*T).Run"), "main.(*T).Run");
	assert_string_equal(label("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
	assert_string_equal(label(""), "");
}

static void test_valid_utf8_kept(void **state)
{
	(void)state;
	/* 2, 3 and 4 byte sequences, the largest code point, U+FFFD itself. */
	assert_string_equal(label("/srv/caf\xc3\xa9/\xe2\x82\xac\xf0\x9f\x98\x80"),
			    "/srv/caf\xc3\xa9/\xe2\x82\xac\xf0\x9f\x98\x80");
	assert_string_equal(label("\xf4\x8f\xbf\xbf\xef\xbf\xbd"), "\xf4\x8f\xbf\xbf\xef\xbf\xbd");
}

static void test_invalid_bytes_escaped(void **state)
{
	(void)state;
	/* Latin-1 bytes, a stray continuation byte, a truncated sequence. */
	assert_string_equal(label("/tmp/b\xff\xfein"), "/tmp/b\\\\xff\\\\xfein");
	assert_string_equal(label("\x80x"), "\\\\x80x");
	assert_string_equal(label("\xe2\x82"), "\\\\xe2\\\\x82");
	/* Overlong '/', a UTF-16 surrogate, above U+10FFFF, 0xC0/0xF5 leads. */
	assert_string_equal(label("\xc0\xaf"), "\\\\xc0\\\\xaf");
	assert_string_equal(label("\xed\xa0\x80"), "\\\\xed\\\\xa0\\\\x80");
	assert_string_equal(label("\xf4\x90\x80\x80"), "\\\\xf4\\\\x90\\\\x80\\\\x80");
	assert_string_equal(label("\xf5\x80\x80\x80"), "\\\\xf5\\\\x80\\\\x80\\\\x80");
	/* A good sequence right after a bad byte is kept whole. */
	assert_string_equal(label("\xff\xc3\xa9"), "\\\\xff\xc3\xa9");
}

static void test_controls_escaped(void **state)
{
	(void)state;
	assert_string_equal(label("a\x1b[2Jb\rc\x7f"), "a\\\\x1b[2Jb\\\\x0dc\\\\x7f");
}

static void test_seconds(void **state)
{
	(void)state;
	assert_string_equal(seconds(0), "0");
	assert_string_equal(seconds(991), "0.000000991");
	assert_string_equal(seconds(2000000000), "2");
	assert_string_equal(seconds(1500000000), "1.5");
	assert_string_equal(seconds(UINT64_MAX), "18446744073.709551615");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_escapes),
	    cmocka_unit_test(test_valid_utf8_kept),
	    cmocka_unit_test(test_invalid_bytes_escaped),
	    cmocka_unit_test(test_controls_escaped),
	    cmocka_unit_test(test_seconds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
