#!/bin/sh
# What reading a call's error costs, on main.TinyErr (the tightloop fixture
# with -err N: a few arithmetic operations returning an error, non-nil every
# Nth call): retop as it runs by default, which reads the error result at
# every RET, against the same retop with RETOP_ERRORS=off (tracing alone:
# no register read, no failing call counted), in one run.
#
# Interleaved, R times: none (no probes), off (RETOP_ERRORS=off, none
# failing), reading (errors read, none failing: the register's read alone),
# fail10 (every 10th call fails) and fail1 (every call fails: the read,
# the count, the caller's, the duration and the type of each).  Each
# measurement is a fresh fixture making CALLS calls; its own clock gives
# elapsed_ns.  Prints medians of ns/call and, per mode, what it adds to a
# call against off and that as a share of what tracing (off - none) costs;
# and, steadier, the RET program's own run time as BPF measures it at every
# hit (probe_prog_ns.ret): what reading the error adds inside the program,
# the trap around it being the same.  Checks that retop counted every call,
# and every error, as the fixture did (and none with RETOP_ERRORS=off).
#
# Environment: R (5), CALLS (50000), abs_top_builddir (the build tree,
# default SRCDIR/build).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

R=${R:-5}
CALLS=${CALLS:-50000}
FIX=tightloop-default
FUNC=main.TinyErr
RUN_TIMEOUT=$((CALLS / 10000 + 60))

need_root
need_retop
need_cmd python3
need_fixture "$FIX"

# errors_of SNAPS: "errors" of $FUNC in the last snapshot (None: not read)
# and the RET program's mean run time (probe_prog_ns.ret, as BPF measures
# it hit by hit).
errors_of() {
    python3 -c 'import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
f = [f for f in last["functions"] if f["name"] == sys.argv[2]][0]
print(f["errors"], last["probe_prog_ns"]["ret"])' "$1" "$FUNC"
}

# run MODE REP FAIL_EVERY [off]: run_traced (lib.sh) of main.TinyErr failing
# every FAIL_EVERYth call, the errors read unless "off"; appends the
# fixture's and retop's errors to the result line.
run() {
    FIX_FLAGS="-err $3"
    RETOP_FLAGS=
    if [ "${4:-}" = off ]; then
        export RETOP_ERRORS=off
    fi
    run_traced "$1" "$2"
    unset RETOP_ERRORS
    line=$(tail -n 1 "$T/results")
    want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["errors"])' "$T/$1.$2.json")
    sed -i '$d' "$T/results"
    echo "$line $want $(errors_of "$T/$1.$2.snap")" >>"$T/results"
}

run_none() {
    FIX_FLAGS="-err 0"
    out=$T/none.$1.json
    # shellcheck disable=SC2086 # $FIX_FLAGS is a list
    start_fixture "$FIX" -calls "$CALLS" -out "$out" $FIX_FLAGS
    work "$out"
    stop_pid "$FIXTURE_PID"
    echo "none $1 $(result_fields "$out")" >>"$T/results"
}
run_off() { run off "$1" 0 off; }
run_read() { run reading "$1" 0; }
run_fail10() { run fail10 "$1" 10; }
run_fail1() { run fail1 "$1" 1; }

echo "errors: $FIX -err N, $FUNC, $CALLS calls per run, $R rounds interleaved"
: >"$T/results"
interleaved "$R" 5 none off read fail10 fail1

python3 - "$T/results" "$CALLS" <<'EOF'
import sys, statistics as st
modes = ["none", "off", "reading", "fail10", "fail1"]
ns = {m: [] for m in modes}
prog = {}
bad = []
for r in (l.split() for l in open(sys.argv[1])):
    mode, rep, calls, el = r[0], int(r[1]), int(r[2]), int(r[3])
    ns[mode].append(el / calls)
    if mode == "none":
        continue
    got_calls, want_err, got_err = r[4], r[6], r[7]
    prog.setdefault(mode, []).append(float(r[8]))
    if got_calls != str(calls):
        bad.append("round %d: retop (%s) counted %s calls, the fixture made %d" % (rep, mode, got_calls, calls))
    if mode == "off" and got_err != "None":
        bad.append("round %d: RETOP_ERRORS=off, and retop counted %s errors" % (rep, got_err))
    if mode != "off" and got_err != want_err:
        bad.append("round %d: retop (%s) counted %s errors, the fixture %s" % (rep, mode, got_err, want_err))
m = {k: st.median(v) for k, v in ns.items()}
trace = m["off"] - m["none"]
print("\n  medians (ns/call): " + "   ".join("%s %.1f" % (k, m[k]) for k in modes))
print("  tracing alone (off - none): %.1f ns/call" % trace)
for k in ("reading", "fail10", "fail1"):
    d = m[k] - m["off"]
    print("  %-6s - off: %+7.1f ns/call (%+.1f%% of tracing alone), %s/off %.3f" %
          (k, d, 100 * d / trace if trace else 0, k, m[k] / m["off"]))
p = {k: st.median(v) for k, v in prog.items()}
print("\n  RET program run time (BPF's own clock, median of the runs' means): " +
      "   ".join("%s %.0f ns" % (k, p[k]) for k in modes[1:]))
for k in ("reading", "fail10", "fail1"):
    print("  %-7s - off: %+5.0f ns a call in the RET program (%+.1f%% of it)" %
          (k, p[k] - p["off"], 100 * (p[k] - p["off"]) / p["off"]))
for b in bad:
    print("BROKEN: " + b)
sys.exit(1 if bad else 0)
EOF
