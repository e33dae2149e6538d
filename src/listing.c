#include "listing.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

/* "ret_sites" written straight into json-c's print buffer: built as
 * objects, a function with 500 RETs would hold 500 hash tables at once. */
static int sites_to_json(struct json_object *jso, struct printbuf *pb, int level, int flags)
{
	const struct func_info *f = json_object_get_userdata(jso);

	printbuf_strappend(pb, "[");
	for (size_t i = 0; f->rets_resolved && i < f->rets.count; i++)
		sprintbuf(pb, "%s{\"offset\":%" PRIu32 ",\"line\":%d}", i ? "," : "",
			  retsites_get(&f->rets, i)->offset, retsites_get(&f->rets, i)->line);
	printbuf_strappend(pb, "]");
	return 0;
}

/* Set o's members to the DESIGN.md object for one function (RET sites
 * resolved first), replacing what o held.  -ENOMEM leaves o partly set.
 * "ret_sites" is written when o is serialized: f must still be there. */
static int listing_func_json(struct json_object *o, struct func_index *idx, struct func_info *f)
{
	struct json_object *sites = json_object_new_array();
	char err[ERR_LEN];

	if (!sites)
		return -ENOMEM;
	json_object_set_serializer(sites, sites_to_json, f, NULL);
	if (funcs_resolve_rets(idx, f, err) != 0)
		log_debug("listing", "%s", err);
	json_object_object_add(o, "name", json_object_new_string(f->name));
	json_object_object_add(o, "entry", json_object_new_uint64(f->entry));
	json_object_object_add(o, "file_offset", json_object_new_uint64(f->file_offset));
	json_object_object_add(o, "size", json_object_new_uint64(f->size));
	json_object_object_add(o, "file", f->file ? json_object_new_string(f->file) : NULL);
	json_object_object_add(o, "line", json_object_new_int(f->line));
	json_object_object_add(o, "source", json_object_new_string(func_source_name(f->source)));
	json_object_object_add(o, "ret_sites", sites);
	if (f->rets_resolved) {
		json_object_object_add(o, "traceable",
				       json_object_new_string(traceable_name(f->rets.traceable)));
		json_object_object_add(o, "reason", json_object_new_string(retsites_reason(&f->rets)));
	} else {
		json_object_object_add(o, "traceable", json_object_new_string("no"));
		json_object_object_add(o, "reason", json_object_new_string(err));
	}
	return 0;
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
	const char *reason = ok ? retsites_reason(&f->rets) : err;

	fprintf(out, "0x%-16llx %7llu %4u %-10s %-7s %s", (unsigned long long)f->entry,
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
	struct func_info *const *all = NULL;
	struct func_info **matches = NULL;
	struct json_object *o = NULL;
	size_t n;

	if (pattern) {
		n = funcs_match(idx, pattern, &matches);
		if (!matches)
			return -ENOMEM;
	} else {
		n = idx->count;
		if (!(all = funcs_by_name(idx)))
			return -ENOMEM;
	}
	if (n > 64)
		funcs_resolve_all(idx, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
	if (!json && n > 0)
		listing_text_header(out);
	for (size_t i = 0; i < n; i++) {
		struct func_info *f = pattern ? matches[i] : all[i];
		if (!json) {
			listing_text_row(out, idx, f);
			continue;
		}
		/* One object for every line: json-c reuses its print buffer
		 * and the heap does not fragment over thousands of lines. */
		if ((!o && !(o = json_object_new_object())) || listing_func_json(o, idx, f)) {
			json_object_put(o);
			free(matches);
			return -ENOMEM;
		}
		fprintf(out, "%s\n",
			json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN |
								  JSON_C_TO_STRING_NOSLASHESCAPE));
	}
	json_object_put(o);
	free(matches);
	return (long)n;
}
