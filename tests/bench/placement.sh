#!/bin/sh
# Where the entry probe sits, on a function with Go's usual stack-check
# prologue (main.Framed of the tightloop fixture, run with -framed):
#   cmp rsp, [r14+0x10]   the first instruction: single-stepped out of line
#   jbe morestack         the next one: emulated by the kernel in one trap
# In one run, interleaved, R times, each a fresh fixture making CALLS calls
# timed by its own clock:
#   none          no probes
#   floor         the naive floor: no-op uprobes at the first instruction
#                 and at every RET
#   floor_jcc     no-op uprobes at the jbe and at every RET
#   retop_first   retop with its entry probe on the first instruction
#                 (RETOP_ENTRY_PROBE=first: what it did before)
#   retop         retop as it places probes (the jbe)
# Prints medians of ns/call and the ratios to the naive floor; the goal is
# retop/floor <= 0.60.  Checks that every retop run counted every call.
#
# Environment: R (5), CALLS (150000), abs_top_builddir (the build tree,
# default SRCDIR/build), BENCH_BUILD (where the loader is built).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

R=${R:-5}
CALLS=${CALLS:-150000}
FIX=tightloop-default
FIX_FLAGS=-framed
FUNC=main.Framed
RUN_TIMEOUT=$((CALLS / 10000 + 60))

need_root
need_retop
need_cmd python3
need_fixture "$FIX"
need_noop
BIN=$FIXTURES/$FIX
FIRST=$(func_offsets "$BIN" "$FUNC" first) || fail "no offsets for $FUNC"
PLACED=$(func_offsets "$BIN" "$FUNC") || fail "no offsets for $FUNC"
[ "$FIRST" != "$PLACED" ] || fail "retop puts $FUNC's entry probe on its first instruction: nothing to compare"

run_mode() {
    # shellcheck disable=SC2086 # offsets are lists
    case $1 in
    none) run_none "$2" ;;
    floor) run_floor floor "$2" $FIRST ;;
    floor_jcc) run_floor floor_jcc "$2" $PLACED ;;
    retop_first) RETOP_ENTRY_PROBE=first RETOP_FLAGS= run_traced retop_first "$2" ;;
    retop) RETOP_FLAGS= run_traced retop "$2" ;;
    esac
}

echo "placement: $FIX -framed, $FUNC, $CALLS calls per run, $R rounds interleaved"
echo "  first instruction + RETs: $FIRST;  jbe + RETs: $PLACED (file offsets)"
: >"$T/results"
modes="none floor floor_jcc retop_first retop"
i=1
while [ "$i" -le "$R" ]; do
    # Rotate the order, so no mode always runs first.
    set -- $modes
    k=$((i % 5))
    while [ "$k" -gt 0 ]; do
        m=$1
        shift
        set -- "$@" "$m"
        k=$((k - 1))
    done
    for m in "$@"; do run_mode "$m" "$i"; done
    i=$((i + 1))
done

python3 - "$T/results" "$CALLS" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
want = int(sys.argv[2])
modes = ["none", "floor", "floor_jcc", "retop_first", "retop"]
per = {}
bad = []
for r in rows:
    mode, rep, calls, el = r[0], int(r[1]), int(r[2]), int(r[3])
    per.setdefault(rep, {})[mode] = el / calls
    if mode.startswith("retop") and r[4] != str(calls):
        bad.append("round %d: %s counted %s calls (status %s), the fixture made %d"
                   % (rep, mode, r[4], r[5], calls))
print("\n  round" + "".join("%14s" % m for m in modes) + "   retop/floor")
for rep in sorted(per):
    p = per[rep]
    print("  %5d" % rep + "".join("%14.1f" % p[m] for m in modes) + "%14.3f" % (p["retop"] / p["floor"]))
m = {k: st.median(p[k] for p in per.values()) for k in modes}
print("\n  medians, ns/call:" + "".join("  %s %.1f" % (k, m[k]) for k in modes))
for k in ("floor_jcc", "retop_first", "retop"):
    print("  %-12s / floor = %.3f   (median of per-round ratios %.3f)"
          % (k, m[k] / m["floor"], st.median(p[k] / p["floor"] for p in per.values())))
r = m["retop"] / m["floor"]
print("  goal retop/floor <= 0.60: %s" % ("met" if r <= 0.60 else "NOT met"))
if bad:
    print("  BROKEN:")
    for b in bad:
        print("    " + b)
    sys.exit(1)
print("  calls: every retop run counted the fixture's %d calls of main.Framed" % want)
PY
