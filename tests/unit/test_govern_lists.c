/* Unit tests for the governor's list of function indices a look between
 * slices visits (src/govern.c), as a function leaves the session and the
 * last one takes its place (session_untrace): the list must name the same
 * functions after the move, and none past the end. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "govern.h"

static void looks(struct govern *b, size_t *look, const size_t *l, size_t nl)
{
	memset(b, 0, sizeof(*b));
	memcpy(look, l, nl * sizeof(*l));
	b->look = look;
	b->nlook = nl;
}

/* Function 2 of 5 leaves; 4, the last, becomes 2. */
static void test_middle_leaves(void **state)
{
	struct govern b;
	size_t look[8];

	(void)state;
	looks(&b, look, (size_t[]){4, 1, 2, 3}, 4);
	govern_func_moved(&b, 2, 4);
	assert_int_equal(b.nlook, 3);
	assert_int_equal(look[0], 2); /* was 4 */
	assert_int_equal(look[1], 1);
	assert_int_equal(look[2], 3);
}

/* The last one leaves: nothing moves, it is out of the list. */
static void test_last_leaves(void **state)
{
	struct govern b;
	size_t look[8];

	(void)state;
	looks(&b, look, (size_t[]){4, 1}, 2);
	govern_func_moved(&b, 4, 4);
	assert_int_equal(b.nlook, 1);
	assert_int_equal(look[0], 1);
}

/* One that was not looked at leaves: the moved one keeps being looked at. */
static void test_unlooked_leaves(void **state)
{
	struct govern b;
	size_t look[8];

	(void)state;
	looks(&b, look, (size_t[]){0, 5}, 2);
	govern_func_moved(&b, 3, 5);
	assert_int_equal(b.nlook, 2);
	assert_int_equal(look[0], 0);
	assert_int_equal(look[1], 3); /* was 5 */
}

/* Before the first slice: no lists yet. */
static void test_no_lists(void **state)
{
	struct govern b;

	(void)state;
	memset(&b, 0, sizeof(b));
	govern_func_moved(&b, 0, 0);
	assert_int_equal(b.nlook, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_middle_leaves),
	    cmocka_unit_test(test_last_leaves),
	    cmocka_unit_test(test_unlooked_leaves),
	    cmocka_unit_test(test_no_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
