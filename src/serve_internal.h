/* The /metrics page's renderer, shared by its files: serve_page.c (the
 * page, its labels and families) and serve_split.c (the time split's
 * families).  Not for any other module. */
#ifndef RETOP_SERVE_INTERNAL_H
#define RETOP_SERVE_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "../bpf/retop.h"
#include "snapshot.h"

struct render {
	FILE *f;
	const struct snapshot *snap;
	char pid[24];	    /* the pid label: "1234", "all" for -x, "" for none */
	uint64_t sample_ns; /* how long session_sample() took */
	/* Every series' labels, escaped once per page rather than once per
	 * line (a function has over a hundred lines): NUL-separated, the
	 * target's at off[0], function i's at off[i + 1]. */
	char *labels;
	size_t labels_len;
	size_t off[RETOP_MAX_FUNCS + 1];
};

/* # HELP and # TYPE of a family. */
void serve_family(struct render *r, const char *name, const char *type, const char *help);
/* function="...",binary="...",pid="..." of function i. */
void serve_func_labels(struct render *r, size_t i);
/* The time split's families (serve_split.c). */
void serve_render_split(struct render *r);

#endif
