/* The decoder every test of code-reading proofs opens once (cmocka group
 * setup and teardown): include it after cmocka and retsites.h. */
#ifndef RETOP_TEST_DECODER_FIXTURE_H
#define RETOP_TEST_DECODER_FIXTURE_H

static struct retsites_engine *eng;

static int setup(void **state)
{
	char err[256];

	(void)state;
	return retsites_engine_open(&eng, err);
}

static int teardown(void **state)
{
	(void)state;
	retsites_engine_close(eng);
	return 0;
}

#endif
