#!/bin/sh
# A process exits with calls in flight (7 goroutines blocked in main.Hold):
# its calls are closed at once, as orphans, both for one of -x's processes
# (retop goes on) and for the -p target (retop ends).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture stress-default
bin=$FIXTURES/stress-default

# -x: retop runs before the process starts and goes on after it exits.
snap=$T/x.snap
retop_batch "$snap" -x "$bin" -t main.Hold -d 0.3
start_fixture stress-default -mode exit -workers 7 -exit-after 3s -out "$T/x.out"
fixture=$FIXTURE_PID
fixture_go "$T/x.out"
sc waitfor "$snap" main.Hold in_flight 7 5 "$RETOP_PID" || fail "the 7 held calls are not in flight"
wait "$fixture" || true
gone=$(date +%s.%N)
after=$(awk -v t="$gone" 'BEGIN { printf "%.3f", t + 0.3 }')
sc after "$snap" "$after" 5 "$RETOP_PID" || fail "no snapshot after the exit"
o=$(sc get "$snap" main.Hold orphans) i=$(sc get "$snap" main.Hold in_flight)
[ "$o" -eq 7 ] && [ "$i" -eq 0 ] ||
    fail "-x: one refresh after the process exited: $o orphans, $i in flight; expected 7 and 0"
retop_stop

# -p: the last snapshot (process exited) has the calls closed.
snap=$T/p.snap
start_fixture stress-default -mode exit -workers 7 -exit-after 3s -out "$T/p.out"
fixture=$FIXTURE_PID
retop_batch "$snap" -p "$fixture" -t main.Hold -d 0.3
kill -USR1 "$fixture"
wait "$fixture" || true
sc gone "$RETOP_PID" 5 || fail "retop -p still runs 5 s after its target exited"
wait "$RETOP_PID" || fail "retop -p exited $? after its target exited"
sc status "$snap" "detached: process exited" main.Hold || fail "status"
o=$(sc get "$snap" main.Hold orphans) i=$(sc get "$snap" main.Hold in_flight)
[ "$o" -eq 7 ] && [ "$i" -eq 0 ] ||
    fail "-p: the last snapshot has $o orphans, $i in flight; expected 7 and 0"
echo "process exit with 7 calls in flight: -x and -p both show 7 orphans, 0 in flight, at once"
