#!/bin/sh
# A long call is a call: three calls of main.Long, 3 s each on three
# goroutines, traced with --orphan-timeout 1 (so that they pass it while in
# flight) and --slow 2s (so that each is a slow call). While they run a
# snapshot shows all three in flight and overdue, the age of the oldest
# growing from one snapshot to the next; once they returned retop counts 3
# calls, their mean and max within 5% of the fixture's own clock, 3 slow
# calls, and no orphan, no unmatched return, nothing in flight.
# The calls begin after two snapshots of main.Long never called: a sample
# then reads nothing of it while its counters stand still, and must see
# the first entry all the same.
# -d 0.5: two refreshes a second, so that snapshots fall inside the 2 s the
# calls are overdue.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture stress-default

snap=$T/snap out=$T/out
start_fixture stress-default -mode long -calls 3 -workers 3 -out "$out"
fixture=$FIXTURE_PID
retop_batch "$snap" -p "$fixture" -t main.Long -d 0.5 --orphan-timeout 1 --slow 2s
retop_snapshots 2
idle=$(sc lines "$snap")
fixture_go "$out"
done_at=$(date +%s.%N)
# A full interval after: that snapshot's sweep began after the returns.
sc after "$snap" "$(awk -v t="$done_at" 'BEGIN { printf "%.3f", t + 0.5 }')" 10 "$RETOP_PID" ||
    fail "no snapshot one interval after the calls returned"
retop_stop "$fixture"

python3 - "$snap" "$out" "$idle" <<'EOF' || fail "retop -p PID -t main.Long -d 0.5 --orphan-timeout 1 --slow 2s: see above"
import json, sys
snaps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fx = json.load(open(sys.argv[2]))["per_func"]["main.Long"]
rows = [[f for f in s["functions"] if f["name"] == "main.Long"][0] for s in snaps]
bad = []
for i, r in enumerate(rows[:int(sys.argv[3])]):
    if (r["calls"], r["in_flight"], r["status"]) != (0, 0, "tracing"):
        bad.append("snapshot %d, before any call: calls %d, in_flight %d, %s: expected 0, 0, tracing"
                   % (i + 1, r["calls"], r["in_flight"], r["status"]))
if fx["calls"] != 3:
    bad.append("the fixture made %d calls, expected 3" % fx["calls"])
# While they run: all three in flight, overdue, none an orphan, the oldest growing.
over = [r for r in rows if r["overdue"] == 3]
if not over:
    bad.append("no snapshot shows 3 calls overdue; (in_flight, overdue) seen: %s"
               % sorted({(r["in_flight"], r["overdue"]) for r in rows}))
for r in over:
    if r["in_flight"] != 3 or r["orphans"] != 0 or r["calls"] != 0:
        bad.append("overdue 3 with in_flight %d, orphans %d, calls %d: expected 3, 0, 0"
                   % (r["in_flight"], r["orphans"], r["calls"]))
ages = [r["oldest_in_flight_ns"] for r in over]
if any(b <= a for a, b in zip(ages, ages[1:])):
    bad.append("oldest_in_flight_ns did not grow while overdue: %s" % ages)
last = rows[-1]
want = {"calls": 3, "orphans": 0, "unmatched_returns": 0, "in_flight": 0, "overdue": 0,
        "dropped": 0, "slow_calls_total": 3, "status": "tracing"}
for k, v in want.items():
    if last.get(k) != v:
        bad.append("after the calls: %s is %r, expected %r" % (k, last.get(k), v))
for k in ("mean_ns", "max_ns"):
    rel = abs(last[k] - fx[k]) / fx[k]
    if rel > 0.05:
        bad.append("%s: retop %d, the fixture %d: %.2f%% apart, allowed 5%%"
                   % (k, last[k], fx[k], 100 * rel))
for b in bad:
    print("trace-long: " + b, file=sys.stderr)
if not bad:
    print("long: 3 calls of %.2f s (fixture mean); retop %d calls, mean %.3f s, max %.3f s, "
          "3 overdue in %d snapshots, 0 orphans, 0 unmatched" % (fx["mean_ns"] / 1e9, last["calls"],
          last["mean_ns"] / 1e9, last["max_ns"] / 1e9, len(over)))
sys.exit(1 if bad else 0)
EOF
