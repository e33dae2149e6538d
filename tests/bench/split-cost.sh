#!/bin/sh
# Per-call cost of the time split (on by default) on main.Tiny (the
# tightloop fixture): retop as it runs by default against retop
# --time-split off (tracing alone), in one run.
#
# Interleaved, R times: none (no probes), plain (retop --time-split off),
# split (retop).  Each measurement is a fresh fixture making CALLS calls;
# its own clock gives elapsed_ns.  Prints medians of ns/call, split/plain
# (goal <= 1.10) and split - plain in ns a call; beside them the BPF
# programs' own run time a hit as they measured it (probe_prog_ns of the
# last snapshot: entry and RET), which the trap's noise does not blur; and
# checks that retop's final calls equals CALLS each time.
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

# run_plain / run_split REP: run_traced with their flags (lib.sh)
run_plain() {
    RETOP_FLAGS="--time-split off" run_traced plain "$1"
}

run_split() {
    RETOP_FLAGS= run_traced split "$1"
}

echo "split-cost: $FIX, $FUNC, $CALLS calls per run, $R rounds interleaved"
: >"$T/results"
i=1
while [ "$i" -le "$R" ]; do
    case $((i % 3)) in
    1) order="none plain split" ;;
    2) order="plain split none" ;;
    0) order="split none plain" ;;
    esac
    for m in $order; do
        "run_$m" "$i"
    done
    i=$((i + 1))
done

python3 - "$T" "$CALLS" "$FUNC" <<'EOF'
import json, os, sys, statistics as st
tdir, want, func = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [l.split() for l in open(os.path.join(tdir, "results"))]
ns = {"none": [], "plain": [], "split": []}
prog = {"plain": {"entry": [], "ret": []}, "split": {"entry": [], "ret": []}}
per_rep = {}
bad = []
for r in rows:
    mode, rep, calls, el = r[0], int(r[1]), int(r[2]), int(r[3])
    v = el / calls
    ns[mode].append(v)
    per_rep.setdefault(rep, {})[mode] = v
    if mode == "none":
        continue
    if r[4] != str(calls):
        bad.append("round %d: retop (%s) counted %s calls of %s (status %s), the fixture made %d"
                   % (rep, mode, r[4], func, r[5], calls))
    last = [json.loads(l) for l in open(os.path.join(tdir, "%s.%d.snap" % (mode, rep)))][-1]
    f = [f for f in last["functions"] if f["name"] == func][0]
    if (f["time_split"] is None) != (mode == "plain"):
        bad.append("round %d: retop (%s): time_split %s" % (rep, mode, f["time_split"]))
    p = last["probe_prog_ns"]
    prog[mode]["entry"].append(max(p["entry_emulated"], p["entry_stepped"]))
    prog[mode]["ret"].append(p["ret"])

print("\n  round     none ns/call   plain ns/call   split ns/call   split/plain")
for rep in sorted(per_rep):
    p = per_rep[rep]
    print("  %5d %16.1f %15.1f %15.1f %13.3f" % (rep, p["none"], p["plain"], p["split"], p["split"] / p["plain"]))
m = {k: st.median(v) for k, v in ns.items()}
ratio = m["split"] / m["plain"]
print("\n  medians:  none %.1f ns/call   plain %.1f ns/call   split %.1f ns/call" % (m["none"], m["plain"], m["split"]))
print("  ratio split/plain = %.3f   (goal <= 1.10: %s); the split adds %.0f ns a call"
      % (ratio, "met" if ratio <= 1.10 else "NOT met", m["split"] - m["plain"]))
print("  median of per-round ratios split/plain = %.3f" % st.median(p["split"] / p["plain"] for p in per_rep.values()))
pm = {k: {h: st.median(v[h]) for h in v} for k, v in prog.items()}
print("  BPF programs' run time a hit (medians): entry %.0f ns plain, %.0f ns split; RET %.0f ns plain, %.0f ns split:"
      % (pm["plain"]["entry"], pm["split"]["entry"], pm["plain"]["ret"], pm["split"]["ret"]))
print("  the split's own work, %.0f ns a call (entry and RET)"
      % (pm["split"]["entry"] - pm["plain"]["entry"] + pm["split"]["ret"] - pm["plain"]["ret"]))
if bad:
    print("  BROKEN:")
    for b in bad:
        print("    " + b)
    sys.exit(1)
print("  calls: retop's final count of %s equals the fixture's (%d) in all %d retop rounds"
      % (func, want, len(ns["plain"]) + len(ns["split"])))
EOF
