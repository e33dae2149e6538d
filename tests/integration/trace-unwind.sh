#!/bin/sh
# Frames that never return, with the default --orphan-timeout (60 s): 10
# goroutines per function dive 50 deep, then a recovered panic unwinds them
# (the goroutine then exits: main.PanicExit; or lives on and makes one more
# call: main.PanicLive), or runtime.Goexit does (main.GoexitDive).  The first
# snapshot one full interval after the work shows all 510 frames of each as
# orphans, nothing in flight.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture stress-default

funcs="main.PanicExit main.PanicLive main.GoexitDive"
snap=$T/snap out=$T/out delay=0.5
start_fixture stress-default -mode unwind -workers 10 -depth 50 -out "$out"
fixture=$FIXTURE_PID
retop_batch "$snap" -p "$fixture" -t main.PanicExit -t main.PanicLive -t main.GoexitDive -d $delay
fixture_go "$out"
done_at=$(date +%s.%N)
after=$(awk -v t="$done_at" -v d=$delay 'BEGIN { printf "%.3f", t + d }')
sc after "$snap" "$after" 10 "$RETOP_PID" || fail "no snapshot one interval after the work"
# The first snapshot taken a full interval after the work.
line=$(python3 -c '
import json, sys
for i, l in enumerate(open(sys.argv[1]), 1):
    if json.loads(l)["time"] >= float(sys.argv[2]):
        print(i); break' "$snap" "$after")
retop_stop "$fixture"
want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["unwound"])' "$out")
[ "$want" -eq 510 ] || fail "the fixture unwound $want frames per function, expected 510"
for f in $funcs; do
    o=$(sc get "$snap" "$f" orphans "$line") i=$(sc get "$snap" "$f" in_flight "$line")
    [ "$o" -eq "$want" ] && [ "$i" -eq 0 ] ||
        fail "$f: $o orphans and $i in flight one refresh after the work, expected $want and 0"
    c=$(sc get "$snap" "$f" calls) wc=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["per_func"][sys.argv[2]]["calls"])' "$out" "$f")
    [ "$c" -eq "$wc" ] || fail "$f: $c calls, the fixture made $wc that returned"
    [ "$(sc get "$snap" "$f" orphans)" -eq "$want" ] || fail "$f: orphans changed after: $(sc get "$snap" "$f" orphans)"
    [ "$(sc get "$snap" "$f" unmatched_returns)" -eq 0 ] || fail "$f: unmatched returns"
done
echo "unwind: panic+exit, panic+live, Goexit: $want orphans each, 0 in flight, one $delay s refresh after the work (--orphan-timeout 60)"
