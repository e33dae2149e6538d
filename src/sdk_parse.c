/* What the SDK sends, parsed strictly (see sdk_client.h): json-c extracts,
 * every field is type-checked and every string screened for terminal
 * control, since the SDK is untrusted; then the cross-check of a record
 * against the local function index.  The HTTP side is sdk_client.c.
 */
#define _GNU_SOURCE
#include "sdk_client.h"

#include "config.h"
#include "elf_image.h"
#include "log.h"
#include "sdk_parse.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REASON_LEN 256
#define JSON_DEPTH 10	  /* validate nests 4 deep; anything deeper is hostile */
#define MAX_NAME_LEN 4096 /* longest function or file name we accept */
#define MAX_ARGS 1024	  /* arguments or results of one function */

/* ---- strings from the SDK --------------------------------------------- */

/* Decode one UTF-8 sequence at s[0..len): its code point and length, or 0
 * when it is invalid (overlong, surrogate, truncated, > U+10FFFF). */
static size_t utf8_decode(const unsigned char *s, size_t len, uint32_t *cp)
{
	size_t n;
	uint32_t c = s[0], min;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0)
		n = 2, c &= 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		n = 3, c &= 0x0f, min = 0x800;
	else if ((c & 0xf8) == 0xf0)
		n = 4, c &= 0x07, min = 0x10000;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* Code points that must never reach a terminal: C0 and C1 controls, DEL,
 * and the bidirectional overrides that reorder what a user sees. */
static bool cp_is_control(uint32_t c)
{
	return c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && c <= 0x202e) ||
	       (c >= 0x2066 && c <= 0x2069);
}

/* NULL when s[0..len) is printable UTF-8, else what is wrong with it. */
static const char *text_problem(const char *s, size_t len, char *buf, size_t buf_len)
{
	const unsigned char *u = (const unsigned char *)s;
	uint32_t cp;

	for (size_t i = 0; i < len;) {
		size_t n = utf8_decode(u + i, len - i, &cp);
		if (!n) {
			snprintf(buf, buf_len, "invalid UTF-8 at byte %zu", i);
			return buf;
		}
		if (cp_is_control(cp)) {
			snprintf(buf, buf_len, "a control character (U+%04" PRIX32 ") at byte %zu",
				 cp, i);
			return buf;
		}
		i += n;
	}
	return NULL;
}

/* Copy untrusted text for a message: printable ASCII kept, the rest '?'. */
void sdk_text_show(char *dst, size_t dst_len, const char *s, size_t len)
{
	size_t j = 0;

	for (size_t i = 0; i < len && j + 4 < dst_len; i++) {
		unsigned char ch = (unsigned char)s[i];
		dst[j++] = ch >= 0x20 && ch < 0x7f ? (char)ch : '?';
		if (j == SDK_SHOW_LEN && i + 1 < len) {
			memcpy(dst + j, "...", 3);
			j += 3;
			break;
		}
	}
	dst[j] = '\0';
}

/* ---- typed fields ----------------------------------------------------- */

static bool get_field(struct json_object *obj, const char *key, struct json_object **val,
		      char *reason)
{
	if (!json_object_object_get_ex(obj, key, val) || !*val) {
		snprintf(reason, REASON_LEN, "missing \"%s\"", key);
		return false;
	}
	return true;
}

/* A non-negative integer that fits in 64 bits.  json-c clamps what
 * overflows to INT64_MIN/UINT64_MAX, so anything above INT64_MAX (including
 * 2^70, clamped) is refused: no address or offset is that large. */
static bool get_u64(struct json_object *obj, const char *key, uint64_t *out, char *reason)
{
	struct json_object *v;

	if (!get_field(obj, key, &v, reason))
		return false;
	if (json_object_get_type(v) != json_type_int) {
		snprintf(reason, REASON_LEN, "\"%s\" is a %s, not an integer", key,
			 json_type_to_name(json_object_get_type(v)));
		return false;
	}
	if (json_object_get_int64(v) < 0) {
		snprintf(reason, REASON_LEN, "\"%s\" is negative", key);
		return false;
	}
	*out = json_object_get_uint64(v);
	if (*out > INT64_MAX) {
		snprintf(reason, REASON_LEN, "\"%s\" is out of range", key);
		return false;
	}
	return true;
}

static bool get_bool(struct json_object *obj, const char *key, bool *out, char *reason)
{
	struct json_object *v;

	if (!get_field(obj, key, &v, reason))
		return false;
	if (json_object_get_type(v) != json_type_boolean) {
		snprintf(reason, REASON_LEN, "\"%s\" is a %s, not a boolean", key,
			 json_type_to_name(json_object_get_type(v)));
		return false;
	}
	*out = json_object_get_boolean(v);
	return true;
}

/* A printable string, copied into *out (caller frees). */
static bool get_text(struct json_object *obj, const char *key, bool nonempty, char **out,
		     char *reason)
{
	struct json_object *v;
	char why[96];

	if (!get_field(obj, key, &v, reason))
		return false;
	if (json_object_get_type(v) != json_type_string) {
		snprintf(reason, REASON_LEN, "\"%s\" is a %s, not a string", key,
			 json_type_to_name(json_object_get_type(v)));
		return false;
	}
	const char *s = json_object_get_string(v);
	size_t len = (size_t)json_object_get_string_len(v);
	if ((nonempty && !len) || len > MAX_NAME_LEN) {
		snprintf(reason, REASON_LEN, "\"%s\" is %s", key, len ? "too long" : "empty");
		return false;
	}
	if (text_problem(s, len, why, sizeof(why))) {
		snprintf(reason, REASON_LEN, "\"%s\" has %s", key, why);
		return false;
	}
	*out = strndup(s, len);
	if (!*out) {
		snprintf(reason, REASON_LEN, "out of memory");
		return false;
	}
	return true;
}

static void sdk_func_clear(struct sdk_func *f)
{
	free(f->name);
	free(f->file);
	memset(f, 0, sizeof(*f));
}

/* The facts common to an export record and a validate answer.  file and
 * line are optional for validate (RFD 075 says the runtime may not know). */
static bool func_from_json(struct json_object *o, bool validate, struct sdk_func *f, char *reason)
{
	struct json_object *v;

	memset(f, 0, sizeof(*f));
	if (!get_text(o, "name", true, &f->name, reason) ||
	    !get_u64(o, "address", &f->address, reason) ||
	    !get_u64(o, "entry", &f->entry, reason) || !get_u64(o, "offset", &f->offset, reason))
		goto fail;
	if (!validate && (!get_u64(o, "size_bytes", &f->size, reason) ||
			  !get_bool(o, "has_size", &f->has_size, reason)))
		goto fail;
	if (!validate || json_object_object_get_ex(o, "file", &v)) {
		if (!get_text(o, "file", false, &f->file, reason))
			goto fail;
	} else if (!(f->file = strdup(""))) {
		snprintf(reason, REASON_LEN, "out of memory");
		goto fail;
	}
	if ((!validate || json_object_object_get_ex(o, "line", &v)) &&
	    !get_u64(o, "line", &f->line, reason))
		goto fail;
	return true;
fail:
	sdk_func_clear(f);
	return false;
}

/* ---- JSON lines ------------------------------------------------------- */

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

struct export_state {
	struct sdk_func *funcs;
	size_t n, alloc;
	size_t rejected;
	char first[REASON_LEN + 32]; /* reason of the first rejected record */
};

static int export_push(struct export_state *st, struct sdk_func *f)
{
	if (st->n == st->alloc) {
		size_t na = st->alloc ? st->alloc * 2 : 64;
		struct sdk_func *nf = reallocarray(st->funcs, na, sizeof(*nf));
		if (!nf)
			return -ENOMEM;
		st->funcs = nf;
		st->alloc = na;
	}
	st->funcs[st->n++] = *f;
	return 0;
}

static void export_reject(struct export_state *st, size_t lineno, const char *reason)
{
	if (!st->rejected++)
		snprintf(st->first, sizeof(st->first), "line %zu: %s", lineno, reason);
}

/* Parse one non-blank line: -EBADMSG (with err) when it is not JSON at all,
 * which ends the whole export; a record that is JSON but wrong is counted. */
static int export_line(struct export_state *st, struct json_tokener *tok, const char *line,
		       size_t len, size_t lineno, char *err)
{
	char reason[REASON_LEN];
	struct sdk_func f;

	if (memchr(line, '\0', len))
		return err_set(err, EBADMSG, "SDK sent malformed JSON at line %zu: a NUL byte",
			       lineno);
	json_tokener_reset(tok);
	struct json_object *o = json_tokener_parse_ex(tok, line, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	if (!o || json_tokener_get_parse_end(tok) != len) {
		json_object_put(o);
		return err_set(err, EBADMSG, "SDK sent malformed JSON at line %zu: %s", lineno,
			       jerr == json_tokener_continue  ? "truncated"
			       : jerr == json_tokener_success ? "extra data after the object"
							      : json_tokener_error_desc(jerr));
	}
	if (json_object_get_type(o) != json_type_object) {
		export_reject(st, lineno, "not a JSON object");
	} else if (!func_from_json(o, false, &f, reason)) {
		export_reject(st, lineno, reason);
	} else if (export_push(st, &f)) {
		sdk_func_clear(&f);
		json_object_put(o);
		return err_set(err, ENOMEM, "out of memory reading the SDK export");
	}
	json_object_put(o);
	return 0;
}

static struct json_tokener *tokener_new(void)
{
	struct json_tokener *tok = json_tokener_new_ex(JSON_DEPTH);

	/* Strict: no trailing garbage, no leading zeros, no single quotes. */
	if (tok)
		json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	return tok;
}

int sdk_client_parse_export(const char *buf, size_t len, struct sdk_func **funcs, size_t *n,
			    char *err)
{
	struct export_state st = {0};
	size_t lineno = 0;
	int ret = 0;

	*funcs = NULL;
	*n = 0;
	if (len > INT32_MAX)
		return err_set(err, EFBIG, "SDK export over 2 GiB: ignored");
	struct json_tokener *tok = tokener_new();
	if (!tok)
		return err_set(err, ENOMEM, "out of memory parsing the SDK export");
	for (size_t pos = 0; pos < len && !ret;) {
		const char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len, l = end - pos;
		lineno++;
		/* JSON whitespace around a record is allowed; blank lines skipped. */
		while (l && is_blank(buf[pos + l - 1]))
			l--;
		while (l && is_blank(buf[pos]))
			pos++, l--;
		if (l)
			ret = export_line(&st, tok, buf + pos, l, lineno, err);
		pos = end + 1;
	}
	json_tokener_free(tok);
	if (!ret && st.rejected && !st.n)
		ret = err_set(err, EBADMSG,
			      "SDK sent no usable record: %zu records rejected: first: %s",
			      st.rejected, st.first);
	if (ret) {
		sdk_funcs_free(st.funcs, st.n);
		return ret;
	}
	if (st.rejected && err)
		snprintf(err, ERR_LEN, "%zu records rejected: first: %s", st.rejected, st.first);
	else if (err)
		err[0] = '\0';
	*funcs = st.funcs;
	*n = st.n;
	return st.rejected > INT32_MAX ? INT32_MAX : (int)st.rejected;
}

void sdk_funcs_free(struct sdk_func *funcs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sdk_func_clear(&funcs[i]);
	free(funcs);
}

/* ---- the validate object ---------------------------------------------- */

static bool arg_location(struct json_object *o, struct sdk_arg *a, char *reason)
{
	struct json_object *loc, *t;

	if (!json_object_object_get_ex(o, "location", &loc) || !loc)
		return true; /* optional: the export's arguments have none */
	if (json_object_get_type(loc) != json_type_object || !get_field(loc, "type", &t, reason) ||
	    json_object_get_type(t) != json_type_string) {
		snprintf(reason, REASON_LEN, "\"location\" is not an object with a \"type\"");
		return false;
	}
	const char *kind = json_object_get_string(t);
	if (!strcmp(kind, "register")) {
		a->loc = SDK_LOC_REGISTER;
		return get_u64(loc, "register", &a->loc_value, reason);
	}
	if (!strcmp(kind, "stack")) {
		a->loc = SDK_LOC_STACK;
		return get_u64(loc, "offset", &a->loc_value, reason);
	}
	if (!strcmp(kind, "registers")) {
		/* A multi-word value (string, slice, struct) in several registers:
		 * kept as its first register. */
		struct json_object *regs, *r0;
		if (!json_object_object_get_ex(loc, "registers", &regs) ||
		    json_object_get_type(regs) != json_type_array ||
		    json_object_array_length(regs) == 0 ||
		    !(r0 = json_object_array_get_idx(regs, 0)) ||
		    json_object_get_type(r0) != json_type_int || json_object_get_int64(r0) < 0) {
			snprintf(reason, REASON_LEN,
				 "\"registers\" is not a list of register numbers");
			return false;
		}
		a->loc = SDK_LOC_REGISTER;
		a->loc_value = (uint64_t)json_object_get_int64(r0);
		return true;
	}
	snprintf(reason, REASON_LEN, "unknown location type");
	return false;
}

static void args_free(struct sdk_arg *args, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(args[i].name);
		free(args[i].type);
	}
	free(args);
}

/* "arguments" or "returns": optional array of {name, type, size, location}. */
static bool args_from_json(struct json_object *o, const char *key, struct sdk_arg **out, size_t *n,
			   char *reason)
{
	struct json_object *arr;

	*out = NULL;
	*n = 0;
	if (!json_object_object_get_ex(o, key, &arr) || !arr)
		return true;
	if (json_object_get_type(arr) != json_type_array ||
	    json_object_array_length(arr) > MAX_ARGS) {
		snprintf(reason, REASON_LEN, "\"%s\" is not an array of at most %d", key, MAX_ARGS);
		return false;
	}
	size_t len = json_object_array_length(arr);
	struct sdk_arg *args = calloc(len ? len : 1, sizeof(*args));
	if (!args) {
		snprintf(reason, REASON_LEN, "out of memory");
		return false;
	}
	for (size_t i = 0; i < len; i++) {
		struct json_object *e = json_object_array_get_idx(arr, i);
		char sub[REASON_LEN] = "is not an object";
		if (json_object_get_type(e) != json_type_object ||
		    !get_text(e, "name", false, &args[i].name, sub) ||
		    !get_text(e, "type", true, &args[i].type, sub) ||
		    !get_u64(e, "size", &args[i].size, sub) || !arg_location(e, &args[i], sub)) {
			snprintf(reason, REASON_LEN, "%s[%zu]: %.200s", key, i, sub);
			args_free(args, len);
			return false;
		}
	}
	*out = args;
	*n = len;
	return true;
}

void sdk_validation_free(struct sdk_validation *v)
{
	if (!v)
		return;
	sdk_func_clear(&v->func);
	args_free(v->args, v->nargs);
	args_free(v->rets, v->nrets);
	memset(v, 0, sizeof(*v));
}

/* NULL with *code -ENOMEM or -EBADMSG and the reason in err (may be NULL). */
static struct json_object *parse_one(const char *buf, size_t len, int *code, char *err)
{
	*code = -EBADMSG;
	if (len > INT32_MAX || memchr(buf, '\0', len)) {
		err_set(err, EBADMSG, "SDK sent malformed JSON: %s",
			len > INT32_MAX ? "over 2 GiB" : "a NUL byte");
		return NULL;
	}
	struct json_tokener *tok = tokener_new();
	if (!tok) {
		*code = err_set(err, ENOMEM, "out of memory parsing the SDK response");
		return NULL;
	}
	struct json_object *o = json_tokener_parse_ex(tok, buf, (int)len);
	enum json_tokener_error jerr = json_tokener_get_error(tok);
	size_t end = json_tokener_get_parse_end(tok);
	while (o && end < len && (is_blank(buf[end]) || buf[end] == '\n'))
		end++;
	if (!o || end != len) {
		err_set(err, EBADMSG, "SDK sent malformed JSON: %s",
			jerr == json_tokener_continue  ? "truncated"
			: jerr == json_tokener_success ? "extra data after the object"
						       : json_tokener_error_desc(jerr));
		json_object_put(o);
		o = NULL;
	}
	json_tokener_free(tok);
	return o;
}

int sdk_client_parse_validate(const char *buf, size_t len, struct sdk_validation *out, char *err)
{
	char reason[REASON_LEN];
	bool ok;

	memset(out, 0, sizeof(*out));
	int code;
	struct json_object *o = parse_one(buf, len, &code, err);
	if (!o)
		return code;
	if (json_object_get_type(o) != json_type_object) {
		snprintf(reason, sizeof(reason), "not a JSON object");
		ok = false;
	} else {
		ok = func_from_json(o, true, &out->func, reason) &&
		     get_bool(o, "is_inlined", &out->is_inlined, reason) &&
		     args_from_json(o, "arguments", &out->args, &out->nargs, reason) &&
		     args_from_json(o, "returns", &out->rets, &out->nrets, reason);
	}
	json_object_put(o);
	if (!ok) {
		sdk_validation_free(out);
		return err_set(err, EBADMSG, "SDK sent an invalid validate answer: %s", reason);
	}
	if (err)
		err[0] = '\0';
	return 0;
}

/* ---- the cross-check -------------------------------------------------- */

/* Virtual address of a file offset inside an executable PT_LOAD segment:
 * the inverse of elf_image_vaddr_to_offset(), to say where an SDK offset
 * points. */
static bool offset_to_vaddr(const struct elf_image *img, uint64_t off, uint64_t *vaddr)
{
	const struct elf_segment *segs;
	size_t n = elf_image_segments(img, &segs);

	for (size_t i = 0; i < n; i++) {
		const struct elf_segment *s = &segs[i];
		if ((s->flags & 1 /* PF_X */) && off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			uint64_t back;
			/* Only trust the inverse when the forward map agrees. */
			return elf_image_vaddr_to_offset(img, *vaddr, &back) == 0 && back == off;
		}
	}
	return false;
}

/* Describe where vaddr lands: "inside main.Foo+0x13", "the entry of main.Bar". */
static void describe_vaddr(const struct func_index *idx, uint64_t vaddr, char *buf, size_t len)
{
	const struct func_info *g = funcs_by_addr(idx, vaddr);
	size_t lo = 0, hi = idx->count;

	if (!g) {
		/* Between functions: name the one it follows (padding). */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (idx->funcs[mid].entry <= vaddr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo)
			snprintf(buf, len, "past the end of %s (+0x%" PRIx64 "), not an entry",
				 idx->funcs[lo - 1].name, vaddr - idx->funcs[lo - 1].entry);
		else
			snprintf(buf, len, "before the first function, not an entry");
	} else if (g->entry == vaddr) {
		snprintf(buf, len, "the entry of %s", g->name);
	} else {
		snprintf(buf, len, "inside %s+0x%" PRIx64 ", not an entry", g->name,
			 vaddr - g->entry);
	}
}

static bool check_offset(const struct func_index *idx, const struct func_info *f,
			 const struct sdk_func *rec, char *reason)
{
	char where[REASON_LEN];
	uint64_t vaddr;

	if (rec->offset == f->file_offset)
		return true;
	if (!offset_to_vaddr(idx->img, rec->offset, &vaddr)) {
		err_set(reason, ERANGE,
			"sdk mismatch: offset 0x%" PRIx64 " of %s is outside the text segment",
			rec->offset, f->name);
		return false;
	}
	describe_vaddr(idx, vaddr, where, sizeof(where));
	err_set(reason, ERANGE, "sdk mismatch: offset 0x%" PRIx64 " is %s (%s is at 0x%" PRIx64 ")",
		rec->offset, where, f->name, f->file_offset);
	return false;
}

bool sdk_client_check(const struct func_index *idx, const struct sdk_func *rec,
		      struct func_info **local, char *reason)
{
	char name[SDK_SHOW_LEN + 8], where[REASON_LEN];
	uint64_t off;

	struct func_info *f = rec->name ? funcs_find_at(idx, rec->name, rec->entry) : NULL;
	if (local)
		*local = f;
	if (!f) {
		sdk_text_show(name, sizeof(name), rec->name ? rec->name : "",
			      rec->name ? strlen(rec->name) : 0);
		err_set(reason, ENOENT, "sdk mismatch: unknown function %s", name);
		return false;
	}
	if (rec->entry != f->entry) {
		if (elf_image_vaddr_to_offset(idx->img, rec->entry, &off))
			snprintf(where, sizeof(where), "outside the text segment");
		else
			describe_vaddr(idx, rec->entry, where, sizeof(where));
		err_set(reason, ERANGE,
			"sdk mismatch: entry 0x%" PRIx64 " is %s (%s is at 0x%" PRIx64 ")",
			rec->entry, where, f->name, f->entry);
		f->sdk_mismatch = true;
		return false;
	}
	if (!check_offset(idx, f, rec, reason)) {
		f->sdk_mismatch = true;
		return false;
	}
	if (reason)
		reason[0] = '\0';
	return true;
}

/* The SDK's own words from a 404 body, screened: "function not found". */
void sdk_parse_not_found(const char *buf, size_t len, char *out, size_t out_len)
{
	int code;
	struct json_object *o = buf ? parse_one(buf, len, &code, NULL) : NULL, *e;

	snprintf(out, out_len, "not found");
	if (o && json_object_get_type(o) == json_type_object &&
	    json_object_object_get_ex(o, "error", &e) &&
	    json_object_get_type(e) == json_type_string)
		sdk_text_show(out, out_len, json_object_get_string(e),
			      (size_t)json_object_get_string_len(e));
	json_object_put(o);
}
