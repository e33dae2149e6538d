#!/bin/sh
# retop's decoder (Zydis) against capstone over the whole text of real Go
# binaries: a Go 1.26 program that links the AVX-512 code of the runtime,
# crypto and hash/crc32, and Debian's prometheus.  For every function,
# decoded linearly from its entry to the next one:
#   - wherever both decoders decode, instruction starts and RETs agree;
#   - the only functions retop's decoder refuses are data blobs that
#     capstone cannot decode either (named below, and printed);
#   - the Go 1.26 binary really carries code capstone 4 cannot decode
#     (runtime.asyncPreempt's kmovq at least), so the test keeps its point;
#   - retop -l refuses for decoding exactly those blobs.
# DECODER_GO_RELEASES (default 1.26) lists the Go releases to build with,
# e.g. DECODER_GO_RELEASES="1.26 1.27".
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_retop
need_cmd python3

TOOL=$abs_top_builddir/tests/integration/decoder-crosscheck
[ -x "$TOOL" ] || fail "$TOOL not found: run make check (it builds it)"
PROM=/usr/bin/prometheus
[ -x "$PROM" ] || skip "$PROM not found: install the Debian package prometheus (scripts/setup-deps)"

# Data, not code, inside the text: BoringCrypto's signature bytes.
BLOBS="crypto/internal/boring/sig.StandardCrypto"

# check BIN LABEL: run the cross-check on BIN and assert the above.
check() {
    if "$TOOL" "$1" >"$T/cc" 2>"$T/cc.err"; then :; else
        fail "$2: decoders disagree or the tool failed: $(grep -v '^capstone-only' "$T/cc" | head -n 5) $(head -n 3 "$T/cc.err")"
    fi
    sum=$(tail -n 1 "$T/cc")
    echo "$2: $sum"
    grep '^refused' "$T/cc" | sed "s|^|  $2: |"
    grep -c '^capstone-only' "$T/cc" | sed "s|^|  $2: functions only retop's decoder decodes: |"
    grep '^capstone-only' "$T/cc" | cut -d' ' -f2 | sed "s|^|    |"
    while read -r _ name off rest; do
        [ -n "$name" ] || continue
        case " $BLOBS " in
        *" $name "*) ;;
        *) fail "$2: $name refused for decoding at $off: not a known data blob" ;;
        esac
        [ -n "$rest" ] || fail "$2: $name: capstone decodes it past $off, retop's decoder stops there"
    done <<EOF
$(grep '^refused' "$T/cc")
EOF
    case $sum in
    "functions "*" disagree 0") ;;
    *) fail "$2: unexpected summary: $sum" ;;
    esac
    "$RETOP" -l -x "$1" -o json >"$T/list.json" 2>"$T/list.err" ||
        fail "$2: retop -l failed: $(head -n 3 "$T/list.err")"
    python3 - "$T/list.json" "$T/cc" "$2" <<'PY' || fail "$2: retop -l and the cross-check differ"
import json, sys
listed = {o["name"] for o in map(json.loads, open(sys.argv[1]))
          if "does not decode" in o["reason"]}
refused = {l.split()[1] for l in open(sys.argv[2]) if l.startswith("refused ")}
if listed != refused:
    sys.exit("%s: retop -l refuses %s for decoding, the cross-check %s"
             % (sys.argv[3], sorted(listed), sorted(refused)))
PY
}

# A program that links the AVX-512 code: sha256 and crc32 pick it at run
# time, the runtime's asyncPreempt saves the mask registers.
mkdir -p "$T/prog"
cat >"$T/prog/main.go" <<'EOF'
package main

import (
	"crypto/sha256"
	"crypto/tls"
	"fmt"
	"hash/crc32"
	"os"
)

func main() {
	h := sha256.Sum256([]byte(os.Args[0]))
	fmt.Println(h[0], crc32.ChecksumIEEE([]byte(os.Args[0])), tls.VersionTLS13)
}
EOF
for rel in ${DECODER_GO_RELEASES:-1.26}; do
    goroot=$("$abs_top_srcdir/scripts/go-toolchain" "$rel") ||
        skip "Go $rel not available from Debian's mirror (scripts/go-toolchain $rel)"
    printf 'module avx512prog\n\ngo %s\n' "$rel" >"$T/prog/go.mod"
    bin=$T/avx512prog-$rel
    # The build cache lives with the fixtures': the second run is quick.
    (cd "$T/prog" && GOCACHE="$FIXTURES/.gocache" GOPATH="$FIXTURES/.gopath" GOENV=off \
        GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod CGO_ENABLED=0 \
        "$goroot/bin/go" build -o "$bin" .) >"$T/build.err" 2>&1 ||
        fail "go $rel build failed: $(head -n 5 "$T/build.err")"
    check "$bin" "go$rel"
    grep -q '^capstone-only runtime.asyncPreempt ' "$T/cc" ||
        fail "go$rel: capstone decodes runtime.asyncPreempt: the binary carries no AVX-512 code to check"
done
check "$PROM" prometheus
exit 0
