#!/bin/sh
# The overhead governor at its defaults (no --budget) on
# three functions traced together (the mixed fixture): main.Hot, far over
# any budget; main.Slow, 12 calls of 200 ms; main.Burst, 5,000 quick calls
# back to back after two quiet seconds.  A budget may cost Hot its exact count
# and durations, never the others theirs: Slow and Burst are counted
# exactly and not estimated, Slow's mean is within 5% of the program's own
# clock, and Hot is either exact or an estimate whose 95% interval holds the
# program's exact count.  Nothing is left in flight, unmatched or orphaned.
# The burst waits 2 s, as in serve-budget: Hot's first calls, at full rate
# until the brake takes it out, may spend their second past twice the
# budget, and the brake keeps no burst within it (an estimate, marked).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture mixed-default

trace_fixture mixed-default -quiet 2s -- -t main.Hot -t main.Slow -t main.Burst -d 0.5

# Every broken expectation is listed, in one line.
res=$(python3 - "$SNAP" "$OUT" <<'PY' 2>&1
import json, sys
lines = [l for l in open(sys.argv[1]).read().split("\n")[:-1] if l.strip()]
snap, fx = json.loads(lines[-1]), json.load(open(sys.argv[2]))["per_func"]
bad, summary = [], []
for name in ("main.Hot", "main.Slow", "main.Burst"):
    fs = [f for f in snap.get("functions", []) if f.get("name") == name]
    if len(fs) != 1:
        sys.exit("%s appears %d times in the last snapshot" % (name, len(fs)))
    f, want = fs[0], fx[name]["calls"]
    calls, est, ci = f.get("calls"), f.get("estimated"), f.get("calls_ci95")
    # Outside full mode only timed calls are in flight: said so.
    if f.get("in_flight_sampled") is not (f.get("mode") != "full"):
        bad.append("%s mode %s, in_flight_sampled %r" % (name, f.get("mode"), f.get("in_flight_sampled")))
    for k in ("in_flight", "unmatched_returns", "orphans"):
        if f.get(k) != 0:
            bad.append("%s %s %s" % (name, k, f.get(k)))
    if name == "main.Hot":
        if est is True:
            # The program's exact count must lie in retop's interval.
            # An upper end of null: the probes slowed it past bounding.
            if not (isinstance(ci, list) and len(ci) == 2 and ci[0] <= want and
                    (ci[1] is None or want <= ci[1])):
                bad.append("main.Hot estimated %s calls, calls_ci95 %s does not hold the program's %d" % (calls, ci, want))
        elif est is False:
            if calls != want:
                bad.append("main.Hot not estimated but %s calls, the program made %d" % (calls, want))
        else:
            bad.append("main.Hot estimated is %r, not a bool" % (est,))
    else:
        if est is not False:
            bad.append("%s estimated is %r, expected false" % (name, est))
        if calls != want:
            bad.append("%s %s calls, the program made %d" % (name, calls, want))
    if name == "main.Slow":
        m, w = f.get("mean_ns"), fx[name]["mean_ns"]
        if not isinstance(m, (int, float)) or abs(m - w) > 0.05 * w:
            bad.append("main.Slow mean_ns %s, the program's %d: more than 5%% apart" % (m, w))
    summary.append("%s %s/%s calls %s/%d sampled %s ci95 %s%s" % (
        name, f.get("mode"), f.get("status"), calls, want, f.get("sampled"), ci,
        " trap share %s" % f["trap_share"] if "trap_share" in f else "") +
        (" (estimate stopped: %s)" % f["estimate_stopped"] if "estimate_stopped" in f else ""))
if bad:
    sys.exit("; ".join(bad) + "  [" + "; ".join(summary) + "]")
print("defaults (%s hits/s allowed, a hit %s ns): %s" % (
    snap.get("budget_hits_per_s"), snap.get("probe_hit_ns"), "; ".join(summary)))
PY
) || fail "budget-mixed: $res"
echo "$res"
