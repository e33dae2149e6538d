#!/bin/sh
# What comparing with a baseline costs a refresh, side by side with what
# tracing alone costs it: change_bench (change_bench.c, built here against
# the build's libretop.a) times one refresh of N functions whose calls all
# moved, R times, three ways (the histograms' reads from a BPF hash map
# like func_hist, the percentiles every refresh computes, the comparison),
# and prints the medians and change / (read + stats).  Then, end to end:
# retop -b on the change fixture's two functions for SECS seconds, with
# and without --baseline, interleaved R2 times: retop's own CPU time
# (utime + stime of /proc/PID/stat before SIGINT).
# Environment: N (1000), R (30), R2 (3), SECS (6), abs_top_builddir.
# A benchmark, not a test: exits 0 whether or not the figures please, 1
# when something is broken, 77 when a prerequisite is missing.
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"

N=${N:-1000}
R=${R:-30}
R2=${R2:-3}
SECS=${SECS:-6}
need_retop
need_cmd python3
[ -f "$abs_top_builddir/libretop.a" ] || fail "no $abs_top_builddir/libretop.a: run make first"

out=$abs_top_builddir/tests/bench
mkdir -p "$out"
${CC:-cc} -O2 -Wall -Wextra -I"$abs_top_srcdir/src" -I"$abs_top_srcdir/bpf" \
    -I"$abs_top_builddir/src" -I"$abs_top_builddir" "$here/change_bench.c" \
    "$abs_top_builddir/libretop.a" -lbpf -lm -o "$out/change_bench" ||
    fail "cannot build change_bench"
"$out/change_bench" "$N" "$R" || fail "change_bench failed"

[ "$(id -u)" -eq 0 ] || { echo "change: not root, no end-to-end run"; exit 0; }
need_fixture change-default
# run WITH: retop's CPU seconds over SECS seconds of the fixture, with
# --baseline 1 or without.
run() {
    start_fixture change-default
    # shellcheck disable=SC2046 # the option or nothing
    "$RETOP" -b -p "$FIXTURE_PID" -t 'main.S*' -o json $( [ "$1" = with ] && echo --baseline 1 ) \
        >"$T/$1.snap" 2>"$T/$1.err" &
    rp=$!
    sleep "$SECS"
    ticks=$(sed 's/.*) //' "/proc/$rp/stat" | awk '{ print $12 + $13 }')
    kill -INT "$rp"
    wait "$rp" || fail "retop ($1) exited $?: $(head -n 3 "$T/$1.err")"
    kill -TERM "$FIXTURE_PID"
    wait "$FIXTURE_PID" 2>/dev/null
    python3 -c '
import json, os, sys
s = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
c = s["functions"][0]["change"]
print("%.3f %s" % (int(sys.argv[2]) / os.sysconf("SC_CLK_TCK"), "-" if c is None else c["calls_after"]))' "$T/$1.snap" "$ticks"
}
i=0
while [ "$i" -lt "$R2" ]; do
    for w in without with; do
        # shellcheck disable=SC2046 # two words: CPU seconds, calls after
        set -- $(run "$w")
        echo "  round $((i + 1)) $w: retop's CPU $1 s in ${SECS} s (calls after the baseline: $2)"
        echo "$1" >>"$T/$w.cpu"
    done
    i=$((i + 1))
done
python3 - "$T/without.cpu" "$T/with.cpu" <<'PY'
import statistics, sys
a, b = ([float(x) for x in open(p)] for p in sys.argv[1:3])
print("change: retop's CPU over the run, median: without %.3f s, with --baseline %.3f s (%+.1f%%)"
      % (statistics.median(a), statistics.median(b), 100 * (statistics.median(b) / statistics.median(a) - 1)))
PY
