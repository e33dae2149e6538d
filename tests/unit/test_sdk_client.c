/* Unit tests for the SDK client, against tests/sdk/hostile: a server that
 * misbehaves on request ($RETOP_SDK_HOSTILE, built from tests/sdk/hostile),
 * serving an export written here from the real index of the payments fixture
 * ($RETOP_FIXTURE_DIR/payments-default).
 *
 * Each case checks the class of status line, that the call ends in bounded
 * time (a guard against hanging, not a performance threshold) and, for the
 * cross-check, the reason.  The network-namespace case needs root.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka.h needs the four above first. */
#include <cmocka.h>

#include "funcs.h"
#include "log.h"
#include "sdk_client.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sdk_fixture.h"

/* ---- modes ---- */

static void test_good_export(void **state)
{
	struct result r;
	char reason[ERR_LEN];

	(void)state;
	export_from("good", &r);
	assert_int_equal(r.ret, 0);
	assert_string_equal(r.err, "");
	assert_int_equal(r.n, fx.nexport);
	for (size_t i = 0; i < r.n; i++) {
		struct func_info *f;
		if (!sdk_client_check(fx.idx, &r.funcs[i], &f, reason))
			fail_msg("%s: %s", r.funcs[i].name, reason);
		assert_string_equal(reason, "");
		assert_ptr_equal(f, funcs_find(fx.idx, r.funcs[i].name));
	}
	assert_int_equal(r.stats.attempts, 1);
	sdk_funcs_free(r.funcs, r.n);
}

static void test_good_validate(void **state)
{
	struct sdk_client *c = client_for("good");
	struct sdk_validation v;
	char err[ERR_LEN], reason[ERR_LEN];

	(void)state;
	/* The name has '(', '*' and ')': it only arrives if it is escaped. */
	assert_int_equal(sdk_client_validate(c, fx.sample, &v, err), 0);
	assert_string_equal(v.func.name, fx.sample);
	assert_false(v.is_inlined);
	assert_int_equal(v.nargs, 2);
	assert_int_equal(v.args[0].loc, SDK_LOC_REGISTER);
	assert_int_equal(v.args[1].loc, SDK_LOC_STACK);
	assert_int_equal(v.args[1].loc_value, 8);
	assert_int_equal(v.nrets, 1);
	assert_true(sdk_client_check(fx.idx, &v.func, NULL, reason));
	sdk_validation_free(&v);

	assert_int_equal(sdk_client_validate(c, "main.noSuchFunction&x=1", &v, err), -ENOENT);
	assert_non_null(
	    strstr(err, "SDK does not know main.noSuchFunction&x=1 (404: function not found)"));
	assert_null(v.func.name);
	sdk_client_close(c);
}

static void test_unreachable(void **state)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof(sa);
	char url[64], err[ERR_LEN];
	struct sdk_client *c;
	struct sdk_func *funcs;
	struct sdk_client_stats st;
	size_t n;

	(void)state;
	/* A port that was just free: nothing listens there. */
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
	close(fd);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", ntohs(sa.sin_port));
	assert_int_equal(sdk_client_open(url, NULL, &c, err), 0);
	double t0 = now_s();
	assert_int_equal(sdk_client_export(c, &funcs, &n, err), -ECONNREFUSED);
	assert_true(now_s() - t0 < HANG_LIMIT_S);
	char want[256];
	snprintf(want, sizeof(want),
		 "SDK at %s unreachable (Connection refused): using the binary's own tables", url);
	assert_string_equal(err, want);
	sdk_client_last_stats(c, &st);
	assert_int_equal(st.attempts, 3); /* connection errors are retried */
	sdk_client_close(c);
}

static void test_malformed(void **state)
{
	struct result r;

	(void)state;
	export_from("malformed", &r);
	assert_int_equal(r.ret, -EBADMSG);
	assert_err_has(&r, "SDK sent malformed JSON at line 12: ");
	export_from("truncated", &r);
	assert_int_equal(r.ret, -EBADMSG);
	assert_err_has(&r, "SDK sent malformed JSON at line ");
	assert_err_has(&r, ": truncated");
	export_from("garbage", &r);
	assert_int_equal(r.ret, -EBADMSG);
	assert_err_has(&r, "SDK sent malformed JSON at line 1: ");

	struct sdk_client *c = client_for("malformed");
	struct sdk_validation v;
	assert_int_equal(sdk_client_validate(c, fx.sample, &v, r.err), -EBADMSG);
	assert_err_has(&r, "SDK sent malformed JSON: truncated");
	sdk_client_close(c);
}

static void test_wrongtypes(void **state)
{
	struct result r;

	(void)state;
	export_from("wrongtypes", &r);
	assert_int_equal(r.ret, 9);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.funcs[0].name, "main.good");
	assert_string_equal(r.err,
			    "9 records rejected: first: line 1: \"name\" is a int, not a string");
	sdk_funcs_free(r.funcs, r.n);

	struct sdk_client *c = client_for("wrongtypes");
	struct sdk_validation v;
	assert_int_equal(sdk_client_validate(c, fx.sample, &v, r.err), -EBADMSG);
	assert_err_has(
	    &r, "SDK sent an invalid validate answer: \"offset\" is a string, not an integer");
	sdk_client_close(c);
}

/* Each faulty line alone, for the reason it gets. */
static void test_wrongtypes_reasons(void **state)
{
	static const struct {
		const char *field_value, *reason;
	} cases[] = {
	    {"\"offset\":\"4096\"", "\"offset\" is a string, not an integer"},
	    {"\"offset\":-1", "\"offset\" is negative"},
	    {"\"offset\":4096.0", "\"offset\" is a double, not an integer"},
	    {"\"offset\":1e3", "\"offset\" is a double, not an integer"},
	    {"\"offset\":1180591620717411303424", "\"offset\" is out of range"},
	    {"\"offset\":18446744073709551615", "\"offset\" is out of range"},
	    {"\"offset\":-1180591620717411303424", "\"offset\" is negative"},
	    {"\"offset\":null", "missing \"offset\""},
	    {"\"offset\":true", "\"offset\" is a boolean, not an integer"},
	};
	char buf[512], err[ERR_LEN], want[ERR_LEN];
	struct sdk_func *funcs;
	size_t n;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int len = snprintf(
		    buf, sizeof(buf),
		    "\n{\"name\":\"main.f\",\"address\":1,\"entry\":1,%s,"
		    "\"size_bytes\":1,\"has_size\":true,\"file\":\"a.go\",\"line\":1}\n"
		    "{\"name\":\"main.g\",\"address\":1,\"entry\":1,\"offset\":9223372036854775807,"
		    "\"size_bytes\":1,\"has_size\":false,\"file\":\"\",\"line\":0}\r\n",
		    cases[i].field_value);
		assert_int_equal(sdk_client_parse_export(buf, (size_t)len, &funcs, &n, err), 1);
		snprintf(want, sizeof(want), "1 records rejected: first: line 2: %s",
			 cases[i].reason);
		assert_string_equal(err, want);
		assert_int_equal(n, 1);
		assert_int_equal(funcs[0].offset, INT64_MAX);
		sdk_funcs_free(funcs, n);
	}
	/* Nothing usable at all is an error, not an empty success. */
	assert_int_equal(sdk_client_parse_export("{}\n", 3, &funcs, &n, err), -EBADMSG);
	assert_string_equal(err, "SDK sent no usable record: 1 records rejected: first: line 1: "
				 "missing \"name\"");
	/* An empty export is a valid empty answer. */
	assert_int_equal(sdk_client_parse_export("\n \n", 3, &funcs, &n, err), 0);
	assert_int_equal(n, 0);
	sdk_funcs_free(funcs, n);
	assert_int_equal(sdk_client_parse_export("{\"a\":1} {\"b\":2}\n", 16, &funcs, &n, err),
			 -EBADMSG);
	assert_non_null(strstr(err, "at line 1:"));
}

static void test_ctrlnames(void **state)
{
	struct result r;

	(void)state;
	export_from("ctrlnames", &r);
	assert_int_equal(r.ret, 7);
	assert_int_equal(r.n, 1);
	assert_string_equal(r.funcs[0].name, "main.good");
	assert_string_equal(r.err, "7 records rejected: first: line 1: \"name\" has a control "
				   "character (U+0001) at byte 5");
	sdk_funcs_free(r.funcs, r.n);

	/* Every line is refused for its own control character. */
	static const char *const lines[] = {
	    "{\"name\":\"main.new\\nline\"",
	    "{\"name\":\"\\u001b[2J\"",
	    "{\"name\":\"main.c1\\u009b31m\"",
	    "{\"name\":\"x\\u202ey\"",
	    "{\"name\":\"x\x1b\"",
	    "{\"name\":\"bad\xff\"",
	};
	char buf[512], err[ERR_LEN];
	struct sdk_func *funcs;
	size_t n;
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		int len = snprintf(buf, sizeof(buf),
				   "%s,\"address\":1,\"entry\":1,\"offset\":1,\"size_bytes\":1,"
				   "\"has_size\":true,\"file\":\"a.go\",\"line\":1}\n",
				   lines[i]);
		assert_int_equal(sdk_client_parse_export(buf, (size_t)len, &funcs, &n, err),
				 -EBADMSG);
		if (!strstr(err, "line 1: \"name\" has a control character") &&
		    !strstr(err, "line 1: \"name\" has invalid UTF-8"))
			fail_msg("%s: %s", lines[i], err);
	}
	/* UTF-8 that is printable passes: Go identifiers may use it. */
	const char *ok =
	    "{\"name\":\"main.\xc3\xa9t\xc3\xa9\",\"address\":1,\"entry\":1,\"offset\":1,"
	    "\"size_bytes\":1,\"has_size\":true,\"file\":\"a.go\",\"line\":1}";
	assert_int_equal(sdk_client_parse_export(ok, strlen(ok), &funcs, &n, err), 0);
	assert_int_equal(n, 1);
	sdk_funcs_free(funcs, n);

	struct sdk_client *c = client_for("ctrlnames");
	struct sdk_validation v;
	assert_int_equal(sdk_client_validate(c, fx.sample, &v, r.err), -EBADMSG);
	assert_err_has(&r, "\"file\" has a control character (U+001B)");
	sdk_client_close(c);
}

static void test_huge(void **state)
{
	struct result r;

	(void)state;
	export_from("huge", &r);
	assert_int_equal(r.ret, -EFBIG);
	assert_string_equal(r.err, "SDK response over 64 MiB: ignored");
	if (r.stats.bytes > 64 * MIB + MIB)
		fail_msg("read %" PRIu64 " bytes past a 64 MiB cap", r.stats.bytes);
	assert_true(r.stats.bytes >= 64 * MIB - MIB); /* it did read up to the cap */
	assert_int_equal(r.stats.attempts, 1);
	assert_true(r.secs < HANG_LIMIT_S);

	struct sdk_client *c = client_for("huge");
	struct sdk_validation v;
	assert_int_equal(sdk_client_validate(c, fx.sample, &v, r.err), -EFBIG);
	assert_string_equal(r.err, "SDK response over 1 MiB: ignored");
	sdk_client_last_stats(c, &r.stats);
	assert_true(r.stats.bytes <= 2 * MIB);
	sdk_client_close(c);
}

static void test_hang(void **state)
{
	static const char *const modes[] = {"hang", "silent"};
	struct result r;

	(void)state;
	for (size_t i = 0; i < 2; i++) {
		export_from(modes[i], &r);
		assert_int_equal(r.ret, -ETIMEDOUT);
		assert_string_equal(r.err, "SDK timed out after 5 s");
		if (r.secs >= HANG_LIMIT_S)
			fail_msg("%s: returned after %.1f s", modes[i], r.secs);
	}
}

static void test_retry(void **state)
{
	struct result r;

	(void)state;
	export_from("status500", &r);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.n, fx.nexport);
	assert_int_equal(r.stats.attempts, 3);
	sdk_funcs_free(r.funcs, r.n);

	export_from("always500", &r);
	assert_int_equal(r.ret, -EIO);
	assert_err_has(&r, "failed (HTTP 500) after 3 attempts: using the binary's own tables");
	assert_int_equal(r.stats.attempts, 3);
}

/* Names of the first n exported functions, then "main.noSuchFunction". */
static size_t many_names(const char **names, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < fx.idx->count && k < n - 1; i++) {
		const struct func_info *fi = &fx.idx->funcs[i];
		if (fi->file_offset && funcs_find(fx.idx, fi->name) == fi)
			names[k++] = fi->name;
	}
	names[k++] = "main.noSuchFunction";
	return k;
}

/* 40 functions at once (more than the 8 connections): each answer is the
 * one about its own function, and the unknown one is a 404. */
static void test_validate_many(void **state)
{
	struct sdk_client *c = client_for("good");
	const char *names[40];
	struct sdk_validation v[40];
	int rc[40];
	static char errs[40 * ERR_LEN];
	char err[ERR_LEN];
	size_t n = many_names(names, 40);

	(void)state;
	assert_int_equal(n, 40);
	assert_int_equal(sdk_client_validate_many(c, names, n, 5000, v, rc, errs, err), 0);
	for (size_t i = 0; i + 1 < n; i++) {
		if (rc[i])
			fail_msg("%s: %d: %s", names[i], rc[i], errs + i * ERR_LEN);
		assert_string_equal(v[i].func.name, names[i]);
		assert_ptr_equal(funcs_find(fx.idx, names[i])->entry, v[i].func.entry);
		sdk_validation_free(&v[i]);
	}
	assert_int_equal(rc[n - 1], -ENOENT);
	assert_non_null(strstr(errs + (n - 1) * ERR_LEN, "SDK does not know main.noSuchFunction"));
	sdk_client_close(c);
}

/* An SDK that takes 5 s per validation: 10 of them end together when the
 * 0.5 s budget does, each as timed out (one after another they would take
 * 50 s; the bound below only guards against that). */
static void test_validate_many_budget(void **state)
{
	struct sdk_client *c = client_for("slow");
	const char *names[10];
	struct sdk_validation v[10];
	int rc[10];
	static char errs[10 * ERR_LEN];
	char err[ERR_LEN];
	size_t n = many_names(names, 10);

	(void)state;
	double t0 = now_s();
	assert_int_equal(sdk_client_validate_many(c, names, n, 500, v, rc, errs, err), 0);
	double took = now_s() - t0;
	if (took >= 2.5)
		fail_msg("10 slow validations with a 0.5 s budget took %.1f s", took);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(rc[i], -ETIMEDOUT);
		assert_string_equal(errs + i * ERR_LEN, "SDK timed out after 0.5 s");
		assert_null(v[i].func.name);
	}
	sdk_client_close(c);
}

static void test_token(void **state)
{
	struct result r;

	(void)state;
	unsetenv(SDK_TOKEN_ENV);
	export_from("auth", &r);
	assert_int_equal(r.ret, -EACCES);
	assert_string_equal(r.err, "SDK refused the token (401): set RETOP_SDK_TOKEN");
	assert_int_equal(r.stats.attempts, 1); /* 4xx is not retried */

	setenv(SDK_TOKEN_ENV, "wrong", 1);
	export_from("auth", &r);
	assert_int_equal(r.ret, -EACCES);
	assert_string_equal(r.err, "SDK refused the token (401): check RETOP_SDK_TOKEN");
	assert_null(strstr(r.err, "wrong")); /* the token is never shown */

	setenv(SDK_TOKEN_ENV, TOKEN, 1);
	export_from("auth", &r);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.n, fx.nexport);
	sdk_funcs_free(r.funcs, r.n);

	/* A token that would inject a header is refused before any request. */
	struct sdk_client *c;
	setenv(SDK_TOKEN_ENV, "abc\r\nX-Evil: 1", 1);
	assert_int_equal(sdk_client_open(fx.base, NULL, &c, r.err), -EINVAL);
	assert_null(c);
	assert_null(strstr(r.err, "Evil"));
	unsetenv(SDK_TOKEN_ENV);
}

static void test_redirect_and_urls(void **state)
{
	struct result r;
	struct sdk_client *c;

	(void)state;
	export_from("redirect", &r);
	assert_int_equal(r.ret, -EPROTO);
	assert_err_has(&r, "answered 302 (a redirect, not followed)");

	assert_int_equal(sdk_client_open("file:///etc/passwd", NULL, &c, r.err), -EINVAL);
	assert_err_has(&r, "only http:// and https:// are supported");
	assert_int_equal(sdk_client_open("http://a b", NULL, &c, r.err), -EINVAL);
	assert_int_equal(sdk_client_open(NULL, NULL, &c, r.err), 0);
	assert_string_equal(sdk_client_url(c), SDK_DEFAULT_URL);
	sdk_client_close(c);
	assert_int_equal(sdk_client_open("http://127.0.0.1:9002//", NULL, &c, r.err), 0);
	assert_string_equal(sdk_client_url(c), SDK_DEFAULT_URL);
	sdk_client_close(c);

	c = client_for("othername");
	struct sdk_validation v;
	assert_int_equal(sdk_client_validate(c, fx.sample, &v, r.err), -EBADMSG);
	assert_err_has(&r, "SDK answered for another function than");
	sdk_client_close(c);
}

/* Every record of a mode is a mismatch, with the expected reason. */
static void expect_all_mismatch(const char *mode, const char *why, const char *why2)
{
	struct result r;
	char reason[ERR_LEN];

	export_from(mode, &r);
	assert_int_equal(r.ret, 0);
	assert_int_equal(r.n, fx.nexport);
	for (size_t i = 0; i < r.n; i++) {
		struct func_info *f;
		assert_false(sdk_client_check(fx.idx, &r.funcs[i], &f, reason));
		assert_non_null(f);
		assert_true(f->sdk_mismatch);
		f->sdk_mismatch = false;
		if (!strstr(reason, why) && !(why2 && strstr(reason, why2)))
			fail_msg("%s: %s", r.funcs[i].name, reason);
	}
	sdk_funcs_free(r.funcs, r.n);
}

static void test_midinsn_outside(void **state)
{
	(void)state;
	/* A one-byte function (a lone RET) has padding after it. */
	expect_all_mismatch("midinsn", "+0x1, not an entry", "(+0x1), not an entry");
	expect_all_mismatch("outside", "outside the text segment", NULL);
}

/* The cross-check on hand-made records: right, entry+1, outside, unknown. */
static void test_check(void **state)
{
	struct func_info *f = funcs_find(fx.idx, "main.main"), *got;
	char reason[ERR_LEN], want[ERR_LEN];

	(void)state;
	assert_non_null(f);
	struct sdk_func rec = {.name = "main.main",
			       .entry = f->entry,
			       .address = f->entry,
			       .offset = f->file_offset,
			       .size = f->size,
			       .has_size = true};
	assert_true(sdk_client_check(fx.idx, &rec, &got, reason));
	assert_ptr_equal(got, f);
	assert_false(f->sdk_mismatch);

	rec.offset = f->file_offset + 1;
	assert_false(sdk_client_check(fx.idx, &rec, &got, reason));
	snprintf(want, sizeof(want),
		 "sdk mismatch: offset 0x%" PRIx64 " is inside main.main+0x1, not an entry "
		 "(main.main is at 0x%" PRIx64 ")",
		 f->file_offset + 1, f->file_offset);
	assert_string_equal(reason, want);
	assert_true(f->sdk_mismatch);
	f->sdk_mismatch = false;

	/* An offset that is another function's entry is still not ours. */
	const struct func_info *other = f == fx.idx->funcs ? f + 1 : f - 1;
	rec.offset = other->file_offset;
	assert_false(sdk_client_check(fx.idx, &rec, &got, reason));
	assert_non_null(strstr(reason, "is the entry of"));
	f->sdk_mismatch = false;

	rec.offset = (uint64_t)1 << 40;
	assert_false(sdk_client_check(fx.idx, &rec, &got, reason));
	snprintf(want, sizeof(want),
		 "sdk mismatch: offset 0x10000000000 of main.main is outside the text segment");
	assert_string_equal(reason, want);
	f->sdk_mismatch = false;

	/* Right offset, wrong entry: both facts must agree. */
	rec.offset = f->file_offset;
	rec.entry = f->entry + 1;
	assert_false(sdk_client_check(fx.idx, &rec, &got, reason));
	assert_non_null(strstr(reason, "sdk mismatch: entry 0x"));
	assert_non_null(strstr(reason, "inside main.main+0x1, not an entry"));
	f->sdk_mismatch = false;

	rec.name = "main.noSuch\x1b[2J";
	assert_false(sdk_client_check(fx.idx, &rec, &got, reason));
	assert_null(got);
	assert_string_equal(reason, "sdk mismatch: unknown function main.noSuch?[2J");
}

/* ---- network namespace ---- */

static bool same_netns(const char *a, const char *b)
{
	struct stat sa, sb;

	return !stat(a, &sa) && !stat(b, &sb) && sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

static int __attribute__((format(printf, 1, 2))) run(const char *fmt, ...)
{
	char cmd[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* The namespace and its server live in setup/teardown: a failed assertion
 * jumps out of the test, and must not leave a namespace behind. */
struct netns_case {
	char ns[64];
	bool created;
	pid_t server;
	int port;
};

static struct netns_case nc;

static int netns_setup(void **state)
{
	(void)state;
	memset(&nc, 0, sizeof(nc));
	nc.server = -1;
	if (geteuid())
		return 0; /* the test skips (or fails under CI) */
	snprintf(nc.ns, sizeof(nc.ns), "retop-test-%d", (int)getpid());
	if (run("ip netns add %s", nc.ns))
		return -1;
	nc.created = true;
	if (run("ip -n %s link set lo up", nc.ns))
		return -1;
	char *argv[] = {"ip",	   "netns",	   "exec", nc.ns, getenv("RETOP_SDK_HOSTILE"),
			"-export", fx.export_path, NULL};
	nc.server = server_start(argv, &nc.port);
	return 0;
}

static int netns_teardown(void **state)
{
	(void)state;
	server_stop(nc.server);
	if (nc.created)
		run("ip netns del %s", nc.ns);
	return 0;
}

static void test_netns(void **state)
{
	char path[64], url[128], err[ERR_LEN];
	struct stat before, after;
	struct sdk_client *c;
	struct sdk_func *funcs;
	size_t n;

	(void)state;
	if (geteuid()) {
		if (getenv("CI"))
			fail_msg("the network namespace test needs root (CI: a skip is a failure)");
		skip();
	}
	assert_int_equal(stat("/proc/thread-self/ns/net", &before), 0);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)nc.server);
	assert_false(same_netns(path, "/proc/self/ns/net"));

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/good", nc.port);
	assert_int_equal(sdk_client_open(url, NULL, &c, err), 0);
	/* From our namespace, nothing listens there. */
	assert_true(sdk_client_export(c, &funcs, &n, err) < 0);
	assert_non_null(strstr(err, "unreachable"));
	sdk_client_set_target_pid(c, nc.server);
	int ret = sdk_client_export(c, &funcs, &n, err);
	if (ret)
		fail_msg("export from the namespace of PID %d: %s", (int)nc.server, err);
	assert_int_equal(n, fx.nexport);
	sdk_funcs_free(funcs, n);
	sdk_client_set_target_pid(c, 999999999);
	assert_int_equal(sdk_client_export(c, &funcs, &n, err), -ESRCH);
	if (!strstr(err, "network namespace of PID 999999999"))
		fail_msg("%s", err);
	sdk_client_close(c);
	/* Only the transfer thread moved. */
	assert_int_equal(stat("/proc/thread-self/ns/net", &after), 0);
	assert_int_equal(before.st_ino, after.st_ino);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_good_export),
	    cmocka_unit_test(test_good_validate),
	    cmocka_unit_test(test_unreachable),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_wrongtypes),
	    cmocka_unit_test(test_wrongtypes_reasons),
	    cmocka_unit_test(test_ctrlnames),
	    cmocka_unit_test(test_huge),
	    cmocka_unit_test(test_hang),
	    cmocka_unit_test(test_retry),
	    cmocka_unit_test(test_validate_many),
	    cmocka_unit_test(test_validate_many_budget),
	    cmocka_unit_test(test_token),
	    cmocka_unit_test(test_redirect_and_urls),
	    cmocka_unit_test(test_midinsn_outside),
	    cmocka_unit_test(test_check),
	    cmocka_unit_test_setup_teardown(test_netns, netns_setup, netns_teardown),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
