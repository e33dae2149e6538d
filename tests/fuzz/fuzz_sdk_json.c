/* libFuzzer target: the input is an SDK response body.
 *
 * The same bytes go to the JSON-lines export parser and to the validate
 * parser.  Whatever they are, parsing must not crash, leak or read out of
 * bounds, and what is accepted must hold the promises of sdk_client.h:
 * printable names, numbers within int64, counts that add up.
 */
#include "log.h"
#include "sdk_client.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The parser's promise: no byte below 0x20 and no DEL in accepted text. */
static void check_text(const char *s, bool nonempty)
{
	if (!s || (nonempty && !*s))
		abort();
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			abort();
}

static void check_func(const struct sdk_func *f)
{
	check_text(f->name, true);
	check_text(f->file, false);
	if (f->address > INT64_MAX || f->entry > INT64_MAX || f->offset > INT64_MAX ||
	    f->size > INT64_MAX || f->line > INT64_MAX)
		abort();
}

static void check_args(const struct sdk_arg *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		check_text(a[i].name, false);
		check_text(a[i].type, true);
		if (a[i].loc > SDK_LOC_STACK)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[ERR_LEN];
	struct sdk_func *funcs;
	struct sdk_validation v;
	size_t n;

	err[0] = 'x';
	int ret = sdk_client_parse_export((const char *)data, size, &funcs, &n, err);
	if (memchr(err, '\0', ERR_LEN) == NULL)
		abort();
	if (ret < 0 && (funcs || n || !err[0]))
		abort();
	if (ret >= 0) {
		if (ret > 0 && !strstr(err, "records rejected: first: line "))
			abort();
		for (size_t i = 0; i < n; i++)
			check_func(&funcs[i]);
		sdk_funcs_free(funcs, n);
	}

	ret = sdk_client_parse_validate((const char *)data, size, &v, err);
	if (ret < 0 && (v.func.name || v.args || v.rets || !err[0]))
		abort();
	if (!ret) {
		check_func(&v.func);
		check_args(v.args, v.nargs);
		check_args(v.rets, v.nrets);
		sdk_validation_free(&v);
	}
	return 0;
}
