#!/bin/sh
# What retop costs a goroutine-heavy program when the function it traces is
# never called.  The spawn fixture starts and ends goroutines as fast as it
# can (-workers 2, -batch 64) for DURATION seconds of its own clock and
# reports goroutines per second; main.Cold is never called.  Each round, in
# alternating order:
#   none     the fixture alone
#   traced   the fixture with retop -b -p PID -t main.Cold -d 1 -o json
#            at its defaults (no --budget), attached
#            before the work starts (its first snapshot is out)
# The fixture runs pinned to CPU 1 and retop to CPU 0 (as in budget.sh), so
# that retop's own sampling never takes the fixture's CPU: what is left is
# what the probes cost the program (a probe's trap is charged to the thread
# that hits it).  Prints per round both rates and traced/none, then the
# median of the per-round ratios (goal: >= 0.95: tracing a function that is
# never called should cost nothing, whatever retop watches besides it, such
# as goroutine exits).  Saves retop's last snapshot of the last round and
# prints its status for main.Cold; retop must count 0 calls of it.
#
# Environment: R (3), DURATION (3, seconds a run), WORKERS (2), PIN (1 when
# the machine has two CPUs: taskset as above; 0: not pinned), SNAPSHOT
# (where retop's last snapshot is saved, default
# $abs_top_builddir/tests/bench/spawn-last-snapshot.json), abs_top_builddir
# (the build tree, default SRCDIR/build).
# A benchmark, not a test: exits 0 whether or not the goal is met, 1 when
# something is broken, 77 when a prerequisite is missing.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

R=${R:-3}
DURATION=${DURATION:-3}
WORKERS=${WORKERS:-2}
FIX=spawn-default
FUNC=main.Cold
RUN_TIMEOUT=$((DURATION + 60))
SNAPSHOT=${SNAPSHOT:-$abs_top_builddir/tests/bench/spawn-last-snapshot.json}

need_root
need_retop
need_cmd python3
need_fixture "$FIX"
if [ -z "${PIN:-}" ]; then
    if [ "$(nproc)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then PIN=1; else PIN=0; fi
fi
if [ "$PIN" = 1 ]; then
    need_cmd taskset
    [ "$(nproc)" -ge 2 ] || skip "PIN=1 needs two CPUs: one for the fixture, one for retop"
    ON_FIX="taskset -c 1"
    ON_RETOP="taskset -c 0"
else
    ON_FIX=
    ON_RETOP=
fi

# start_spawn OUT: the fixture, waiting for SIGUSR1; its PID in $fx.
start_spawn() {
    rm -f "$T/spawn.ready" "$1"
    # shellcheck disable=SC2086 # $ON_FIX is a command prefix or nothing
    $ON_FIX "$FIXTURES/$FIX" -ready "$T/spawn.ready" -out "$1" \
        -workers "$WORKERS" -duration "${DURATION}s" &
    fx=$!
    track_pid "$fx"
    wait_file "$T/spawn.ready" 10 || fail "$FIX did not become ready in 10 s"
}

# rate OUT: the fixture's goroutines per second.
rate() {
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("%.1f %d %.6f" % (d["rate"], d["goroutines"], d["seconds"]))' "$1"
}

# run_none REP: appends "none REP rate goroutines seconds" to $T/results.
run_none() {
    out=$T/none.$1.json
    start_spawn "$out"
    kill -USR1 "$fx"
    wait_file "$out" "$RUN_TIMEOUT" || fail "$FIX made no result in $RUN_TIMEOUT s"
    stop_pid "$fx"
    echo "none $1 $(rate "$out")" >>"$T/results"
}

# run_traced REP: appends "traced REP rate goroutines seconds calls status
# sampled" to $T/results, the last three from retop's last snapshot.
run_traced() {
    out=$T/traced.$1.json
    snaps=$T/traced.$1.snap
    start_spawn "$out"
    # shellcheck disable=SC2086 # $ON_RETOP is a command prefix or nothing
    $ON_RETOP "$RETOP" -b -p "$fx" -t "$FUNC" -d 1 -o json >"$snaps" 2>"$T/retop.$1.err" &
    rt=$!
    track_pid "$rt"
    wait_lines "$snaps" 1 30 ||
        fail "retop -b -p $fx -t $FUNC printed no snapshot in 30 s: $(head -n 3 "$T/retop.$1.err")"
    kill -USR1 "$fx"
    wait_file "$out" "$RUN_TIMEOUT" || fail "$FIX (traced) made no result in $RUN_TIMEOUT s"
    # One more snapshot, so the last one certainly covers the whole work.
    have=$(wc -l <"$snaps")
    wait_lines "$snaps" $((have + 1)) 10 ||
        fail "retop stopped printing snapshots: $(head -n 3 "$T/retop.$1.err")"
    stop_pid "$rt"
    [ "$stop_rc" -eq 0 ] || fail "retop exited $stop_rc on SIGTERM: $(head -n 3 "$T/retop.$1.err")"
    stop_pid "$fx"
    got=$(last_func "$snaps" "$FUNC") || fail "cannot parse retop's snapshots in $snaps"
    echo "traced $1 $(rate "$out") $got" >>"$T/results"
    last_snaps=$snaps
    last_err=$T/retop.$1.err
}

pinned="not pinned"
[ "$PIN" != 1 ] || pinned="the fixture on CPU 1, retop on CPU 0"
echo "spawn: $FIX, $WORKERS workers spawning goroutines for ${DURATION}s a run, retop -t $FUNC (never called) at its defaults, $R rounds; $pinned"
: >"$T/results"
i=1
while [ "$i" -le "$R" ]; do
    # Alternate the order, so neither mode always runs first.
    if [ $((i % 2)) -eq 1 ]; then
        run_none "$i"
        run_traced "$i"
    else
        run_traced "$i"
        run_none "$i"
    fi
    i=$((i + 1))
done

{ mkdir -p "$(dirname "$SNAPSHOT")" && tail -n 1 "$last_snaps" >"$SNAPSHOT"; } ||
    fail "cannot save retop's last snapshot to $SNAPSHOT"

python3 - "$T/results" "$SNAPSHOT" "$FUNC" "$last_err" <<'EOF'
import json, sys, statistics as st
rows = [l.split() for l in open(sys.argv[1])]
func = sys.argv[3]
per = {}
bad = []
for r in rows:
    mode, rep = r[0], int(r[1])
    per.setdefault(rep, {})[mode] = r
    if mode == "traced" and r[5] != "0":
        bad.append("round %d: retop counted %s calls of %s (status %s), which is never called" % (rep, r[5], func, r[6]))
print("\n  round   untraced gor/s     traced gor/s   traced/untraced   retop status (sampled)")
ratios = []
for rep in sorted(per):
    n, t = per[rep]["none"], per[rep]["traced"]
    ratio = float(t[2]) / float(n[2])
    ratios.append(ratio)
    print("  %5d %16.0f %16.0f %17.3f   %s (%s)" % (rep, float(n[2]), float(t[2]), ratio, t[6].replace("_", " "), t[7]))
mn = st.median(float(p["none"][2]) for p in per.values())
mt = st.median(float(p["traced"][2]) for p in per.values())
print("\n  medians: untraced %.0f goroutines/s, traced %.0f goroutines/s (ratio of medians %.3f)" % (mn, mt, mt / mn))
print("  median of per-round ratios traced/untraced = %.3f" % st.median(ratios))
snap = json.loads(open(sys.argv[2]).read())
f = next((f for f in snap["functions"] if f["name"] == func), None)
if f is None:
    bad.append("retop's last snapshot has no %s" % func)
else:
    print("  retop's last snapshot (saved to %s):" % sys.argv[2])
    print("    %s: status %s, state %s, calls %d, sampled %s, in flight %d, orphans %d; budget %s%%, a probe hit %s ns"
          % (func, f["status"], f["state"], f["calls"], f["sampled"], f["in_flight"], f["orphans"],
             snap.get("budget_pct"), snap.get("probe_hit_ns")))
err = open(sys.argv[4]).read().strip()
if err:
    print("  retop's stderr (last round):")
    for l in err.splitlines()[:10]:
        print("    " + l)
if bad:
    print("  BROKEN:")
    for b in bad:
        print("    " + b)
    sys.exit(1)
r = st.median(ratios)
print("spawn: traced/untraced = %.3f (goal >= 0.95)" % r)
EOF
