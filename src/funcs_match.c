#include "funcs_match.h"

#include <errno.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "funcs_internal.h"
#include "log.h"

/* Substring search for one pattern over every name: strstr() would
 * prepare the pattern again for each of tens of thousands of short names. */
static bool name_contains(const char *name, const char *pattern, size_t plen)
{
	for (const char *p = strchr(name, pattern[0]); p; p = strchr(p + 1, pattern[0]))
		if (!strncmp(p, pattern, plen))
			return true;
	return false;
}

static bool funcs_pattern_matches(const char *pattern, size_t plen, bool glob, const char *name)
{
	if (glob)
		return fnmatch(pattern, name, 0) == 0;
	return plen == 0 || name_contains(name, pattern, plen);
}

size_t funcs_match(const struct func_index *idx, const char *pattern, struct func_info ***out)
{
	bool glob = strpbrk(pattern, "*?[") != NULL;
	size_t n = 0, plen = strlen(pattern), all = idx->count + idx->inl_only_count;

	*out = calloc(all ? all : 1, sizeof(**out));
	if (!*out)
		return 0;
	/* In address order, then only the matches are sorted by name. */
	for (size_t i = 0; i < idx->count; i++)
		if (funcs_pattern_matches(pattern, plen, glob, idx->funcs[i].name))
			(*out)[n++] = &idx->funcs[i];
	for (size_t i = 0; i < idx->inl_only_count; i++)
		if (funcs_pattern_matches(pattern, plen, glob, idx->inl_only[i].name))
			(*out)[n++] = &idx->inl_only[i];
	qsort(*out, n, sizeof(**out), funcs_name_cmp);
	return n;
}

/* Levenshtein distance, capped: names longer than 64 compare their tails. */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned row[65];
	size_t la = strlen(a), lb = strlen(b);

	if (la > 64) {
		a += la - 64;
		la = 64;
	}
	if (lb > 64) {
		b += lb - 64;
		lb = 64;
	}
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];
		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static unsigned name_distance(const char *name, const char *query)
{
	const char *dot = strrchr(name, '.');
	unsigned d = edit_distance(name, query);

	if (dot && dot[1]) {
		unsigned short_d = edit_distance(dot + 1, query);
		if (short_d < d)
			d = short_d;
	}
	return d;
}

size_t funcs_nearest(const struct func_index *idx, const char *name, const char **out, size_t max)
{
	struct func_info *const *by_name = funcs_by_name(idx);
	unsigned best[16];
	size_t n = 0;

	if (max > 16)
		max = 16;
	for (size_t i = 0; by_name && i < idx->count && max > 0; i++) {
		const char *cand = by_name[i]->name;
		unsigned d = name_distance(cand, name);
		size_t pos = n;
		if (n > 0 && !strcmp(out[n - 1], cand))
			continue; /* duplicate names sit next to each other */
		while (pos > 0 && best[pos - 1] > d)
			pos--;
		if (pos >= max)
			continue;
		if (n < max)
			n++;
		memmove(&best[pos + 1], &best[pos], (n - 1 - pos) * sizeof(best[0]));
		memmove(&out[pos + 1], &out[pos], (n - 1 - pos) * sizeof(out[0]));
		best[pos] = d;
		out[pos] = cand;
	}
	return n;
}

int funcs_no_match(const struct func_index *idx, const char *pattern, char *err)
{
	const char *near[5];
	size_t n = funcs_nearest(idx, pattern, near, 5), len;

	err_set(err, ENOENT, "no function matches '%s'", pattern);
	for (size_t i = 0; err && i < n; i++) {
		len = strlen(err);
		snprintf(err + len, ERR_LEN - len, "%s%s", i ? ", " : "; nearest: ", near[i]);
	}
	if (err) {
		len = strlen(err);
		snprintf(err + len, ERR_LEN - len, " (list them with retop -l)");
	}
	return -ENOENT;
}
