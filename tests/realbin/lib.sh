# shellcheck shell=sh
# Sourced by the realbin-*.sh integration tests after tests/lib.sh: real Go
# binaries built by others (fetch.sh) and a gosym-oracle that reads every
# pclntab they carry.

# shellcheck disable=SC2154 # set by tests/lib.sh
REALBIN=$abs_top_srcdir/tests/realbin

# realbin_fetch NAME: the pinned binary's path in $BIN.  Without npm or the
# registry the test skips, which CI counts as a failure.
realbin_fetch() {
    command -v npm >/dev/null 2>&1 || skip "npm not found: install npm (scripts/setup-deps)"
    BIN=$("$REALBIN/fetch.sh" "$1" 2>"$T/fetch.err") ||
        skip "cannot fetch $1: $(tail -n 1 "$T/fetch.err")"
    [ -x "$BIN" ] || fail "fetch.sh $1 printed '$BIN', which is not an executable"
}

# realbin_oracle: gosym-oracle built with Go 1.27 in $ORACLE127.  The test
# suite's own oracle is built with the system Go (1.19), whose debug/gosym
# does not read the pclntab of Go >= 1.20; these binaries are 1.20 to 1.27.
realbin_oracle() {
    ORACLE127=$FIXTURES/gosym-oracle-go1.27
    src=$abs_top_srcdir/tests/oracle/gosym-oracle
    if [ -x "$ORACLE127" ] && [ -z "$(find "$src" -newer "$ORACLE127" -print | head -n 1)" ]; then
        return 0
    fi
    goroot=$("$abs_top_srcdir/scripts/go-toolchain" 1.27 2>"$T/go.err") ||
        skip "no Go 1.27 for the oracle: $(tail -n 1 "$T/go.err")"
    mkdir -p "$FIXTURES" || fail "cannot create $FIXTURES"
    # As tests/go/build-fixtures.sh: everything Go writes stays in the build
    # tree, no network; a per-process temporary, because tests run at once.
    (cd "$src" && GOTOOLCHAIN=local GOCACHE="$FIXTURES/.gocache" GOPATH="$FIXTURES/.gopath" \
        GOENV=off GO111MODULE=on GOPROXY=off GOFLAGS=-mod=readonly CGO_ENABLED=0 \
        "$goroot/bin/go" build -o "$ORACLE127.$$.tmp" . && mv -f "$ORACLE127.$$.tmp" "$ORACLE127") \
        >"$T/go.err" 2>&1 || fail "cannot build gosym-oracle with Go 1.27: $(tail -n 3 "$T/go.err")"
}

# realbin_esbuild_serve DIR ENTRY: esbuild ($BIN) serving the bundle of
# DIR/ENTRY, which imports DIR/lib.js (written here with the marker
# <retop-build-0>), as /out.js on loopback; $ESBUILD_PID and $ESBUILD_URL
# once it answers.  The output is in DIR/serve.log.
realbin_esbuild_serve() {
    echo 'export function greet(n) { return "<retop-build-0> " + n }' >"$1/lib.js"
    mkdir -p "$1/www"
    port=$(python3 "$abs_top_srcdir/tests/integration/promq.py" freeport 18400 18499) ||
        fail "no free port in 18400-18499"
    # esbuild's serve mode ends when its stdin closes: a FIFO held open by
    # this shell keeps it running.
    rm -f "$1/stdin"
    mkfifo "$1/stdin" || fail "mkfifo $1/stdin failed"
    exec 3<>"$1/stdin"
    (cd "$1" && exec "$BIN" "$2" --bundle --outfile=www/out.js --servedir=www \
        --serve="127.0.0.1:$port" <&3 >"$1/serve.log" 2>&1) &
    ESBUILD_PID=$!
    track_pid "$ESBUILD_PID"
    ESBUILD_URL=http://127.0.0.1:$port/out.js
    n=100
    until python3 "$abs_top_srcdir/tests/integration/promq.py" get "$ESBUILD_URL" >/dev/null 2>&1; do
        n=$((n - 1))
        if [ "$n" -le 0 ] || ! kill -0 "$ESBUILD_PID" 2>/dev/null; then
            fail "$BIN did not serve $ESBUILD_URL in 20 s: $(head -n 3 "$1/serve.log")"
        fi
        sleep 0.2
    done
}
