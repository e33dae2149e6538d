/* Unit tests for text_escape: the target's bytes made safe for a terminal
 * and a line-oriented output; and snapshot_text_set, a status text into a
 * snapshot row's buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the four headers above first. */
#include <cmocka.h>

#include "snapshot.h"
#include "text_escape.h"

#include <stdio.h>
#include <string.h>

static const char *esc(const char *in, size_t n, bool quote)
{
	static char out[256];

	text_escape(in, n, quote, out, sizeof(out));
	return out;
}

static void test_controls(void **state)
{
	(void)state;
	/* OSC 52 (clipboard) and OSC 0 (title): no ESC or BEL gets through. */
	assert_string_equal(esc("\x1b]52;c;eA==\x07", 12, false), "\\x1b]52;c;eA==\\x07");
	/* A newline would forge a line of output. */
	assert_string_equal(esc("a\nmain.Fake 9\r\t", 15, false), "a\\nmain.Fake 9\\r\\t");
	assert_string_equal(esc("\x7f\x01", 2, false), "\\x7f\\x01");
	assert_string_equal(esc("a\\b\"c", 5, true), "a\\\\b\\\"c");
	assert_string_equal(esc("a\"c", 3, false), "a\"c");
}

static void test_utf8(void **state)
{
	(void)state;
	/* Valid UTF-8 stays as it is; C1 controls (CSI, U+009B), bytes that
	 * are not UTF-8, overlong forms and surrogates do not. */
	assert_string_equal(esc("caf\xc3\xa9 \xe2\x82\xac", 9, false), "caf\xc3\xa9 \xe2\x82\xac");
	assert_string_equal(esc("\xc2\x9b", 2, false), "\\xc2\\x9b");
	assert_string_equal(esc("\x9b", 1, false), "\\x9b");
	assert_string_equal(esc("\xc0\xaf", 2, false), "\\xc0\\xaf");
	assert_string_equal(esc("\xed\xa0\x80", 3, false), "\\xed\\xa0\\x80");
	assert_string_equal(esc("\xe2\x82", 2, false), "\\xe2\\x82");
}

static void test_room(void **state)
{
	char out[6];

	(void)state;
	/* Cut on a whole escape, always terminated. */
	assert_int_equal(text_escape("ab\x1b", 3, false, out, sizeof(out)), 2);
	assert_string_equal(out, "ab");
	assert_int_equal(text_escape("abc", 3, false, out, 1), 0);
	assert_string_equal(out, "");
}

/* A row's text is cut as snprintf "%s" cuts it, always terminated. */
static void test_snapshot_text_set(void **state)
{
	static const char *const texts[] = {"", "a", "entry-only: no RET", "0123456789"};
	char got[12], want[12];

	(void)state;
	for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++)
		for (size_t len = 1; len <= sizeof(got); len++) {
			memset(got, 'x', sizeof(got));
			snapshot_text_set(got, len, texts[t]);
			snprintf(want, len, "%s", texts[t]);
			assert_string_equal(got, want);
		}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_controls),
	    cmocka_unit_test(test_utf8),
	    cmocka_unit_test(test_room),
	    cmocka_unit_test(test_snapshot_text_set),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
