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

# run_plain / run_why / run_args REP: run_traced with their flags (lib.sh)
run_plain() {
    RETOP_FLAGS=--latency-only run_traced plain "$1"
}

run_why() {
    RETOP_FLAGS= run_traced why "$1"
}

run_args() {
    RETOP_FLAGS="--args $FUNC" run_traced args "$1"
}

echo "why-cost: $FIX, $FUNC, $CALLS calls per run, $R rounds interleaved"
: >"$T/results"
interleaved "$R" 3 none plain why args

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
