#!/bin/sh
# The overhead budget on a target far over it: main.Tiny of the tightloop
# fixture, called in a tight loop, makes ~100k probe hits a second traced in
# full, far over the default 10,000 a second even with its entries alone.
# At the defaults retop estimates it from random slices: status "sampled N%"
# with N < 100, "estimated" true with a 95% interval around the estimate, the
# probe hit timed (probe_hit_ns) for the interval's bound.  With --budget 0
# every call is counted: status "tracing", exact.  The forms of --budget and
# RETOP_BUDGET are checked.  The slowdown itself is measured side by side in
# tests/bench/budget.sh; exact counts under the budget in budget-mixed.sh.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture tightloop-default

unset RETOP_BUDGET
start_fixture tightloop-default -loop
kill -USR1 "$FIXTURE_PID"

"$RETOP" -b -p "$FIXTURE_PID" -t main.Tiny -d 0.5 -n 5 -o json >"$T/snap" 2>"$T/err" ||
    fail "retop --budget (default) failed: $(head -n 3 "$T/err")"
python3 - "$T/snap" <<'PY' || fail "main.Tiny over budget is not shown as sampled"
import json, sys
snaps = [json.loads(l) for l in open(sys.argv[1])]
last = snaps[-1]
f = [f for f in last["functions"] if f["name"] == "main.Tiny"][0]
bad = []
if last["budget_hits_per_s"] != 10000 or last["budget_pct"] != 0:
    bad.append("budget %s hits/s, %s%%: expected the default 10000/s" % (last["budget_hits_per_s"], last["budget_pct"]))
# A single-stepped uprobe hit costs microseconds on any machine.
if not 300 <= last["probe_hit_ns"] <= 1000000:
    bad.append("probe_hit_ns %s is not a plausible cost of a probe hit" % last["probe_hit_ns"])
if not f["status"].startswith("sampled ") or not f["status"].endswith("%"):
    bad.append("status %r, expected 'sampled N%%'" % f["status"])
if not 0 < f["sampled"] < 1:
    bad.append("sampled %s, expected below 1 for ~100k hits/s against 10,000" % f["sampled"])
ci = f.get("calls_ci95")
if not (isinstance(ci, list) and ci[0] <= f["calls"] and (ci[1] is None or f["calls"] <= ci[1])):
    bad.append("calls %s outside its own interval %s" % (f["calls"], ci))
if f["mode"] != "estimated" or f["timed_calls"] > f["calls"]:
    bad.append("mode %s, %s timed of %s" % (f["mode"], f["timed_calls"], f["calls"]))
pct = float(f["status"].split()[1].rstrip("%"))
if abs(pct - f["sampled"] * 100) > (0.051 if f["sampled"] < 0.1 else 0.51):
    bad.append("status %r does not match sampled %s" % (f["status"], f["sampled"]))
if f["estimated"] is not True:
    bad.append("estimated is %r" % f["estimated"])
if f["calls"] <= 0 or f["unmatched_returns"] != 0:
    bad.append("calls %s in_flight %s unmatched %s" % (f["calls"], f["in_flight"], f["unmatched_returns"]))
for b in bad:
    print("guard-budget: " + b, file=sys.stderr)
print("default budget: %s, sampled %.4f, estimated calls %d (95%% %s), a hit %d ns" % (f["status"], f["sampled"], f["calls"], ci, last["probe_hit_ns"]))
sys.exit(1 if bad else 0)
PY

"$RETOP" -b -p "$FIXTURE_PID" -t main.Tiny -d 0.3 -n 2 -o json --budget 0 >"$T/full" 2>"$T/err" ||
    fail "retop --budget 0 failed: $(head -n 3 "$T/err")"
sc status "$T/full" tracing main.Tiny || fail "--budget 0: main.Tiny is not traced in full"
[ "$(sc get "$T/full" main.Tiny estimated)" = False ] || fail "--budget 0: counts marked as estimates"
[ "$(sc get "$T/full" main.Tiny sampled)" = 1.0 ] || fail "--budget 0: sampled is not 1"
expect_exit 2 "$RETOP" -b -p "$FIXTURE_PID" -t main.Tiny --budget 101
expect_exit 2 "$RETOP" -b -p "$FIXTURE_PID" -t main.Tiny --budget x
RETOP_BUDGET=lots expect_exit 2 "$RETOP" -b -p "$FIXTURE_PID" -t main.Tiny
grep -q 'RETOP_BUDGET takes the forms of --budget' "$T/err" || fail "a bad RETOP_BUDGET: $(cat "$T/err")"
RETOP_BUDGET=0 "$RETOP" -b -p "$FIXTURE_PID" -t main.Tiny -d 0.3 -n 1 -o json >"$T/env" 2>"$T/err" ||
    fail "RETOP_BUDGET=0 failed: $(head -n 3 "$T/err")"
sc status "$T/env" tracing main.Tiny || fail "RETOP_BUDGET=0: main.Tiny is not traced in full"
# A CPU share: at most 10,000 hits a second still, fewer where a hit is dear.
"$RETOP" -b -p "$FIXTURE_PID" -t main.Tiny -d 0.3 -n 1 -o json --budget 2% >"$T/pct" 2>"$T/err" ||
    fail "--budget 2% failed: $(head -n 3 "$T/err")"
python3 -c 'import json,sys; s=json.loads(open(sys.argv[1]).read().splitlines()[-1]); sys.exit(not (s["budget_pct"] == 2 and 0 < s["budget_hits_per_s"] <= 10000 and s["probe_hit_ns"] > 0))' "$T/pct" ||
    fail "--budget 2%: $(head -c 300 "$T/pct")"
expect_exit 2 "$RETOP" -b -p "$FIXTURE_PID" -t main.Tiny --budget 20000000/s
