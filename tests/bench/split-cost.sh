#!/bin/sh
# Per-call cost of the time split (on by default) on main.Tiny (the
# tightloop fixture): retop as it runs by default against retop
# --time-split off (tracing alone), in one run; and with --time-split sched
# (whose probes on Go's scheduler cost a trap at each goroutine switch, not
# a call: the loop makes none).
#
# Interleaved, R times: none (no probes), plain (retop --time-split off),
# split (retop), sched (retop --time-split sched).  Each measurement is a
# fresh fixture making CALLS calls; its own clock gives elapsed_ns.  Prints
# medians of ns/call, split/plain (goal <= 1.10), sched/plain and what each
# adds in ns a call; beside them the BPF programs' own run time a hit as
# they measured it (probe_prog_ns of the last snapshot: entry and RET),
# which the trap's noise does not blur; and checks that retop's final calls
# equals CALLS each time.
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

run_sched() {
    RETOP_FLAGS="--time-split sched" run_traced sched "$1"
}

echo "split-cost: $FIX, $FUNC, $CALLS calls per run, $R rounds interleaved"
: >"$T/results"
interleaved "$R" 3 none plain split sched

python3 - "$T" "$CALLS" "$FUNC" <<'EOF'
import json, os, sys, statistics as st
tdir, want, func = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [l.split() for l in open(os.path.join(tdir, "results"))]
ns = {"none": [], "plain": [], "split": [], "sched": []}
prog = {m: {"entry": [], "ret": []} for m in ("plain", "split", "sched")}
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

print("\n  round     none ns/call   plain ns/call   split ns/call   sched ns/call   split/plain   sched/plain")
for rep in sorted(per_rep):
    p = per_rep[rep]
    print("  %5d %16.1f %15.1f %15.1f %15.1f %13.3f %13.3f" % (rep, p["none"], p["plain"], p["split"],
          p["sched"], p["split"] / p["plain"], p["sched"] / p["plain"]))
m = {k: st.median(v) for k, v in ns.items()}
ratio = m["split"] / m["plain"]
print("\n  medians:  none %.1f ns/call   plain %.1f ns/call   split %.1f ns/call   sched %.1f ns/call"
      % (m["none"], m["plain"], m["split"], m["sched"]))
print("  ratio split/plain = %.3f   (goal <= 1.10: %s); the split adds %.0f ns a call"
      % (ratio, "met" if ratio <= 1.10 else "NOT met", m["split"] - m["plain"]))
print("  median of per-round ratios split/plain = %.3f" % st.median(p["split"] / p["plain"] for p in per_rep.values()))
print("  ratio sched/plain = %.3f; --time-split sched adds %.0f ns a call (and a trap a goroutine switch)"
      % (m["sched"] / m["plain"], m["sched"] - m["plain"]))
pm = {k: {h: st.median(v[h]) for h in v} for k, v in prog.items()}
for k in ("split", "sched"):
    print("  BPF programs' run time a hit (medians): entry %.0f ns plain, %.0f ns %s; RET %.0f ns plain, %.0f ns %s:"
          % (pm["plain"]["entry"], pm[k]["entry"], k, pm["plain"]["ret"], pm[k]["ret"], k))
    print("    %s's own work, %.0f ns a call (entry and RET)"
          % (k, pm[k]["entry"] - pm["plain"]["entry"] + pm[k]["ret"] - pm["plain"]["ret"]))
if bad:
    print("  BROKEN:")
    for b in bad:
        print("    " + b)
    sys.exit(1)
print("  calls: retop's final count of %s equals the fixture's (%d) in all %d retop rounds"
      % (func, want, len(ns["plain"]) + len(ns["split"]) + len(ns["sched"])))
EOF
