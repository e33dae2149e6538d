#!/bin/sh
# The per-release table of runtime.g's goid offset (used for binaries
# without DWARF) against the DWARF of a program built by every Go release
# from 1.19 to 1.27 (scripts/go-toolchain fetches each from Debian).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
check=$abs_top_builddir/tests/integration/goid-check
[ -x "$check" ] || fail "$check not found: run make check"
# And the time split's (src/go_offsets.c), on the same programs.
split_check=$abs_top_builddir/tests/integration/go-offsets-check
[ -x "$split_check" ] || fail "$split_check not found: run make check"
mkdir -p "$T/src"
cat >"$T/src/main.go" <<'GO'
package main

import "fmt"

func main() { fmt.Println("hello") }
GO
printf 'module goidcheck\n\ngo 1.19\n' >"$T/src/go.mod"
for v in 19 21 22 23 24 25 26 27; do
    root=$("$abs_top_srcdir/scripts/go-toolchain" "1.$v") || fail "no Go 1.$v toolchain"
    (cd "$T/src" && GOTOOLCHAIN=local GOCACHE="$FIXTURES/.gocache-goid" GOPATH="$T/gopath" GOFLAGS=-mod=mod \
        CGO_ENABLED=0 "$root/bin/go" build -o "$T/hello-1.$v" .) ||
        fail "Go 1.$v could not build the test program"
    "$check" "$T/hello-1.$v" || fail "Go 1.$v: the goid offset table disagrees with DWARF"
    "$split_check" "$T/hello-1.$v" ||
        fail "Go 1.$v: the time split's runtime offset table disagrees with DWARF"
done
