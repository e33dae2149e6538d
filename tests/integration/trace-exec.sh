#!/bin/sh
# -p on a process that runs exec(), at the default settings.
# 1. The same binary again (a PIE, so its load address moves): 300 calls
#    before, 200 after, and retop counts 500 exactly; its probes were
#    attached anew (one warning line says so, with the time not seen), the
#    call left blocked in main.Hold by the old program is an orphan at once
#    (not after --orphan-timeout's 60 s), and every caller is still named
#    (no "?": the old program's return addresses keep their load address).
# 2. Another program: retop ends with one clear line and exit 0, and the
#    last snapshot says why each function was detached.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd sleep
need_retop
need_fixture lifecycle-pie
bin=$FIXTURES/lifecycle-pie
other=$(command -v sleep)

# The second program waits for SIGUSR1 on its own ready file (r2), then
# exec()s sleep on SIGUSR2.
start_fixture lifecycle-pie -calls 300 -workers 4 -out "$T/o1" \
    -exec "$bin -ready $T/r2 -calls 200 -workers 4 -out $T/o2 -exec $other+30"
pid=$FIXTURE_PID
snap=$T/snap
retop_batch "$snap" -p "$pid" -t main.Work -t main.Hold -d 0.3

kill -USR1 "$pid"
wait_file "$T/o1" 10 || fail "no result from the first program"
sc waitfor "$snap" main.Work calls 300 5 "$RETOP_PID" || fail "the first 300 calls were not counted"
kill -USR2 "$pid"
wait_file "$T/r2" 10 || fail "the program did not exec() itself"
# Its calls count once the probes are back: the warning says when.
n=0
until grep -q 'ran exec() of its binary again: probes attached anew' "$snap.err"; do
    [ "$n" -lt 50 ] || fail "retop did not notice the exec(): $(tail -n 3 "$snap.err")"
    n=$((n + 1))
    sleep 0.1
done
kill -USR1 "$pid"
wait_file "$T/o2" 10 || fail "no result from the program after its exec()"
sc waitfor "$snap" main.Work calls 500 5 "$RETOP_PID" ||
    fail "after the exec(): $(sc get "$snap" main.Work calls) calls; expected 300 + 200"
python3 - "$snap" "$T/o1" "$T/o2" <<'PY' || fail "after the exec() of the same binary"
import json, sys
snap = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
o1, o2 = (json.load(open(p)) for p in sys.argv[2:4])
f = {x["name"]: x for x in snap["functions"]}
work, hold = f["main.Work"], f["main.Hold"]
bad = []
if work["calls"] != o1["calls"] + o2["calls"]:
    bad.append("main.Work: %d calls, the programs made %d" % (work["calls"], o1["calls"] + o2["calls"]))
if sum(s["hits"] for s in work["ret_sites"]) != work["calls"]:
    bad.append("main.Work: RET hits %s do not add up to its calls" % work["ret_sites"])
callers = {c["name"]: c["calls"] for c in work["callers"]}
if "?" in callers or sum(callers.values()) != work["calls"]:
    bad.append("main.Work's callers %s: every call should have a named caller" % callers)
if o1["held"] != 1 or hold["orphans"] != 1 or hold["in_flight"] != 0:
    bad.append("main.Hold: %d held by the old program, %d orphans, %d in flight; expected 1, 1, 0"
               % (o1["held"], hold["orphans"], hold["in_flight"]))
if not snap["unseen_after_exec_s"] > 0:
    bad.append("unseen_after_exec_s is %r: the gap before the new probes is not stated"
               % snap["unseen_after_exec_s"])
for b in bad:
    print("FAIL:", b, file=sys.stderr)
sys.exit(1 if bad else 0)
PY

# Another program: tracing ends, with one line that says why.
kill -USR2 "$pid"
sc gone "$RETOP_PID" 5 || fail "retop still runs 5 s after its target ran exec() of $other"
wait "$RETOP_PID" || fail "retop exited $? after its target ran another program"
grep -q "^retop: PID $pid ran exec() of another program ($other); tracing stopped$" "$snap.err" ||
    fail "no clear line for the exec() of another program: $(tail -n 2 "$snap.err")"
sc status "$snap" "detached: process ran exec() of another program" main.Work main.Hold ||
    fail "the last snapshot does not say why the functions were detached"
running "$pid" || fail "the target did not survive: it should now be $other"
echo "exec() under -p: the same binary counted exactly across it (500/500, 1 orphan at once, callers named); another program ends tracing with one line"
