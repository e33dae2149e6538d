#include "listing.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "funcs_inline.h"
#include "funcs_match.h"
#include "interlock.h"
#include "log.h"

/* One JSON line, written into a buffer reused from line to line: json-c
 * objects built and printed for every function took a fifth of the CPU
 * time of prometheus's full listing.  json-c still escapes every string
 * that needs it, so the bytes are the ones it would print. */
struct line_buf {
	char *p;
	size_t len, cap;
	bool oom;
};

/* Bytes of lines held before they are written. */
#define LISTING_FLUSH (256u << 10)

static bool line_grow(struct line_buf *b, size_t n)
{
	size_t ncap = b->cap ? b->cap : 1024;

	while (ncap < b->len + n)
		ncap *= 2;
	char *p = realloc(b->p, ncap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = ncap;
	return true;
}

/* Inline: a line is some 25 pieces, most of them literals, whose copies
 * the compiler then makes a few moves each. */
static inline void line_raw(struct line_buf *b, const char *s, size_t n)
{
	if (!b->oom && (b->len + n <= b->cap || line_grow(b, n))) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
	}
}

#define line_lit(b, s) line_raw(b, s, sizeof(s) - 1)

static void line_u64(struct line_buf *b, uint64_t v)
{
	char tmp[20];
	size_t n = 0;

	do
		tmp[sizeof(tmp) - ++n] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	line_raw(b, tmp + sizeof(tmp) - n, n);
}

static void line_int(struct line_buf *b, int v)
{
	if (v < 0)
		line_lit(b, "-");
	line_u64(b, v < 0 ? -(uint64_t)(int64_t)v : (uint64_t)v);
}

/* A JSON string: as is when nothing in it needs escaping (almost every
 * name and file), else as json-c writes it. */
static void line_str(struct line_buf *b, const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	struct json_object *o;

	while (*c >= 0x20 && *c != '"' && *c != '\\')
		c++;
	if (*c == '\0') {
		line_lit(b, "\"");
		line_raw(b, s, (size_t)((const char *)c - s));
		line_lit(b, "\"");
		return;
	}
	if (!(o = json_object_new_string(s))) {
		b->oom = true;
		return;
	}
	size_t n;
	const char *text = json_object_to_json_string_length(
	    o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &n);
	if (text)
		line_raw(b, text, n);
	else
		b->oom = true;
	json_object_put(o);
}

/* The `retop -l -o json` object for one function (a contract: man retop),
 * RET sites resolved first, on one line appended to b.  -ENOMEM when the
 * line could not be built (b then ends at the line before). */
static int listing_func_json(struct line_buf *b, struct func_index *idx,
			     const struct interlock_opts *judge, struct func_info *f)
{
	char err[ERR_LEN];
	bool ok = interlock_judge(idx, f, judge, err) == 0;
	size_t start = b->len;

	if (!ok)
		log_debug("listing", "%s", err);
	line_lit(b, "{\"name\":");
	line_str(b, f->name);
	line_lit(b, ",\"entry\":");
	line_u64(b, f->entry);
	line_lit(b, ",\"file_offset\":");
	line_u64(b, f->file_offset);
	line_lit(b, ",\"size\":");
	line_u64(b, f->size);
	line_lit(b, ",\"file\":");
	if (f->file)
		line_str(b, f->file);
	else
		line_lit(b, "null");
	line_lit(b, ",\"line\":");
	line_int(b, f->line);
	line_lit(b, ",\"source\":");
	line_str(b, func_source_name(f->source));
	line_lit(b, ",\"ret_sites\":[");
	for (size_t i = 0; ok && i < f->rets.count; i++) {
		if (i)
			line_lit(b, ",");
		line_lit(b, "{\"offset\":");
		line_u64(b, retsites_get(&f->rets, i)->offset);
		line_lit(b, ",\"line\":");
		line_int(b, retsites_get(&f->rets, i)->line);
		line_lit(b, "}");
	}
	line_lit(b, "],\"entry_probe\":");
	line_u64(b, ok ? f->entry_probe_off : 0);
	/* Whether calls can be counted at the entry alone (entry_count.h):
	 * over budget, such a function stays exact. */
	line_lit(b, ",\"counts_at_entry\":");
	if (ok && f->entry_counts_calls)
		line_lit(b, "true");
	else
		line_lit(b, "false");
	/* Sites where the compiler inlined it (null: the binary's inline
	 * trees were not read); inline_only: it has no code of its own. */
	line_lit(b, ",\"inlined_sites\":");
	if (idx->inl_known)
		line_u64(b, f->inlined_sites);
	else
		line_lit(b, "null");
	line_lit(b, ",\"inline_only\":");
	if (f->inline_only)
		line_lit(b, "true");
	else
		line_lit(b, "false");
	line_lit(b, ",\"traceable\":");
	line_str(b, ok ? traceable_name(f->rets.traceable) : "no");
	line_lit(b, ",\"reason\":");
	line_str(b, ok ? retsites_reason(&f->rets) : err);
	line_lit(b, "}\n");
	if (!b->oom)
		return 0;
	b->len = start;
	return -ENOMEM;
}

static void listing_text_header(FILE *out)
{
	fprintf(out, "%-18s %7s %4s %5s %-10s %-7s %s\n", "ENTRY", "SIZE", "RETS", "INL", "TRACE",
		"SOURCE", "FUNCTION");
}

static void listing_text_row(FILE *out, struct func_index *idx, const struct interlock_opts *judge,
			     struct func_info *f)
{
	char err[ERR_LEN];
	bool ok = interlock_judge(idx, f, judge, err) == 0;
	const char *trace = ok ? traceable_name(f->rets.traceable) : "no";
	const char *reason = ok ? retsites_reason(&f->rets) : err;

	char inl[12] = "-";

	if (idx->inl_known)
		snprintf(inl, sizeof(inl), "%u", f->inlined_sites);
	if (f->inline_only)
		fprintf(out, "%-18s", "(inline-only)");
	else
		fprintf(out, "0x%-16llx", (unsigned long long)f->entry);
	fprintf(out, " %7llu %4u %5s %-10s %-7s %s", (unsigned long long)f->size,
		ok ? f->rets.count : 0, inl, trace, func_source_name(f->source), f->name);
	if (f->file) {
		const char *base = strrchr(f->file, '/');
		fprintf(out, " (%s:%d)", base ? base + 1 : f->file, f->line);
	}
	if (reason[0])
		fprintf(out, "  [%s]", reason);
	fputc('\n', out);
}

/* The functions by name, then where each was inlined (which looks names
 * up): beside the decoders, which neither read what these write (the
 * sorted names, inlined_sites, the inline-only rows) nor write what they
 * read (names and entries). */
static void *listing_names(void *idx)
{
	funcs_by_name(idx);
	funcs_inline_scan(idx);
	return NULL;
}

/* Every function by name, the inline-only ones among them (both lists are
 * sorted by name). */
static struct func_info **listing_all(struct func_index *idx, size_t *n)
{
	struct func_info *const *by_name = funcs_by_name(idx);
	size_t i = 0, j = 0, k = 0;
	struct func_info **all;

	*n = idx->count + idx->inl_only_count;
	if (!by_name || !(all = calloc(*n ? *n : 1, sizeof(*all))))
		return NULL;
	while (i < idx->count || j < idx->inl_only_count) {
		if (j == idx->inl_only_count ||
		    (i < idx->count && strcmp(by_name[i]->name, idx->inl_only[j].name) <= 0))
			all[k++] = by_name[i++];
		else
			all[k++] = &idx->inl_only[j++];
	}
	return all;
}

long listing_print(FILE *out, struct func_index *idx, const struct interlock_opts *judge,
		   const char *pattern, bool json)
{
	struct func_info **all = NULL;
	struct func_info **matches = NULL;
	struct line_buf lines = {0};
	pthread_t sorter;
	bool sorting = false;
	size_t n;

	if (pattern) {
		/* The inline-only functions match too. */
		funcs_inline_scan(idx);
		n = funcs_match(idx, pattern, &matches);
		if (!matches)
			return -ENOMEM;
	} else {
		/* Every function: its name and inline facts read while the
		 * others decode. */
		n = idx->count;
		sorting = n > 64 && pthread_create(&sorter, NULL, listing_names, idx) == 0;
		if (!sorting)
			funcs_inline_scan(idx);
	}
	if (n > 64)
		interlock_judge_all(idx, judge, (unsigned)sysconf(_SC_NPROCESSORS_ONLN));
	if (sorting)
		pthread_join(sorter, NULL);
	if (!pattern && !(all = listing_all(idx, &n)))
		return -ENOMEM;
	if (!json && n > 0)
		listing_text_header(out);
	for (size_t i = 0; i < n; i++) {
		struct func_info *f = pattern ? matches[i] : all[i];
		if (!json) {
			listing_text_row(out, idx, judge, f);
			continue;
		}
		int ret = listing_func_json(&lines, idx, judge, f);
		/* Lines go out LISTING_FLUSH bytes at a time: written one by
		 * one, through stdio's 4 KiB buffer, 25 MB of prometheus's
		 * lines took 6,000 write calls. */
		if (ret || lines.len >= LISTING_FLUSH || i + 1 == n) {
			fwrite(lines.p, 1, lines.len, out);
			lines.len = 0;
		}
		if (ret) {
			free(lines.p);
			free(matches);
			free(all);
			return -ENOMEM;
		}
	}
	free(lines.p);
	free(matches);
	free(all);
	return (long)n;
}
