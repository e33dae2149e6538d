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
sc() { python3 "$abs_top_srcdir/tests/integration/snapcheck.py" "$@"; }

snap=$T/snap out=$T/out calls=40
start_fixture recurse-default -calls $calls -workers 8 -out "$out"
fixture=$FIXTURE_PID
"$RETOP" -b -p "$fixture" -t main.Recurse -d 0.2 -o json >"$snap" 2>"$T/err" &
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

want=$((1001 * calls))
got=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_func"]["main.Recurse"]["calls"])' "$out")
[ "$got" -eq "$want" ] || fail "the fixture reports $got calls of main.Recurse, expected 1001 * $calls = $want"
sc exact "$snap" "$out" main.Recurse ||
    fail "recurse -calls $calls -workers 8 traced by retop -b -p PID -t main.Recurse: counts differ"
echo "recurse-default, depth 1000 x $calls on 8 workers: retop $(sc get "$snap" main.Recurse calls) calls of $want, \
$(sc get "$snap" main.Recurse reentries) re-entries, target survived and exited 0"
