#!/bin/sh
# The target exits: retop (batch, -p) prints a last snapshot in which every
# function is "detached: process exited", with the complete counts, and ends
# by itself with status 0.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture payments-default

funcs="main.ProcessPayment main.ValidateCard main.CalculateTotal"
snap=$T/snap out=$T/out
start_fixture payments-default -calls 40 -workers 4 -exit -out "$out"
fixture=$FIXTURE_PID
retop_batch "$snap" -p "$fixture" -t main.ProcessPayment -t main.ValidateCard -t main.CalculateTotal -d 0.2
fixture_go "$out"
wait "$fixture"
sc gone "$RETOP_PID" 5 || fail "retop -b -p PID still runs 5 s after its target exited"
if wait "$RETOP_PID"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "retop exited $rc after its target exited, expected 0: $(retop_err)"

# shellcheck disable=SC2086 # $funcs is a list
sc status "$snap" "detached: process exited" $funcs ||
    fail "the last snapshot does not say 'detached: process exited' for every function"
# Counts as exact as ever (the statuses are checked above, not "tracing").
# shellcheck disable=SC2086 # $funcs is a list
python3 - "$snap" "$out" $funcs <<'PY' || fail "payments -exit: the last snapshot's counts differ from the fixture's"
import json, sys
snap = json.loads(open(sys.argv[1]).read().strip().split("\n")[-1])
fx = json.load(open(sys.argv[2]))
bad = 0
for name in sys.argv[3:]:
    f = [f for f in snap["functions"] if f["name"] == name][0]
    want = fx["per_func"][name]["calls"]
    for k, v in (("calls", want), ("in_flight", 0), ("orphans", 0), ("unmatched_returns", 0)):
        if f[k] != v:
            print("snapcheck: %s: %s is %s, expected %s" % (name, k, f[k], v), file=sys.stderr)
            bad = 1
sys.exit(bad)
PY
# shellcheck disable=SC2086 # $funcs is a list
echo "payments-default -exit: retop ended by itself, status 0, '$(sc get "$snap" main.ProcessPayment status)'; \
calls $(sc get "$snap" main.ProcessPayment calls)/$(sc get "$snap" main.ValidateCard calls)/$(sc get "$snap" main.CalculateTotal calls) \
= fixture's $(python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["per_func"]; print("/".join(str(p[n]["calls"]) for n in sys.argv[2:]))' "$out" $funcs)"
