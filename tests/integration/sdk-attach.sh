#!/bin/sh
# The SDK end to end: a Go program embedding sdk/go.  Its facts equal the
# local index for every function; tracing with it counts exactly; a hostile
# SDK is reported in one line and changes nothing; a token is enforced.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_retop
need_cmd python3
need_fixture sdkapp-default
[ -x "$abs_top_builddir/tests/sdk/hostile/hostile" ] || fail "hostile SDK server not built"

# A free loopback port: the kernel picks one, the SDK binds it right after.
free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# facts FILE: "name entry file_offset ret-offsets" per function, sorted.
facts() {
    python3 -c '
import json, sys
for l in open(sys.argv[1]):
    o = json.loads(l)
    print(o["name"], o["entry"], o["file_offset"], [r["offset"] for r in o["ret_sites"]])
' "$1" | sort
}

# traced APP SDK-URL SNAP FIXTURE-OUT FUNC...: trace FUNCs of APP with the SDK
# at SDK-URL in the loop while APP does its work; the counts must be exact.
traced() {
    app_=$1 sdk_=$2 snap_=$3 res_=$4
    shift 4
    targs=""
    for f in "$@"; do targs="$targs -t $f"; done
    # shellcheck disable=SC2086 # a list of options
    retop_batch "$snap_" -p "$app_" -s "$sdk_" $targs -d 0.2
    fixture_go "$res_" "$app_"
    retop_snapshots 1
    retop_stop
    sc exact "$snap_" "$res_" "$@" ||
        fail "counts differ with the SDK at $sdk_ in the loop"
}

port=$(free_port)
url=http://127.0.0.1:$port
start_fixture sdkapp-default -sdk "127.0.0.1:$port" -calls 20 -workers 4 -out "$T/app.json"
app=$FIXTURE_PID

# 1. Every function confirmed by the SDK, with the local index's facts.
expect_exit 0 "$RETOP" -l -p "$app" -s "$url" -o json
mv "$T/out" "$T/sdk.json"
grep -q "functions confirmed" "$T/err" || fail "no SDK status line: $(cat "$T/err")"
grep -q "rejected" "$T/err" && fail "the real SDK had facts rejected: $(cat "$T/err")"
# Every function with code of its own (an inline-only row has none: the
# SDK has no facts about it).
total=$(grep -c '"inline_only":false' "$T/sdk.json")
from_sdk=$(grep -c '"source":"sdk"' "$T/sdk.json")
[ "$from_sdk" -eq "$total" ] || fail "$from_sdk of $total functions confirmed by the SDK"
expect_exit 0 "$RETOP" -l -x "$FIXTURES/sdkapp-default" -o json
facts "$T/out" >"$T/local.facts"
facts "$T/sdk.json" >"$T/sdk.facts"
cmp -s "$T/local.facts" "$T/sdk.facts" || fail "SDK-confirmed facts differ from the local index"

# 2. A hostile SDK serving this program's own export, bent: one status line,
#    the binary's facts win, and tracing through it still counts exactly.
python3 -c "import urllib.request,sys; sys.stdout.write(urllib.request.urlopen('$url/debug/functions/export').read().decode())" >"$T/export.jsonl"
"$abs_top_builddir/tests/sdk/hostile/hostile" -export "$T/export.jsonl" >"$T/hport" &
track_pid $!
n=50
while [ ! -s "$T/hport" ]; do
    [ "$n" -gt 0 ] || fail "hostile server did not start"
    n=$((n - 1))
    sleep 0.1
done
hurl=http://127.0.0.1:$(head -n 1 "$T/hport")
for mode in midinsn outside malformed wrongtypes ctrlnames huge hang; do
    start=$(date +%s)
    expect_exit 0 "$RETOP" -l -p "$app" -s "$hurl/$mode" -o json
    took=$(($(date +%s) - start))
    [ "$(wc -l <"$T/err")" -eq 1 ] || fail "$mode: want one status line, got: $(cat "$T/err")"
    grep -Eq 'rejected|malformed|timed out|over|invalid|unusable' "$T/err" ||
        fail "$mode: unclear status: $(cat "$T/err")"
    LC_ALL=C grep -q "$(printf '[\001-\010\016-\037\033]')" "$T/err" &&
        fail "$mode: control characters reached the terminal"
    [ "$took" -le 12 ] || fail "$mode: took $took s (the SDK budget is 5 s)"
    facts "$T/out" | cmp -s - "$T/local.facts" || fail "$mode: the listing changed"
    [ "$mode" = midinsn ] || [ "$mode" = outside ] || continue
    grep -q '"source":"sdk"' "$T/out" && fail "$mode: a bent offset was accepted"
done

# Tracing with the hostile SDK in the loop: no probe lands on its offsets.
traced "$app" "$hurl/midinsn" "$T/snap" "$T/app.json" main.ProcessPayment main.ValidateCard
kill -0 "$app" 2>/dev/null || fail "sdkapp died"

# 3. Tracing by the real SDK's facts counts exactly as by the local index
#    (trace-payments.sh): a second instance, since the first has done its work.
rport=$(free_port)
start_fixture sdkapp-default -sdk "127.0.0.1:$rport" -calls 20 -workers 4 -out "$T/app2.json"
app2=$FIXTURE_PID
traced "$app2" "http://127.0.0.1:$rport" "$T/snap2" "$T/app2.json" main.ProcessPayment \
    main.ValidateCard main.CalculateTotal
grep -q "rejected\|mismatch" "$T/snap2.err" && fail "the real SDK disagreed at attach: $(cat "$T/snap2.err")"

# 4. A token-protected SDK refuses retop without the token.
tport=$(free_port)
start_fixture sdkapp-default -sdk "127.0.0.1:$tport" -token s3cret
expect_exit 0 env -u RETOP_SDK_TOKEN "$RETOP" -l -p "$FIXTURE_PID" -s "http://127.0.0.1:$tport" 'main.V*'
grep -q "401" "$T/err" || fail "no token: want a 401 status, got: $(cat "$T/err")"
expect_exit 0 env RETOP_SDK_TOKEN=s3cret "$RETOP" -l -p "$FIXTURE_PID" -s "http://127.0.0.1:$tport" -o json 'main.V*'
grep -q '"source":"sdk"' "$T/out" || fail "with the token: facts not confirmed: $(cat "$T/err")"

echo "sdkapp: $total functions confirmed by the SDK; 7 hostile modes refused; token enforced"
