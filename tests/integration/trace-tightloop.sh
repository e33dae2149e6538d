#!/bin/sh
# A tiny function called as fast as one goroutine can: every one of the
# fixture's calls is counted, none lost, none unmatched.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture tightloop-default

snap=$T/snap out=$T/out calls=${TIGHTLOOP_CALLS:-200000}
start_fixture tightloop-default -calls "$calls" -out "$out"
fixture=$FIXTURE_PID
# --budget 0: 200,000 calls in a tight loop are far over the default budget
# (guard-budget.sh and budget-mixed.sh test that); here every one is timed.
"$RETOP" -b -p "$fixture" -t main.Tiny -d 0.2 -o json --budget 0 >"$snap" 2>"$T/err" &
rp=$!
track_pid "$rp"
sc wait "$snap" 1 15 "$rp" || fail "retop did not attach: $(head -n 3 "$T/err")"
kill -USR1 "$fixture"
wait_file "$out" 25 || fail "no result from the fixture in 25 s"
sc wait "$snap" $(($(sc lines "$snap") + 1)) 5 "$rp" || fail "retop stopped: $(head -n 3 "$T/err")"
kill -INT "$rp"
if wait "$rp"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "retop exited $rc after SIGINT: $(head -n 3 "$T/err")"
kill -0 "$fixture" || fail "the fixture died while traced"

sc exact "$snap" "$out" main.Tiny ||
    fail "tightloop -calls $calls traced by retop -b -p PID -t main.Tiny: counts differ"
echo "tightloop-default: $calls calls, retop $(sc get "$snap" main.Tiny calls), \
$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.2f us" % (r["elapsed_ns"] / r["calls"] / 1000))' "$out") a call with probes, \
retop mean $(sc get "$snap" main.Tiny mean_ns) ns"
