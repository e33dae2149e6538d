#!/bin/sh
# The overhead budget against a target far over it: the tightloop fixture
# calls main.Tiny (~2 ns a call) CALLS times; traced in full, each call costs
# two probe hits (tens of microseconds).  One fixture at a time, pinned to
# CPU 1, and retop pinned to CPU 0, so that retop's own work (sampling,
# pausing and resuming probes) never takes the target's CPU: what is left is
# what the probes cost the target.  Each round, in a rotating order:
#   none    no retop
#   default retop -b -p PID -t main.Tiny at its defaults (10,000 hits/s)
#   PCT     retop -b -p PID -t main.Tiny --budget PCT
# What a run costs is the fixture's CPU time for the same work (the traps
# are charged to it): the sum of its threads' run time from
# /proc/PID/task/*/schedstat, in ns; and of that, the system time the traps
# take (/proc/PID/stat, clock ticks).  Prints per round and as the median of
# the per-round ratios the slowdown PCT/none - 1, of the CPU time and of the
# fixture's own wall clock, and the traps' share of its CPU, against PCT %
# (default: against 10,000 hits a second at the timed cost of a hit).
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
PCTS=${PCTS:-default 1 5}
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

# stime_ticks PID: the system time of PID so far, in clock ticks.
stime_ticks() {
    awk '{ print $15 }' /proc/"$1"/stat
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

# run_one REP PCT: one run on CPU 1 (PCT "none": no retop; else retop
# --budget PCT on CPU 0); appends "REP PCT cpu_ns stime_ticks wall_ns status
# sampled hit_ns" to $T/results.
run_one() {
    start_pinned run 1
    fx=$pinned
    st="- 1 0"
    if [ "$2" != none ]; then
        snaps=$T/budget.$1.$2.snap
        flag="--budget $2"
        [ "$2" != default ] || flag=""
        # shellcheck disable=SC2086 # $flag is one option and its value, or none
        taskset -c 0 "$RETOP" -b -p "$fx" -t main.Tiny -d 1 -o json $flag >"$snaps" 2>"$T/retop.err" &
        rt=$!
        track_pid "$rt"
        wait_lines "$snaps" 1 30 || fail "retop printed no snapshot: $(head -n 3 "$T/retop.err")"
    fi
    c0=$(run_ns "$fx")
    s0=$(stime_ticks "$fx")
    kill -USR1 "$fx"
    wait_file "$T/run.json" "$RUN_TIMEOUT" || fail "$FIX ($2) made no result"
    c1=$(run_ns "$fx")
    s1=$(stime_ticks "$fx")
    if [ "$2" != none ]; then
        have=$(wc -l <"$snaps")
        wait_lines "$snaps" $((have + 1)) 10 || fail "retop stopped printing snapshots"
        stop_pid "$rt"
        st=$(python3 -c 'import json,sys
# The snapshot that sampled the least: one taken during the work (once the
# work is done, the duty cycle opens up again).
l = min((json.loads(x) for x in open(sys.argv[1])), key=lambda s: s["functions"][0]["sampled"])
f = l["functions"][0]
print("%s %s %s" % (f["status"].replace(" ", "_"), f["sampled"], l["probe_hit_ns"]))' "$snaps")
    fi
    stop_pid "$fx"
    w=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["elapsed_ns"])' "$T/run.json")
    echo "$1 $2 $((c1 - c0)) $((s1 - s0)) $w $st" >>"$T/results"
}

echo "budget: $FIX, main.Tiny, $CALLS calls per run, --budget $PCTS, $R rounds; the fixture on CPU 1, retop on CPU 0"
: >"$T/results"
i=1
while [ "$i" -le "$R" ]; do
    # Rotate the order, so no run always goes first.
    set -- none $PCTS
    k=1
    while [ "$k" -lt "$i" ]; do
        first=$1
        shift
        set -- "$@" "$first"
        k=$((k + 1))
    done
    for pct in "$@"; do
        run_one "$i" "$pct"
    done
    i=$((i + 1))
done

python3 - "$T/results" "$(getconf CLK_TCK)" <<'PY'
import sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
tick_ns = 1e9 / int(sys.argv[2])
none = {int(r[0]): (int(r[2]), int(r[4])) for r in rows if r[1] == "none"}
print("\n  round  budget     cpu s  cpu slowdown  wall slowdown  traps/cpu   status, sampled, a hit")
by = {}
for r in rows:
    rep, pct, c, sy, w = int(r[0]), r[1], int(r[2]), int(r[3]), int(r[4])
    cn, wn = none[rep]
    share = sy * tick_ns / c
    if pct != "none":
        by.setdefault(pct, []).append((c / cn, w / wn, share, float(r[7])))
    print("  %5d %7s %9.3f %12.2f%% %13.2f%% %9.2f%%   %s %s %s ns" % (
        rep, pct if pct in ("none", "default") else pct + "%", c / 1e9, (c / cn - 1) * 100,
        (w / wn - 1) * 100, share * 100, r[5], r[6], r[7]))
print()
for pct in sorted(by, key=lambda p: -1 if p == "default" else float(p)):
    mc = st.median(x[0] for x in by[pct])
    mw = st.median(x[1] for x in by[pct])
    ms = st.median(x[2] for x in by[pct])
    if pct == "default":
        # 10,000 hits a second at the timed cost of a hit, of one CPU.
        allow = 10000 * st.median(x[3] for x in by[pct]) / 1e9
        slow = allow / (1 - allow) if allow < 1 else float("inf")
        name = "default (10000/s)"
    else:
        # A slowdown of at most PCT %: traps take at most PCT/(100+PCT).
        slow, allow, name = float(pct) / 100, float(pct) / (100 + float(pct)), "--budget %s%%" % pct
    print("  %s: median slowdown cpu %.2f%% (%s %.2f%%), wall %.2f%%; traps %.2f%% of its cpu (%s %.2f%%)"
          % (name, (mc - 1) * 100, "within" if mc - 1 <= slow else "NOT within", slow * 100,
             (mw - 1) * 100, ms * 100, "within" if ms <= allow * 1.02 else "NOT within", allow * 100))
PY
