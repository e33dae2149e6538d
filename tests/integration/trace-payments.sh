#!/bin/sh
# Exact counts and durations on payments, every build: retop's calls equal the
# fixture's own per-function counts, the mean is within 2% of the fixture's
# clock and p50 within 2% beyond its stated bound (1.6%), and ValidateCard's two RET sites were hit exactly as often
# as the invalid (early return) and valid paths were taken.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_retop
sc() { python3 "$abs_top_srcdir/tests/integration/snapcheck.py" "$@"; }

variants="default stripped pie noopt cgo"
funcs="main.ProcessPayment main.ValidateCard main.CalculateTotal"
for v in $variants; do need_fixture "payments-$v"; done

summary=""
for v in $variants; do
    f=payments-$v snap=$T/$v.snap out=$T/$v.out
    start_fixture "$f" -calls 40 -workers 4 -out "$out"
    fixture=$FIXTURE_PID
    "$RETOP" -b -p "$fixture" -t main.ProcessPayment -t main.ValidateCard \
        -t main.CalculateTotal -d 0.2 -o json >"$snap" 2>"$T/$v.err" &
    rp=$!
    track_pid "$rp"
    sc wait "$snap" 1 15 "$rp" || fail "$f: retop did not attach: $(head -n 3 "$T/$v.err")"
    kill -USR1 "$fixture"
    wait_file "$out" 20 || fail "$f: no result from the fixture in 20 s"
    sc wait "$snap" $(($(sc lines "$snap") + 1)) 5 "$rp" || fail "$f: retop stopped: $(head -n 3 "$T/$v.err")"
    kill -INT "$rp"
    if wait "$rp"; then rc=0; else rc=$?; fi
    [ "$rc" -eq 0 ] || fail "$f: retop exited $rc after SIGINT: $(head -n 3 "$T/$v.err")"
    kill -0 "$fixture" || fail "$f: the fixture died while traced"

    # shellcheck disable=SC2086 # $funcs is a list
    {
        sc exact "$snap" "$out" $funcs &&
            sc status "$snap" tracing $funcs &&
            sc paths "$snap" "$out" main.ValidateCard &&
            sc timing "$snap" "$out" 0.02 $funcs
    } || fail "$f: retop's last snapshot disagrees with the fixture (retop -b -p PID -t ... -d 0.2 -o json; payments -calls 40 -workers 4)"

    summary="$summary$(sc summary "$snap" "$out" main.ProcessPayment "$f"); "
    kill "$fixture"
    wait "$fixture"
done
echo "${summary%; }"
