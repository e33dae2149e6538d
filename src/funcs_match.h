/* Finding functions of the index by what a person types: a glob or a
 * substring of their names, and the names nearest to one that matches
 * nothing, for the message that says so. */
#ifndef RETOP_FUNCS_MATCH_H
#define RETOP_FUNCS_MATCH_H

#include <stddef.h>

#include "funcs.h"

/* Functions matching a pattern, in name order: a glob when the pattern has
 * any of *?[, otherwise a substring; the inline-only ones too once
 * funcs_inline_scan() ran.  Caller frees *out. */
size_t funcs_match(const struct func_index *idx, const char *pattern, struct func_info ***out);
/* Up to max names closest to name (edit distance on the name and its last
 * path element), for "function not found" messages. */
size_t funcs_nearest(const struct func_index *idx, const char *name, const char **out, size_t max);

/* err: "no function matches 'X'; nearest: a, b (list them with retop -l)".
 * Returns -ENOENT. */
int funcs_no_match(const struct func_index *idx, const char *pattern, char *err);

#endif
