#!/bin/sh
# The dashboard's CPU, build against build, interleaved: what tui.sh
# measures once, here R rounds of each binary in BINS, so that a change of a
# tenth shows through the drift of the machine (one tui.sh run does not
# resolve it: htop's own figure moves as far between runs).
#
# Each window: retop -p PID -d 1 -t F1 ... -t FN on the running demo fixture,
# in tmux at 120x40 on its live table, WARM seconds (and three refreshes)
# after the table shows;
# then utime + stime of retop (/proc/PID/stat, every thread, those gone
# too) over DURATION seconds, as % of one core, and over the same seconds
# htop -d 10 in a window of the same size: dashboard / htop, as tui.sh.
# Then q, and the next binary.  Prints each window, then each binary's
# medians: its CPU and its ratio to htop.
# With DELAYS="1 10", each binary runs at -d 1 and at -d 10 in every round:
# what the refresh itself costs (sample the thousand rows, draw) is what
# the tenfold refreshes add, (-d 1 - -d 10) / 0.9 a refresh a second; the
# rest (the budget's governor, ten slices a second, moving the probes)
# runs whatever the refresh.  Printed against htop's.
# With TARGET=prometheus, the table traces a real package of a real server
# under load instead: Debian's Prometheus's tsdb.* (some 800 functions),
# ingesting 40,000 series a second and answering queries one after the
# other through every window (tests/prom_load.sh).
# Environment: BINS (retop binaries; default: the build's), DELAYS (-d of
# each window; default 1), R (3), TARGET (demo, or prometheus), NFUNCS
# (1000, the demo's), DURATION (30), WARM (15), VARIANT (demo-VARIANT,
# default).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source=../tui/tmux.sh
. "$abs_top_srcdir/tests/tui/tmux.sh"
# shellcheck source-path=SCRIPTDIR source=../prom_load.sh
. "$abs_top_srcdir/tests/prom_load.sh"

R=${R:-3}
NFUNCS=${NFUNCS:-1000}
DURATION=${DURATION:-30}
WARM=${WARM:-15}
FIX=demo-${VARIANT:-default}
BINS=${BINS:-$RETOP}
DELAYS=${DELAYS:-1}
TARGET=${TARGET:-demo}
COLS=120
ROWS=40

need_root
need_retop
need_cmd python3
need_cmd htop
for b in $BINS; do
    [ -x "$b" ] || fail "not an executable: $b"
done

case $TARGET in
demo)
    need_fixture "$FIX"
    start_fixture "$FIX"
    PID=$FIXTURE_PID
    pick_functions "$FIXTURES/$FIX" "$NFUNCS"
    # tui_start hands its words to a shell: quote each name.
    QTARGS=$(sed "s/.*/-t '&'/" "$T/names" | tr '\n' ' ')
    WHAT="$NFUNCS functions of $FIX"
    ;;
prometheus)
    need_cmd prometheus
    prom_start
    PID=$prom
    QTARGS="-t 'github.com/prometheus/prometheus/tsdb.*'"
    WHAT="Prometheus's tsdb.*, answering queries"
    ;;
*) fail "TARGET=$TARGET: demo or prometheus" ;;
esac

echo "tui-pair: the live table at ${COLS}x$ROWS tracing $WHAT;"
echo "  $R rounds of ${DURATION} s a binary and -d (of $DELAYS), beside htop -d 10 over the same seconds"
: >"$T/windows"
for r in $(seq "$R"); do
    for b in $BINS; do
    for d in $DELAYS; do
        RETOP=$b
        tui_start "$COLS" "$ROWS" -p "$PID" -d "$d" "$QTARGS"
        wait_screen " traced, " 120 || fail "$b: no live table within 120 s"
        shown=$(now)
        RP=$(tui_pid) || fail "cannot find retop's PID"
        htop_start "$COLS" "$ROWS"
        if [ "$TARGET" = prometheus ]; then
            prom_queries "$(awk -v w="$WARM" -v d="$d" -v n="$DURATION" 'BEGIN { print w + 3 * d + n + 2 }')" \
                "$T/q" &
            QP=$!
        fi
        settle "$shown" "$WARM" "$d"
        c0=$(cpu_s "$RP") h0=$(cpu_s "$HP") t0=$(now)
        sleep "$DURATION"
        c1=$(cpu_s "$RP") h1=$(cpu_s "$HP") t1=$(now)
        tm kill-session -t htop
        kill -0 "$PID" 2>/dev/null || fail "the target ($WHAT) died while being traced"
        if [ "$TARGET" = prometheus ]; then
            wait "$QP" || fail "a query failed while traced: $(tail -n 2 "$T/q")"
        fi
        keys q
        st=$(wait_exit 120) || fail "$b: retop did not exit within 120 s of q"
        [ "$st" -eq 0 ] || fail "$b: retop exited $st after q"
        python3 - "$b" "$d" "$r" "$c0" "$c1" "$h0" "$h1" "$t0" "$t1" >>"$T/windows" <<'EOF'
import sys
b, d, r = sys.argv[1:4]
c0, c1, h0, h1, t0, t1 = map(float, sys.argv[4:])
w = t1 - t0
print(b, d, r, 100 * (c1 - c0) / w, 100 * (h1 - h0) / w)
EOF
        tail -n 1 "$T/windows" | awk '{ printf "  round %s %s -d %s: dashboard %.3f%%, htop %.3f%%, ratio %s\n",
            $3, $1, $2, $4, $5, ($5 > 0 ? sprintf("%.2f", $4 / $5) : "n/a") }'
        tm kill-session -t retop 2>/dev/null
        sleep 2
    done
    done
done
python3 - "$T/windows" "$DURATION" <<'EOF'
import os, statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
med = statistics.median
for b in dict.fromkeys(r[0] for r in rows):
    at = {}
    for d in dict.fromkeys(r[1] for r in rows if r[0] == b):
        mine = [r for r in rows if r[0] == b and r[1] == d]
        dash = [float(r[3]) for r in mine]
        ratio = [float(r[3]) / float(r[4]) for r in mine if float(r[4]) > 0]
        at[float(d)] = med(dash)
        print("  %s -d %s: median dashboard %.3f%% (%.3f-%.3f), median dashboard / htop %s"
              % (b, d, med(dash), min(dash), max(dash), "%.2f" % med(ratio) if ratio else "n/a"))
    slow = max(at)
    if 1.0 in at and slow > 1.0:
        htop = med([float(r[4]) for r in rows if r[0] == b])
        refresh = (at[1.0] - at[slow]) / (1 - 1 / slow)
        # utime + stime count in clock ticks: one off in each window.
        res = 100 * 2 / os.sysconf("SC_CLK_TCK") / float(sys.argv[2]) / (1 - 1 / slow)
        print("  %s: the refresh itself, once a second: %.3f%% of a core (+-%.3f%%; htop %.3f%%: %s); "
              "the rest, whatever the refresh: %.3f%%"
              % (b, refresh, res, htop,
                 "%.2f" % (refresh / htop) if htop > 0 and refresh >= res else "n/a",
                 at[1.0] - refresh))
EOF
