#!/bin/sh
# A tiny function called as fast as one goroutine can: every one of the
# fixture's calls is counted, none lost, none unmatched.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture tightloop-default

calls=${TIGHTLOOP_CALLS:-200000}
# --budget 0: 200,000 calls in a tight loop are far over the default budget
# (guard-budget.sh and budget-mixed.sh test that); here every one is timed.
trace_fixture tightloop-default -calls "$calls" -- -t main.Tiny -d 0.2 --budget 0

sc exact "$SNAP" "$OUT" main.Tiny ||
    fail "tightloop -calls $calls traced by retop -b -p PID -t main.Tiny: counts differ"
echo "tightloop-default: $calls calls, retop $(sc get "$SNAP" main.Tiny calls), \
$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("%.2f us" % (r["elapsed_ns"] / r["calls"] / 1000))' "$OUT") a call with probes, \
retop mean $(sc get "$SNAP" main.Tiny mean_ns) ns"
