#!/bin/sh
# Panics: MayPanic panics on every 4th call and the caller recovers, so those
# calls never reach a RET. Each such entry becomes an orphan once, exactly
# once, on proof alone (at the default --orphan-timeout, 60 s, time proves
# nothing): the worker's next call returning at the same depth, or, for a
# worker's last call, the worker's exit (runtime.goexit1); every call that
# returned is counted; the target lives on.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture panics-default
fx() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$out" "$1"; }

snap=$T/snap out=$T/out
start_fixture panics-default -calls 100 -workers 4 -out "$out"
fixture=$FIXTURE_PID
retop_batch "$snap" -p "$fixture" -t main.MayPanic -d 0.2
fixture_go "$out"
done_at=$(date +%s.%N)
panics=$(fx panics) returns=$(fx returns)
[ "$panics" -gt 0 ] || fail "the fixture reports no panic: nothing to test"

# After the work the workers have exited: the first snapshot taken a full
# interval after it (its sweep saw the exits) has nothing in flight.
after=$(awk -v t="$done_at" 'BEGIN { printf "%.3f", t + 0.2 }')
sc after "$snap" "$after" 10 "$RETOP_PID" || fail "no snapshot one interval after the work"
line=$(python3 -c '
import json, sys
for i, l in enumerate(open(sys.argv[1]), 1):
    if json.loads(l)["time"] >= float(sys.argv[2]):
        print(i); break' "$snap" "$after")
i=$(sc get "$snap" main.MayPanic in_flight "$line")
[ "$i" -eq 0 ] || fail "$i panicked calls still in flight one refresh after the workers exited"
n=$line
first=$(sc get "$snap" main.MayPanic orphans "$n")
[ "$first" -eq "$panics" ] ||
    fail "retop counted $first orphans (and $(sc get "$snap" main.MayPanic reentries) re-entries), the fixture had $panics panics: panics -calls 100 -workers 4, retop -b -p PID -t main.MayPanic -o json"

# Counted once: five more snapshots, the same count.
sc wait "$snap" $((n + 5)) "$SNAPSHOTS_S" "$RETOP_PID" || fail "retop stopped: $(retop_err)"
retop_stop "$fixture"
for i in $(seq "$n" "$(sc lines "$snap")"); do
    o=$(sc get "$snap" main.MayPanic orphans "$i")
    [ "$o" -eq "$panics" ] || fail "snapshot $i: $o orphans, expected $panics every time (counted once)"
done

calls=$(sc get "$snap" main.MayPanic calls)
[ "$calls" -eq "$returns" ] || fail "retop counted $calls calls, the fixture saw $returns returns"
for k in in_flight unmatched_returns; do
    v=$(sc get "$snap" main.MayPanic $k)
    [ "$v" -eq 0 ] || fail "main.MayPanic $k is $v, expected 0"
done
sc status "$snap" tracing main.MayPanic || fail "status"
echo "panics-default: $returns returns, $panics panics; retop $calls calls, $first orphans, stable over $(($(sc lines "$snap") - n + 1)) snapshots"
