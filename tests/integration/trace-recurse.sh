#!/bin/sh
# Deep recursion with stack copies: Recurse(1000) on fresh goroutines, 8 at a
# time, grows (copies) the stack with 1000 entries in flight. The target must
# survive (a uretprobe would kill it) and every one of the 1001 calls per
# Recurse(1000) must be paired.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture recurse-default

calls=40 want=$((1001 * 40))

# run NAME RETOP-ARGS...: Recurse(1000) x 40 on 8 workers traced by retop;
# snapshots in $T/NAME.snap, the fixture's result in $T/NAME.out.
run() {
    snap=$T/$1.snap out=$T/$1.out
    shift
    start_fixture recurse-default -calls $calls -workers 8 -out "$out"
    fixture=$FIXTURE_PID
    "$RETOP" -b -p "$fixture" -t main.Recurse -d 0.2 -o json "$@" >"$snap" 2>"$T/err" &
    rp=$!
    track_pid "$rp"
    sc wait "$snap" 1 15 "$rp" || fail "retop did not attach: $(head -n 3 "$T/err")"
    kill -USR1 "$fixture"
    wait_file "$out" 20 || fail "no result from the fixture in 20 s (did it crash?)"
    sc wait "$snap" $(($(sc lines "$snap") + 1)) 5 "$rp" || fail "retop stopped: $(head -n 3 "$T/err")"
    kill -INT "$rp"
    if wait "$rp"; then rc=0; else rc=$?; fi
    [ "$rc" -eq 0 ] || fail "retop exited $rc after SIGINT: $(head -n 3 "$T/err")"
    # The target is still alive after the work, and exits cleanly on SIGTERM.
    kill -0 "$fixture" || fail "the fixture died while traced"
    kill -TERM "$fixture"
    if wait "$fixture"; then rc=0; else rc=$?; fi
    [ "$rc" -eq 0 ] || fail "the traced fixture exited $rc on SIGTERM, expected 0"
    got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_func"]["main.Recurse"]["calls"])' "$out")
    [ "$got" -eq "$want" ] || fail "the fixture reports $got calls of main.Recurse, expected 1001 * $calls = $want"
}

# The pairing itself, with every probe in (--budget 0): 40,040 calls in well
# under a second are over the default budget's 10,000 probe hits a second.
run full --budget 0
sc exact "$T/full.snap" "$T/full.out" main.Recurse ||
    fail "recurse -calls $calls -workers 8 traced by retop -b -p PID -t main.Recurse: counts differ"
echo "recurse-default, depth 1000 x $calls on 8 workers: retop $(sc get "$T/full.snap" main.Recurse calls) calls of $want, \
$(sc get "$T/full.snap" main.Recurse reentries) re-entries, target survived and exited 0"

# At the defaults: exact, or an estimate whose 95% interval holds the count.
run defaults
python3 - "$T/defaults.snap" "$want" <<'PY' || fail "recurse at the defaults: a wrong number"
import json, sys
f = [f for f in json.loads(open(sys.argv[1]).read().splitlines()[-1])["functions"]
     if f["name"] == "main.Recurse"][0]
want, ci = int(sys.argv[2]), f.get("calls_ci95")
ok = (not f["estimated"] and f["calls"] == want) or (
    f["estimated"] and ci[0] <= want and (ci[1] is None or want <= ci[1]))
print("at the defaults: %s, %d calls (95%% %s) of %d" % (f["status"], f["calls"], ci, want))
sys.exit(0 if ok and f["in_flight"] == 0 and f["unmatched_returns"] == 0 else 1)
PY
