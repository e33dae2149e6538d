#!/bin/sh
# Arguments on a stripped binary, through the SDK (RFD 075).  sdkapp built
# with -ldflags='-s -w' has no DWARF and no symbols: only its SDK knows the
# parameters of main.Lookup(id int, key string, ms int), registered with
# retopsdk.Describe (reflection).  Traced with --args, the planted outlier
# (the slowest of Lookup's 11 calls) shows its arguments by name, exactly
# as the program passed them, and its result (4242 + len("planted-key"))
# read at the RET.  Without the SDK the same call shows the raw
# registers: arg0 is the int, the rest has no meaning retop can claim.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_retop
need_cmd python3
need_fixture sdkapp-stripped
fn=main.Lookup

# traced sdk|raw: a fresh sdkapp-stripped, traced by retop (with -s and
# the SDK's URL, or without) while it does its work; the snapshots in
# $T/MODE.snap, its result in $T/MODE.json.
traced() {
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    start_fixture sdkapp-stripped -sdk "127.0.0.1:$port" -calls 4 -workers 2 -out "$T/$1.json"
    app=$FIXTURE_PID
    sdk=""
    if [ "$1" = sdk ]; then
        sdk="-s http://127.0.0.1:$port"
        # shellcheck disable=SC2086 # $sdk is a list
        expect_exit 0 "$RETOP" -l -p "$app" $sdk -o json "$fn"
        python3 -c 'import json,sys; f=json.loads(open(sys.argv[1]).readline()); sys.exit(f["source"] != "sdk" or f["traceable"] != "full")' "$T/out" ||
            fail "$fn of the stripped sdkapp: not confirmed by the SDK and fully traceable: $(cat "$T/out")"
    fi
    # shellcheck disable=SC2086 # $sdk is a list
    retop_batch "$T/$1.snap" -p "$app" $sdk -t "$fn" --args "$fn" -d 0.2
    fixture_go "$T/$1.json"
    retop_snapshots 2
    retop_stop
}

# outlier NAME: the top of main.Lookup's slowest list, as JSON; checks the
# call count against the program's.
outlier() {
    python3 - "$T/$1.snap" "$T/$1.json" "$fn" <<'PY'
import json, sys
last = [json.loads(l) for l in open(sys.argv[1])][-1]
fx = json.load(open(sys.argv[2]))["lookup"]
f = [f for f in last["functions"] if f["name"] == sys.argv[3]][0]
if f["calls"] != fx["calls"]:
    print("%s: retop counted %s calls, the program made %d" % (sys.argv[3], f["calls"], fx["calls"]))
    sys.exit(1)
top = f["slowest"][0]
print(json.dumps(top["args"], sort_keys=True) + " | " + json.dumps(top.get("results"), sort_keys=True))
PY
}

traced sdk
grep -q "disagree with Go's ABI" "$T/sdk.snap.err" && fail "retop rejected the SDK's arguments: $(cat "$T/sdk.snap.err")"
got=$(outlier sdk) || fail "$got"
want='{"id": 4242, "key": "planted-key", "ms": 60} | {"r0": 4253}'
[ "$got" = "$want" ] || fail "the outlier's arguments through the SDK: $got, the program passed $want"

# Without the SDK (no -s; the default address is not the target's): the
# raw registers of the same call.
traced raw
got=$(outlier raw) || fail "$got"
# No types known: the registers at the RET are not claimed as results.
python3 -c 'import json,sys; a,r=sys.argv[1].split(" | "); a=json.loads(a); sys.exit(a.get("arg0") != "0x1092" or "id" in a or json.loads(r) is not None)' "$got" ||
    fail "the outlier's raw registers without the SDK: $got (want arg0 = 0x1092, the id 4242, and no results)"
echo "stripped sdkapp: $fn's outlier through the SDK $want; without it $got"
