#!/bin/sh
# The dashboard's own cost, run as a person runs it: in tmux at 120x40.
#
# CPU: retop -p PID -d 1 -t F1 ... -t F64 on the running demo fixture opens
# on the live table, tracing 64 functions, refreshed every second.  Once
# every function is attached and the screen shows all 64 with calls rising,
# utime + stime of retop from /proc/PID/stat over DURATION seconds, as % of
# one core (target: < 1%).  Side by side, in the same window: retop -b -d 1
# -o json on the same functions of the same process, which samples alike
# but draws nothing; dashboard / batch is what the screen adds.  And htop
# -d 10 (one refresh a second) in a tmux window of the same size, over the
# same seconds: dashboard / htop puts the cost against a tool operators
# already leave running.  The window begins WARM s and three refreshes after
# the table shows.  Then the same dashboard at -d 10, beside htop again:
# the budget's governor runs whatever the refresh, so (-d 1 - -d 10) / 0.9
# is what the refresh itself costs, once a second, against htop's.
#
# Memory: retop -x on the Go compiler (~14,000 functions with code; MEM_BIN to change
# it) opens on the function browser, which is paged through to its end, a
# page at a time, each page drawn with its RET sites decoded before the
# next; then End, Home and a / search for gc.Main.  VmHWM of retop from
# /proc/PID/status (target: < 64 MiB), next to the peak RSS of retop -l -x
# BIN -o json, which decodes every function's RET sites and draws nothing.
# Then the same on Prometheus (PROM_BIN, /usr/bin/prometheus: ~63,000
# functions): the browser opened, End, Home, folded by package, End, and a
# / search; VmHWM next to retop -l's peak RSS on the same binary.
#
# Both end with q: retop must exit 0 and leave no BPF program or link.
# Functions: fully traceable ones of main, strconv, sort, strings and fmt
# (pick_functions in lib.sh), without glob characters in their names.
# Environment: DURATION (60), WARM (15), NFUNCS (64), VARIANT (demo-VARIANT, default),
# MEM_BIN, PROM_BIN, abs_top_builddir (default SRCDIR/build).
# A benchmark, not a test: exits 0 unless something is broken.

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$here/lib.sh"
# shellcheck source=../tui/tmux.sh
. "$abs_top_srcdir/tests/tui/tmux.sh"

DURATION=${DURATION:-60}
WARM=${WARM:-15}
NFUNCS=${NFUNCS:-64}
FIX=demo-${VARIANT:-default}
MEM_BIN=${MEM_BIN:-/usr/lib/go-1.19/pkg/tool/linux_amd64/compile}
PROM_BIN=${PROM_BIN:-/usr/bin/prometheus}
COLS=120
ROWS=40
WATCH=main.ProcessPayment # called ~every 50 ms by each demo worker

need_root
need_retop
need_cmd python3
need_cmd bpftool
need_cmd pgrep
[ -x /usr/bin/time ] || skip "/usr/bin/time not found: apt-get install time"
[ -r "$MEM_BIN" ] || skip "$MEM_BIN not found: install golang-1.19-go or set MEM_BIN"
[ -r "$PROM_BIN" ] || skip "$PROM_BIN not found: install prometheus or set PROM_BIN"
need_cmd htop
need_fixture "$FIX"
BIN=$FIXTURES/$FIX
sc() { python3 "$abs_top_srcdir/tests/integration/snapcheck.py" "$@"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }
verdict() { awk -v v="$1" -v max="$2" 'BEGIN { print (v < max ? "met" : "NOT met") }'; }
# vm FIELD PID: a memory figure of PID in KiB, e.g. vm VmHWM 4242.
vm() { awk -v f="$1:" '$1 == f { print $2 }' "/proc/$2/status"; }

# calls NAME: CALLS of NAME's live-table row, as a number.
calls() {
    # shellcheck disable=SC2046 # the row's fields, split on purpose
    set -- $(row "$1")
    num "${1:-0}"
}

# rising NAME: until NAME's CALLS on the screen is above what it is now.
rising() {
    snap
    was=$(calls "$1")
    n=50
    while snap && c=$(calls "$1") && awk -v a="$c" -v b="$was" 'BEGIN { exit a > b }'; do
        [ "$n" -gt 0 ] || { cat "$SCREEN" >&2; fail "$1: calls stuck at $c on the live table"; }
        n=$((n - 1))
        sleep 0.1
    done
}

# traced_rows: "NAME CALLS" of each row of the body that is one of ours.
# A name wider than its column shows its tail after a "\u2026" (or "~"):
# the one name that ends so.
traced_rows() {
    awk -v last=$((ROWS - 2)) 'NR == FNR { want[$1] = 1; next }
        FNR > 3 && FNR <= last {
            name = $1
            if (!(name in want) && sub(/^(\342\200\246|~)/, "", name)) {
                tail = name; name = ""; n = 0
                for (w in want)
                    if (length(w) > length(tail) && substr(w, length(w) - length(tail) + 1) == tail) {
                        name = w; n++
                    }
                if (n != 1) next
            }
            if (name in want) print name, $2
        }' "$T/names" "$SCREEN"
}

# body_row N: the first word of row N of the body (1: the first, -1: the
# last) on the screen last captured.
body_row() {
    awk -v n="$1" -v top=3 -v last=$((ROWS - 2)) \
        'NR == (n > 0 ? top + n : last + 1 + n) { print $1 }' "$SCREEN"
}

# until_first is|not NAME: until the first row of the body is (or is not)
# NAME, and no row waits for its RET sites ("..." while the worker decodes
# them).
until_first() {
    n=500
    while :; do
        snap
        case $1:$(body_row 1) in
        "is:$2") at=1 ;;
        is:* | "not:$2") at=0 ;;
        *) at=1 ;;
        esac
        [ "$at" -eq 1 ] && ! grep -Eq ' \.\.\. +\.\.\. ' "$SCREEN" && return 0
        [ "$n" -gt 0 ] || { cat "$SCREEN" >&2; fail "the first row of the browser: want $1 '$2'"; }
        n=$((n - 1))
        sleep 0.02
    done
}

# quit [tracing]: q; retop must exit 0 and its BPF objects go (with
# tracing: it must hold links until then).  The session ends with it.
# QUIT0 and QUIT1: when q was sent, and when retop's exit status was out
# (what the operator waits for; the checks around it are the bench's own).
quit() {
    rpid=$(tui_pid) || fail "cannot find retop's PID"
    sc holds "$rpid" >"$T/held"
    [ "$1" != tracing ] || grep -q '^link ' "$T/held" ||
        fail "retop holds no BPF link while tracing: $(tr '\n' ' ' <"$T/held")"
    QUIT0=$(now)
    keys q
    st=$(wait_exit 120) || fail "retop did not exit within 120 s of q"
    QUIT1=$(now)
    [ "$st" -eq 0 ] || fail "retop exited with $st after q"
    sc gone "$rpid" 5 || fail "retop (pid $rpid) still runs after its exit status"
    sc released "$T/held" 10 || fail "10 s after retop exited, the kernel still has its BPF objects"
    # Other runs of retop may be exiting at the same time: a program is
    # a leak only if it stays without an owner.
    n=50
    while orphans=$(unowned_retop_progs) && [ -n "$orphans" ]; do
        [ "$n" -gt 0 ] || fail "retop_entry/retop_return loaded with no owner: $orphans"
        n=$((n - 1))
        sleep 0.1
    done
}

# ---- CPU: the live table against batch mode, same functions, same window
start_fixture "$FIX"
pick_functions "$BIN" "$NFUNCS"
grep -qx "$WATCH" "$T/names" || fail "$WATCH is not among the functions picked"
# tui_start hands its words to a shell: quote each name.
QTARGS=$(sed "s/.*/-t '&'/" "$T/names" | tr '\n' ' ')

# all_in: every function tracing; with more than 64 (the runtime's among
# them), in at least: the budget samples the busiest.
all_in() {
    if [ "$NFUNCS" -le 64 ]; then
        sc status "$T/batch.json" tracing
    else
        python3 -c 'import json, sys
fs = json.loads(open(sys.argv[1]).read().splitlines()[-1])["functions"]
bad = [f["name"] + ": " + f["status"] for f in fs if f["state"] in ("error", "detached")]
print("\n".join(bad[:5]), file=sys.stderr)
sys.exit(1 if bad else 0)' "$T/batch.json"
    fi
}

# shellcheck disable=SC2086 # $TARGS is a list
"$RETOP" -b -p "$FIXTURE_PID" $TARGS -d 1 -o json >"$T/batch.json" 2>"$T/batch.err" &
BP=$!
track_pid "$BP"
sc wait "$T/batch.json" 1 120 "$BP" || fail "retop -b: no snapshot after 120 s: $(head -n 3 "$T/batch.err")"
all_in || fail "retop -b: not every function is tracing"

# The functions the interlock let in (a few of the runtime's are refused
# when there are a thousand).
NIN=$(python3 -c 'import json, sys
fs = json.loads(open(sys.argv[1]).read().splitlines()[-1])["functions"]
print(sum(1 for f in fs if f["state"] != "error"))' "$T/batch.json")
tui_start "$COLS" "$ROWS" -p "$FIXTURE_PID" -d 1 "$QTARGS"
expect_screen "^$NIN traced, " 120 "the live table with $NIN functions"
shown=$(now)
RP=$(tui_pid) || fail "cannot find retop's PID"
# htop in its own window of the same size, refreshing every second.
htop_start "$COLS" "$ROWS"
# Every function has a row with a number of calls (one that is not tracing
# shows its status there): the first page, then the last one.
rising "$WATCH"
traced_rows >"$T/rows"
keys End
n=50
# (a thousand take many pages: the first and the last are looked at.)
while seen=$(cut -d ' ' -f 1 "$T/rows" | sort -u | wc -l) && [ "$NFUNCS" -le 64 ] && [ "$seen" -lt "$NFUNCS" ]; do
    [ "$n" -gt 0 ] || { cat "$SCREEN" >&2; fail "$seen of $NFUNCS functions have a row on the live table"; }
    n=$((n - 1))
    sleep 0.1
    snap
    traced_rows >>"$T/rows"
done
keys Home
# A count may be marked: '~' estimated, '≥' ('>=') a lower bound, '!' dropped.
bad=$(awk '$2 !~ /^(~|≥|>=|i)?[0-9.]+[kMG]?!?$/' "$T/rows" | sort -u)
[ -z "$bad" ] || fail "rows without a number of calls (not tracing): $bad"
rising "$WATCH"

# The window begins WARM s and three refreshes after the table showed, as
# the -d 10 window below (settle, in lib.sh, says why).
settle "$shown" "$WARM" 1
echo "tui: the live table at ${COLS}x$ROWS, retop -p PID -d 1 tracing $NFUNCS functions of $FIX, ${DURATION} s;"
echo "  side by side in the same window, retop -b -d 1 -o json on the same functions"
n0=$(sc lines "$T/batch.json")
d0=$(calls "$WATCH")
c0=$(cpu_s "$RP") b0=$(cpu_s "$BP") h0=$(cpu_s "$HP") t0=$(now)
sleep "$DURATION"
c1=$(cpu_s "$RP") b1=$(cpu_s "$BP") h1=$(cpu_s "$HP") t1=$(now)
tm kill-session -t htop
n1=$(sc lines "$T/batch.json")
rising "$WATCH"
d1=$(calls "$WATCH")
selfcpu=$(sed -n 's/.*, cpu \([0-9.]*%\),.*/\1/p' "$SCREEN" | head -n 1)
kill -0 "$FIXTURE_PID" 2>/dev/null || fail "$FIX died while being traced"
all_in || fail "retop -b: not every function is tracing at the end"
g0=$(sc get "$T/batch.json" "$WATCH" calls "$n0") || fail "no $WATCH in retop -b's snapshots"
g1=$(sc get "$T/batch.json" "$WATCH" calls "$n1") || fail "no $WATCH in retop -b's snapshots"
[ "$g1" -gt "$g0" ] || fail "retop -b: calls of $WATCH stuck at $g0"

sc holds "$BP" >"$T/bheld"
kill -TERM "$BP"
if wait "$BP"; then rc=0; else rc=$?; fi
[ "$rc" -eq 0 ] || fail "retop -b exited $rc after SIGTERM: $(head -n 3 "$T/batch.err")"
sc released "$T/bheld" 10 || fail "10 s after retop -b exited, the kernel still has its BPF objects"
quit tracing
q0=$QUIT0 q1=$QUIT1

# ---- The refresh itself: the same dashboard at -d 10, beside htop again.
# The budget's governor (ten slices a second, probes moved in and out)
# runs whatever the refresh; a tenth of the refreshes takes away nine
# tenths of what the refresh costs: (-d 1 - -d 10) / 0.9 is the refresh
# once a second.  One window each: tui-pair.sh DELAYS="1 10" gives the
# medians of interleaved rounds.
tui_start "$COLS" "$ROWS" -p "$FIXTURE_PID" -d 10 "$QTARGS"
expect_screen "^$NIN traced, " 120 "the live table at -d 10 with $NIN functions"
shown=$(now)
RP=$(tui_pid) || fail "cannot find retop's PID"
htop_start "$COLS" "$ROWS"
settle "$shown" "$WARM" 10
s0=$(cpu_s "$RP") h2=$(cpu_s "$HP") t2=$(now)
sleep "$DURATION"
s1=$(cpu_s "$RP") h3=$(cpu_s "$HP") t3=$(now)
tm kill-session -t htop
kill -0 "$FIXTURE_PID" 2>/dev/null || fail "$FIX died while being traced"
quit tracing

python3 - "$c0" "$c1" "$b0" "$b1" "$t0" "$t1" "$q0" "$q1" "$h0" "$h1" \
    "$s0" "$s1" "$h2" "$h3" "$t2" "$t3" <<EOF
import os, sys
c0, c1, b0, b1, t0, t1, q0, q1, h0, h1, s0, s1, h2, h3, t2, t3 = map(float, sys.argv[1:])
w, w10 = t1 - t0, t3 - t2
dash, batch, htop = 100 * (c1 - c0) / w, 100 * (b1 - b0) / w, 100 * (h1 - h0) / w
slow, htop10 = 100 * (s1 - s0) / w10, 100 * (h3 - h2) / w10
refresh = (dash - slow) / 0.9
htops = (htop + htop10) / 2
# utime + stime count in clock ticks: a difference under a tick of each
# window's reading tells nothing.
tick = 1 / os.sysconf("SC_CLK_TCK")
res = 100 * tick * (1 / w + 1 / w10) / 0.9
print("  dashboard CPU: %.2f s over %.1f s = %.3f%% of one core (target < 1%%): %s"
      % (c1 - c0, w, dash, "met" if dash < 1 else "NOT met"))
print("  batch CPU:     %.2f s over %.1f s = %.3f%% of one core" % (b1 - b0, w, batch))
print("  ratio dashboard / batch: %s" % ("%.2f" % (dash / batch) if batch > 0 else "n/a (batch used no tick)"))
print("  htop -d 10:    %.2f s over %.1f s = %.3f%% of one core" % (h1 - h0, w, htop))
print("  ratio dashboard / htop: %s (the whole process)" % ("%.2f" % (dash / htop) if htop > 0 else "n/a (htop used no tick)"))
print("  dashboard -d 10: %.2f s over %.1f s = %.3f%% of one core (htop %.3f%%): the budget's governor,"
      % (s1 - s0, w10, slow, htop10))
print("    which runs whatever the refresh, and a tenth of the refreshes")
print("  the refresh itself, once a second: (%.3f%% - %.3f%%) / 0.9 = %.3f%% of one core (+-%.3f%%)"
      % (dash, slow, refresh, res))
if refresh < res:
    print("  ratio refresh / htop: n/a (under the CPU clock's resolution: a longer DURATION)")
else:
    print("  ratio refresh / htop: %s (target < 1: %s)"
          % ("%.2f" % (refresh / htops) if htops > 0 else "n/a (htop used no tick)",
             ("met" if refresh < htops else "NOT met") if htops > 0 else "n/a"))
print("  the dashboard's own header: cpu ${selfcpu:-?}; $((n1 - n0)) batch snapshots in the window")
print("  $WATCH calls over the window: dashboard $d0 -> $d1, batch $g0 -> $g1")
print("  q to exit (detaching $NFUNCS functions): %.2f s" % (q1 - q0))
EOF

# ---- Memory: the function browser on a big binary
# /usr/bin/time, as index.sh: a measuring parent's own pages must not count.
lrc=0
/usr/bin/time -f %M -o "$T/listing.rss" "$RETOP" -l -x "$MEM_BIN" -o json >"$T/listing" 2>/dev/null ||
    lrc=$?
[ "$lrc" -eq 0 ] || fail "retop -l -x $MEM_BIN -o json exited $lrc"
# The browser lists the functions with code; retop -l also those that
# exist only inlined (traced by name with -t).
nlist=$(grep -vc '"inline_only":true' "$T/listing")
lkb=$(tail -n 1 "$T/listing.rss")

tm kill-session -t retop 2>/dev/null # the first one's pane, if still there
tui_start "$COLS" "$ROWS" -x "$MEM_BIN"
expect_screen "^Functions: $nlist, " 60 "the function browser with the $nlist functions with code of retop -l"
RP=$(tui_pid) || fail "cannot find retop's PID"
open_kb=$(vm VmRSS "$RP")
until_first not ""
first=$(body_row 1)
keys End
until_first not "$first"
last=$(body_row -1)
keys Home
until_first is "$first"
# The first PgDn moves the cursor to the bottom of the first page: the
# screen scrolls from the second one on.
keys NPage
pages=1
while [ "$(body_row -1)" != "$last" ]; do
    top=$(body_row 1)
    keys NPage
    until_first not "$top"
    pages=$((pages + 1))
done
keys End
keys Home
keys /
type_text gc.Main
expect_screen '^[ *+!] cmd/compile/internal/gc\.Main ' 10 "search finds cmd/compile/internal/gc.Main"
keys Enter
expect_screen "^Functions: $nlist, [0-9]+ rows match 'gc\.Main'" 5 "the search kept" >/dev/null
hwm=$(vm VmHWM "$RP")
quit

echo "tui: the function browser at ${COLS}x$ROWS on $MEM_BIN ($nlist functions):"
echo "  paged through to the end ($pages pages, every RET site decoded), End, Home, / gc.Main"
echo "  retop VmHWM $(mib "$hwm") MiB (target < 64 MiB): $(verdict "$hwm" 65536); VmRSS when the browser opened $(mib "$open_kb") MiB"
echo "  retop -l -x BIN -o json (every RET site decoded, no screen): peak RSS $(mib "$lkb") MiB;" \
    "ratio dashboard / listing $(awk -v a="$hwm" -v b="$lkb" 'BEGIN { printf "%.2f", a / b }')"

# ---- Memory: the browser on Prometheus, open, folded, searched
lrc=0
/usr/bin/time -f %M -o "$T/plisting.rss" "$RETOP" -l -x "$PROM_BIN" -o json >"$T/plisting" 2>/dev/null ||
    lrc=$?
[ "$lrc" -eq 0 ] || fail "retop -l -x $PROM_BIN -o json exited $lrc"
pnlist=$(grep -vc '"inline_only":true' "$T/plisting")
plkb=$(tail -n 1 "$T/plisting.rss")
tui_start "$COLS" "$ROWS" -x "$PROM_BIN"
expect_screen "^Functions: $pnlist, " 120 "the function browser with the $pnlist functions with code of retop -l"
RP=$(tui_pid) || fail "cannot find retop's PID"
popen_kb=$(vm VmRSS "$RP")
until_first not ""
pfirst=$(body_row 1)
keys End
until_first not "$pfirst"
keys Home
until_first is "$pfirst"
keys f
expect_screen "^Functions: $pnlist, [0-9]+ packages" 10 "the browser folded"
npkgs=$(sed -n 's/^Functions: [0-9]*, \([0-9]*\) packages.*/\1/p' "$SCREEN")
keys End
keys Home
keys f
keys /
type_text 'tsdb.(*DB).Compact'
expect_screen '^[ *+!] github\.com/prometheus/prometheus/tsdb\.\(\*DB\)\.Compact ' 10 "search finds tsdb.(*DB).Compact"
keys Enter
phwm=$(vm VmHWM "$RP")
quit
echo "tui: the function browser at ${COLS}x$ROWS on $PROM_BIN ($pnlist functions, $npkgs packages):"
echo "  opened, End, Home, folded by package, End, / tsdb.(*DB).Compact"
echo "  retop VmHWM $(mib "$phwm") MiB; VmRSS when the browser opened $(mib "$popen_kb") MiB"
echo "  retop -l -x BIN -o json: peak RSS $(mib "$plkb") MiB;" \
    "ratio dashboard / listing $(awk -v a="$phwm" -v b="$plkb" 'BEGIN { printf "%.2f", a / b }')"
exit 0
