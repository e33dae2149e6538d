#!/bin/sh
# Per-call overhead of retop on main.Tiny (the tightloop fixture), against the
# floor of two no-op uprobes at the very same file offsets (entry + each RET).
#
# In one run, interleaved, R times:  none (no probes), floor (noop_probe),
# retop (retop -b -p PID -t main.Tiny -d 1 -o json). Each measurement is a
# fresh fixture making CALLS calls; its own clock gives elapsed_ns.
# Prints medians of ns/call and the ratios retop/floor (target <= 1.10) and
# (retop-none)/(floor-none); checks that retop's final calls equals CALLS.
#
# Environment: R (5), CALLS (150000), VARIANT (default: tightloop-VARIANT),
# abs_top_builddir (the build tree, default SRCDIR/build), BENCH_BUILD (where
# the loader is built, default $abs_top_builddir/tests/bench).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

R=${R:-5}
CALLS=${CALLS:-150000}
FIX=tightloop-${VARIANT:-default}
FUNC=main.Tiny
# Generous: a probed call costs tens of microseconds at most.
RUN_TIMEOUT=$((CALLS / 10000 + 60))

need_root
need_retop
need_cmd python3
need_fixture "$FIX"
BIN=$FIXTURES/$FIX

need_noop
# ---- the offsets retop uses: its entry probe and every RET site
OFFSETS=$(func_offsets "$BIN" "$FUNC") || fail "no offsets for $FUNC"
nprobes=$(echo "$OFFSETS" | wc -w)

# shellcheck disable=SC2086 # $OFFSETS is a list
run_floor_here() { run_floor floor "$1" $OFFSETS; }

run_retop() {
    RETOP_FLAGS= run_traced retop "$1"
}

echo "overhead: $FIX, $FUNC, $CALLS calls per run, $R rounds interleaved"
echo "  probes at file offsets: $OFFSETS ($nprobes uprobes: entry + RET sites)"
: >"$T/results"
i=1
while [ "$i" -le "$R" ]; do
    # Rotate the order, so no mode always runs first (or right after another).
    case $((i % 3)) in
    1) order="none floor retop" ;;
    2) order="floor retop none" ;;
    0) order="retop none floor" ;;
    esac
    for m in $order; do
        case $m in floor) run_floor_here "$i" ;; *) "run_$m" "$i" ;; esac
    done
    i=$((i + 1))
done

python3 - "$T/results" "$CALLS" <<'EOF'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
want = int(sys.argv[2])
ns = {"none": [], "floor": [], "retop": []}
per_rep = {}
bad = []
for r in rows:
    mode, rep, calls, el = r[0], int(r[1]), int(r[2]), int(r[3])
    v = el / calls
    ns[mode].append(v)
    per_rep.setdefault(rep, {})[mode] = v
    if mode == "retop":
        rc, status = r[4], r[5]
        if rc != str(calls):
            bad.append("round %d: retop counted %s calls of main.Tiny (status %s), the fixture made %d"
                       % (rep, rc, status, calls))

print("\n  round     none ns/call   floor ns/call   retop ns/call   retop/floor")
for rep in sorted(per_rep):
    p = per_rep[rep]
    print("  %5d %16.1f %15.1f %15.1f %13.3f" % (rep, p["none"], p["floor"], p["retop"], p["retop"] / p["floor"]))
m = {k: st.median(v) for k, v in ns.items()}
# A floor run barely slower than no probes at all means the probes never fired.
for rep, p in sorted(per_rep.items()):
    if p["floor"] < 20 * m["none"]:
        bad.append("round %d: the floor (%.1f ns/call) is no slower than no probes: noop_probe's probes did not fire"
                   % (rep, p["floor"]))
ratio = m["retop"] / m["floor"]
extra = (m["retop"] - m["none"]) / (m["floor"] - m["none"])
print("\n  medians:  none %.1f ns/call   floor %.1f ns/call   retop %.1f ns/call" % (m["none"], m["floor"], m["retop"]))
print("  ratio retop/floor             = %.3f   (target <= 1.10: %s)" % (ratio, "met" if ratio <= 1.10 else "NOT met"))
print("  ratio (retop-none)/(floor-none) = %.3f   retop's BPF work adds %.1f%% over the unavoidable trap cost"
      % (extra, (extra - 1) * 100))
print("  median of per-round ratios retop/floor = %.3f" % st.median(p["retop"] / p["floor"] for p in per_rep.values()))
if bad:
    print("  BROKEN:")
    for b in bad:
        print("    " + b)
    sys.exit(1)
print("  calls: retop's final count of main.Tiny equals the fixture's (%d) in all %d retop rounds" % (want, len(ns["retop"])))
EOF
