/* Unit tests for ui/pkgpath.c: the browser folds functions by the package
 * path these return, on names taken from real binaries (Prometheus 2.42 as
 * Debian ships it, the Go runtime, generic code). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../ui/pkgpath.h"

static void assert_pkg(const char *name, const char *want)
{
	size_t n = pkgpath_len(name);

	if (n != strlen(want) || strncmp(name, want, n) != 0)
		fail_msg("package of '%s' is '%.*s', want '%s'", name, (int)n, name, want);
}

static void test_plain(void **state)
{
	(void)state;
	assert_pkg("main.main", "main");
	assert_pkg("runtime.gcBgMarkWorker", "runtime");
	assert_pkg("github.com/x/y/z.T.M", "github.com/x/y/z");
	assert_pkg("github.com/prometheus/prometheus/tsdb.(*DB).Compact", "github.com/prometheus/prometheus/tsdb");
	assert_pkg("net/http.(*conn).serve", "net/http");
	assert_pkg("net/http.(*conn).serve.func1", "net/http");
	assert_pkg("main.ProcessPayment.func2.1", "main");
	assert_pkg("vendor/golang.org/x/net/dns/dnsmessage.(*Parser).Question",
		   "vendor/golang.org/x/net/dns/dnsmessage");
}

static void test_dots_in_path(void **state)
{
	(void)state;
	/* A host name before the first '/' has dots; so does an escaped last
	 * element ("kingpin.v2" is written kingpin%2ev2 by the linker). */
	assert_pkg("go.uber.org/zap.(*Logger).Info", "go.uber.org/zap");
	assert_pkg("gopkg.in/alecthomas/kingpin%2ev2.(*Application).Action",
		   "gopkg.in/alecthomas/kingpin%2ev2");
	assert_pkg("gopkg.in/yaml%2ev2.(*decoder).alias", "gopkg.in/yaml%2ev2");
	assert_pkg("cloud.google.com/go/compute/metadata.(*Client).Get",
		   "cloud.google.com/go/compute/metadata");
}

static void test_generics_and_generated(void **state)
{
	(void)state;
	assert_pkg("crypto/elliptic.(*nistCurve[...]).Add", "crypto/elliptic");
	assert_pkg("main.Map[go.shape.string,github.com/a/b.T]", "main");
	assert_pkg("slices.SortFunc[go.shape.[]uint8,go.shape.func(a/b.T) int]", "slices");
	assert_pkg("type..eq.[...]encoding/asn1.encoder", "type");
	assert_pkg("go.(*struct { *github.com/p/q.W; io.ReaderFrom }).Header", "go");
	assert_pkg("type:.eq.main.T", "type");
	assert_pkg("type..eq.encoding/base64.Encoding", "type");
	assert_pkg("go.itab.*net/http.conn,io.Reader", "go");
	assert_pkg("go.buildid", "go");
	/* A method promoted from an embedded type of another package. */
	assert_pkg("github.com/p/discovery/aws.(*EC2Discovery).github.com/p/discovery/refresh.run",
		   "github.com/p/discovery/aws");
	assert_pkg("go:buildid", "go");
	assert_pkg("gogo", "");
	assert_pkg("_cgo_panic", "");
	assert_pkg("", "");
}

static void test_display(void **state)
{
	const char *n = "gopkg.in/yaml%2ev3.(*parser).parse";
	char buf[64], tiny[6];

	(void)state;
	pkgpath_display(n, pkgpath_len(n), buf, sizeof(buf));
	assert_string_equal(buf, "gopkg.in/yaml.v3");
	pkgpath_display(n, pkgpath_len(n), tiny, sizeof(tiny));
	assert_string_equal(tiny, "gopkg");
	pkgpath_display("a%2", 3, buf, sizeof(buf)); /* a cut escape stays as is */
	assert_string_equal(buf, "a%2");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_plain),
		cmocka_unit_test(test_dots_in_path),
		cmocka_unit_test(test_generics_and_generated),
		cmocka_unit_test(test_display),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
