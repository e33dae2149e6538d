#!/bin/sh
# retop killed by SIGKILL while its probes fire: the target lives on, the
# kernel drops every BPF program and link retop held, and the target runs at
# its unprobed speed again.
#
# retop -x tightloop-default traces two processes: A works forever (-loop) and
# is hit by the probes when retop is killed; three Bs wait, and run their
# calls only after the kill, so their own clocks tell whether a probe was left.
# shellcheck source-path=SCRIPTDIR source=../lib.sh
. "$(dirname "$0")/../lib.sh"
need_root
need_cmd python3
need_cmd bpftool
need_retop
need_fixture tightloop-default
# A private copy: -x means every process of this binary, and nobody else
# runs this copy. start_fixture runs it from there.
mkdir "$T/bin" || fail "cannot make $T/bin"
cp "$FIXTURES/tightloop-default" "$T/bin/" || fail "cannot copy tightloop-default to $T/bin"
FIXTURES=$T/bin
bin=$FIXTURES/tightloop-default
calls=100000000 # ~0.25 s unprobed; with a probe left, minutes

# ns_per_call OUT: elapsed_ns / calls of a tightloop result, as a float.
ns_per_call() {
    python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["elapsed_ns"] / r["calls"])' "$1"
}

# The unprobed speed: the faster of two runs.
before=inf
for i in 1 2; do
    start_fixture tightloop-default -calls $calls -exit -out "$T/before$i"
    kill -USR1 "$FIXTURE_PID"
    wait_file "$T/before$i" 20 || fail "unprobed tightloop run $i did not finish in 20 s"
    wait "$FIXTURE_PID"
    v=$(ns_per_call "$T/before$i")
    before=$(python3 -c 'import sys; print(min(float(a) for a in sys.argv[1:]))' "$before" "$v")
done

bs=""
for i in 1 2 3; do
    start_fixture tightloop-default -calls $calls -out "$T/after$i"
    bs="$bs $FIXTURE_PID"
done
start_fixture tightloop-default -loop
a=$FIXTURE_PID
kill -USR1 "$a"

snap=$T/snap
# --budget 0: A's tight loop is far over the default budget, which would
# take the probes out between its slices; here they must be firing when
# retop is killed.
retop_batch "$snap" -x "$bin" -t main.Tiny -d 0.2 --budget 0
# Attached to both, and the probes fire in A.
sc waitfor "$snap" main.Tiny status tracing 10 "$RETOP_PID" || fail "main.Tiny is not traced"
retop_snapshots 1
# shellcheck disable=SC2086 # $bs is a list
sc targets "$snap" "$a" $bs || fail "retop -x $bin does not trace both running processes"
hits=$(sc get "$snap" main.Tiny calls)
[ "$hits" -gt 0 ] || fail "no call of main.Tiny counted in process A: the probes do not fire"

# What retop holds, as the kernel sees it (ids are never reused).
sc holds "$RETOP_PID" >"$T/held"
grep -q '^link ' "$T/held" || fail "retop holds no BPF link while tracing: $(tr '\n' ' ' <"$T/held")"
kill -9 "$RETOP_PID"
wait "$RETOP_PID"

kill -0 "$a" || fail "process A died when retop was killed"
for b in $bs; do kill -0 "$b" || fail "process B ($b) died when retop was killed"; done

# Link teardown is asynchronous: poll up to 5 s for every id to go.
python3 "$abs_top_srcdir/tests/integration/snapcheck.py" released "$T/held" 5 ||
    fail "5 s after retop was killed, the kernel still has retop's BPF objects"

# A -loop fixture reads no signal while it works: SIGKILL ends it.
kill -9 "$a"
wait "$a"
# The Bs run now, one at a time: at the unprobed speed. A probe left behind
# costs microseconds a call, 500 times a call's 2 ns, and this machine's own
# noise is up to 1.5 times: allow 5 times (the fastest of three runs against
# the fastest of two before tracing).
after=inf
i=1
for b in $bs; do
    kill -USR1 "$b"
    wait_file "$T/after$i" 20 || fail "B's $calls calls took over 20 s after the kill: a probe is left in it"
    v=$(ns_per_call "$T/after$i")
    after=$(python3 -c 'import sys; print(min(float(a) for a in sys.argv[1:]))' "$after" "$v")
    i=$((i + 1))
done
python3 -c 'import sys; sys.exit(0 if float(sys.argv[2]) <= 5 * float(sys.argv[1]) else 1)' "$before" "$after" ||
    fail "after the kill main.Tiny costs $after ns a call, $before ns before tracing: a probe is left"
echo "tightloop-default: retop -x killed with $hits calls counted and $(wc -l <"$T/held") BPF objects held; all gone, A and B alive, $(printf %.2f "$after") ns/call after vs $(printf %.2f "$before") before"
