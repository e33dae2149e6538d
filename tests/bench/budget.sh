#!/bin/sh
# The overhead budget against a target far over it: the tightloop fixture
# calls main.Tiny (~7 ns a call) CALLS times; traced in full, each call costs
# two probe hits (tens of microseconds).  In one run, interleaved, R times:
#   none    no retop
#   budget  retop -b -p PID -t main.Tiny --budget PCT (duty-cycled)
# Each run is a fresh fixture; its own clock gives elapsed_ns, and its CPU
# time (user + system: the traps are charged to it) is read from /proc when
# it is done.  Prints the medians and the slowdowns budget/none - 1 of both,
# which must stay within PCT % (the budget is PCT % of one CPU, and the
# fixture keeps one CPU busy).  On a loaded machine the wall clock is noisy;
# the CPU time is the steadier figure.
#
# Environment: R (3), CALLS (800000000: ~6 s unprobed), PCT (1),
# abs_top_builddir (the build tree, default SRCDIR/build).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

R=${R:-3}
CALLS=${CALLS:-800000000}
PCT=${PCT:-1}
FIX=tightloop-default
RUN_TIMEOUT=120

need_root
need_retop
need_cmd python3
need_fixture "$FIX"

result_ns() {
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["elapsed_ns"])' "$1"
}

run_none() {
    out=$T/none.$1.json
    start_fixture "$FIX" -calls "$CALLS" -out "$out"
    kill -USR1 "$FIXTURE_PID"
    wait_file "$out" "$RUN_TIMEOUT" || fail "$FIX made no result in $RUN_TIMEOUT s"
    cpu=$(cpu_s "$FIXTURE_PID")
    stop_pid "$FIXTURE_PID"
    echo "none $1 $(result_ns "$out") $cpu" >>"$T/results"
}

run_budget() {
    out=$T/budget.$1.json
    snaps=$T/budget.$1.snap
    start_fixture "$FIX" -calls "$CALLS" -out "$out"
    "$RETOP" -b -p "$FIXTURE_PID" -t main.Tiny -d 1 -o json --budget "$PCT" >"$snaps" 2>"$T/retop.err" &
    rt=$!
    track_pid "$rt"
    # Attached once the first snapshot is out.
    n=600
    while [ ! -s "$snaps" ] && [ $n -gt 0 ]; do n=$((n - 1)); sleep 0.05; done
    [ -s "$snaps" ] || fail "retop printed no snapshot: $(head -n 3 "$T/retop.err")"
    kill -USR1 "$FIXTURE_PID"
    wait_file "$out" "$RUN_TIMEOUT" || fail "$FIX made no result in $RUN_TIMEOUT s"
    cpu=$(cpu_s "$FIXTURE_PID")
    stop_pid "$rt"
    stop_pid "$FIXTURE_PID"
    st=$(python3 -c 'import json,sys
l = [json.loads(x) for x in open(sys.argv[1])][-1]
f = l["functions"][0]
print("%s %s %s" % (f["status"].replace(" ", "_"), f["sampled"], l["probe_hit_ns"]))' "$snaps")
    echo "budget $1 $(result_ns "$out") $cpu $st" >>"$T/results"
}

echo "budget: $FIX, main.Tiny, $CALLS calls per run, --budget $PCT, $R rounds interleaved"
: >"$T/results"
i=1
while [ "$i" -le "$R" ]; do
    if [ $((i % 2)) -eq 1 ]; then order="none budget"; else order="budget none"; fi
    for m in $order; do "run_$m" "$i"; done
    i=$((i + 1))
done

python3 - "$T/results" "$PCT" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
pct = float(sys.argv[2])
per = {}
for r in rows:
    per.setdefault(int(r[1]), {})[r[0]] = r
print("\n  round   none s  budget s  wall slowdown   none cpu  budget cpu  cpu slowdown   status, sampled, a hit")
for rep in sorted(per):
    n, b = per[rep]["none"], per[rep]["budget"]
    print("  %5d %8.3f %9.3f %13.2f%% %10.2f %11.2f %12.2f%%   %s %s %s ns" % (
        rep, int(n[2]) / 1e9, int(b[2]) / 1e9, (int(b[2]) / int(n[2]) - 1) * 100,
        float(n[3]), float(b[3]), (float(b[3]) / float(n[3]) - 1) * 100, b[4], b[5], b[6]))
mw = st.median(int(p["budget"][2]) / int(p["none"][2]) for p in per.values())
mc = st.median(float(p["budget"][3]) / float(p["none"][3]) for p in per.values())
print("\n  median per-round slowdown: wall %.2f%%, cpu %.2f%% (budget %g%%: cpu %s)"
      % ((mw - 1) * 100, (mc - 1) * 100, pct, "within" if mc - 1 <= pct / 100 else "NOT within"))
PY
