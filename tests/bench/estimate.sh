#!/bin/sh
# Do the overhead budget's estimates hold the truth?  At retop's defaults
# (10,000 probe hits a second), a function whose calls, even counted at
# their entry, exceed the budget is "estimated": its probes are in only for
# random 100 ms slices, and its snapshot gives calls (the estimate),
# estimated: true and calls_ci95 [lo, hi] (hi null: unbounded).  The claim:
# that 95% interval holds the program's own count in at least 95% of
# trials, on a steady and on a bursty load.
#
# The estload fixture calls main.Work (a fixed amount of CPU work a call,
# -work, default 100 us) from WORKERS goroutines for DURATION seconds and
# counts its calls exactly (a counter per goroutine):
#   steady   every goroutine calls Work back to back
#   bursty   all call it back to back for 300 ms, then all pause 700 ms
# Each trial, for each load (alternating which goes first): a fresh
# fixture; retop -b -p PID -t main.Work -d 1 -o json at its defaults
# (no --budget); once its first snapshot is out,
# SIGUSR1; once the fixture wrote its count (1.5 s after its last call),
# one more snapshot, then SIGINT (retop prints a last snapshot and exits
# 0).  From the last snapshot's main.Work, a trial holds when
#   estimated is false and calls == the program's count, or
#   estimated is true and lo <= count and (hi is null or count <= hi).
# Prints a line per trial (the truth and its rate, retop's calls, the mode
# it reached during the load, the interval, the estimate's relative error,
# the interval's half-width relative to the truth, sampled and the cost of
# a hit as the last snapshot in that mode gave them, trap_share; the last
# snapshot can be back in full mode, the load over) and per load: trials, held,
# coverage, how many were exact / bounded / unbounded estimates, the
# median relative error of the estimates and the median relative
# half-width of the bounded ones; then
#   estimate: coverage steady X% (n/T), bursty Y% (n/T) (goal >= 95%)
# The snapshots, retop's stderr and the fixture's result of every trial
# that missed are kept in MISSES (and the series of its snapshots printed).
#
# Environment: T (20, trials per load; TRIALS is the same), WORK (the
# fixture's -work, default its own: 100us), WORKERS (8), DURATION (8, seconds
# of load), LOADS ("steady bursty"), MISSES (where the trials that missed are
# kept, default $abs_top_builddir/tests/bench/estimate-misses, emptied
# first), abs_top_builddir (the build tree, default SRCDIR/build).
# A benchmark, not a test: exits 0 whatever the coverage, 1 when something
# broke (retop failed or printed no snapshot, the fixture died), 77 when a
# prerequisite is missing.

# lib.sh takes T for its temporary directory: the trials first.
TRIALS=${TRIALS:-${T:-20}}
unset T
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

WORKERS=${WORKERS:-8}
DURATION=${DURATION:-8}
LOADS=${LOADS:-steady bursty}
FIX=estload-default
FUNC=main.Work
RUN_TIMEOUT=$((DURATION + 60))
MISSES=${MISSES:-$abs_top_builddir/tests/bench/estimate-misses}
case $TRIALS in '' | *[!0-9]* | 0) fail "T must be a number of trials, not '$TRIALS'" ;; esac

need_root
need_retop
need_cmd python3
need_fixture "$FIX"
rm -rf "$MISSES"
mkdir -p "$MISSES" || fail "cannot create $MISSES"

FIX_FLAGS="-workers $WORKERS -duration ${DURATION}s"
[ -z "${WORK:-}" ] || FIX_FLAGS="$FIX_FLAGS -work $WORK"

cat >"$T/est.py" <<'EOF'
import json, math, os, shutil, statistics as st, sys

def work_of(path, func):
    """main.Work in every snapshot of PATH: [(snapshot, function)]."""
    out = []
    for line in open(path):
        s = json.loads(line)
        for f in s["functions"]:
            if f["name"] == func:
                out.append((s, f))
    return out

def load_mode(series):
    """The most reduced mode any snapshot showed: estimated, then
    timing-sampled, then full (once the load ends it goes back to full)."""
    seen = set(f.get("mode") for _, f in series)
    for m in ("estimated", "timing-sampled", "full"):
        if m in seen:
            return m
    return "?"

def trial(load, rep, out, snaps, err, func, misses, results):
    truth = json.load(open(out))
    series = work_of(snaps, func)
    if not series:
        sys.exit("retop's snapshots have no %s" % func)
    snap, f = series[-1]
    n = truth["calls"]
    est = bool(f.get("estimated"))
    calls = f["calls"]
    lo = hi = None
    if est:
        ci = f.get("calls_ci95")
        if not isinstance(ci, list) or len(ci) != 2 or ci[0] is None:
            sys.exit("estimated %s with no calls_ci95: %r" % (func, ci))
        lo, hi = ci
        held = lo <= n and (hi is None or n <= hi)
        kind = "unbounded" if hi is None else "bounded"
    else:
        held = calls == n
        kind = "exact"
    # The last snapshot taken in the mode the load brought it to.
    mode = load_mode(series)
    lest = next((x for x in reversed(series) if x[1].get("mode") == mode), series[-1])
    r = {
        "load": load, "trial": rep, "truth": n, "seconds": truth["seconds"],
        "rate": n / truth["seconds"] if truth["seconds"] > 0 else 0,
        "work_ns": truth.get("work_ns"), "calls": calls, "estimated": est,
        "lo": lo, "hi": hi, "kind": kind, "held": held, "mode": mode,
        "last_mode": f.get("mode"),
        "sampled": lest[1].get("sampled"), "trap_share": f.get("trap_share"),
        "timed_calls": f.get("timed_calls"), "stopped": f.get("estimate_stopped"),
        "probe_hit_ns": lest[0].get("probe_hit_ns"),
        "err": (calls - n) / n if n else None,
        "half": ((hi - lo) / 2 / n) if (est and hi is not None and n) else None,
    }
    with open(results, "a") as fp:
        fp.write(json.dumps(r) + "\n")
    print(line(r))
    sys.stdout.flush()
    if not held:
        for p in (out, snaps, err):
            shutil.copy(p, os.path.join(misses, "%s.%s.%s" % (load, rep, os.path.basename(p).split(".", 2)[-1])))

def pct(x, signed=True):
    return "-" if x is None else ("%+.1f%%" if signed else "%.1f%%") % (x * 100)

def line(r):
    if r["estimated"]:
        iv = "[%d, %s]" % (r["lo"], "null" if r["hi"] is None else r["hi"])
    else:
        iv = "exact"
    extra = ""
    if r["stopped"]:
        extra = "  stopped: %s" % r["stopped"]
    return ("  %-6s %3d  truth %8d (%6.0f/s)  retop %8d  %-14s %-22s %-6s err %7s  half %6s  sampled %s  trap %s  hit %s ns%s"
            % (r["load"], r["trial"], r["truth"], r["rate"], r["calls"], r["mode"], iv,
               "held" if r["held"] else "MISSED", pct(r["err"]), pct(r["half"], False),
               r["sampled"], "-" if r["trap_share"] is None else r["trap_share"],
               r["probe_hit_ns"], extra))

def med(xs):
    xs = [x for x in xs if x is not None]
    return st.median(xs) if xs else None

def summary(results, loads, misses, func):
    rows = [json.loads(l) for l in open(results)]
    cover, ecover = [], []
    for load in loads:
        rs = [r for r in rows if r["load"] == load]
        if not rs:
            continue
        held = sum(r["held"] for r in rs)
        ests = [r for r in rs if r["estimated"]]
        bounded = [r for r in ests if r["hi"] is not None]
        print("\n  %s: %d trials, %d held: coverage %.1f%%; %d exact, %d bounded estimates, %d unbounded"
              % (load, len(rs), held, 100.0 * held / len(rs), len(rs) - len(ests), len(bounded),
                 len(ests) - len(bounded)))
        if ests:
            he = sum(r["held"] for r in ests)
            print("    estimates: held %d/%d; median relative error |%s| (signed median %s, range %s .. %s); "
                  "median relative half-width %s (bounded ones)"
                  % (he, len(ests), pct(med([abs(r["err"]) for r in ests]), False),
                     pct(med([r["err"] for r in ests])), pct(min(r["err"] for r in ests)),
                     pct(max(r["err"] for r in ests)), pct(med([r["half"] for r in bounded]), False)))
        print("    the program's rate: median %.0f calls/s (%.0f .. %.0f); a call's work %s us"
              % (med([r["rate"] for r in rs]), min(r["rate"] for r in rs), max(r["rate"] for r in rs),
                 "%.0f" % (med([r["work_ns"] for r in rs]) / 1000) if med([r["work_ns"] for r in rs]) else "?"))
        if len(ests) < len(rs):
            print("    %d trial(s) not estimated: the calls, counted at their entry, fit the budget "
                  "(a lower WORK or a quieter machine makes more of them estimated)" % (len(rs) - len(ests)))
        cover.append("%s %.0f%% (%d/%d)" % (load, 100.0 * held / len(rs), held, len(rs)))
        he = sum(r["held"] for r in ests)
        ecover.append("%s %s(%d/%d)" % (load, "%.0f%% " % (100.0 * he / len(ests)) if ests else "", he, len(ests)))
    missed = [r for r in rows if not r["held"]]
    if missed:
        print("\n  trials that missed (kept in %s):" % misses)
        for r in missed:
            print("    %s %d: truth %d, retop %d, interval [%s, %s], err %s, sampled %s, trap_share %s, probe hit %s ns"
                  % (r["load"], r["trial"], r["truth"], r["calls"], r["lo"],
                     "null" if r["hi"] is None else r["hi"], pct(r["err"]), r["sampled"],
                     r["trap_share"], r["probe_hit_ns"]))
            base = os.path.join(misses, "%s.%d.snap" % (r["load"], r["trial"]))
            try:
                series = work_of(base, func)
            except OSError:
                continue
            for s, f in series:
                print("      %-15s calls %8d  ci %-22s sampled %-6s trap %-6s timed %d"
                      % (f.get("mode"), f["calls"], f.get("calls_ci95", "-"), f.get("sampled"),
                         f.get("trap_share", "-"), f.get("timed_calls", 0)))
    print("estimate: coverage %s (goal >= 95%%)" % ", ".join(cover))
    print("estimate: the estimates alone held: %s" % ", ".join(ecover))

if sys.argv[1] == "trial":
    trial(sys.argv[2], int(sys.argv[3]), *sys.argv[4:])
else:
    summary(sys.argv[2], sys.argv[3].split(), sys.argv[4], sys.argv[5])
EOF

# run_trial LOAD REP: one trial; appends its figures to $T/results.
run_trial() {
    load=$1 rep=$2
    out=$T/$load.$rep.json
    snaps=$T/$load.$rep.snap
    err=$T/$load.$rep.err
    # shellcheck disable=SC2086 # $FIX_FLAGS is a list
    start_fixture "$FIX" -load "$load" -out "$out" $FIX_FLAGS
    fx=$FIXTURE_PID
    "$RETOP" -b -p "$fx" -t "$FUNC" -d 1 -o json >"$snaps" 2>"$err" &
    rt=$!
    track_pid "$rt"
    wait_lines "$snaps" 1 30 ||
        fail "$load $rep: retop -b -p $fx -t $FUNC printed no snapshot in 30 s: $(head -n 3 "$err")"
    running "$fx" || fail "$load $rep: $FIX died before its load"
    kill -USR1 "$fx"
    n=$((RUN_TIMEOUT * 10))
    while [ ! -e "$out" ]; do
        running "$fx" || fail "$load $rep: $FIX died during its load"
        running "$rt" || fail "$load $rep: retop exited during the load: $(head -n 3 "$err")"
        [ "$n" -gt 0 ] || fail "$load $rep: $FIX made no result in $RUN_TIMEOUT s"
        n=$((n - 1))
        sleep 0.1
    done
    # One more snapshot, so one was certainly taken after the last return.
    have=$(wc -l <"$snaps")
    wait_lines "$snaps" $((have + 1)) 10 ||
        fail "$load $rep: retop stopped printing snapshots: $(head -n 3 "$err")"
    have=$(wc -l <"$snaps")
    kill -INT "$rt"
    ( sleep 60; kill -9 "$rt" ) >/dev/null 2>&1 &
    dog=$!
    if wait "$rt"; then rc=0; else rc=$?; fi
    kill "$dog" 2>/dev/null
    wait "$dog" 2>/dev/null
    PIDS=$(echo " $PIDS " | sed "s/ $rt / /")
    [ "$rc" -eq 0 ] || fail "$load $rep: retop exited $rc on SIGINT: $(head -n 3 "$err")"
    [ "$(wc -l <"$snaps")" -gt "$have" ] ||
        echo "  ($load $rep: retop printed no last snapshot on SIGINT: the one before it is used)"
    running "$fx" || fail "$load $rep: $FIX died after its load"
    stop_pid "$fx"
    python3 "$T/est.py" trial "$load" "$rep" "$out" "$snaps" "$err" "$FUNC" "$MISSES" "$T/results" ||
        fail "$load $rep: cannot read retop's snapshots ($snaps) or the fixture's count ($out)"
}

echo "estimate: $FIX, $FUNC (${WORK:-100us} of work a call, $WORKERS goroutines, ${DURATION}s a load), loads: $LOADS; $TRIALS trials each; retop at its defaults"
: >"$T/results"
i=1
while [ "$i" -le "$TRIALS" ]; do
    # Alternate the order, so no load always runs first.
    if [ $((i % 2)) -eq 1 ]; then
        order=$LOADS
    else
        order=$(echo "$LOADS" | awk '{ for (k = NF; k > 0; k--) printf "%s%s", $k, (k > 1 ? " " : "") }')
    fi
    for load in $order; do
        run_trial "$load" "$i"
    done
    i=$((i + 1))
done

python3 "$T/est.py" summary "$T/results" "$LOADS" "$MISSES" "$FUNC" || fail "cannot summarize $T/results"
rmdir "$MISSES" 2>/dev/null || :
exit 0
