#!/bin/sh
# A function full of AVX-512 code, traced: hash/crc32.ieeeCLMUL built with
# Go 1.26 (EVEX vpclmulqdq, vpternlogd; capstone 4 cannot decode it, so it
# was refused before retop decoded with Zydis).  retop -l lists it full with
# its one RET; traced while the program checksums 64 MiB -calls times,
# retop counts exactly that many calls, none in flight or unmatched, and its
# mean and p50 are within 5% of the program's own clock.  64 MiB (a call of
# about 3 ms): the program's clock also holds the two probes' traps, tens of
# microseconds on a loaded machine, which over a 16 MiB call (0.8 ms) came
# to 5%.  On a machine loaded by other tests it also holds waits for a CPU
# as a trap returns, outside retop's clock (3 ms more on a call in 30, 5.2%
# of the mean once): the program reads its thread's waits from schedstat,
# and retop's mean may be under the program's by as much, never over.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop

rel=1.26 calls=100 size=67108864 fn=hash/crc32.ieeeCLMUL
goroot=$("$abs_top_srcdir/scripts/go-toolchain" "$rel") ||
    skip "Go $rel not available from Debian's mirror (scripts/go-toolchain $rel)"
bin=$T/avx512-go$rel
(cd "$abs_top_srcdir/tests/go/avx512" && GOCACHE="$FIXTURES/.gocache" GOPATH="$FIXTURES/.gopath" \
    GOENV=off GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod CGO_ENABLED=0 \
    "$goroot/bin/go" build -o "$bin" .) >"$T/build.err" 2>&1 ||
    fail "go $rel build failed: $(head -n 5 "$T/build.err")"

expect_exit 0 "$RETOP" -l -x "$bin" -o json "$fn"
python3 - "$T/out" "$fn" <<'PY' || fail "retop -l -x $bin $fn: not listed full with one RET"
import json, sys
fs = [o for o in map(json.loads, open(sys.argv[1])) if o["name"] == sys.argv[2]]
if len(fs) != 1 or fs[0]["traceable"] != "full" or len(fs[0]["ret_sites"]) != 1:
    sys.exit("%s: %s" % (sys.argv[2], fs))
PY

out=$T/result snap=$T/snap
rm -f "$T/ready"
"$bin" -ready "$T/ready" -out "$out" -calls "$calls" -size "$size" &
prog=$!
track_pid "$prog"
wait_file "$T/ready" 10 || fail "the Go $rel program did not become ready in 10 s"
retop_batch "$snap" -p "$prog" -t "$fn" -d 0.2
fixture_go "$out" "$prog"
retop_snapshots 1
retop_stop "$prog"
{
    sc exact "$snap" "$out" "$fn" && sc timing "$snap" "$out" 0.05 "$fn"
} || fail "retop's last snapshot disagrees with the program (retop -b -p PID -t $fn -d 0.2 -o json)"
sc summary "$snap" "$out" "$fn" "go$rel avx512"
