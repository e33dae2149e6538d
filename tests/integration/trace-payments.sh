#!/bin/sh
# Exact counts and durations on payments, every build: retop's calls equal the
# fixture's own per-function counts, the mean is within 2% of the fixture's
# clock and p50 within 2% beyond its stated bound (1.6%), and ValidateCard's two RET sites were hit exactly as often
# as the invalid (early return) and valid paths were taken; ProcessPayment's
# calls hold exactly the probe hits of the callees each path traced.
# The work begins after two snapshots of the three never called: a sample
# reads nothing of a function while its counters stand still at 0, and
# must see its first calls all the same.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop

variants="default stripped pie noopt cgo"
funcs="main.ProcessPayment main.ValidateCard main.CalculateTotal"
for v in $variants; do need_fixture "payments-$v"; done

summary=""
for v in $variants; do
    f=payments-$v
    IDLE_SNAPSHOTS=2 trace_fixture "$f" -calls 40 -workers 4 -- -t main.ProcessPayment -t main.ValidateCard \
        -t main.CalculateTotal -d 0.2

    # shellcheck disable=SC2086 # $funcs is a list
    {
        sc exact "$SNAP" "$OUT" $funcs &&
            sc status "$SNAP" tracing $funcs &&
            sc paths "$SNAP" "$OUT" main.ValidateCard &&
            sc timing "$SNAP" "$OUT" 0.02 $funcs
    } || fail "$f: retop's last snapshot disagrees with the fixture (retop -b -p PID -t ... -d 0.2 -o json; payments -calls 40 -workers 4)"

    # The traps of traced callees inside each call, counted per goroutine in
    # BPF: ValidateCard's entry and RET in every ProcessPayment, and
    # CalculateTotal's on the valid path; none inside the leaves.
    python3 - "$SNAP" "$OUT" <<'PY' || fail "$f: probe hits inside the calls differ from the paths taken"
import json, sys
snap = json.loads(open(sys.argv[1]).read().splitlines()[-1])
fx = json.load(open(sys.argv[2]))
got = {f["name"]: f["probe_hits_inside"] for f in snap["functions"]}
calls = fx["per_func"]["main.ProcessPayment"]["calls"]
want = {"main.ProcessPayment": round((2 * calls + 2 * fx["paths"]["valid"]) / calls, 3),
        "main.ValidateCard": 0, "main.CalculateTotal": 0}
if any(abs(got[k] - w) > 0.0005 for k, w in want.items()):
    print("probe hits inside a call: retop %s, the paths taken give %s" % (got, want))
    sys.exit(1)
PY
    summary="$summary$(sc summary "$SNAP" "$OUT" main.ProcessPayment "$f"); "
    kill "$FIXTURE_PID"
    wait "$FIXTURE_PID"
done
echo "${summary%; }"
