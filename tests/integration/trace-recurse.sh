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

# run RETOP-ARGS...: Recurse(1000) x 40 on 8 workers traced by retop;
# snapshots in $SNAP, the fixture's result in $OUT.
run() {
    trace_fixture recurse-default -calls $calls -workers 8 -- -t main.Recurse -d 0.2 "$@"
    # The target is still alive after the work, and exits cleanly on SIGTERM.
    kill -TERM "$FIXTURE_PID"
    if wait "$FIXTURE_PID"; then rc=0; else rc=$?; fi
    [ "$rc" -eq 0 ] || fail "the traced fixture exited $rc on SIGTERM, expected 0"
    got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_func"]["main.Recurse"]["calls"])' "$OUT")
    [ "$got" -eq "$want" ] || fail "the fixture reports $got calls of main.Recurse, expected 1001 * $calls = $want"
}

# The pairing itself, with every probe in (--budget 0): 40,040 calls in well
# under a second are over the default budget's 10,000 probe hits a second.
run --budget 0
sc exact "$SNAP" "$OUT" main.Recurse ||
    fail "recurse -calls $calls -workers 8 traced by retop -b -p PID -t main.Recurse: counts differ"
echo "recurse-default, depth 1000 x $calls on 8 workers: retop $(sc get "$SNAP" main.Recurse calls) calls of $want, \
$(sc get "$SNAP" main.Recurse reentries) re-entries, target survived and exited 0"

# At the defaults: exact, or an estimate whose 95% interval holds the count.
run
python3 - "$SNAP" "$want" <<'PY' || fail "recurse at the defaults: a wrong number"
import json, sys
f = [f for f in json.loads(open(sys.argv[1]).read().splitlines()[-1])["functions"]
     if f["name"] == "main.Recurse"][0]
want, ci = int(sys.argv[2]), f.get("calls_ci95")
ok = (not f["estimated"] and f["calls"] == want) or (
    f["estimated"] and ci[0] <= want and (ci[1] is None or want <= ci[1]))
print("at the defaults: %s, %d calls (95%% %s) of %d" % (f["status"], f["calls"], ci, want))
sys.exit(0 if ok and f["in_flight"] == 0 and f["unmatched_returns"] == 0 else 1)
PY
