#!/bin/sh
# 100,000 goroutines in a traced function at once, each calling another
# (retop issue 21), against the fanout fixture's own counts, at retop's
# defaults (-t main.A -t main.B).  Round 1: 100,000 goroutines each call
# main.A, which waits until all are in it, then calls main.B.  Round 2, with
# a fresh retop: 3,000 calls of main.A wait while 10,000 other goroutines
# start and exit (retop's runtime.goexit1 watcher writes a record of each,
# which evicts records of the goroutines in main.A from its LRU maps), then
# go on to main.B.  In both: every call of A and B counted exactly, or the
# count marked estimated (the default budget cannot time 400,000 probe hits
# in a second); nothing in flight, orphaned, dropped or unmatched; and A's
# probe_hits_inside, over its calls not evicted, exactly 2 (B's entry and
# RET; a restart of A by its prologue adds one), or marked a sample.  It
# must be exactly that whenever B's probes were
# never out: a call whose goroutine record was evicted counts no hits and
# is counted in evicted, never as the 1 hit a fresh record shows (before
# the fix: 1.49 a call, evicted 0).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture fanout-default

start_fixture fanout-default -wide 100000 -calls 3000 -churn 10000 -out "$T/out"
fixture=$FIXTURE_PID
for r in 1 2; do
    snap=$T/snap.$r
    retop_batch "$snap" -p "$fixture" -t main.A -t main.B
    fixture_go "$T/out.$r"
    # The calls left in flight drain (the budget gives timed calls 1 s),
    # then two more snapshots.
    for f in main.A main.B; do
        sc waitfor "$snap" "$f" in_flight 0 10 "$RETOP_PID" || fail "round $r: $f still in flight"
    done
    retop_snapshots 2
    retop_stop "$fixture"
    python3 - "$snap" "$T/out.$r" "$r" <<'EOF2'
import json, sys
snap = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
fx = json.load(open(sys.argv[2]))["per_func"]
for f in snap["functions"]:
    print("round %s: %s: %d calls (fixture %d), %s%s, %d timed, %d evicted, probe hits inside %.3f%s"
          % (sys.argv[3], f["name"], f["calls"], fx[f["name"]]["calls"], f["status"],
             " estimated %s" % f["calls_ci95"] if f["estimated"] else "", f["timed_calls"],
             f["evicted"], f["probe_hits_inside"],
             " (exact)" if f["probe_hits_inside_exact"] else
             " (sampled)" if f["probe_hits_inside_sampled"] else " (evicted calls not in it)"))
EOF2
    sc inside "$snap" "$T/out.$r" 2 main.A main.B ||
        fail "round $r: counts or probe hits inside neither exact nor marked"
done
