#include "listing.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

struct json_object *listing_func_json(struct func_index *idx, struct func_info *f)
{
	struct json_object *o = json_object_new_object(), *sites = json_object_new_array();
	char err[ERR_LEN];

	if (!o || !sites) {
		json_object_put(o);
		json_object_put(sites);
		return NULL;
	}
	if (funcs_resolve_rets(idx, f, err) != 0)
		log_debug("listing", "%s", err);
	json_object_object_add(o, "name", json_object_new_string(f->name));
	json_object_object_add(o, "entry", json_object_new_uint64(f->entry));
	json_object_object_add(o, "file_offset", json_object_new_uint64(f->file_offset));
	json_object_object_add(o, "size", json_object_new_uint64(f->size));
	json_object_object_add(o, "file", f->file ? json_object_new_string(f->file) : NULL);
	json_object_object_add(o, "line", json_object_new_int(f->line));
	json_object_object_add(o, "source", json_object_new_string(func_source_name(f->source)));
	for (size_t i = 0; f->rets_resolved && i < f->rets.count; i++) {
		struct json_object *s = json_object_new_object();
		json_object_object_add(s, "offset", json_object_new_uint64(f->rets.offsets[i]));
		json_object_object_add(s, "line", json_object_new_int(f->ret_lines[i]));
		json_object_array_add(sites, s);
	}
	json_object_object_add(o, "ret_sites", sites);
	if (f->rets_resolved) {
		json_object_object_add(o, "traceable",
				       json_object_new_string(traceable_name(f->rets.traceable)));
		json_object_object_add(o, "reason", json_object_new_string(f->rets.reason));
	} else {
		json_object_object_add(o, "traceable", json_object_new_string("no"));
		json_object_object_add(o, "reason", json_object_new_string(err));
	}
	return o;
}

static void listing_text_header(FILE *out)
{
	fprintf(out, "%-18s %7s %4s %-10s %-7s %s\n", "ENTRY", "SIZE", "RETS", "TRACE", "SOURCE",
		"FUNCTION");
}

static void listing_text_row(FILE *out, struct func_index *idx, struct func_info *f)
{
	char err[ERR_LEN];
	bool ok = funcs_resolve_rets(idx, f, err) == 0;
	const char *trace = ok ? traceable_name(f->rets.traceable) : "no";
	const char *reason = ok ? f->rets.reason : err;

	fprintf(out, "0x%-16llx %7llu %4zu %-10s %-7s %s", (unsigned long long)f->entry,
		(unsigned long long)f->size, ok ? f->rets.count : 0, trace,
		func_source_name(f->source), f->name);
	if (f->file) {
		const char *base = strrchr(f->file, '/');
		fprintf(out, " (%s:%d)", base ? base + 1 : f->file, f->line);
	}
	if (reason[0])
		fprintf(out, "  [%s]", reason);
	fputc('\n', out);
}

long listing_print(FILE *out, struct func_index *idx, const char *pattern, bool json)
{
	struct func_info **matches = NULL;
	size_t n;

	if (pattern) {
		n = funcs_match(idx, pattern, &matches);
		if (!matches)
			return -ENOMEM;
	} else {
		n = idx->count;
	}
	if (n > 64)
		funcs_resolve_all(idx, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
	if (!json && n > 0)
		listing_text_header(out);
	for (size_t i = 0; i < n; i++) {
		struct func_info *f = pattern ? matches[i] : idx->by_name[i];
		if (!json) {
			listing_text_row(out, idx, f);
			continue;
		}
		struct json_object *o = listing_func_json(idx, f);
		if (!o) {
			free(matches);
			return -ENOMEM;
		}
		fprintf(out, "%s\n",
			json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	}
	free(matches);
	return (long)n;
}
