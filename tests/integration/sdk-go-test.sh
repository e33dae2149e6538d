#!/bin/sh
# The Go SDK's own tests: ABI argument assignment and the HTTP endpoints.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
GO=${GO:-go}
command -v "$GO" >/dev/null 2>&1 || skip "go not found: install golang-go"
# The source tree may be read-only (make distcheck): Go writes under $T.
export GOCACHE="$abs_top_builddir/tests/go/bin/.gocache" GOPATH="$T/gopath" GOENV=off
export GO111MODULE=on GOPROXY=off GOFLAGS=-mod=mod TMPDIR="$T"
cd "$abs_top_srcdir/sdk/go" || fail "no sdk/go"
"$GO" test -count=1 ./... || fail "go test in sdk/go failed"
