/* The time split in the batch faces (snapshot.c): JSON and text. */
#ifndef RETOP_SNAPSHOT_SPLIT_H
#define RETOP_SNAPSHOT_SPLIT_H

#include <json-c/json.h>
#include <stdio.h>

#include "snapshot.h"

/* A function's "time_split" (NULL: the split is off) and the snapshot's. */
struct json_object *snapshot_split_func_json(const struct snapshot_func *f);
struct json_object *snapshot_split_json(const struct snapshot *snap);
/* The lines under a function's text row; the header's line when it is off. */
void snapshot_split_text(FILE *out, const struct snapshot_func *f);
void snapshot_split_text_header(FILE *out, const struct snapshot *snap);

#endif
