#!/bin/sh
# Per-call cost of latency by caller and the slowest calls, on main.Tiny (the
# tightloop fixture): retop as it runs by default (callers + slowest) against
# retop --latency-only (plain tracing: counters and the histogram), in one run.
#
# Interleaved, R times: none (no probes), plain (retop --latency-only), why
# (retop), args (retop --args main.Tiny: callers + slowest + arguments).  Each measurement is a fresh fixture making CALLS calls; its own
# clock gives elapsed_ns.  Prints medians of ns/call, the ratios why/plain
# and args/plain (goal <= 1.10) and (why-none)/(plain-none), the extra BPF work against the
# whole probe cost; checks that retop's final calls equals CALLS each time.
#
# Environment: R (5), CALLS (150000), VARIANT (default: tightloop-VARIANT),
# abs_top_builddir (the build tree, default SRCDIR/build).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

R=${R:-5}
CALLS=${CALLS:-150000}
FIX=tightloop-${VARIANT:-default}
FUNC=main.Tiny
RUN_TIMEOUT=$((CALLS / 10000 + 60))

need_root
need_retop
need_cmd python3
need_fixture "$FIX"

# run_retop / run_plain / run_why / run_args REP: append "MODE REP calls elapsed_ns retop_calls"
run_retop() {
    mode=$1
    shift
    out=$T/$mode.$1.json
    snaps=$T/$mode.$1.snap
    start_fixture "$FIX" -calls "$CALLS" -out "$out"
    # shellcheck disable=SC2086 # $RETOP_FLAGS is a list
    "$RETOP" -b -p "$FIXTURE_PID" -t "$FUNC" -d 1 -o json $RETOP_FLAGS >"$snaps" 2>"$T/retop.err" &
    rt=$!
    track_pid "$rt"
    wait_lines "$snaps" 1 30 ||
        fail "retop -b -p $FIXTURE_PID -t $FUNC printed no snapshot in 30 s: $(head -n 3 "$T/retop.err")"
    work "$out"
    # The fixture stays alive: wait for two more snapshots, so the last one
    # was certainly taken after the last call returned.
    have=$(wc -l <"$snaps")
    wait_lines "$snaps" $((have + 2)) 10 ||
        fail "retop stopped printing snapshots: $(head -n 3 "$T/retop.err")"
    stop_pid "$rt"
    [ "$stop_rc" -eq 0 ] || fail "retop exited $stop_rc on SIGTERM: $(head -n 3 "$T/retop.err")"
    stop_pid "$FIXTURE_PID"
    got=$(python3 - "$snaps" "$FUNC" <<'EOF'
import json, sys
last = None
for line in open(sys.argv[1]):
    last = json.loads(line)
for f in last["functions"]:
    if f["name"] == sys.argv[2]:
        print(f["calls"], f["status"].replace(" ", "_"))
        break
else:
    print("missing none")
EOF
) || fail "cannot parse retop's snapshots in $snaps"
    echo "$mode $1 $(result_fields "$out") $got" >>"$T/results"
}

run_plain() {
    RETOP_FLAGS=--latency-only run_retop plain "$1"
}

run_why() {
    RETOP_FLAGS= run_retop why "$1"
}

run_args() {
    RETOP_FLAGS="--args $FUNC" run_retop args "$1"
}

echo "why-cost: $FIX, $FUNC, $CALLS calls per run, $R rounds interleaved"
: >"$T/results"
i=1
while [ "$i" -le "$R" ]; do
    case $((i % 3)) in
    1) order="none plain why args" ;;
    2) order="plain why args none" ;;
    0) order="why args none plain" ;;
    esac
    for m in $order; do
        "run_$m" "$i"
    done
    i=$((i + 1))
done

python3 - "$T/results" "$CALLS" <<'EOF'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
ns = {"none": [], "plain": [], "why": [], "args": []}
per_rep = {}
bad = []
for r in rows:
    mode, rep, calls, el = r[0], int(r[1]), int(r[2]), int(r[3])
    v = el / calls
    ns[mode].append(v)
    per_rep.setdefault(rep, {})[mode] = v
    if mode != "none" and r[4] != str(calls):
        bad.append("round %d: retop (%s) counted %s calls, the fixture made %d" % (rep, mode, r[4], calls))
print("\n  round     none ns/call   plain ns/call     why ns/call    args ns/call     why/plain    args/plain")
for rep in sorted(per_rep):
    p = per_rep[rep]
    print("  %5d %16.1f %15.1f %15.1f %15.1f %13.3f %13.3f" % (rep, p["none"], p["plain"], p["why"], p["args"],
          p["why"] / p["plain"], p["args"] / p["plain"]))
m = {k: st.median(v) for k, v in ns.items()}
ratio = m["why"] / m["plain"]
extra = (m["why"] - m["none"]) / (m["plain"] - m["none"])
print("\n  medians:  none %.1f ns/call   plain %.1f   why %.1f   args %.1f ns/call" % (m["none"], m["plain"], m["why"], m["args"]))
print("  ratio why/plain                 = %.3f   (goal <= 1.10: %s)" % (ratio, "met" if ratio <= 1.10 else "NOT met"))
print("  ratio (why-none)/(plain-none)   = %.3f" % extra)
ra = m["args"] / m["plain"]
print("  ratio args/plain                = %.3f   (goal <= 1.10: %s)" % (ra, "met" if ra <= 1.10 else "NOT met"))
for b in bad:
    print("FAIL: " + b)
sys.exit(1 if bad else 0)
EOF
