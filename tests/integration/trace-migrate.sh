#!/bin/sh
# Goroutine migration: 1000 goroutines block inside main.Block (sleep, then a
# channel round-trip), so calls end on other threads than they began on.
# Pairing by {g, stack.hi - SP} must pair every return: calls equal the
# fixture's exactly, nothing in flight, nothing unmatched.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture migrate-default

snap=$T/snap out=$T/out
start_fixture migrate-default -calls 5000 -workers 1000 -out "$out"
fixture=$FIXTURE_PID
"$RETOP" -b -p "$fixture" -t main.Block -d 0.2 -o json >"$snap" 2>"$T/err" &
rp=$!
track_pid "$rp"
sc wait "$snap" 1 15 "$rp" || fail "retop did not attach: $(head -n 3 "$T/err")"
kill -USR1 "$fixture"
wait_file "$out" 20 || fail "no result from the fixture in 20 s"
sc wait "$snap" $(($(sc lines "$snap") + 1)) 5 "$rp" || fail "retop stopped: $(head -n 3 "$T/err")"
kill -INT "$rp"
if wait "$rp"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "retop exited $rc after SIGINT: $(head -n 3 "$T/err")"
kill -0 "$fixture" || fail "the fixture died while traced"

sc exact "$snap" "$out" main.Block ||
    fail "migrate -calls 5000 -workers 1000 traced by retop -b -p PID -t main.Block: counts differ"
echo "migrate-default, 1000 workers: $(sc get "$snap" main.Block calls) of \
$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["calls"])' "$out") calls paired, \
in flight $(sc get "$snap" main.Block in_flight), unmatched $(sc get "$snap" main.Block unmatched_returns)"
