/* The Go package of a function's symbol name, for the browser's folding. */
#ifndef RETOP_UI_PKGPATH_H
#define RETOP_UI_PKGPATH_H

#include <stddef.h>

/* Length of the package path that starts name:
 *   "github.com/x/y/z.T.M"              -> "github.com/x/y/z"
 *   "net/http.(*conn).serve"            -> "net/http"
 *   "gopkg.in/yaml%2ev3.(*parser).init" -> "gopkg.in/yaml%2ev3" (the linker
 *                                           escapes dots of the last element)
 *   "main.Map[go.shape.int,a/b.T]"      -> "main"
 *   "go.uber.org/zap.(*Logger).Info"    -> "go.uber.org/zap"
 *   "type:.eq.main.T", "go:buildid"     -> "type", "go" (compiler-made)
 *   "type..eq.encoding/json.T"          -> "type" (the same before Go 1.20)
 *   "go.itab.*net/http.conn,io.Reader"  -> "go"
 *   "gogo", "_rt0_amd64"                -> 0 (assembly: no package)
 * The path ends at the first '.' after its last '/'; a receiver "(...)",
 * an instantiation "[...]" or an anonymous struct may hold '/' and '.', so
 * the search stops at the first '(', '[', '{', ' ', '*' or ','. */
size_t pkgpath_len(const char *name);

/* The path for display: "%2e" back to "." ("gopkg.in/yaml.v3"). */
void pkgpath_display(const char *name, size_t len, char *buf, size_t size);

#endif
