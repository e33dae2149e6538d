/* `retop -l`: the function index of a target, as text or JSON lines. */
#ifndef RETOP_LISTING_H
#define RETOP_LISTING_H

#include <stdbool.h>
#include <stdio.h>

#include "funcs.h"

struct json_object;

/* Set o's members to the DESIGN.md object for one function (RET sites
 * resolved first), replacing what o held.  -ENOMEM leaves o partly set.
 * "ret_sites" is written when o is serialized: f must still be there. */
int listing_func_json(struct json_object *o, struct func_index *idx, struct func_info *f);
/* Print every function matching pattern (NULL: all).  Returns the number
 * printed, or a negative errno. */
long listing_print(FILE *out, struct func_index *idx, const char *pattern, bool json);

#endif
