#!/bin/sh
# Attach under a steady call rate: 8 goroutines call main.Work (200 us)
# without pause, so calls are in flight whenever retop attaches.  The RET
# probes go in before the entry probe: no call is entered whose RET could be
# missed (no orphan), and the RETs of calls that began before the entry
# probe are told apart (returns_before_attach), not unmatched returns.
# Five attaches in a row, each checked.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture stress-default

start_fixture stress-default -mode steady -loop -workers 8
fixture=$FIXTURE_PID
kill -USR1 "$fixture"
before=0
for i in 1 2 3 4 5; do
    snap=$T/snap.$i
    expect_exit 0 "$RETOP" -b -p "$fixture" -t main.Work -d 0.2 -n 3 -o json
    mv "$T/out" "$snap"
    calls=$(sc get "$snap" main.Work calls)
    [ "$calls" -gt 100 ] || fail "attach $i: only $calls calls of main.Work in 0.6 s"
    for k in orphans unmatched_returns dropped; do
        v=$(sc get "$snap" main.Work $k)
        [ "$v" -eq 0 ] || fail "attach $i under a steady call rate: $k is $v, expected 0 ($calls calls)"
    done
    before=$((before + $(sc get "$snap" main.Work returns_before_attach)))
done
# The race was there to lose: calls were in flight at the attaches.
[ "$before" -gt 0 ] || fail "no call was in flight at any of the 5 attaches: the test proves nothing"
kill -0 "$fixture" || fail "the fixture died while traced"
echo "5 attaches under 8 x 200 us calls: 0 orphans, 0 unmatched returns; $before returns of calls begun before the attach told apart"
