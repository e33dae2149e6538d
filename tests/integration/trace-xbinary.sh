#!/bin/sh
# -x BINARY traces every process running the binary, also those started
# after retop: two payments started after retop are both listed as targets and
# every one of their calls is counted.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
need_fixture payments-default

funcs="main.ProcessPayment main.ValidateCard main.CalculateTotal"
# A private copy: -x means every process of this binary, and nobody else
# runs this copy.
snap=$T/snap bin=$T/payments-x
cp "$FIXTURES/payments-default" "$bin" || fail "cannot copy payments-default to $T"
retop_batch "$snap" -x "$bin" -t main.ProcessPayment -t main.ValidateCard -t main.CalculateTotal -d 0.2

# Each fixture has its own ready file (start_fixture names it by fixture).
pids=""
for i in 1 2; do
    rm -f "$T/ready$i"
    "$bin" -ready "$T/ready$i" -calls 40 -workers 4 -out "$T/out$i" &
    pids="$pids $!"
    track_pid "$!"
    wait_file "$T/ready$i" 10 || fail "payments $i did not become ready in 10 s"
done
# retop notices new processes on its own: both become targets.
# shellcheck disable=SC2086 # $pids is a list
sc wait-targets "$snap" 10 "$RETOP_PID" $pids ||
    fail "retop -x $bin: the processes started after it are not its targets: $(retop_err)"
# A snapshot after both were found: the probes are in place for both.
retop_snapshots 1

# shellcheck disable=SC2086 # $pids is a list
kill -USR1 $pids
fixture_result "$T/out1"
fixture_result "$T/out2"
retop_snapshots 1
retop_stop

# The fixtures' counts, summed, as one fixture result.
python3 - "$T/out1" "$T/out2" >"$T/sum" <<'PY'
import json, sys
rs = [json.load(open(p)) for p in sys.argv[1:]]
pf = {n: {"calls": sum(r["per_func"][n]["calls"] for r in rs)} for n in rs[0]["per_func"]}
print(json.dumps({"calls": sum(r["calls"] for r in rs), "per_func": pf}))
PY
# shellcheck disable=SC2086 # lists
{ sc targets "$snap" $pids && sc exact "$snap" "$T/sum" $funcs; } ||
    fail "retop -b -x $bin with two payments -calls 40 started after it: wrong targets or counts"
echo "payments-default x2 under -x: targets$pids, ProcessPayment $(sc get "$snap" main.ProcessPayment calls) calls \
of $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["calls"])' "$T/sum"), \
ValidateCard $(sc get "$snap" main.ValidateCard calls), CalculateTotal $(sc get "$snap" main.CalculateTotal calls)"
