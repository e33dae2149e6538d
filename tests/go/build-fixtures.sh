#!/bin/sh
# Usage: build-fixtures.sh OUTDIR [NAME...]
# Builds each Go fixture five ways (default, noopt, stripped, pie, cgo) into
# OUTDIR as NAME-VARIANT, plus OUTDIR/gosym-oracle (always) and
# OUTDIR/dwarfcheck{,-stripped} (when tests/go/dwarfcheck exists and no NAME
# or the NAME dwarfcheck is given). Up-to-date outputs are not rebuilt.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
oracle_src=$here/../oracle/gosym-oracle
all="payments migrate recurse panics tightloop noret demo stress callers spawn mixed estload growth lifecycle nested inlined fanout owntraps manyfuncs timesplit change failing"

[ $# -ge 1 ] || { echo "usage: $0 OUTDIR [NAME...]" >&2; exit 2; }
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
if [ $# -eq 0 ]; then
    # shellcheck disable=SC2086 # $all is a list
    set -- $all
    [ ! -f "$here/dwarfcheck/main.go" ] || set -- "$@" dwarfcheck
    [ ! -f "$here/sdkapp/main.go" ] || set -- "$@" sdkapp
fi

GO=${GO:-go}
command -v "$GO" >/dev/null 2>&1 || { echo "$0: go not found: install golang-go" >&2; exit 1; }

# Everything Go writes stays under OUTDIR: the source tree may be read-only
# (make distcheck) and HOME may be unset (root in CI). No network, no go.env.
export GOCACHE="$out/.gocache" GOPATH="$out/.gopath" GOENV=off
export GO111MODULE=on GOPROXY=off GOFLAGS=-mod=readonly
unset GOOS GOARCH

# stale OUTPUT SRCDIR: true when OUTPUT is missing or older than a source.
# A SRCDIR whose go.mod replaces the module fixture by ../fixture also has
# tests/go/fixture as a source: the protocol shared by all fixtures but
# dwarfcheck (with, behind the retop_cgo tag, the C code of the cgo builds).
stale() {
    o=$1
    if grep -q '^[[:space:]]*\(replace[[:space:]]\{1,\}\)\{0,1\}fixture => \.\./fixture[[:space:]]*$' "$2/go.mod" 2>/dev/null; then
        set -- "$2" "$here/fixture"
    else
        set -- "$2"
    fi
    [ ! -e "$o" ] || [ -n "$(find "$@" "$here/build-fixtures.sh" -newer "$o" -print | head -n 1)" ]
}

# build OUTPUT SRCDIR [ENV=VALUE...] -- GO-BUILD-ARGS...
build() {
    o=$1 src=$2
    shift 2
    stale "$o" "$src" || return 0
    echo "  GO       $(basename "$o")"
    # A subshell, because go build resolves the module from the current
    # directory; a per-process temporary, because tests may build at once.
    (cd "$src" && env "$@" -o "$o.$$.tmp" . && mv -f "$o.$$.tmp" "$o")
}

build "$out/gosym-oracle" "$oracle_src" CGO_ENABLED=0 "$GO" build
for n in "$@"; do
    src=$here/$n
    case $n in
    gosym-oracle) continue ;; # built above, always
    dwarfcheck)               # someone else's fixture: two builds only
        build "$out/dwarfcheck" "$src" CGO_ENABLED=0 "$GO" build
        build "$out/dwarfcheck-stripped" "$src" CGO_ENABLED=0 "$GO" build -ldflags=-s\ -w
        continue ;;
    change) # two builds of one program, the second's main.Slower twice as slow
        build "$out/change-default" "$src" CGO_ENABLED=0 "$GO" build
        build "$out/change-slow" "$src" CGO_ENABLED=0 "$GO" build -ldflags=-X\ main.slowFactor=2
        continue ;;
    sdkapp) # embeds sdk/go (a local replace): rebuild when the SDK changes too
        for v in default stripped; do
            ! stale "$out/sdkapp-$v" "$here/../../sdk/go" || rm -f "$out/sdkapp-$v"
        done
        build "$out/sdkapp-default" "$src" CGO_ENABLED=0 "$GO" build
        build "$out/sdkapp-stripped" "$src" CGO_ENABLED=0 "$GO" build -ldflags=-s\ -w
        continue ;;
    esac
    [ -f "$src/main.go" ] || { echo "$0: no fixture named $n" >&2; exit 1; }
    build "$out/$n-default" "$src" CGO_ENABLED=0 "$GO" build
    build "$out/$n-noopt" "$src" CGO_ENABLED=0 "$GO" build -gcflags=all=-N\ -l
    build "$out/$n-stripped" "$src" CGO_ENABLED=0 "$GO" build -ldflags=-s\ -w
    build "$out/$n-pie" "$src" CGO_ENABLED=0 "$GO" build -buildmode=pie
    build "$out/$n-cgo" "$src" CGO_ENABLED=1 "$GO" build -tags retop_cgo
done
