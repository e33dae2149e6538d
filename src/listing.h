/* `retop -l`: the function index of a target, as text or JSON lines. */
#ifndef RETOP_LISTING_H
#define RETOP_LISTING_H

#include <stdbool.h>
#include <stdio.h>

#include "funcs.h"

struct interlock_opts;

/* Print every function matching pattern (NULL: all), each judged by the
 * interlock with judge.  Returns the number printed, or a negative errno. */
long listing_print(FILE *out, struct func_index *idx, const struct interlock_opts *judge,
		   const char *pattern, bool json);

#endif
