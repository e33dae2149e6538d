#!/bin/sh
# The overhead budget against a target far over it: the tightloop fixture
# calls main.Tiny (~2 ns a call) CALLS times; traced in full, each call costs
# two probe hits (tens of microseconds).  Each round runs two fixtures at
# the same time, each pinned to its own CPU (swapped every round), so that
# both see the same machine:
#   none    no retop
#   budget  retop -b -p PID -t main.Tiny --budget PCT (duty-cycled)
# What a fixture costs is its CPU time for the same work (the traps are
# charged to it): the sum of its threads' run time from
# /proc/PID/task/*/schedstat, in ns.  Prints per round and as the median of
# the per-round ratios the slowdown budget/none - 1, of the CPU time and of
# the fixture's own wall clock, against PCT % (the budget is PCT % of one
# CPU, and the fixture keeps one CPU busy).  PCT may be a list (PCTS="1 5
# 20"): each is a round of its own, interleaved.
#
# Environment: R (3), CALLS (10000000000: ~12 s unprobed; a load that starts runs
# at full probe cost for the first 20 ms, 0.2% of that), PCTS (1 5 20),
# abs_top_builddir (the build tree, default SRCDIR/build).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

R=${R:-3}
CALLS=${CALLS:-10000000000}
PCTS=${PCTS:-1 5 20}
FIX=tightloop-default
RUN_TIMEOUT=180

need_root
need_retop
need_cmd python3
need_cmd taskset
need_fixture "$FIX"
[ "$(nproc)" -ge 2 ] || fail "needs two CPUs: one per fixture"

# run_ns PID: the CPU time of every thread of PID, in ns.
run_ns() {
    cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%.0f\n", s }'
}

# start_pinned NAME CPU: a fixture on one CPU, waiting for SIGUSR1; its PID
# in $pinned.
start_pinned() {
    rm -f "$T/$1.ready" "$T/$1.json"
    taskset -c "$2" "$FIXTURES/$FIX" -ready "$T/$1.ready" -calls "$CALLS" -out "$T/$1.json" &
    pinned=$!
    track_pid "$pinned"
    wait_file "$T/$1.ready" 10 || fail "$FIX did not become ready in 10 s"
}

# round REP PCT CPU_NONE CPU_BUDGET: one side-by-side pair; appends
# "REP PCT none_cpu_ns budget_cpu_ns none_wall_ns budget_wall_ns status
# sampled hit_ns" to $T/results.
round() {
    start_pinned none "$3"
    none=$pinned
    start_pinned budget "$4"
    budget=$pinned
    snaps=$T/budget.$1.$2.snap
    "$RETOP" -b -p "$budget" -t main.Tiny -d 1 -o json --budget "$2" >"$snaps" 2>"$T/retop.err" &
    rt=$!
    track_pid "$rt"
    wait_lines "$snaps" 1 30 || fail "retop printed no snapshot: $(head -n 3 "$T/retop.err")"
    c0n=$(run_ns "$none")
    c0b=$(run_ns "$budget")
    kill -USR1 "$none" "$budget"
    wait_file "$T/none.json" "$RUN_TIMEOUT" || fail "$FIX (none) made no result"
    wait_file "$T/budget.json" "$RUN_TIMEOUT" || fail "$FIX (budget) made no result"
    c1n=$(run_ns "$none")
    c1b=$(run_ns "$budget")
    have=$(wc -l <"$snaps")
    wait_lines "$snaps" $((have + 1)) 10 || fail "retop stopped printing snapshots"
    stop_pid "$rt"
    stop_pid "$none"
    stop_pid "$budget"
    st=$(python3 -c 'import json,sys
# The snapshot that sampled the least: one taken during the work (once the
# work is done, the duty cycle opens up again).
l = min((json.loads(x) for x in open(sys.argv[1])), key=lambda s: s["functions"][0]["sampled"])
f = l["functions"][0]
print("%s %s %s" % (f["status"].replace(" ", "_"), f["sampled"], l["probe_hit_ns"]))' "$snaps")
    wn=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["elapsed_ns"])' "$T/none.json")
    wb=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["elapsed_ns"])' "$T/budget.json")
    echo "$1 $2 $((c1n - c0n)) $((c1b - c0b)) $wn $wb $st" >>"$T/results"
}

echo "budget: $FIX, main.Tiny, $CALLS calls per run, --budget $PCTS, $R rounds, side by side on two CPUs"
: >"$T/results"
i=1
while [ "$i" -le "$R" ]; do
    for pct in $PCTS; do
        if [ $((i % 2)) -eq 1 ]; then round "$i" "$pct" 0 1; else round "$i" "$pct" 1 0; fi
    done
    i=$((i + 1))
done

python3 - "$T/results" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
print("\n  round  budget   none cpu s  budget cpu s  cpu slowdown  wall slowdown   status, sampled, a hit")
by = {}
for r in rows:
    rep, pct, cn, cb, wn, wb = int(r[0]), float(r[1]), int(r[2]), int(r[3]), int(r[4]), int(r[5])
    by.setdefault(pct, []).append((cb / cn, wb / wn))
    print("  %5d %6g%% %12.3f %13.3f %12.2f%% %13.2f%%   %s %s %s ns" % (
        rep, pct, cn / 1e9, cb / 1e9, (cb / cn - 1) * 100, (wb / wn - 1) * 100, r[6], r[7], r[8]))
print()
for pct in sorted(by):
    mc = st.median(c for c, _ in by[pct])
    mw = st.median(w for _, w in by[pct])
    print("  --budget %g%%: median slowdown cpu %.2f%%, wall %.2f%%: cpu %s the budget"
          % (pct, (mc - 1) * 100, (mw - 1) * 100, "within" if mc - 1 <= pct / 100 else "NOT within"))
PY
