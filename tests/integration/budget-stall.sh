#!/bin/sh
# An estimate never freezes.  8 goroutines of the estload fixture call
# main.Work (~20 us of CPU) back to back for 12 s: far over the default
# budget even on a loaded machine, so retop estimates it from random
# slices.  4 s in, retop itself
# is stopped (SIGSTOP) for 1.5 s, as CPU starvation or a slow step on its
# ticking thread would stop it; its slices in that time were never planned.
# At the defaults: every snapshot taken while the load runs shows calls/s
# above 0 (it read 0 for good once a slice went unplanned), the time it
# could not account for is stated (estimate_gap_s, at most the stall) and
# imputed, and the final count lies in its 95% interval (or is exact).
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture estload-default

out=$T/estload.out
start_fixture estload-default -load steady -workers 8 -work 20us -duration 12s -settle 1s -out "$out"
retop_batch "$T/snap" -p "$FIXTURE_PID" -t main.Work -d 0.5
t_go=$(date +%s.%N)
kill -USR1 "$FIXTURE_PID"
sleep 4
kill -STOP "$RETOP_PID"
sleep 1.5
kill -CONT "$RETOP_PID"
fixture_result "$out"
retop_snapshots 1
retop_stop "$FIXTURE_PID"

python3 - "$T/snap" "$out" "$t_go" <<'EOF' || fail "the estimate of main.Work froze or missed after retop was stopped for 1.5 s (retop: $(retop_err))"
import json, sys
snaps = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
truth = json.load(open(sys.argv[2]))
t_go = float(sys.argv[3])
bad = []
def work(s):
    return [f for f in s["functions"] if f["name"] == "main.Work"][0]
# Snapshots whose whole interval lies inside the load (12 s from t_go).
during = [s for s in snaps if s["time"] - s["interval_s"] >= t_go + 0.5 and s["time"] <= t_go + 11.5]
if len(during) < 10:
    bad.append("only %d snapshots during the load" % len(during))
for s in during:
    f = work(s)
    if f["calls_per_s"] <= 0:
        bad.append("calls/s %s at %.1f s into the load (status %s)" % (f["calls_per_s"], s["time"] - t_go, f["status"]))
f = work(snaps[-1])
n = truth["calls"]
est = any(work(s)["estimated"] for s in snaps)
if not est:
    bad.append("main.Work was never estimated: %d calls in %.1f s did not pass the budget" % (n, truth["seconds"]))
lo, hi = (f["calls_ci95"] if f["estimated"] else (f["calls"], f["calls"]))
print("main.Work: the program made %d calls; retop %d (%s), 95%% in [%s, %s], %s s imputed, status %s"
      % (n, f["calls"], "estimated" if f["estimated"] else "exact", lo, hi, f.get("estimate_gap_s"), f["status"]))
# The stall's slices, where it hit an estimated period (a timed one counts
# every call at its entry), are a gap of at most the stall.
if f["estimated"] and not f.get("estimate_gap_s", 0) <= 3.0:
    bad.append("estimate_gap_s %s, over the 1.5 s retop was stopped" % f.get("estimate_gap_s"))
if not (lo <= n and (hi is None or n <= hi)):
    bad.append("the program's %d calls are outside [%s, %s]" % (n, lo, hi))
for b in bad:
    print("budget-stall: " + b, file=sys.stderr)
if bad:
    # When the time no slice accounted for grew, for the failure's reader.
    print("budget-stall: s into the load, calls/s, estimate_gap_s, status: " + "; ".join(
        "%.1f %s %s %s" % (s["time"] - t_go, work(s)["calls_per_s"], work(s).get("estimate_gap_s"),
                           work(s)["status"]) for s in snaps), file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
